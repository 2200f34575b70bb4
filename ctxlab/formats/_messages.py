"""The message reader most formats share: OpenAI-shaped message objects, content parts and
Anthropic content blocks.

OpenAI Chat Completions messages, ctxlab's dump, JSONL message lines and Anthropic messages are
all read here (:func:`_read_messages`), in one pass; the formats differ only in what surrounds
the messages. Invariants:

* ids are unique: a message's own id (a string, or an integer written as text), else
  ``m<position>``, stepping around own ids; a duplicate own id is an error naming both places.
* content is text: parts are joined with newlines, non-text parts become visible placeholders.
* keys ctxlab does not model are kept, sorted, in ``extra``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

import orjson

from ctxlab.formats._common import (
    _MISSING,
    _ROLE_NAMES,
    _ROLES,
    _at,
    _avoid_given_ids,
    _bad,
    _check_json,
    _compact_json,
    _duplicate_id,
    _fail,
    _got,
    _kind,
    _opt_bool,
    _opt_str,
    _read_id,
)
from ctxlab.formats._fastpath import _new_message_full, _new_tool_call
from ctxlab.model import CompactionMeta, Message, Role, ToolCall

# Keys of an OpenAI / ctxlab message that map to Message fields; every other key goes to `extra`.
_MESSAGE_KEYS: Final = frozenset(
    {
        "role",
        "content",
        "id",
        "name",
        "tool_calls",
        "tool_call_id",
        "function_call",
        "is_compaction",
        "is_summary",
        "compaction_meta",
    }
)
# The keys of the usual tool call / tool result message (read without further checks).
_COMMON_KEYS: Final = frozenset({"role", "content", "id", "name", "tool_calls", "tool_call_id"})
# The other keys that map to Message fields; they need the full reader.
_SPECIAL_KEYS: Final = _MESSAGE_KEYS - _COMMON_KEYS
# `extra` keys that the Chat Completions API itself accepts on a request message.
_API_EXTRA_KEYS: Final = frozenset({"refusal", "audio"})

_TEXT_PARTS: Final = frozenset({"text", "input_text", "output_text"})
_THINKING_PARTS: Final = frozenset({"thinking", "redacted_thinking"})
_PLACEHOLDERS: Final[dict[str, str]] = {
    "image_url": "[image]",
    "input_image": "[image]",
    "image": "[image]",
    "image_file": "[image]",
    "input_audio": "[audio]",
    "audio": "[audio]",
    "file": "[file]",
    "input_file": "[file]",
    "document": "[document]",
}
# Block types only Anthropic uses / only OpenAI uses: detect_format's evidence.
_ANTHROPIC_BLOCKS: Final = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "image"}
)
_OPENAI_PARTS: Final = frozenset({"image_url", "input_audio", "file", "refusal", "input_image"})


# Anthropic server tools: the call and its result arrive in the same assistant message.
_SERVER_CALLS: Final = frozenset({"server_tool_use", "mcp_tool_use"})
# Keys of server-tool results that are opaque to a reader (still billed, not shown).
_OPAQUE_KEYS: Final = frozenset(
    {"type", "encrypted_content", "encrypted_index", "signature", "tool_use_id", "media_type"}
)


@dataclasses.dataclass(slots=True)
class _Content:
    """What a message's ``content`` holds once read."""

    text: str = ""
    tool_calls: list[ToolCall] = dataclasses.field(default_factory=list)
    # Anthropic tool_result blocks: (tool_use_id, text, is_error), in order.
    tool_results: list[tuple[str | None, str, bool]] = dataclasses.field(default_factory=list)
    thinking: list[Any] = dataclasses.field(default_factory=list)


def _read_content(
    value: object, where: str, *, nested: bool = False, unknown: dict[str, str] | None = None
) -> _Content:
    """Read ``content``: a string, null, or a list of content parts / blocks.

    Text parts are joined with ``"\\n"`` (a part's text is under ``text``, or ``value`` as
    LLaMA-Factory writes it). Anthropic ``tool_use`` becomes a tool call and ``tool_result`` a
    separate tool message (unless ``nested``: inside a tool result they are text).

    Thinking (``thinking``, ``redacted_thinking``) is kept in ``thinking`` (the message's
    ``extra``), shown apart and not counted: the Anthropic API strips thinking blocks of
    previous assistant turns from the context window ("context_window = (input_tokens -
    previous_thinking_tokens) + current_turn_tokens",
    https://docs.anthropic.com/en/docs/build-with-claude/context-windows). Only the thinking of
    an unfinished tool-use loop (the last assistant turn, answered by tool results) is counted
    by the API; ctxlab does not count it, so such a request is undercounted by that much.

    Server-tool blocks (``server_tool_use``, ``web_search_tool_result``,
    ``web_fetch_tool_result``, code execution results, MCP) are text that is shown and counted:
    the call's name and input, the results' titles, URLs, page text and output (opaque
    ``encrypted_content`` excepted). A ``document`` with a text source is its text; media and
    binary documents become placeholders such as ``[image]``. Any other
    block type is kept as ``[type] {its JSON}`` text, counted, and recorded in ``unknown``
    (type -> the path of its first occurrence) so that the caller warns once per type.
    """
    if isinstance(value, str):
        return _Content(value)
    if value is None:
        return _Content()
    if not isinstance(value, list):
        _fail(where, f"expected a string or a list of content parts, got {_kind(value)}")
    out = _Content()
    texts: list[str] = []
    for j, part in enumerate(value):
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            _fail(f"{where}[{j}]", f"expected a content part object, got {_kind(part)}")
        kind = part.get("type")
        if not isinstance(kind, str):
            what = "missing" if kind is None else _kind(kind)
            _fail(f"{where}[{j}].type", f"expected a content part type string, got {what}")
        if kind in _TEXT_PARTS:
            text = part.get("text", _MISSING)
            if text is _MISSING and isinstance(part.get("value"), str):
                text = part["value"]  # LLaMA-Factory's {"type": "text", "value": ...}
            if not isinstance(text, str):
                _fail(f"{where}[{j}].text", f"expected a string, got {_got(text)}")
            texts.append(text)
        elif kind == "refusal":
            refusal = part.get("refusal")
            texts.append(f"[refusal: {refusal}]" if isinstance(refusal, str) else "[refusal]")
        elif kind in _THINKING_PARTS:
            out.thinking.append(part)
        elif kind == "reasoning" and isinstance(part.get("value"), str):
            out.thinking.append(part)  # LLaMA-Factory's reasoning part: thinking, not counted
        elif kind == "tool_call" and isinstance(part.get("value"), str) and not nested:
            out.tool_calls.extend(_calls_from_text(part["value"], f"{where}[{j}].value"))
        elif kind == "tool_use" and not nested:
            out.tool_calls.append(_read_tool_use(part, f"{where}[{j}]"))
        elif kind == "tool_result" and not nested:
            out.tool_results.append(_read_tool_result(part, f"{where}[{j}]", unknown))
        elif kind == "document" and _document_text(part) is not None:
            texts.append(_document_text(part) or "")
        elif kind in _PLACEHOLDERS:
            texts.append(_PLACEHOLDERS[kind])
        elif kind in _SERVER_CALLS or kind == "tool_use":  # (a tool_use here is nested)
            texts.append(_server_call_text(part, f"{where}[{j}]"))
        elif kind.endswith("_tool_result") or kind == "tool_result":
            texts.append(_server_result_text(kind, part))
        else:
            if unknown is not None:
                unknown.setdefault(kind, f"{where}[{j}]")
            rest = {k: v for k, v in part.items() if k != "type"}
            texts.append(
                f"[{kind}] {_compact_json(rest, f'{where}[{j}]')}" if rest else f"[{kind}]"
            )
    out.text = "\n".join(texts)
    return out


def _document_text(block: dict[str, Any]) -> str | None:
    """An Anthropic ``document`` block with a plain-text source as the text the model reads
    (``[document <title>]`` then the text); None for binary sources (a placeholder then)."""
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "text":
        return None
    data = source.get("data")
    if not isinstance(data, str):
        return None
    title = block.get("title")
    return (
        f"[document {title}]\n{data}" if isinstance(title, str) and title else f"[document]\n{data}"
    )


def _server_call_text(block: dict[str, Any], where: str) -> str:
    """``[server_tool_use] web_search({"query": ...})``: the call as the model wrote it."""
    name = block.get("name")
    args = _arguments(block.get("input"), f"{where}.input")
    return f"[{block['type']}] {name if isinstance(name, str) else '?'}({args})"


def _server_result_text(kind: str, block: dict[str, Any]) -> str:
    """A server tool's result block as readable text: every string and number it holds (titles,
    URLs, page text, stdout...), one ``key: value`` per line, opaque keys left out."""
    lines = [f"[{kind}]"]
    stack: list[tuple[str, object]] = [("", block.get("content"))]
    while stack:
        key, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((k, v) for k, v in reversed(list(value.items())) if k not in _OPAQUE_KEYS)
        elif isinstance(value, list):
            stack.extend((key, v) for v in reversed(value))
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            text = str(value)
            if text:
                lines.append(f"{key}: {text}" if key else text)
    return "\n".join(lines)


def _read_tool_use(block: dict[str, Any], where: str) -> ToolCall:
    """An Anthropic ``tool_use`` block ``{id, name, input}`` as a ToolCall."""
    call_id = _opt_str(block.get("id"), f"{where}.id")
    name = block.get("name")
    if not isinstance(name, str):
        _fail(f"{where}.name", f"expected a tool name string, got {_kind(name)}")
    return _new_tool_call(
        call_id, name, _arguments(block.get("input"), f"{where}.input"), "function"
    )


def _read_tool_result(
    block: dict[str, Any], where: str, unknown: dict[str, str] | None = None
) -> tuple[str | None, str, bool]:
    """An Anthropic ``tool_result`` block as (tool_use_id, text, is_error)."""
    call_id = _opt_str(block.get("tool_use_id"), f"{where}.tool_use_id")
    content = _read_content(block.get("content"), f"{where}.content", nested=True, unknown=unknown)
    text = content.text
    return call_id, text, _opt_bool(block.get("is_error"), f"{where}.is_error")


def _arguments(value: object, where: str) -> str:
    """Tool-call arguments as text: strings as they are, other JSON values as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return _compact_json(value, where)


def _read_tool_call(tc: object, where: str, j: int) -> ToolCall:
    """``tool_calls[j]`` of the message at ``where``: ``{id, type, function: {name, arguments}}``.

    A ``custom`` tool call keeps its ``{name, input}`` under its type's key; a missing id is
    None; arguments given as a JSON object are written as compact JSON text.
    """
    plain = _plain_tool_call(tc)
    if plain is not None:
        return plain
    if not isinstance(tc, dict):
        _bad(where, f".tool_calls[{j}]", "a tool call object", tc)
    fn = tc.get("function")
    call_id = tc.get("id")
    if call_id is not None and not isinstance(call_id, str):
        if not isinstance(call_id, int) or isinstance(call_id, bool):
            _bad(where, f".tool_calls[{j}].id", "a string or null", call_id)
        call_id = str(call_id)
    kind = tc.get("type", "function")
    if not isinstance(kind, str):
        _bad(where, f".tool_calls[{j}].type", "a tool call type string", kind)
    key = "function"
    if fn is None and kind != "function" and isinstance(tc.get(kind), dict):
        key, fn = kind, tc[kind]
    if not isinstance(fn, dict):
        _bad(where, f".tool_calls[{j}].{key}", "a function object {name, arguments}", fn)
    name = fn.get("name")
    if not isinstance(name, str):
        _bad(where, f".tool_calls[{j}].{key}.name", "a function name string", name)
    args_key = "input" if "arguments" not in fn and "input" in fn else "arguments"
    args = fn.get(args_key)
    if not isinstance(args, str):
        args = _arguments(args, _at(where, f".tool_calls[{j}].{key}.{args_key}"))
    return _new_tool_call(call_id, name, args, kind)


def _plain_tool_call(tc: object) -> ToolCall | None:
    """The usual ``{"id", "type", "function": {"name", "arguments"}}`` with string values (other
    keys ignored) as a ToolCall; None for anything else."""
    if type(tc) is not dict:
        return None
    fn = tc.get("function")
    if type(fn) is not dict:
        return None
    call_id, kind, name, args = (
        tc.get("id"),
        tc.get("type", "function"),
        fn.get("name"),
        fn.get("arguments"),
    )
    if type(call_id) is str and type(kind) is str and type(name) is str and type(args) is str:
        return _new_tool_call(call_id, name, args, kind)
    return None


def _read_function_call(fc: object, where: str) -> ToolCall:
    """Legacy ``function_call: {name, arguments}``: one ToolCall without an id."""
    if not isinstance(fc, dict):
        _bad(where, ".function_call", "a function_call object {name, arguments}", fc)
    name = fc.get("name")
    if not isinstance(name, str):
        _bad(where, ".function_call.name", "a function name string", name)
    args = _arguments(fc.get("arguments"), _at(where, ".function_call.arguments"))
    return _new_tool_call(None, name, args, "function")


def _read_compaction_meta(value: object, where: str) -> CompactionMeta | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        _bad(where, ".compaction_meta", "a compaction_meta object", value)
    fields = []
    for key in ("tail_start_id", "previous_compaction_id", "summary_text"):
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            _bad(where, f".compaction_meta.{key}", "a string or null", item)
        fields.append(item)
    return CompactionMeta(*fields)


def _read_role(value: object, where: str) -> Role:
    """The role at ``where`` (a role name string) or a ChatFormatError saying what is wrong."""
    if value is None:
        _fail(where, f"missing role; expected one of {_ROLE_NAMES}")
    if not isinstance(value, str):
        _fail(where, f"expected a role string, got {_kind(value)}")
    role = _ROLES.get(value)
    if role is None:
        _fail(where, f"unknown role {value!r}; expected one of {_ROLE_NAMES}")
    return role


def _read_flag(m: dict[Any, Any], key: str, where: str) -> bool:
    value = m.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        _bad(where, f".{key}", "true or false", value)
    return value


def _read_extra(
    m: dict[Any, Any], where: str, trusted: bool, thinking: list[Any]
) -> tuple[tuple[str, Any], ...]:
    """The keys of ``m`` that ctxlab does not model, sorted by key (plus thinking blocks).

    Values from the JSON parser are JSON by construction; values of an already-parsed source
    are checked (``trusted=False``) so that dumping them cannot fail later.
    """
    if not thinking and m.keys() <= _MESSAGE_KEYS:
        return ()
    extra = [(k, v) for k, v in m.items() if k not in _MESSAGE_KEYS]
    if not trusted:
        for k, v in extra:
            if not isinstance(k, str):
                _fail(where, f"expected string keys, got {_kind(k)} key {k!r}")
            _check_json(v, _at(where, f".{k}"))
    if thinking:
        if not trusted:  # thinking blocks are kept whole: their values must be JSON too
            _check_json(thinking, _at(where, ".content"))
        key = "thinking"
        while key in m:
            key = "_" + key
        extra.append((key, thinking))
    extra.sort(key=_first)
    return tuple(extra)


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


def _read_message(
    m: object, where: str, trusted: bool, position: int, unknown: dict[str, str] | None = None
) -> tuple[list[Message], str | None]:
    """The message(s) one source message stands for, and the source's own id (or None).

    Usually one message. An Anthropic message with ``tool_result`` blocks gives one tool
    message per result, then the rest of the message if anything is left of it (text, tool
    calls, extra keys, compaction fields). Messages get the ids ``m<position>``,
    ``m<position+1>``...; the rest of the message takes the own id instead, when there is one
    (the returned own id is None when the rest was empty and dropped).
    """
    if not isinstance(m, dict):
        _fail(where, f"expected a message object, got {_kind(m)}")
    role_name = m.get("role")
    role = _ROLES.get(role_name) if isinstance(role_name, str) else None
    if role is None:
        role = _read_role(role_name, _at(where, ".role"))
    raw = m.get("content")
    content: _Content | None = None
    if isinstance(raw, str):
        text = raw
    elif raw is None:
        text = ""
    else:
        content = _read_content(raw, _at(where, ".content"), unknown=unknown)
        text = content.text
    name = m.get("name")
    if name is not None and not isinstance(name, str):
        _bad(where, ".name", "a string or null", name)
    tool_call_id = m.get("tool_call_id")
    if tool_call_id is not None and not isinstance(tool_call_id, str):
        _bad(where, ".tool_call_id", "a string or null", tool_call_id)
    calls: list[ToolCall] = []
    raw_calls = m.get("tool_calls")
    if raw_calls is not None:
        if not isinstance(raw_calls, list):
            _bad(where, ".tool_calls", "a list of tool calls", raw_calls)
        calls = [_read_tool_call(tc, where, j) for j, tc in enumerate(raw_calls)]
    own_id = m.get("id")
    if type(own_id) is not str:
        own_id = _read_id(own_id)
    if content is None and m.keys() <= _COMMON_KEYS:
        # The usual tool call / tool result message: nothing more to read.
        mid = f"m{position}" if own_id is None else own_id
        one = _new_message_full(
            role, text, mid, name, tuple(calls), tool_call_id, False, False, None, ()
        )
        return [one], own_id
    if content is not None:
        calls.extend(content.tool_calls)
    if m.get("function_call") is not None:
        calls.append(_read_function_call(m["function_call"], where))
    extra = _read_extra(m, where, trusted, content.thinking if content is not None else [])
    is_compaction = _read_flag(m, "is_compaction", where)
    is_summary = _read_flag(m, "is_summary", where)
    meta = _read_compaction_meta(m.get("compaction_meta"), where)
    out = [
        _new_message_full(
            Role.TOOL,
            result_text,
            f"m{position + j}",
            None,
            (),
            call_id,
            False,
            False,
            None,
            (("is_error", True),) if is_error else (),
        )
        for j, (call_id, result_text, is_error) in enumerate(
            content.tool_results if content is not None else ()
        )
    ]
    if out and not (text or calls or extra or is_compaction or is_summary or meta):
        return out, None
    mid = f"m{position + len(out)}" if own_id is None else own_id
    rest = _new_message_full(
        role, text, mid, name, tuple(calls), tool_call_id, is_compaction, is_summary, meta, extra
    )
    out.append(rest)
    return out, own_id


def _read_plain(
    m: dict[str, Any], role: Role, text: str, mid: str, other_keys: int, trusted: bool
) -> Message | None:
    """The message ``m`` when its ``other_keys`` keys besides role, content and id are
    ``name``, ``tool_call_id`` (strings), plain ``tool_calls`` and, when ``trusted``, keys
    ctxlab keeps in ``extra`` (``refusal``, ``annotations``...); else None.

    Tool calls must be plain (see :func:`_plain_tool_call`).
    """
    name = m.get("name")
    tool_call_id = m.get("tool_call_id")
    raw_calls = m.get("tool_calls")
    extra: tuple[tuple[str, Any], ...] = ()
    if other_keys != (name is not None) + (tool_call_id is not None) + (raw_calls is not None):
        # Another key, or one of these set to null. Values from the parser need no check, so
        # unmodelled keys go to `extra` here; compaction fields and function_call do not.
        if not trusted or not _SPECIAL_KEYS.isdisjoint(m):
            return None
        keys = [k for k in m if k not in _MESSAGE_KEYS]
        if len(keys) > 1:
            keys.sort()
        extra = tuple([(k, m[k]) for k in keys])
    if (name is not None and type(name) is not str) or (
        tool_call_id is not None and type(tool_call_id) is not str
    ):
        return None
    calls = _plain_tool_calls(raw_calls)
    if calls is None:
        return None
    return _new_message_full(role, text, mid, name, calls, tool_call_id, False, False, None, extra)


def _plain_tool_calls(raw_calls: Any) -> tuple[ToolCall, ...] | None:
    """``tool_calls`` as ToolCalls (null: none); None when the list or a call is not plain."""
    if raw_calls is None:
        return ()
    if type(raw_calls) is not list:
        return None
    made = []
    for tc in raw_calls:
        call = _plain_tool_call(tc)
        if call is None:
            return None
        made.append(call)
    return tuple(made)


# How to read the messages of one key layout (see _shape_plan): whether the layout has an id, a
# name, a tool_call_id and tool_calls, and its other keys, sorted (they go to `extra`).
_Plan = tuple[bool, bool, bool, bool, tuple[str, ...]]


def _shape_plan(shape: tuple[str, ...]) -> _Plan | None:
    """How :func:`_read_planned` reads a parsed message whose keys are ``shape``; None when
    such messages need the other readers (no role or content, or a compaction field or
    ``function_call``). A chat has a handful of layouts, so this runs a handful of times."""
    keys = frozenset(shape)
    if "role" not in keys or "content" not in keys or not _SPECIAL_KEYS.isdisjoint(keys):
        return None
    extra = tuple(sorted(keys - _MESSAGE_KEYS))
    return ("id" in keys, "name" in keys, "tool_call_id" in keys, "tool_calls" in keys, extra)


def _read_planned(m: dict[str, Any], plan: _Plan, mid: str) -> Message | None:
    """The parsed message ``m`` laid out as ``plan`` says, with ``mid`` as its id unless it has
    its own; None for anything :func:`_read_plain` would decline (a value of another type,
    calls that are not plain), which the full reader then reads or reports.

    Gives the Message :func:`_read_plain` gives for trusted values: ``extra`` holds the keys
    ctxlab does not model, sorted; a null name, tool_call_id or tool_calls is absent.
    """
    has_id, has_name, has_call_id, has_calls, extra_keys = plan
    role = _ROLES.get(m["role"])
    content = m["content"]
    if role is None or not (content is None or type(content) is str):
        return None
    if has_id:
        own = m["id"]
        if own is not None:
            if type(own) is not str:
                return None
            mid = own
    name = m["name"] if has_name else None
    call_id = m["tool_call_id"] if has_call_id else None
    if (name is not None and type(name) is not str) or (
        call_id is not None and type(call_id) is not str
    ):
        return None
    calls = _plain_tool_calls(m["tool_calls"] if has_calls else None)
    if calls is None:
        return None
    extra = (
        tuple(zip(extra_keys, map(m.__getitem__, extra_keys), strict=True)) if extra_keys else ()
    )
    return _new_message_full(
        role, content or "", mid, name, calls, call_id, False, False, None, extra
    )


def _read_messages(
    items: Sequence[Any],
    path_of: Callable[[int], str],
    *,
    trusted: bool,
    lead: Message | None = None,
    unknown: dict[str, str] | None = None,
) -> tuple[Message, ...]:
    """Messages from OpenAI-shaped message objects, in one pass.

    ``path_of(i)`` names item ``i`` in errors (``$.messages[3]`` or ``line 4``); ``trusted``
    says the items came from the JSON parser, so ``extra`` values need no check; ``lead`` is a
    message put first (a top-level system prompt); ``unknown`` collects unknown block types
    (see :func:`_read_content`). Own ids must be unique (else the error names
    both places); assigned ids ``m<position>`` step around own ids.
    """
    out: list[Message] = [] if lead is None else [lead]
    given: dict[str, tuple[int, int]] = {}  # own id -> (item index, position in `out`)
    roles = _ROLES
    make = _new_message_full
    append = out.append
    plans: dict[tuple[str, ...], _Plan | None] = {}
    for i, m in enumerate(items):
        if trusted and type(m) is dict:
            # Parsed messages of a known key layout (nearly all of them): see _read_planned.
            shape = tuple(m)
            try:
                plan = plans[shape]
            except KeyError:
                plan = plans[shape] = _shape_plan(shape)
            if plan is not None:
                try:
                    planned = _read_planned(m, plan, f"m{len(out)}")
                except TypeError:  # an unhashable role
                    planned = None
                if planned is not None:
                    if plan[0] and m["id"] is not None:  # an id of its own
                        if planned.id in given:
                            _duplicate_id(planned.id, given[planned.id][0], i, path_of)
                        given[planned.id] = (i, len(out))
                    append(planned)
                    continue
        # Fast paths for the messages that make up nearly every chat: text, tool calls and
        # tool results with plain string fields. Anything else takes _read_message, which
        # gives the same Message for these and names the place of any error.
        if type(m) is dict:
            try:
                role = roles[m["role"]]
                content = m["content"]
            except (KeyError, TypeError):  # a key is missing, or the role is unhashable
                pass
            else:
                size = len(m)
                if size == 2 and type(content) is str:
                    append(
                        make(role, content, f"m{len(out)}", None, (), None, False, False, None, ())
                    )
                    continue
                own = m.get("id")
                if (type(content) is str or content is None) and (own is None or type(own) is str):
                    plain = _read_plain(
                        m,
                        role,
                        content or "",
                        f"m{len(out)}" if own is None else own,
                        size - (3 if own is not None else 2),
                        trusted,
                    )
                    if plain is not None:
                        if own is not None:
                            if own in given:
                                _duplicate_id(own, given[own][0], i, path_of)
                            given[own] = (i, len(out))
                        append(plain)
                        continue
        msgs, own_id = _read_message(m, path_of(i), trusted, len(out), unknown)
        if own_id is not None:
            if own_id in given:
                _duplicate_id(own_id, given[own_id][0], i, path_of)
            given[own_id] = (i, len(out) + len(msgs) - 1)
        out.extend(msgs)
    if given and len(given) < len(out):
        _avoid_given_ids(out, {own: position for own, (_, position) in given.items()})
    return tuple(out)


def _messages_list(value: object, where: str) -> list[Any]:
    """``value["messages"]`` of a chat object, checked."""
    if not isinstance(value, dict):
        _fail(where, f'expected an object with a "messages" list, got {_kind(value)}')
    msgs = value.get("messages")
    if not isinstance(msgs, list):
        what = "missing" if msgs is None else _kind(msgs)
        _fail(_at(where, ".messages"), f"expected a list of messages, got {what}")
    return msgs


def _unknown_warnings(unknown: dict[str, str]) -> tuple[str, ...]:
    """One warning per unknown block type, naming where it first occurs."""
    return tuple(
        f"{where}: unknown content block type {kind!r}, kept as text and counted"
        for kind, where in unknown.items()
    )


def _calls_from_text(text: str, where: str) -> list[ToolCall]:
    """Tool calls written as JSON text ``{"name", "arguments"}`` (or a list of those), as
    ShareGPT ``function_call`` turns and LLaMA-Factory ``tool_call`` parts hold them.

    Their ids are None (the file has none): :func:`_pair_by_order` gives calls and results
    matching ids. Text that is not such JSON is a ChatFormatError naming the place.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        _fail(where, f'expected a JSON tool call {{"name", "arguments"}}, got text ({exc.msg})')
    items = value if isinstance(value, list) else [value]
    calls = []
    for k, item in enumerate(items):
        here = f"{where}[{k}]" if isinstance(value, list) else where
        if not isinstance(item, dict):
            _fail(here, f'expected a tool call object {{"name", "arguments"}}, got {_kind(item)}')
        name = item.get("name", _MISSING)
        if not isinstance(name, str):
            _fail(f"{here}.name", f"expected a tool name string, got {_got(name)}")
        args = _arguments(item.get("arguments", item.get("parameters")), f"{here}.arguments")
        calls.append(_new_tool_call(None, name, args, "function"))
    return calls


def _pair_by_order(messages: Sequence[Message], prefix: str = "call_") -> tuple[Message, ...]:
    """Id-less tool calls get ids ``<prefix><n>``; id-less tool results answer the earliest
    unanswered of them, in order. Messages with ids are left as they are.

    One id-less result whose text is a JSON list of 2 or more objects while as many calls wait
    (LLaMA-Factory writes parallel results so) becomes one tool message per object, each holding
    that object's JSON (ids ``<id>.<k>``), so that every call is answered.
    """
    if not any(tc.id is None for m in messages for tc in m.tool_calls):
        return tuple(messages)
    out: list[Message] = []
    waiting: list[str] = []
    made = 0
    for m in messages:
        if m.tool_calls and any(tc.id is None for tc in m.tool_calls):
            calls = []
            for tc in m.tool_calls:
                if tc.id is None:
                    made += 1
                    tc = ToolCall(f"{prefix}{made}", tc.name, tc.arguments, tc.type)
                    waiting.append(tc.id)  # type: ignore[arg-type]
                calls.append(tc)
            m = m.replace(tool_calls=tuple(calls))
        elif m.role is Role.TOOL and m.tool_call_id is None and waiting:
            parts = _result_list(m.content, len(waiting))
            if parts:
                for k, part in enumerate(parts):
                    out.append(
                        m.replace(id=f"{m.id}.{k}", content=part, tool_call_id=waiting.pop(0))
                    )
                continue
            m = m.replace(tool_call_id=waiting.pop(0))
        out.append(m)
    return tuple(out)


def _result_list(text: str, waiting: int) -> list[str]:
    """The items of a JSON list of 2..``waiting`` objects, each as JSON text; else ``[]``."""
    if waiting < 2 or not text.startswith("["):
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    if not isinstance(value, list) or not 2 <= len(value) <= waiting:
        return []
    if not all(isinstance(item, dict) for item in value):
        return []
    return [json.dumps(item, ensure_ascii=False) for item in value]
