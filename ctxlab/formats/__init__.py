"""Reading and writing chats: every file format ctxlab understands, one module each.

:func:`load_chat` turns a file, a folder, bytes, JSON text or an already-parsed value into a
tuple of :class:`~ctxlab.model.Message`; :func:`load_chat_file` returns the same messages with
what the file says about the requests (tool definitions, the provider's billed usage) and the
warnings of a lenient read, as a :class:`LoadedChat`; :func:`dump_chat` writes ctxlab's own
JSON, which is OpenAI Chat Completions JSON plus ctxlab's fields.

The formats (names in :data:`FORMATS`, one line each in :func:`format_help`) are plug-ins:
each module of this package registers a :class:`~ctxlab.formats._registry.ChatFormat` with a
cheap ``sniff``, a ``read`` and, for files with several conversations, ``conversations``; a
third party adds one through the ``ctxlab.formats`` entry-point group. The speed tricks (msgspec
fast path, the layout trick, the GC pause) live in :mod:`ctxlab.formats._fastpath`.

Invariants:

* :func:`load_chat` returns messages or raises :class:`ChatFormatError`; no other exception
  escapes, whatever the input. The error names the place: a JSON path such as
  ``$.messages[3].content`` or a JSONL line such as ``line 12``, prefixed by the file name when
  one is known (``chat.jsonl: line 12``). When no format recognises the input, the error names
  the keys found, the closest formats and every supported one.
* ``load_chat(dump_chat(ms)) == ms`` for every tuple of messages whose ids are unique, and the
  ``extra`` fields survive as well (they must be JSON values; integers beyond 64 bits come back
  as floats, as orjson reads them).
* Every loaded message has a unique, deterministic id: the file's own id when it has one, else
  ``m<position>`` (zero-based position in the loaded chat; a suffix avoids the file's own ids).
* Content is always text: content parts are joined with newlines and non-text parts become
  visible placeholders such as ``[image]``; thinking, server-tool and unknown blocks are text
  that is shown and counted (see :mod:`ctxlab.formats._messages`).
* Loading an OpenAI chat is one pass over its messages; JSON of the common shape takes the
  msgspec fast path, which gives the same messages as the general reader.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final, TypeAlias, TypeVar

import orjson

from ctxlab.errors import ChatFormatError
from ctxlab.formats import _registry
from ctxlab.formats._common import _fail, _title
from ctxlab.formats._detect import refine_openai
from ctxlab.formats._dump import dump_chat, message_to_openai, messages_to_openai

# The fast path's internals, reachable here as before the split (its tests check them).
from ctxlab.formats._fastpath import _LAYOUT_WORKS as _LAYOUT_WORKS
from ctxlab.formats._fastpath import _fast_message_full as _fast_message_full
from ctxlab.formats._fastpath import _gc_paused, _load_openai_fast_full
from ctxlab.formats._fastpath import _load_openai_fast as _load_openai_fast
from ctxlab.formats._fastpath import _new_message_full as _new_message_full
from ctxlab.formats._messages import _MESSAGE_KEYS as _MESSAGE_KEYS
from ctxlab.formats._registry import (
    ChatFormat,
    Document,
    ReadOptions,
    discover_builtins,
    format_names,
    get_format,
    register,
    sniff_folder,
    sniff_line,
    sniff_value,
    unknown_shape,
)
from ctxlab.formats._source import (
    _is_jsonl,
    _jsonl_lines,
    _parse_json,
    _read_source,
    _Source,
    _strip_bom,
)
from ctxlab.formats._tools import read_tools
from ctxlab.formats._values import CallUsage, LoadedChat, ToolDefinition
from ctxlab.model import Message, Role

__all__ = [
    "FORMATS",
    "CallUsage",
    "ChatFormat",
    "ChatFormatError",
    "ChatSource",
    "LoadedChat",
    "ToolDefinition",
    "detect_format",
    "dump_chat",
    "format_help",
    "format_names",
    "list_conversations",
    "load_chat",
    "load_chat_file",
    "message_to_openai",
    "messages_to_openai",
    "register",
]

ChatSource: TypeAlias = (
    os.PathLike[str] | str | bytes | bytearray | memoryview | list[Any] | dict[str, Any]
)
"""What :func:`load_chat` reads: a path, raw bytes, JSON text, or an already-parsed JSON value."""

discover_builtins()

FORMATS: Final[tuple[str, ...]] = tuple(
    f.name for f in sorted(_registry._REGISTRY.values(), key=lambda f: (f.shown, f.name))
)
"""The built-in format names :func:`load_chat` accepts as ``fmt`` (besides ``"auto"``);
:func:`format_names` adds those of installed plug-ins."""

_JSONL_MODES: Final = ("auto", "messages", "conversations")
SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_FAST_FORMATS: Final = frozenset({"auto", "openai", "ctxlab"})


def format_help() -> list[tuple[str, str]]:
    """``(name, one-line description)`` of every format (plug-ins included), in the order of
    :func:`format_names`."""
    return [(name, get_format(name).title) for name in format_names()]


def _check_options(fmt: str, jsonl_mode: str) -> None:
    if fmt != "auto":
        get_format(fmt)
    if jsonl_mode not in _JSONL_MODES:
        _fail(None, f"unknown jsonl_mode {jsonl_mode!r}; expected one of {', '.join(_JSONL_MODES)}")


def _with_name(exc: ChatFormatError, name: str | None) -> ChatFormatError:
    if not name:
        return exc
    return ChatFormatError(exc.reason, f"{name}: {exc.where}" if exc.where else name)


def _jsonl_by_name(src: _Source, fmt: str) -> bool:
    """Whether the format asked for, or the file name, makes the bytes JSONL."""
    if fmt != "auto":
        return get_format(fmt).jsonl
    return (src.name or "").lower().endswith(".jsonl")


def _document(src: _Source, fmt: str) -> Document:
    """The source parsed: a JSON value, JSONL lines or a folder."""
    if src.data is None:
        if src.value is None and src.path is not None:
            return Document(path=src.path, folder=True)
        return Document(src.value, trusted=False, path=src.path)
    data = _strip_bom(src.data)
    if not data or data.isspace():
        _fail(None, "empty input: expected a JSON or JSONL chat")
    if data.startswith(SQLITE_MAGIC):
        # A database (OpenCode's opencode.db) is read from disk by its format, like a folder.
        if src.path is None:
            _fail("$", "an SQLite database given as bytes: pass the database file's path")
        return Document(path=src.path, folder=True, name=src.name)
    if not _jsonl_by_name(src, fmt):
        try:
            return Document(orjson.loads(data), path=src.path)
        except orjson.JSONDecodeError:
            if not (fmt == "auto" and _is_jsonl(data)):
                _parse_json(data)  # raises with line and column
    return Document(lines=tuple(_jsonl_lines(data)), jsonl=True, path=src.path, name=src.name)


def _choose(doc: Document, fmt: str, jsonl_mode: str) -> ChatFormat | None:
    """The format that reads ``doc``: as asked, else sniffed; None for empty JSONL."""
    if fmt != "auto":
        return get_format(fmt)
    if doc.folder:
        assert doc.path is not None
        found = sniff_folder(doc.path)
        if found is None:
            what = "a folder" if doc.path.is_dir() else "a database"
            _fail(None, f"{what} holding no chat ctxlab can read (e.g. Claude Code sessions)")
        return found
    if not doc.jsonl:
        return sniff_value(doc.value) or unknown_shape(doc.value, "$")
    if not doc.lines:
        return None
    if jsonl_mode == "messages":
        return get_format("openai-jsonl")
    if jsonl_mode == "conversations":
        return get_format("finetune-jsonl")
    n, raw = doc.lines[0]
    first = _parse_json(raw, n)
    return sniff_line(first) or unknown_shape(first, f"line {n}", lines=True)


_T = TypeVar("_T")


def _guarded(
    source: object,
    name: str | None,
    action: Callable[[_Source], _T],
) -> _T:
    """Read ``source``, then ``action(source)``, with the GC paused.

    The one place where errors get the display name prefixed and where a RecursionError (a
    value nested too deeply for Python) becomes a ChatFormatError.
    """
    display = name
    try:
        src = _read_source(source, name)
        display = src.name
        with _gc_paused():
            result = action(src)
            # Free the parsed document while the GC is still paused: once it is back on, its
            # first pass would otherwise walk every dict and list of the document before they go.
            del src
            return result
    except ChatFormatError as exc:
        raise _with_name(exc, display) from None
    except RecursionError:
        raise _with_name(ChatFormatError("nesting too deep to read"), display) from None


def _fast(src: _Source, fmt: str) -> LoadedChat | None:
    """The msgspec fast path for OpenAI JSON bytes, or None to read the general way."""
    if fmt not in _FAST_FORMATS or src.data is None or _jsonl_by_name(src, fmt):
        return None
    quick = _load_openai_fast_full(_strip_bom(src.data))
    if quick is None:
        return None
    messages, raw_tools = quick
    tools = read_tools(orjson.loads(raw_tools), "$.tools") if raw_tools is not None else ()
    return LoadedChat(messages, tools, format="ctxlab" if fmt == "ctxlab" else "openai")


def _read(src: _Source, fmt: str, conversation: int | str | None, jsonl_mode: str) -> LoadedChat:
    quick = _fast(src, fmt)
    if quick is not None:
        return quick
    doc = _document(src, fmt)
    chosen = _choose(doc, fmt, jsonl_mode)
    if chosen is None:
        return LoadedChat((), format="openai-jsonl")
    return chosen.read(doc, ReadOptions(conversation, jsonl_mode))


def load_chat_file(
    source: ChatSource,
    *,
    fmt: str = "auto",
    conversation: int | str | None = None,
    jsonl_mode: str = "auto",
    name: str | None = None,
) -> LoadedChat:
    """Read a chat with its tool definitions, billed usage and reading warnings.

    Takes the same arguments as :func:`load_chat`, whose messages it returns in
    :attr:`LoadedChat.messages`.

    Raises:
        ChatFormatError: for anything that cannot be read; no other exception escapes.
    """
    _check_options(fmt, jsonl_mode)
    return _guarded(source, name, lambda src: _read(src, fmt, conversation, jsonl_mode))


def load_chat(
    source: ChatSource,
    *,
    fmt: str = "auto",
    conversation: int | str | None = None,
    jsonl_mode: str = "auto",
    name: str | None = None,
) -> tuple[Message, ...]:
    """Read a chat from a file, a folder, bytes, JSON text or a parsed value.

    Args:
        source: a path (``pathlib.Path``, or a ``str`` naming an existing file or folder that is
            not JSON text), raw bytes, JSON/JSONL text, or an already-parsed list/dict.
            A ``str`` may thus be read from disk: text from someone else (a form, a request)
            must be passed as bytes (``text.encode()``), which are always the chat itself.
        fmt: ``"auto"`` or one of :data:`FORMATS`.
        conversation: which conversation of a multi-conversation source (index, id or title);
            ignored by single-conversation formats. Defaults to the first (for a Claude Code
            session: the main thread; for a project folder: the newest session).
        jsonl_mode: ``"messages"`` (one message per line), ``"conversations"`` (one
            ``{"messages": [...]}`` per line) or ``"auto"`` (decided by the first line).
        name: the display name used in errors (defaults to the file name for paths).

    Returns:
        The messages, each with a unique id; ``()`` for an empty chat.

    Raises:
        ChatFormatError: for anything that cannot be read; no other exception escapes.
    """
    return load_chat_file(
        source, fmt=fmt, conversation=conversation, jsonl_mode=jsonl_mode, name=name
    ).messages


def detect_format(value: ChatSource, *, name: str | None = None) -> str:
    """The format name of a source (one of :data:`FORMATS`), or ``"unknown"``; for display.

    ``value`` is anything :func:`load_chat` accepts. Raises ChatFormatError only when the
    source is not JSON or JSONL at all.
    """

    def action(src: _Source) -> str:
        doc = _document(src, "auto")
        if doc.folder:
            assert doc.path is not None
            found = sniff_folder(doc.path)
        elif not doc.jsonl:
            found = sniff_value(doc.value)
            if found is not None and found.name == "openai":
                return refine_openai(doc.value)
        elif not doc.lines:
            return "openai-jsonl"
        else:
            n, raw = doc.lines[0]
            found = sniff_line(_parse_json(raw, n))
        return "unknown" if found is None else found.name

    return _guarded(value, name, action)


def list_conversations(source: ChatSource, *, name: str | None = None) -> list[tuple[str, str]]:
    """``(id, title)`` of each conversation in ``source``, for a conversation picker.

    The id can be passed back as ``load_chat(..., conversation=id)``. Multi-conversation
    sources (ChatGPT export, fine-tuning JSONL, a ShareGPT list, a Claude Code session with
    sub-agents, a Claude Code project folder) list all of theirs; any other chat is one
    conversation ``("0", <start of the first user message>)``.
    """

    def action(src: _Source) -> list[tuple[str, str]]:
        doc = _document(src, "auto")
        chosen = _choose(doc, "auto", "auto")
        if chosen is None:
            return [("0", "")]
        if chosen.conversations is not None:
            return chosen.conversations(doc)
        messages = chosen.read(doc, ReadOptions()).messages
        return [("0", _first_user_title(messages))]

    return _guarded(source, name, action)


def _first_user_title(messages: tuple[Message, ...]) -> str:
    for m in messages:
        if m.role is Role.USER:
            return _title(m.content)
    return ""
