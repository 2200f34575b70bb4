"""ShareGPT (``sharegpt``): ``{"conversations": [{"from", "value"}, ...]}`` or a list of those.

A list holds many conversations: :func:`conversations` lists them by ``id`` (else index) and the
start of the first human turn.
"""

from __future__ import annotations

from typing import Any, Final

from ctxlab.errors import ChatFormatError
from ctxlab.formats._common import (
    _at,
    _check_json,
    _fail,
    _kind,
    _opt_str,
    _pick_conversation,
    _read_id,
    _title,
)
from ctxlab.formats._messages import _calls_from_text, _pair_by_order
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._tools import read_tools
from ctxlab.formats._values import LoadedChat
from ctxlab.model import Message, Role, ToolCall

_SHAREGPT_ROLES: Final[dict[str, Role]] = {
    "human": Role.USER,
    "user": Role.USER,
    "gpt": Role.ASSISTANT,
    "assistant": Role.ASSISTANT,
    "chatgpt": Role.ASSISTANT,
    "bing": Role.ASSISTANT,
    "bard": Role.ASSISTANT,
    "model": Role.ASSISTANT,
    "function_call": Role.ASSISTANT,
    "system": Role.SYSTEM,
    "tool": Role.TOOL,
    "function": Role.TOOL,
    "observation": Role.TOOL,
    "function_response": Role.TOOL,
}


def _load_sharegpt(value: object, conversation: int | str | None) -> LoadedChat:
    """ShareGPT: ``{"conversations": [{"from", "value"}, ...]}`` or a list of those.

    An optional top-level ``system`` string becomes a leading system message; keys of a turn
    other than ``from``/``value`` are kept in ``extra``. Tool turns, as Glaive and
    LLaMA-Factory write them: a ``function_call`` turn's value is JSON ``{"name",
    "arguments"}`` (or a list of those) and becomes an assistant message with real tool calls;
    ``observation`` (``function_response``, ``tool``, ``function``) turns are their results.
    The file has no ids, so calls get ``call_<n>`` and each result answers the earliest
    unanswered call (a ``function_call`` value that is not such JSON stays assistant text, with
    a warning). ``tools`` (a JSON list, or that list as text) are the tool definitions.
    """
    where = "$"
    item = value
    if isinstance(value, list):
        labels = [(_read_id(c.get("id")) if isinstance(c, dict) else None,) for c in value]
        k = _pick_conversation(conversation, len(value), labels)
        item, where = value[k], f"$[{k}]"
    if not isinstance(item, dict):
        _fail(where, f'expected a ShareGPT object with "conversations", got {_kind(item)}')
    turns = item.get("conversations")
    if not isinstance(turns, list):
        what = "missing" if turns is None else _kind(turns)
        _fail(_at(where, ".conversations"), f"expected a list of turns, got {what}")
    out: list[Message] = []
    warnings: list[str] = []
    tools = read_tools(item.get("tools"), _at(where, ".tools"))
    system = _opt_str(item.get("system"), _at(where, ".system"))
    if system:
        out.append(Message(Role.SYSTEM, system, "m0"))
    for j, turn in enumerate(turns):
        here = _at(where, f".conversations[{j}]")
        if not isinstance(turn, dict):
            _fail(here, f"expected a turn object {{from, value}}, got {_kind(turn)}")
        speaker = turn.get("from")
        if not isinstance(speaker, str):
            _fail(f"{here}.from", f"expected a speaker string, got {_kind(speaker)}")
        role = _SHAREGPT_ROLES.get(speaker.lower())
        if role is None:
            known = ", ".join(_SHAREGPT_ROLES)
            _fail(f"{here}.from", f"unknown speaker {speaker!r}; expected one of {known}")
        text = _opt_str(turn.get("value"), f"{here}.value") or ""
        extra = sorted(
            ((k, v) for k, v in turn.items() if k not in ("from", "value")), key=lambda kv: kv[0]
        )
        for k, v in extra:
            _check_json(v, f"{here}.{k}")
        calls: list[ToolCall] = []
        if speaker.lower() == "function_call":
            try:
                calls = _calls_from_text(text, f"{here}.value")
            except ChatFormatError as exc:
                warnings.append(f"{exc}; kept as assistant text")
            else:
                text = ""
        out.append(Message(role, text, f"m{len(out)}", tool_calls=tuple(calls), extra=tuple(extra)))
    return LoadedChat(_pair_by_order(out), tools, warnings=tuple(warnings), format="sharegpt")


def _sharegpt_title(turns: object) -> str:
    if isinstance(turns, list):
        for t in turns:
            if isinstance(t, dict) and str(t.get("from", "")).lower() in ("human", "user"):
                value = t.get("value")
                return _title(value) if isinstance(value, str) else ""
    return ""


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The chosen conversation (the first of a list by default)."""
    return _load_sharegpt(doc.value, options.conversation)


def sniff(value: Any) -> bool:
    first = value[0] if isinstance(value, list) and value else value
    return isinstance(first, dict) and "conversations" in first


def conversations(doc: Document) -> list[tuple[str, str]]:
    value = doc.value
    items = value if isinstance(value, list) else [value]
    out = []
    for i, c in enumerate(items):
        turns = c.get("conversations") if isinstance(c, dict) else None
        cid = _read_id(c.get("id")) if isinstance(c, dict) else None
        out.append((cid or str(i), _sharegpt_title(turns)))
    return out


register(
    ChatFormat(
        name="sharegpt",
        title='ShareGPT: {"conversations": [{"from", "value"}]} (Glaive / LLaMA-Factory tools)',
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=frozenset({"conversations", "from", "value", "system", "tools"}),
        order=30,
        shown=4,
    )
)
