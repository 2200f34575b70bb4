"""OpenAI Codex CLI rollouts (``codex``): ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``:

* ``response_item``: a Responses API item, read as :mod:`ctxlab.formats.responses` reads items
  (messages, function calls and their outputs, reasoning kept apart and not counted);
* ``session_meta``: its ``base_instructions.text`` is Codex's system prompt (the ``instructions``
  of every request) and becomes the leading system message; the older ``instructions`` field
  holds the user's AGENTS.md text, which the rollout also records as a user message, so it is
  not read twice;
* ``event_msg`` of type ``token_count``: ``info.last_token_usage`` is what the last request
  was billed (``input_tokens`` includes ``cached_input_tokens``), recorded for the latest
  assistant message; a ``user_message`` event becomes a user message only when no user item was
  recorded for that turn (some rollouts keep the event alone); other events repeat items
  (``agent_message``, ``agent_reasoning``) or are bookkeeping, and are not read;
* ``turn_context``, ``compacted`` and other line types are bookkeeping and are not read.

A last line cut off mid-write is skipped with a warning naming it.
"""

from __future__ import annotations

from typing import Any, Final

from ctxlab.formats._common import _fail, _kind
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _parse_lines_lenient
from ctxlab.formats._values import LoadedChat
from ctxlab.formats.responses import ItemReader
from ctxlab.model import Message, Role

_LINE_TYPES: Final = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)


def sniff_line(first: Any) -> bool:
    if not isinstance(first, dict) or not isinstance(first.get("payload"), dict):
        return False
    kind = first.get("type")
    return isinstance(kind, str) and kind in _LINE_TYPES


def sniff(value: Any) -> bool:
    """Rollout lines given as JSON: a list of them (or one)."""
    first = value[0] if isinstance(value, list) and value else value
    return sniff_line(first)


def _system_prompt(payload: dict[str, Any], where: str) -> Message | None:
    base = payload.get("base_instructions")
    text = base.get("text") if isinstance(base, dict) else base
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        _fail(f"{where}.base_instructions", f"expected a string, got {_kind(text)}")
    return Message(Role.SYSTEM, text, "base_instructions")


def _read_lines(lines: list[tuple[int, Any]], warnings: tuple[str, ...]) -> LoadedChat:
    reader = ItemReader()
    lead: Message | None = None
    for n, line in lines:
        where = f"line {n}"
        if not isinstance(line, dict):
            _fail(where, f"expected a rollout line object, got {_kind(line)}")
        kind, payload = line.get("type"), line.get("payload")
        if kind == "response_item":
            reader.add(payload, f"{where}, $.payload")
        elif kind == "session_meta" and isinstance(payload, dict) and lead is None:
            lead = _system_prompt(payload, f"{where}, $.payload")
        elif kind == "event_msg" and isinstance(payload, dict):
            event = payload.get("type")
            if event == "token_count":
                info = payload.get("info")
                last = info.get("last_token_usage") if isinstance(info, dict) else None
                if last is not None:
                    reader.bill_last_assistant(last, f"{where}, $.payload.info.last_token_usage")
            elif event == "user_message" and isinstance(payload.get("message"), str):
                reader.add_user_text(payload["message"], f"{where}, $.payload")
    messages, usage, notes = reader.finish(lead)
    return LoadedChat(messages, usage=usage, warnings=warnings + notes, format="codex")


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The whole rollout (one conversation)."""
    if doc.jsonl:
        parsed, warnings = _parse_lines_lenient(doc.lines)
        return _read_lines(parsed, warnings)
    value = doc.value
    if isinstance(value, dict):  # one line given as JSON
        value = [value]
    if not isinstance(value, list):
        _fail("$", f"expected a list of rollout lines, got {_kind(value)}")
    return _read_lines(list(enumerate(value, 1)), ())


register(
    ChatFormat(
        name="codex",
        title="OpenAI Codex CLI rollout JSONL (~/.codex/sessions/.../rollout-*.jsonl)",
        read=read,
        sniff=sniff,
        sniff_line=sniff_line,
        marks=frozenset({"timestamp", "type", "payload"}),
        jsonl=True,
        order=21,
        shown=7,
    )
)
