"""Reading and writing chats: every file format ctxlab understands lives here.

:func:`load_chat` turns a file, bytes, JSON text or an already-parsed value into a tuple of
:class:`~ctxlab.model.Message`; :func:`dump_chat` writes ctxlab's own JSON, which is OpenAI Chat
Completions JSON plus ctxlab's fields (``id``, compaction flags and metadata, ``extra`` keys).

Formats read (names in :data:`FORMATS`): OpenAI Chat Completions JSON (``openai``; ctxlab's own
dump, ``ctxlab``, is the same shape with more fields), JSONL with one message per line
(``openai-jsonl``) or one ``{"messages": [...]}`` conversation per line (``finetune-jsonl``),
Anthropic Messages (``anthropic``), ShareGPT (``sharegpt``) and the ChatGPT data export
(``chatgpt-export``).

Invariants:

* :func:`load_chat` returns messages or raises :class:`ChatFormatError`; no other exception
  escapes, whatever the input. The error names the place: a JSON path such as
  ``$.messages[3].content`` or a JSONL line such as ``line 12``, prefixed by the file name when
  one is known (``chat.jsonl: line 12``).
* ``load_chat(dump_chat(ms)) == ms`` for every tuple of messages whose ids are unique, and the
  ``extra`` fields survive as well (they must be JSON values; integers beyond 64 bits come back
  as floats, as orjson reads them).
* Every loaded message has a unique, deterministic id: the file's own id when it has one, else
  ``m<position>`` (zero-based position in the loaded chat; a suffix avoids the file's own ids).
* Content is always text: content parts are joined with newlines and non-text parts become
  visible placeholders such as ``[image]``.
* Loading an OpenAI chat is one pass over its messages. JSON bytes whose messages hold only
  ``role``, ``content``, ``id``, ``name``, ``tool_calls`` and ``tool_call_id`` with plain string
  values, the legacy ``function_call`` and the ``refusal``, ``annotations`` and ``audio`` keys of
  API responses are decoded by msgspec straight into structs (``_load_openai_fast``); any other
  file is parsed by orjson and read by the general reader, which gives the same messages for
  those files. Both build each :class:`Message` without the frozen dataclass ``__init__`` (see
  ``_MessageLayout``), with the cyclic garbage collector paused; the new objects then go
  straight to its oldest generation (see ``_gc_paused``).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, NoReturn, TypeAlias, TypeVar

import msgspec
import orjson

from ctxlab.errors import ChatFormatError
from ctxlab.model import CompactionMeta, Message, Role, ToolCall

__all__ = [
    "FORMATS",
    "ChatFormatError",
    "ChatSource",
    "detect_format",
    "dump_chat",
    "list_conversations",
    "load_chat",
    "message_to_openai",
    "messages_to_openai",
]

ChatSource: TypeAlias = (
    os.PathLike[str] | str | bytes | bytearray | memoryview | list[Any] | dict[str, Any]
)
"""What :func:`load_chat` reads: a path, raw bytes, JSON text, or an already-parsed JSON value."""

FORMATS: Final[tuple[str, ...]] = (
    "openai",
    "openai-jsonl",
    "finetune-jsonl",
    "anthropic",
    "sharegpt",
    "chatgpt-export",
    "ctxlab",
)
"""The format names :func:`load_chat` accepts as ``fmt`` (besides ``"auto"``)."""

_JSONL_MODES: Final = ("auto", "messages", "conversations")
_ROLES: Final[dict[str, Role]] = {r.value: r for r in Role}
_ROLE_NAMES: Final = ", ".join(_ROLES)

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
_CHATGPT_ROLES: Final[dict[str, Role]] = {
    "system": Role.SYSTEM,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "tool": Role.TOOL,
}

_MAX_DEPTH: Final = 512  # nesting accepted in `extra` values of already-parsed sources
_TITLE_WIDTH: Final = 60

# --------------------------------------------------------------------------------------------
# small helpers


def _fail(where: str | None, reason: str) -> NoReturn:
    raise ChatFormatError(reason, where)


def _kind(value: object) -> str:
    """The JSON name of a value's type, for messages such as ``expected a string, got number``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _at(where: str, suffix: str) -> str:
    """``where`` extended by a JSON path ``suffix``; a bare ``line N`` becomes ``line N, $...``."""
    if not suffix:
        return where
    return where + suffix if "$" in where else f"{where}, ${suffix}"


def _key_path(key: str) -> str:
    return f"[{json.dumps(key, ensure_ascii=False)}]"


def _opt_str(value: object, where: str) -> str | None:
    """``value`` if it is a string or None, else a ChatFormatError at ``where``."""
    if value is None or isinstance(value, str):
        return value
    _fail(where, f"expected a string or null, got {_kind(value)}")


def _opt_bool(value: object, where: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    _fail(where, f"expected true or false, got {_kind(value)}")


def _compact_json(value: object, where: str) -> str:
    """``value`` as compact JSON text (tool-call arguments given as an object)."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        pass
    try:  # integers beyond 64 bits, nesting beyond orjson's limit
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        _fail(where, f"expected a JSON value, got one that cannot be written as JSON ({exc})")


def _check_json(value: object, where: str) -> None:
    """Check that an already-parsed value is a JSON value (values parsed by orjson always are).

    Iterative, with a depth limit, so cyclic or absurdly deep Python values fail cleanly.
    """
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, str | bool | int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                _fail(where, f"expected a JSON value, got the number {item!r}")
            continue
        if depth >= _MAX_DEPTH:
            _fail(where, f"nesting deeper than {_MAX_DEPTH} levels")
        if isinstance(item, list):
            stack.extend((x, depth + 1) for x in item)
        elif isinstance(item, dict):
            for key, x in item.items():
                if not isinstance(key, str):
                    _fail(where, f"expected string object keys, got {_kind(key)} key {key!r}")
                stack.append((x, depth + 1))
        else:
            _fail(where, f"expected a JSON value, got {_kind(item)}")


def _title(text: str) -> str:
    """One short line for a conversation picker."""
    line = " ".join(text.split())
    return line if len(line) <= _TITLE_WIDTH else line[: _TITLE_WIDTH - 1] + "…"


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while many acyclic objects are built, then file them as old.

    With the GC on, every new container is walked by a young collection, and again by the next
    one, before it reaches the oldest generation: for the ~170k objects of a 100k-message chat
    each walk costs about 75 ms, as much as a third of parsing. Loaded messages live as long
    as their chat, so on the way out everything the GC tracks is moved to the oldest generation
    without a walk (``gc.freeze`` then ``gc.unfreeze``). That also ages whatever young objects
    the application had, so their cycles wait for the next full collection; it is skipped when
    the application froze objects itself, which ``unfreeze`` would release.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


# --------------------------------------------------------------------------------------------
# building messages fast


class _MessageLayout:
    """A plain class with :class:`Message`'s slot layout, to build messages quickly.

    A frozen dataclass ``__init__`` sets each field through ``object.__setattr__``, which costs
    about 2 µs per ``Message``: as much as parsing its JSON. :func:`_fast_message_full` fills an
    instance of this class with plain slot stores and then assigns ``__class__ = Message``,
    which Python allows between classes of identical slot layout; the result is an ordinary,
    immutable ``Message``. :func:`_layout_works` checks this against the real constructors at
    import; if model.py changes shape, the loader falls back to the constructors.
    """

    __slots__ = (
        "compaction_meta",
        "content",
        "extra",
        "id",
        "is_compaction",
        "is_summary",
        "name",
        "role",
        "tool_call_id",
        "tool_calls",
    )
    role: Role
    content: str
    id: str
    name: str | None
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str | None
    is_compaction: bool
    is_summary: bool
    compaction_meta: CompactionMeta | None
    extra: tuple[tuple[str, Any], ...]


class _ToolCallLayout:
    """:class:`ToolCall`'s slot layout (see :class:`_MessageLayout`)."""

    __slots__ = ("arguments", "id", "name", "type")
    id: str | None
    name: str
    arguments: str
    type: str


_new: Final = object.__new__


def _fast_message_full(
    role: Role,
    content: str,
    id_: str,
    name: str | None,
    tool_calls: tuple[ToolCall, ...],
    tool_call_id: str | None,
    is_compaction: bool,
    is_summary: bool,
    compaction_meta: CompactionMeta | None,
    extra: tuple[tuple[str, Any], ...],
) -> Message:
    """``Message(...)`` with every field given positionally, about three times faster (see
    _MessageLayout)."""
    m = _new(_MessageLayout)
    m.role = role
    m.content = content
    m.id = id_
    m.name = name
    m.tool_calls = tool_calls
    m.tool_call_id = tool_call_id
    m.is_compaction = is_compaction
    m.is_summary = is_summary
    m.compaction_meta = compaction_meta
    m.extra = extra
    m.__class__ = Message  # type: ignore[assignment]
    return m  # type: ignore[return-value]


def _fast_tool_call(id_: str | None, name: str, arguments: str, type_: str) -> ToolCall:
    """``ToolCall(id_, name, arguments, type_)``, built like _fast_message_full."""
    tc = _new(_ToolCallLayout)
    tc.id = id_
    tc.name = name
    tc.arguments = arguments
    tc.type = type_
    tc.__class__ = ToolCall  # type: ignore[assignment]
    return tc  # type: ignore[return-value]


def _layout_works() -> bool:
    """Whether the fast builders give exactly what the dataclass constructors give."""
    for real_cls, layout in ((Message, _MessageLayout), (ToolCall, _ToolCallLayout)):
        names = sorted(f.name for f in dataclasses.fields(real_cls))
        if sorted(getattr(real_cls, "__slots__", ())) != names or sorted(layout.__slots__) != names:
            return False
    call = ToolCall("c", "f", "{}", "function")
    meta = CompactionMeta("t")
    full = (Role.TOOL, "x", "m1", "n", (call,), "c", True, True, meta, (("k", 1),))
    try:
        cases: list[tuple[Any, Any]] = [
            (
                _fast_message_full(
                    Role.USER, "probe", "m0", None, (), None, False, False, None, ()
                ),
                Message(Role.USER, "probe", "m0"),
            ),
            (_fast_message_full(*full), Message(*full)),
            (_fast_tool_call("c", "f", "{}", "function"), call),
        ]
    except TypeError:  # __class__ assignment refused: layouts differ
        return False
    return all(
        type(fast) is type(real)
        and all(getattr(fast, f.name) == getattr(real, f.name) for f in dataclasses.fields(real))
        for fast, real in cases
    )


# Every field positionally, as the dataclass constructors take them when the layout trick fails.
_new_message_full: Callable[..., Message] = Message
_new_tool_call: Callable[[str | None, str, str, str], ToolCall] = ToolCall
_LAYOUT_WORKS: Final = _layout_works()
if _LAYOUT_WORKS:
    _new_message_full, _new_tool_call = _fast_message_full, _fast_tool_call


# --------------------------------------------------------------------------------------------
# content: OpenAI content parts and Anthropic blocks (one walker: both share "text")


@dataclasses.dataclass(slots=True)
class _Content:
    """What a message's ``content`` holds once read."""

    text: str = ""
    tool_calls: list[ToolCall] = dataclasses.field(default_factory=list)
    # Anthropic tool_result blocks: (tool_use_id, text, is_error), in order.
    tool_results: list[tuple[str | None, str, bool]] = dataclasses.field(default_factory=list)
    thinking: list[Any] = dataclasses.field(default_factory=list)


def _read_content(value: object, where: str, *, nested: bool = False) -> _Content:
    """Read ``content``: a string, null, or a list of content parts / blocks.

    Text parts are joined with ``"\\n"``; other parts become placeholders, except Anthropic
    ``tool_use`` (-> a tool call), ``tool_result`` (-> a separate tool message, unless
    ``nested``: a tool result inside a tool result is only a placeholder) and thinking blocks
    (dropped from the text, kept in ``thinking``).
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
            text = part.get("text")
            if not isinstance(text, str):
                _fail(f"{where}[{j}].text", f"expected a string, got {_kind(text)}")
            texts.append(text)
        elif kind == "refusal":
            refusal = part.get("refusal")
            texts.append(f"[refusal: {refusal}]" if isinstance(refusal, str) else "[refusal]")
        elif kind in _THINKING_PARTS:
            out.thinking.append(part)
        elif kind == "tool_use" and not nested:
            out.tool_calls.append(_read_tool_use(part, f"{where}[{j}]"))
        elif kind == "tool_result" and not nested:
            out.tool_results.append(_read_tool_result(part, f"{where}[{j}]"))
        else:
            texts.append(_PLACEHOLDERS.get(kind) or f"[{kind}]")
    out.text = "\n".join(texts)
    return out


def _read_tool_use(block: dict[str, Any], where: str) -> ToolCall:
    """An Anthropic ``tool_use`` block ``{id, name, input}`` as a ToolCall."""
    call_id = _opt_str(block.get("id"), f"{where}.id")
    name = block.get("name")
    if not isinstance(name, str):
        _fail(f"{where}.name", f"expected a tool name string, got {_kind(name)}")
    return _new_tool_call(
        call_id, name, _arguments(block.get("input"), f"{where}.input"), "function"
    )


def _read_tool_result(block: dict[str, Any], where: str) -> tuple[str | None, str, bool]:
    """An Anthropic ``tool_result`` block as (tool_use_id, text, is_error)."""
    call_id = _opt_str(block.get("tool_use_id"), f"{where}.tool_use_id")
    text = _read_content(block.get("content"), f"{where}.content", nested=True).text
    return call_id, text, _opt_bool(block.get("is_error"), f"{where}.is_error")


def _arguments(value: object, where: str) -> str:
    """Tool-call arguments as text: strings as they are, other JSON values as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return _compact_json(value, where)


# --------------------------------------------------------------------------------------------
# OpenAI messages (also ctxlab's dump, JSONL lines and Anthropic messages)


def _bad(where: str, suffix: str, expected: str, value: object) -> NoReturn:
    """Fail with ``expected <expected>, got <kind of value>`` at ``where`` + ``suffix``.

    Paths are only built here, on failure: the readers pass the pieces.
    """
    _fail(_at(where, suffix), f"expected {expected}, got {_kind(value)}")


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


def _read_id(value: object) -> str | None:
    """A message's own id: a string, or an integer written as text; anything else is no id."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


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
        key = "thinking"
        while key in m:
            key = "_" + key
        extra.append((key, thinking))
    extra.sort(key=_first)
    return tuple(extra)


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


def _read_message(
    m: object, where: str, trusted: bool, position: int
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
        content = _read_content(raw, _at(where, ".content"))
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
    calls: tuple[ToolCall, ...] = ()
    if raw_calls is not None:
        if type(raw_calls) is not list:
            return None
        made = []
        for tc in raw_calls:
            call = _plain_tool_call(tc)
            if call is None:
                return None
            made.append(call)
        calls = tuple(made)
    return _new_message_full(role, text, mid, name, calls, tool_call_id, False, False, None, extra)


def _read_messages(
    items: Sequence[Any],
    path_of: Callable[[int], str],
    *,
    trusted: bool,
    lead: Message | None = None,
) -> tuple[Message, ...]:
    """Messages from OpenAI-shaped message objects, in one pass.

    ``path_of(i)`` names item ``i`` in errors (``$.messages[3]`` or ``line 4``); ``trusted``
    says the items came from the JSON parser, so ``extra`` values need no check; ``lead`` is a
    message put first (a top-level system prompt). Own ids must be unique (else the error names
    both places); assigned ids ``m<position>`` step around own ids.
    """
    out: list[Message] = [] if lead is None else [lead]
    given: dict[str, tuple[int, int]] = {}  # own id -> (item index, position in `out`)
    roles = _ROLES
    make = _new_message_full
    append = out.append
    for i, m in enumerate(items):
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
        msgs, own_id = _read_message(m, path_of(i), trusted, len(out))
        if own_id is not None:
            if own_id in given:
                _duplicate_id(own_id, given[own_id][0], i, path_of)
            given[own_id] = (i, len(out) + len(msgs) - 1)
        out.extend(msgs)
    if given and len(given) < len(out):
        _avoid_given_ids(out, {own: position for own, (_, position) in given.items()})
    return tuple(out)


def _duplicate_id(own: str, first: int, second: int, path_of: Callable[[int], str]) -> NoReturn:
    _fail(
        _at(path_of(second), ".id"),
        f"duplicate message id {own!r}: {path_of(first)} has the same id",
    )


def _avoid_given_ids(out: list[Message], owners: dict[str, int]) -> None:
    """Rename, in place, assigned ids equal to an own id of the chat: ``m3`` -> ``m3_1``.

    ``owners`` maps each own id to the position of its message in ``out``. A message whose id
    is an own id but that sits elsewhere got its id assigned, so it is the one renamed.
    """
    taken = set(owners)
    for k, msg in enumerate(out):
        owner = owners.get(msg.id)
        if owner is not None and owner != k:
            n = 1
            while f"{msg.id}_{n}" in taken:
                n += 1
            out[k] = msg.replace(id=f"{msg.id}_{n}")
            taken.add(out[k].id)


def _messages_list(value: object, where: str) -> list[Any]:
    """``value["messages"]`` of a chat object, checked."""
    if not isinstance(value, dict):
        _fail(where, f'expected an object with a "messages" list, got {_kind(value)}')
    msgs = value.get("messages")
    if not isinstance(msgs, list):
        what = "missing" if msgs is None else _kind(msgs)
        _fail(_at(where, ".messages"), f"expected a list of messages, got {what}")
    return msgs


def _load_openai(value: object, trusted: bool) -> tuple[Message, ...]:
    """OpenAI Chat Completions: a list of messages or ``{"messages": [...], ...}``.

    Other top-level keys (``model``, ``tools``, ...) are ignored. A single message object
    (one JSONL line read as JSON) is a one-message chat.
    """
    if isinstance(value, list):
        return _read_messages(value, _index_path("$"), trusted=trusted)
    if isinstance(value, dict) and "messages" not in value and "role" in value:
        return _read_messages([value], lambda _: "$", trusted=trusted)
    msgs = _messages_list(value, "$")
    return _read_messages(msgs, _index_path("$.messages"), trusted=trusted)


def _index_path(base: str) -> Callable[[int], str]:
    return lambda i: f"{base}[{i}]"


# --------------------------------------------------------------------------------------------
# OpenAI JSON, typed fast path
#
# Most chats people load are OpenAI JSON whose messages hold only role, content, id, name,
# tool_calls and tool_call_id with plain string values, plus the legacy function_call and the
# refusal, annotations and audio keys of API responses. msgspec decodes those bytes straight
# into the untracked structs below, without building a dict per message, and each struct then
# becomes a Message. Anything else (another key, another type, a duplicate id, another format)
# makes the decode fail or the builder decline, and the file is read by the general reader,
# which gives the same messages for these files and names the place of any error.


class _WireFunction(msgspec.Struct, gc=False):
    name: str
    arguments: str


class _WireToolCall(msgspec.Struct, gc=False):
    id: str
    function: _WireFunction
    type: str = "function"


class _WireMessage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    role: Role
    content: str | None = None
    id: str | None = None
    name: str | None = None
    tool_calls: list[_WireToolCall] | None = None
    tool_call_id: str | None = None
    function_call: _WireFunction | None = None
    # Keys API responses carry that ctxlab keeps in `extra` (see _wire_extra).
    annotations: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    audio: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    refusal: str | msgspec.UnsetType | None = msgspec.UNSET


class _WireChat(msgspec.Struct, gc=False):
    """``{"messages": [...]}``; other top-level keys (``model``, ``tools``...) are ignored."""

    messages: list[_WireMessage]
    # Keys that make the file another format (see _shape): present means "not this path".
    system: Any = msgspec.UNSET
    mapping: Any = msgspec.UNSET
    conversations: Any = msgspec.UNSET


_WIRE_DECODER: Final = msgspec.json.Decoder(_WireChat | list[_WireMessage])
# Raw values nesting deeper than this go to the general reader, whose parser limits the depth of
# the whole document (orjson: 1024 levels); these values are flat in practice.
_WIRE_EXTRA_MAX_OPENINGS: Final = 64


def _wire_extra(m: _WireMessage) -> tuple[tuple[str, Any], ...] | None:
    """``extra`` of a message with API-response keys, sorted by key as the general reader sorts
    it; None to leave the file to the general reader.

    ``annotations`` and ``audio`` are re-read by orjson, as the general reader reads them
    (msgspec would read integers beyond 64 bits differently); ``refusal`` is text or null.
    """
    pairs: list[tuple[str, Any]] = []
    for key, raw in (("annotations", m.annotations), ("audio", m.audio)):
        if raw is msgspec.UNSET:
            continue
        text = bytes(raw)
        if text == b"[]" or text == b"null":  # what these keys hold nearly always
            pairs.append((key, [] if text == b"[]" else None))
            continue
        if text.count(b"[") + text.count(b"{") > _WIRE_EXTRA_MAX_OPENINGS:
            return None
        try:
            pairs.append((key, orjson.loads(text)))
        except orjson.JSONDecodeError:
            return None
    if m.refusal is not msgspec.UNSET:
        pairs.append(("refusal", m.refusal))
    return tuple(pairs)


def _load_openai_fast(data: bytes) -> tuple[Message, ...] | None:
    """The messages of OpenAI JSON ``data`` in the common shape, or None for the general reader."""
    if not _LAYOUT_WORKS:
        return None
    try:
        wire = _WIRE_DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):  # not JSON, not this shape, too deep
        return None
    if isinstance(wire, _WireChat):
        if not (wire.system is wire.mapping is wire.conversations is msgspec.UNSET):
            return None
        items = wire.messages
    else:
        items = wire
    # The builders of _fast_message_full and _fast_tool_call, inlined: a call per message would be
    # a tenth of the whole load.
    new, message_layout, call_layout = object.__new__, _MessageLayout, _ToolCallLayout
    out: list[Any] = []
    append = out.append
    owners: dict[str, int] = {}
    for m in items:
        own = m.id
        if own is None:
            own = f"m{len(out)}"
        elif own in owners:
            return None  # the general reader names both places
        else:
            owners[own] = len(out)
        calls: tuple[Any, ...] = ()
        if m.tool_calls:
            made = []
            for c in m.tool_calls:
                call = new(call_layout)
                fn = c.function
                call.id = c.id
                call.name = fn.name
                call.arguments = fn.arguments
                call.type = c.type
                call.__class__ = ToolCall  # type: ignore[assignment]
                made.append(call)
            calls = tuple(made)
        if m.function_call is not None:  # the legacy single call, after any tool_calls
            fc = m.function_call
            legacy = (_new_tool_call(None, fc.name, fc.arguments, "function"),)
            calls = calls + legacy
        extra: tuple[tuple[str, Any], ...] = ()
        if not (m.annotations is m.audio is m.refusal is msgspec.UNSET):
            found = _wire_extra(m)
            if found is None:
                return None
            extra = found
        msg = new(message_layout)
        msg.role = m.role
        msg.content = m.content or ""
        msg.id = own
        msg.name = m.name
        msg.tool_calls = calls
        msg.tool_call_id = m.tool_call_id
        msg.is_compaction = False
        msg.is_summary = False
        msg.compaction_meta = None
        msg.extra = extra
        msg.__class__ = Message  # type: ignore[assignment]
        append(msg)
    if owners and len(owners) < len(out):
        _avoid_given_ids(out, owners)
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Anthropic Messages


def _load_anthropic(value: object, trusted: bool) -> tuple[Message, ...]:
    """Anthropic Messages: ``{"system": ..., "messages": [...]}``, content as blocks.

    ``system`` (a string or a list of text blocks) becomes a leading system message; blocks are
    read by :func:`_read_content` (tool_use -> tool calls, tool_result -> tool messages first).
    """
    if isinstance(value, list):
        return _read_messages(value, _index_path("$"), trusted=trusted)
    msgs = _messages_list(value, "$")
    assert isinstance(value, dict)  # checked by _messages_list
    lead = None
    system = value.get("system")
    if system is not None:
        text = _read_content(system, "$.system", nested=True).text
        if text:
            lead = Message(Role.SYSTEM, text, "m0")
    return _read_messages(msgs, _index_path("$.messages"), trusted=trusted, lead=lead)


# --------------------------------------------------------------------------------------------
# multi-conversation sources


def _pick_conversation(
    conversation: int | str | None, count: int, labels: Sequence[Sequence[str | None]] = ()
) -> int:
    """The index of the chosen conversation among ``count``.

    ``None`` is the first; an int is an index; a string matches, in this order, a
    conversation's id, its title (``labels[i]`` holds them), then a decimal index.
    """
    if count == 0:
        _fail("$", "the file holds no conversations")
    if conversation is None:
        return 0
    if isinstance(conversation, bool) or not isinstance(conversation, int | str):
        _fail(None, f"conversation must be an index or an id, got {_kind(conversation)}")
    if isinstance(conversation, str):
        for position in range(max((len(names) for names in labels), default=0)):
            for i, names in enumerate(labels):  # ids first, then titles
                if position < len(names) and names[position] == conversation:
                    return i
        if not conversation.strip().isdecimal():
            _fail(None, f"no conversation with id or title {conversation!r} ({count} in the file)")
        index = int(conversation)
    else:
        index = conversation
    if not 0 <= index < count:
        _fail(None, f"conversation {index} is out of range: the file holds {count}")
    return index


def _load_finetune(
    convs: Sequence[Any],
    path_of: Callable[[int], str],
    conversation: int | str | None,
    trusted: bool,
) -> tuple[Message, ...]:
    """One ``{"messages": [...]}`` conversation of a list (fine-tuning JSONL, parsed)."""
    k = _pick_conversation(conversation, len(convs))
    where = path_of(k)
    msgs = _messages_list(convs[k], where)
    return _read_messages(msgs, _index_path(_at(where, ".messages")), trusted=trusted)


def _load_sharegpt(value: object, conversation: int | str | None) -> tuple[Message, ...]:
    """ShareGPT: ``{"conversations": [{"from", "value"}, ...]}`` or a list of those.

    An optional top-level ``system`` string becomes a leading system message; keys of a turn
    other than ``from``/``value`` are kept in ``extra``.
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
        out.append(Message(role, text, f"m{len(out)}", extra=tuple(extra)))
    return tuple(out)


def _chatgpt_labels(convs: Sequence[Any]) -> list[tuple[str | None, str | None]]:
    labels: list[tuple[str | None, str | None]] = []
    for c in convs:
        if isinstance(c, dict):
            cid = _read_id(c.get("conversation_id")) or _read_id(c.get("id"))
            title = c.get("title")
            labels.append((cid, title if isinstance(title, str) else None))
        else:
            labels.append((None, None))
    return labels


def _load_chatgpt(value: object, conversation: int | str | None) -> tuple[Message, ...]:
    """ChatGPT data export (``conversations.json``): the current branch of one conversation.

    Walks ``parent`` links from ``current_node`` to the root (without ``current_node``: from
    the root along the last child), then reads the messages root first, skipping empty nodes,
    hidden messages and empty system messages. Message ids are the export's message ids.
    """
    convs = value if isinstance(value, list) else [value]
    k = _pick_conversation(conversation, len(convs), _chatgpt_labels(convs))
    where = f"$[{k}]" if isinstance(value, list) else "$"
    conv = convs[k]
    if not isinstance(conv, dict):
        _fail(where, f'expected a conversation object with "mapping", got {_kind(conv)}')
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        what = "missing" if mapping is None else _kind(mapping)
        _fail(f"{where}.mapping", f"expected an object of nodes, got {what}")
    out: list[Message] = []
    seen: dict[str, int] = {}
    for node_id in _chatgpt_branch(mapping, conv.get("current_node"), where):
        here = f"{where}.mapping{_key_path(node_id)}"
        node = mapping[node_id]
        msg = node.get("message")
        if msg is None:
            continue
        message = _chatgpt_message(msg, f"{here}.message", node_id)
        if message is None:
            continue
        if message.id in seen:
            _fail(f"{here}.message.id", f"duplicate message id {message.id!r}")
        seen[message.id] = len(out)
        out.append(message)
    return tuple(out)


def _chatgpt_branch(mapping: dict[Any, Any], current: object, where: str) -> list[str]:
    """Node ids from the root to ``current`` (or along last children when there is none)."""
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            _fail(
                f"{where}.mapping{_key_path(str(node_id))}",
                f"expected a node object, got {_kind(node)}",
            )
    if current is None:
        current = _chatgpt_last_leaf(mapping, where)
    if not isinstance(current, str):
        _fail(f"{where}.current_node", f"expected a node id string, got {_kind(current)}")
    if current not in mapping:
        _fail(f"{where}.current_node", f"node {current!r} is not in the mapping")
    chain: list[str] = [current]
    seen = {current}
    parent = mapping[current].get("parent")
    while parent is not None:
        if not isinstance(parent, str) or parent not in mapping:
            _fail(
                f"{where}.mapping{_key_path(chain[-1])}.parent",
                f"expected the id of a node in the mapping, got {parent!r}",
            )
        if parent in seen:
            _fail(f"{where}.mapping", f"the parent links loop at node {parent!r}")
        seen.add(parent)
        chain.append(parent)
        parent = mapping[parent].get("parent")
    chain.reverse()
    return chain


def _chatgpt_last_leaf(mapping: dict[Any, Any], where: str) -> str:
    """The leaf reached from the root by always taking the last child."""
    roots = [nid for nid, node in mapping.items() if node.get("parent") is None]
    if not roots or not isinstance(roots[0], str):
        _fail(f"{where}.mapping", "no root node (a node whose parent is null)")
    current: str = roots[0]
    seen = {current}
    while True:
        children = mapping[current].get("children")
        if not isinstance(children, list) or not children:
            return current
        child = children[-1]
        if not isinstance(child, str) or child not in mapping or child in seen:
            return current
        seen.add(child)
        current = child


def _chatgpt_message(msg: object, where: str, node_id: str) -> Message | None:
    """One export message, or None when it is hidden or an empty system message."""
    if not isinstance(msg, dict):
        _fail(where, f"expected a message object, got {_kind(msg)}")
    meta = msg.get("metadata")
    if isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation") is True:
        return None
    author = msg.get("author")
    if not isinstance(author, dict):
        _fail(f"{where}.author", f"expected an author object, got {_kind(author)}")
    role_name = author.get("role")
    role = _CHATGPT_ROLES.get(role_name) if isinstance(role_name, str) else None
    if role is None:
        _fail(
            f"{where}.author.role",
            f"expected one of {', '.join(_CHATGPT_ROLES)}, got {role_name!r}",
        )
    text = _chatgpt_text(msg.get("content"), f"{where}.content")
    if role is Role.SYSTEM and not text.strip():
        return None
    name = _opt_str(author.get("name"), f"{where}.author.name") if role is Role.TOOL else None
    own = _read_id(msg.get("id")) or node_id
    return Message(role, text, own, name=name)


def _chatgpt_text(content: object, where: str) -> str:
    """The text of an export message's ``content`` object, by ``content_type``."""
    if not isinstance(content, dict):
        _fail(where, f"expected a content object, got {_kind(content)}")
    ctype = content.get("content_type")
    if not isinstance(ctype, str):
        _fail(f"{where}.content_type", f"expected a string, got {_kind(ctype)}")
    if ctype in ("text", "multimodal_text"):
        parts = content.get("parts")
        if parts is None:
            return ""
        if not isinstance(parts, list):
            _fail(f"{where}.parts", f"expected a list, got {_kind(parts)}")
        return "\n".join(
            p if isinstance(p, str) else _asset_placeholder(p) for p in parts if p != ""
        )
    for key in ("text", "result") if ctype in ("code", "execution_output") else ("result", "text"):
        if isinstance(content.get(key), str):
            return str(content[key])
    return f"[{ctype}]"


def _asset_placeholder(part: object) -> str:
    kind = part.get("content_type") if isinstance(part, dict) else None
    if isinstance(kind, str) and "image" in kind:
        return "[image]"
    if isinstance(kind, str) and "audio" in kind:
        return "[audio]"
    return "[file]"


# --------------------------------------------------------------------------------------------
# reading the source


@dataclasses.dataclass(frozen=True, slots=True)
class _Source:
    """A source made ready: either raw bytes (``data``) or an already-parsed ``value``."""

    data: bytes | None
    value: Any
    name: str | None


def _read_source(source: object, name: str | None) -> _Source:
    """The source as bytes to parse or as an already-parsed value.

    A str is a path only if it names an existing file and does not start like JSON text.
    """
    if isinstance(source, os.PathLike):
        return _read_file(Path(source), name)
    if isinstance(source, bytes | bytearray | memoryview):
        return _Source(bytes(source), None, name)
    if isinstance(source, str):
        if source.lstrip()[:1] not in ("[", "{") and _is_path_like(source):
            if _is_file(source):
                return _read_file(Path(source), name)
            try:
                orjson.loads(source)
            except orjson.JSONDecodeError:
                _fail(None, f"{source!r} is neither an existing file nor JSON text")
        try:
            return _Source(source.encode(), None, name)
        except UnicodeEncodeError as exc:
            _fail(None, f"the text holds an unpaired surrogate at character {exc.start}")
    if isinstance(source, list | dict):
        return _Source(None, source, name)
    _fail(None, f"expected a path, bytes, JSON text, a list or a dict, got {type(source).__name__}")


def _is_path_like(text: str) -> bool:
    """One short line of text: it may name a file."""
    return bool(text.strip()) and "\n" not in text and len(text) <= 4096


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _read_file(path: Path, name: str | None) -> _Source:
    try:
        data = path.read_bytes()
    except OSError as exc:
        _fail(None, f"cannot read {str(path)!r}: {exc.strerror or exc}")
    return _Source(data, None, name or path.name)


def _strip_bom(data: bytes) -> bytes:
    """``data`` without a UTF-8 byte order mark; UTF-16/32 text is an error."""
    if data[:3] == b"\xef\xbb\xbf":
        return data[3:]
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:2]:
        _fail(None, "not UTF-8 text: it looks like UTF-16 or UTF-32; save the file as UTF-8")
    return data


def _parse_json(data: bytes, line: int | None = None) -> Any:
    """Parse JSON bytes; errors name the line and column (``line`` for one JSONL line)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        _utf8_check(data, line)
        lineno = line if line is not None else exc.lineno
        _fail(f"line {lineno}", f"invalid JSON ({exc.msg} at column {exc.colno})")


def _utf8_check(data: bytes, line: int | None) -> None:
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        lineno = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        _fail(
            f"line {lineno}",
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {exc.start - start + 1})",
        )


def _jsonl_lines(data: bytes) -> list[tuple[int, bytes]]:
    """The non-blank lines of JSONL text with their 1-based numbers."""
    return [(n, line) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def _is_jsonl(data: bytes) -> bool:
    """Whether ``data`` (not one JSON document) is JSONL.

    It is when its first line is a JSON object and more lines follow; only the head is read.
    """
    head = [line for line in data.split(b"\n", 64) if line.strip()]
    if len(head) < 2:
        return False
    try:
        return isinstance(orjson.loads(head[0]), dict)
    except orjson.JSONDecodeError:
        return False


def _jsonl_mode(lines: list[tuple[int, bytes]], mode: str) -> str:
    """``messages`` or ``conversations``: as asked, or decided by the first line."""
    if mode != "auto":
        return mode
    n, raw = lines[0]
    first = _parse_json(raw, n)
    if isinstance(first, dict) and "messages" in first:
        return "conversations"
    if isinstance(first, dict) and "role" in first:
        return "messages"
    _fail(
        f"line {n}",
        'expected a message object (with "role") or a conversation object (with '
        f'"messages"), got {_kind(first)}',
    )


def _load_jsonl(data: bytes, mode: str, conversation: int | str | None) -> tuple[Message, ...]:
    """JSONL: one message per line, or one ``{"messages": [...]}`` conversation per line.

    Only the chosen conversation's line is parsed in ``conversations`` mode.
    """
    lines = _jsonl_lines(data)
    if not lines:
        return ()
    if _jsonl_mode(lines, mode) == "conversations":
        k = _pick_conversation(conversation, len(lines))
        n, raw = lines[k]
        msgs = _messages_list(_parse_json(raw, n), f"line {n}")
        return _read_messages(msgs, _index_path(f"line {n}, $.messages"), trusted=True)
    values = [_parse_json(raw, n) for n, raw in lines]
    return _read_messages(values, lambda i: f"line {lines[i][0]}", trusted=True)


# --------------------------------------------------------------------------------------------
# detection


def _shape(value: object) -> str:
    """Which reader a parsed value needs, decided from its top level only (no scan).

    The OpenAI and Anthropic readers read content blocks alike, so a message list only needs
    the Anthropic reader for a top-level ``system``; :func:`_detect_value` looks deeper.
    """
    if isinstance(value, list):
        first = value[0] if value else None
        if isinstance(first, dict):
            if "mapping" in first:
                return "chatgpt-export"
            if "conversations" in first:
                return "sharegpt"
            if "messages" in first and "role" not in first:
                return "finetune-jsonl"
        return "openai"
    if not isinstance(value, dict):
        return "unknown"
    if "mapping" in value:
        return "chatgpt-export"
    if "conversations" in value:
        return "sharegpt"
    if "messages" in value:
        return "anthropic" if "system" in value else "openai"
    return "openai" if "role" in value else "unknown"


def _detect_value(value: object) -> str:
    """The format of a parsed value for display, or ``"unknown"`` (scans the messages)."""
    kind = _shape(value)
    if kind != "openai":
        return kind
    msgs = value.get("messages") if isinstance(value, dict) else value
    if isinstance(msgs, list) and _has_anthropic_blocks(msgs):
        return "anthropic"
    if isinstance(value, dict) and isinstance(msgs, list) and _looks_like_ctxlab(value, msgs):
        return "ctxlab"
    return "openai"


def _has_anthropic_blocks(msgs: Sequence[Any]) -> bool:
    """Whether messages use Anthropic-only blocks before any OpenAI-only marker."""
    for m in msgs:
        if not isinstance(m, dict):
            return False
        if "tool_calls" in m or "function_call" in m or m.get("role") in ("tool", "function"):
            return False
        content = m.get("content")
        if isinstance(content, list):
            for block in content:
                kind = block.get("type") if isinstance(block, dict) else None
                if not isinstance(kind, str):
                    continue
                if kind in _ANTHROPIC_BLOCKS:
                    return True
                if kind in _OPENAI_PARTS:
                    return False
    return False


def _looks_like_ctxlab(doc: dict[Any, Any], msgs: list[Any]) -> bool:
    """ctxlab's dump: only ``messages``, and each message carries a string ``id``."""
    if set(doc) != {"messages"} or not msgs:
        return False
    return all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in msgs[:50])


def _unknown_shape(value: object) -> NoReturn:
    if isinstance(value, dict):
        keys = ", ".join(str(k) for k in list(value)[:8]) or "none"
        _fail(
            "$",
            'expected an object with "messages" (OpenAI, Anthropic), "conversations" '
            f'(ShareGPT) or "mapping" (ChatGPT export); found keys: {keys}',
        )
    _fail("$", f'expected a list of messages or an object with "messages", got {_kind(value)}')


# --------------------------------------------------------------------------------------------
# public API


def _check_options(fmt: str, jsonl_mode: str) -> None:
    if fmt != "auto" and fmt not in FORMATS:
        _fail(None, f"unknown format {fmt!r}; expected auto or one of {', '.join(FORMATS)}")
    if jsonl_mode not in _JSONL_MODES:
        _fail(None, f"unknown jsonl_mode {jsonl_mode!r}; expected one of {', '.join(_JSONL_MODES)}")


def _with_name(exc: ChatFormatError, name: str | None) -> ChatFormatError:
    if not name:
        return exc
    return ChatFormatError(exc.reason, f"{name}: {exc.where}" if exc.where else name)


def _prepare_source(src: _Source, fmt: str) -> tuple[_Source, bool]:
    """(the source without a BOM, whether its format or file name makes it JSONL)."""
    if src.data is None:
        return src, False
    data = _strip_bom(src.data)
    if not data or data.isspace():
        _fail(None, "empty input: expected a JSON or JSONL chat")
    jsonl = fmt in ("openai-jsonl", "finetune-jsonl") or (
        fmt == "auto" and (src.name or "").lower().endswith(".jsonl")
    )
    return _Source(data, None, src.name), jsonl


def _parse_source(src: _Source, fmt: str) -> tuple[Any, bool]:
    """Parse a prepared source that is not JSONL by name: (value, or None for JSONL; is_jsonl)."""
    if src.data is None:
        return src.value, False
    try:
        return orjson.loads(src.data), False
    except orjson.JSONDecodeError:
        if fmt == "auto" and _is_jsonl(src.data):
            return None, True
    return _parse_json(src.data), False  # raises with line and column


_T = TypeVar("_T")


def _guarded(
    source: object,
    name: str | None,
    fmt: str,
    action: Callable[[_Source, Any, bool], _T],
    fast: Callable[[bytes], _T | None] | None = None,
) -> _T:
    """Read and parse ``source``, then ``action(source, value, is_jsonl)``.

    ``fast``, when given, is tried first on the bytes of a JSON source; None from it means
    "parse and call ``action``". The one place where errors get the display name prefixed and
    where a RecursionError (a value nested too deeply for Python) becomes a ChatFormatError.
    """
    display = name
    try:
        src = _read_source(source, name)
        display = src.name
        with _gc_paused():
            src, jsonl = _prepare_source(src, fmt)
            if fast is not None and src.data is not None and not jsonl:
                quick = fast(src.data)
                if quick is not None:
                    return quick
            value = None
            if not jsonl:
                value, jsonl = _parse_source(src, fmt)
            result = action(src, value, jsonl)
            # Free the parsed document while the GC is still paused: once it is back on, its
            # first pass would otherwise walk every dict and list of the document before they go.
            del src, value
            return result
    except ChatFormatError as exc:
        raise _with_name(exc, display) from None
    except RecursionError:
        raise _with_name(ChatFormatError("nesting too deep to read"), display) from None


def load_chat(
    source: ChatSource,
    *,
    fmt: str = "auto",
    conversation: int | str | None = None,
    jsonl_mode: str = "auto",
    name: str | None = None,
) -> tuple[Message, ...]:
    """Read a chat from a file, bytes, JSON text or a parsed value.

    Args:
        source: a path (``pathlib.Path``, or a ``str`` naming an existing file that is not
            JSON text), raw bytes, JSON/JSONL text, or an already-parsed list/dict.
        fmt: ``"auto"`` or one of :data:`FORMATS`.
        conversation: which conversation of a multi-conversation source (index, id or title);
            ignored by single-conversation formats. Defaults to the first.
        jsonl_mode: ``"messages"`` (one message per line), ``"conversations"`` (one
            ``{"messages": [...]}`` per line) or ``"auto"`` (decided by the first line).
        name: the display name used in errors (defaults to the file name for paths).

    Returns:
        The messages, each with a unique id; ``()`` for an empty chat.

    Raises:
        ChatFormatError: for anything that cannot be read; no other exception escapes.
    """
    _check_options(fmt, jsonl_mode)
    if fmt == "openai-jsonl":
        jsonl_mode = "messages"
    elif fmt == "finetune-jsonl":
        jsonl_mode = "conversations"

    def action(src: _Source, value: Any, jsonl: bool) -> tuple[Message, ...]:
        if jsonl:
            assert src.data is not None
            return _load_jsonl(src.data, jsonl_mode, conversation)
        return _load_value(value, fmt, conversation, trusted=src.data is not None)

    fast = _load_openai_fast if fmt in ("auto", "openai", "ctxlab") else None
    return _guarded(source, name, fmt, action, fast)


def _load_value(
    value: object, fmt: str, conversation: int | str | None, *, trusted: bool
) -> tuple[Message, ...]:
    """Dispatch a parsed value to its format's reader."""
    kind = _shape(value) if fmt == "auto" else fmt
    if kind in ("openai", "ctxlab", "openai-jsonl"):
        return _load_openai(value, trusted)
    if kind == "anthropic":
        return _load_anthropic(value, trusted)
    if kind == "finetune-jsonl":
        if not isinstance(value, list):
            _fail("$", f"expected a list of conversations, got {_kind(value)}")
        return _load_finetune(value, _index_path("$"), conversation, trusted)
    if kind == "sharegpt":
        return _load_sharegpt(value, conversation)
    if kind == "chatgpt-export":
        return _load_chatgpt(value, conversation)
    _unknown_shape(value)


def detect_format(value: ChatSource, *, name: str | None = None) -> str:
    """The format name of a source (one of :data:`FORMATS`), or ``"unknown"``; for display.

    ``value`` is anything :func:`load_chat` accepts. Raises ChatFormatError only when the
    source is not JSON or JSONL at all.
    """

    def action(src: _Source, parsed: Any, jsonl: bool) -> str:
        if not jsonl:
            return _detect_value(parsed)
        assert src.data is not None
        lines = _jsonl_lines(src.data)
        if lines and _jsonl_mode(lines, "auto") == "conversations":
            return "finetune-jsonl"
        return "openai-jsonl"

    return _guarded(value, name, "auto", action)


def list_conversations(source: ChatSource, *, name: str | None = None) -> list[tuple[str, str]]:
    """``(id, title)`` of each conversation in ``source``, for a conversation picker.

    The id can be passed back as ``load_chat(..., conversation=id)``. Multi-conversation
    sources (ChatGPT export, fine-tuning JSONL, a ShareGPT list) list all of theirs; any other
    chat is one conversation ``("0", <start of the first user message>)``.
    """

    def action(src: _Source, value: Any, jsonl: bool) -> list[tuple[str, str]]:
        if not jsonl:
            return _list_value(value)
        assert src.data is not None
        lines = _jsonl_lines(src.data)
        if not lines or _jsonl_mode(lines, "auto") == "messages":
            return [("0", _raw_title([_parse_json(raw, n) for n, raw in lines]))]
        titles = []
        for n, raw in lines:
            doc = _parse_json(raw, n)
            titles.append(_raw_title(doc.get("messages") if isinstance(doc, dict) else None))
        return [(str(i), t) for i, t in enumerate(titles)]

    return _guarded(source, name, "auto", action)


def _list_value(value: object) -> list[tuple[str, str]]:
    kind = _shape(value)
    if kind == "chatgpt-export":
        convs = value if isinstance(value, list) else [value]
        return [
            (cid or str(i), title or "(untitled)")
            for i, (cid, title) in enumerate(_chatgpt_labels(convs))
        ]
    if kind == "finetune-jsonl" and isinstance(value, list):
        return [
            (str(i), _raw_title(c.get("messages") if isinstance(c, dict) else None))
            for i, c in enumerate(value)
        ]
    if kind == "sharegpt":
        items = value if isinstance(value, list) else [value]
        out = []
        for i, c in enumerate(items):
            turns = c.get("conversations") if isinstance(c, dict) else None
            cid = _read_id(c.get("id")) if isinstance(c, dict) else None
            out.append((cid or str(i), _sharegpt_title(turns)))
        return out
    if kind == "unknown":
        _unknown_shape(value)
    msgs = value.get("messages") if isinstance(value, dict) else value
    return [("0", _raw_title(msgs))]


def _raw_title(msgs: object) -> str:
    """The first user message's text of raw OpenAI messages (never raises)."""
    if isinstance(msgs, list):
        for m in msgs:
            if isinstance(m, dict) and m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, str):
                    return _title(content)
                if isinstance(content, list):
                    texts = [b.get("text") for b in content if isinstance(b, dict)]
                    return _title(" ".join(t for t in texts if isinstance(t, str)))
    return ""


def _sharegpt_title(turns: object) -> str:
    if isinstance(turns, list):
        for t in turns:
            if isinstance(t, dict) and str(t.get("from", "")).lower() in ("human", "user"):
                value = t.get("value")
                return _title(value) if isinstance(value, str) else ""
    return ""


# --------------------------------------------------------------------------------------------
# writing


def _tool_call_to_openai(tc: ToolCall) -> dict[str, Any]:
    if tc.type == "custom":
        return {"id": tc.id, "type": "custom", "custom": {"name": tc.name, "input": tc.arguments}}
    return {
        "id": tc.id,
        "type": tc.type,
        "function": {"name": tc.name, "arguments": tc.arguments},
    }


def message_to_openai(m: Message, *, ctxlab_fields: bool) -> dict[str, Any]:
    """One message as an OpenAI Chat Completions message dict.

    With ``ctxlab_fields=False`` it is exactly what an API call sends: role, content, name,
    tool calls (a single id-less call as legacy ``function_call``), tool_call_id, and only the
    ``extra`` keys the API accepts (``refusal``, ``audio``). With ``ctxlab_fields=True`` it also
    holds ``id``, the compaction fields when set, and every ``extra`` key (known fields win over
    an ``extra`` key of the same name). An assistant's empty content next to tool calls is
    written as null, as the API returns it.
    """
    d: dict[str, Any] = {"id": m.id} if ctxlab_fields else {}
    d["role"] = m.role.value
    d["content"] = None if not m.content and m.tool_calls else m.content
    if m.name is not None:
        d["name"] = m.name
    if m.tool_calls:
        only = m.tool_calls[0]
        if len(m.tool_calls) == 1 and only.id is None and only.type == "function":
            d["function_call"] = {"name": only.name, "arguments": only.arguments}
        else:
            d["tool_calls"] = [_tool_call_to_openai(tc) for tc in m.tool_calls]
    if m.tool_call_id is not None:
        d["tool_call_id"] = m.tool_call_id
    if ctxlab_fields:
        if m.is_compaction:
            d["is_compaction"] = True
        if m.is_summary:
            d["is_summary"] = True
        if m.compaction_meta is not None:
            d["compaction_meta"] = {
                "tail_start_id": m.compaction_meta.tail_start_id,
                "previous_compaction_id": m.compaction_meta.previous_compaction_id,
                "summary_text": m.compaction_meta.summary_text,
            }
    for key, value in m.extra:
        if key not in _MESSAGE_KEYS and (ctxlab_fields or key in _API_EXTRA_KEYS):
            d.setdefault(key, value)
    return d


def messages_to_openai(
    ms: Sequence[Message], *, ctxlab_fields: bool = False
) -> list[dict[str, Any]]:
    """:func:`message_to_openai` of each message: the ``messages`` of an API request."""
    return [message_to_openai(m, ctxlab_fields=ctxlab_fields) for m in ms]


def dump_chat(messages: Sequence[Message], *, indent: int | None = 2) -> str:
    """ctxlab's JSON for ``messages``: ``{"messages": [...]}`` with ctxlab's fields.

    :func:`load_chat` reads it back to equal messages (``extra`` included).
    """
    doc = {"messages": messages_to_openai(messages, ctxlab_fields=True)}
    if indent in (None, 2):
        try:
            option = orjson.OPT_INDENT_2 if indent == 2 else 0
            return orjson.dumps(doc, option=option).decode()
        except orjson.JSONEncodeError:
            pass  # integers beyond 64 bits or deep nesting in `extra`: the stdlib copes
    return json.dumps(doc, indent=indent, ensure_ascii=False)
