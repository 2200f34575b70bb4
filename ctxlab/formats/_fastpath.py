"""Speed, kept apart so that no format author has to read it.

Three tricks, each checked against the plain way of doing the same thing:

* **The layout trick.** :func:`_new_message_full` / :func:`_new_tool_call` build a
  :class:`~ctxlab.model.Message` / :class:`~ctxlab.model.ToolCall` without the frozen dataclass
  ``__init__`` (see :class:`_MessageLayout`), or, where CPython refuses the ``__class__``
  assignment (a weak-reference slot makes it judge the layouts different), through the slot
  descriptors (:func:`_slot_message_full`); :data:`_LAYOUT_WORKS` records, at import, that they
  give exactly what the constructors give, else they *are* the constructors.
* **The GC pause.** :func:`_gc_paused` keeps the cyclic garbage collector from walking the many
  acyclic objects a load builds.
* **The msgspec fast path.** :func:`_load_openai_fast` decodes OpenAI JSON of the common shape
  straight into structs, keys of the user's own on the messages included (kept in ``extra``, see
  :func:`_wire_decoder`); it returns None for anything else, and the general reader (which gives
  the same messages for those files) takes over.

Format readers only call :func:`_new_message_full` and :func:`_new_tool_call`.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import msgspec
import orjson

from ctxlab.formats._common import _avoid_given_ids
from ctxlab.model import CompactionMeta, Message, Role, ToolCall

# --------------------------------------------------------------------------------------------
# the GC pause


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


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The ``__set__`` of ``cls``'s slot ``name`` (a no-op stand-in when it has none, which
    :func:`_builds_like` then catches)."""
    descriptor = vars(cls).get(name)
    setter = getattr(descriptor, "__set__", None)
    return setter if setter is not None else (lambda _obj, _value: None)


_SET_ROLE, _SET_CONTENT, _SET_ID, _SET_NAME, _SET_CALLS, _SET_CALL_ID = (
    _slot_setter(Message, name)
    for name in ("role", "content", "id", "name", "tool_calls", "tool_call_id")
)
_SET_COMPACTION, _SET_SUMMARY, _SET_META, _SET_EXTRA = (
    _slot_setter(Message, name)
    for name in ("is_compaction", "is_summary", "compaction_meta", "extra")
)


def _slot_message_full(
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
    """``Message(...)`` through its slot descriptors, which store past the frozen
    ``__setattr__``: about twice as fast as the constructor. Used where ``__class__``
    assignment is refused: CPython 3.11 judges two classes with a ``__weakref__`` slot of
    different layout, and Message has one (token counters hold counts weakly)."""
    m = _new(Message)
    _SET_ROLE(m, role)
    _SET_CONTENT(m, content)
    _SET_ID(m, id_)
    _SET_NAME(m, name)
    _SET_CALLS(m, tool_calls)
    _SET_CALL_ID(m, tool_call_id)
    _SET_COMPACTION(m, is_compaction)
    _SET_SUMMARY(m, is_summary)
    _SET_META(m, compaction_meta)
    _SET_EXTRA(m, extra)
    return m


def _builds_like(make: Callable[..., Any], real_cls: type, cases: list[tuple[Any, ...]]) -> bool:
    """Whether ``make(*case)`` equals ``real_cls(*case)``, field by field and in type, for
    every case (False when it raises TypeError: a refused ``__class__`` assignment)."""
    try:
        built = [(make(*case), real_cls(*case)) for case in cases]
    except TypeError:
        return False
    return all(
        type(fast) is type(real)
        and all(getattr(fast, f.name) == getattr(real, f.name) for f in dataclasses.fields(real))
        for fast, real in built
    )


def _same_slots(real_cls: type, layout: type) -> bool:
    names = sorted(f.name for f in dataclasses.fields(real_cls))
    own = sorted(n for n in getattr(real_cls, "__slots__", ()) if n != "__weakref__")
    return own == names and sorted(getattr(layout, "__slots__", ())) == names


_CALL = ToolCall("c", "f", "{}", "function")
_MESSAGE_CASES: list[tuple[Any, ...]] = [
    (Role.USER, "probe", "m0", None, (), None, False, False, None, ()),
    (Role.TOOL, "x", "m1", "n", (_CALL,), "c", True, True, CompactionMeta("t"), (("k", 1),)),
]
_CALL_CASES: list[tuple[Any, ...]] = [("c", "f", "{}", "function")]
_MESSAGE_SWAP: Final = _same_slots(Message, _MessageLayout) and _builds_like(
    _fast_message_full, Message, _MESSAGE_CASES
)
"""The ``__class__`` swap builds messages (the fastest way; the fast path inlines it)."""
_CALL_SWAP: Final = _same_slots(ToolCall, _ToolCallLayout) and _builds_like(
    _fast_tool_call, ToolCall, _CALL_CASES
)

# Every field positionally, as the dataclass constructors take them when neither trick works.
_new_message_full: Callable[..., Message] = Message
_new_tool_call: Callable[[str | None, str, str, str], ToolCall] = ToolCall
if _MESSAGE_SWAP:
    _new_message_full = _fast_message_full
elif _builds_like(_slot_message_full, Message, _MESSAGE_CASES):
    _new_message_full = _slot_message_full
if _CALL_SWAP:
    _new_tool_call = _fast_tool_call
_LAYOUT_WORKS: Final = _new_message_full is not Message and _CALL_SWAP


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
    # The tool definitions, read by the caller (see _load_openai_fast_full).
    tools: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    # Keys that make the file another format: present means "not this path".
    system: Any = msgspec.UNSET
    mapping: Any = msgspec.UNSET
    conversations: Any = msgspec.UNSET


# Message keys that map to Message fields: _WireMessage's, and the compaction fields, which
# need the general reader. Never a key of the user's own (_messages._MESSAGE_KEYS is a subset).
_MODELLED_KEYS: Final = frozenset(
    {f.encode_name for f in msgspec.structs.fields(_WireMessage)}
    | {"is_compaction", "is_summary", "compaction_meta"}
)
# At most this many distinct keys of the user's own (each costs a decode to discover); a file
# with more takes the general reader.
_WIRE_MAX_OWN_KEYS: Final = 8
_UNNAMEABLE: Final = re.compile(r'["\\\x00-\x1f]')
_UNKNOWN_FIELD: Final = re.compile(r"\AObject contains unknown field `(.*)` - at `\$[^`]*`\Z", re.S)


@functools.lru_cache(maxsize=32)
def _wire_decoder(own_keys: tuple[str, ...]) -> msgspec.json.Decoder[Any]:
    """The decoder of OpenAI JSON whose messages may hold ``own_keys`` besides the modelled
    ones; each such key is a :class:`msgspec.Raw` field ``own_<i>`` (``own_keys[i]`` in the
    file), left UNSET where a message lacks it. Any other unknown key fails the decode with a
    ValidationError that names it (see :func:`_unknown_own_key`)."""
    if not own_keys:
        return msgspec.json.Decoder(_WireChat | list[_WireMessage])
    fields = [
        (f"own_{i}", msgspec.Raw | msgspec.UnsetType, msgspec.UNSET) for i in range(len(own_keys))
    ]
    message = msgspec.defstruct(
        "_WireMessageOwnKeys",
        fields,
        bases=(_WireMessage,),
        rename={f"own_{i}": key for i, key in enumerate(own_keys)},
        forbid_unknown_fields=True,
        gc=False,
    )
    chat = msgspec.defstruct(
        "_WireChatOwnKeys",
        [("messages", list[message])],  # type: ignore[valid-type]
        bases=(_WireChat,),
        gc=False,
    )
    return msgspec.json.Decoder(chat | list[message])  # type: ignore[valid-type]


def _unknown_own_key(exc: msgspec.ValidationError) -> str | None:
    """The message key a failed decode did not know, when that is why it failed and the key is
    not one ctxlab models; else None."""
    found = _UNKNOWN_FIELD.match(str(exc))
    if found is None:
        return None
    key = found.group(1)
    # msgspec cannot rename a field to a name with a quote, backslash or control character.
    if key in _MODELLED_KEYS or _UNNAMEABLE.search(key) is not None:
        return None
    return key


def _wire_decode(data: bytes) -> tuple[Any, tuple[str, ...]] | None:
    """``data`` decoded by :func:`_wire_decoder`, with the keys of the user's own its messages
    hold (sorted), or None when it is not OpenAI JSON of the common shape.

    Keys of the user's own are found one decode at a time: each failed decode names the first
    unknown key it met, which the next decoder accepts.
    """
    own_keys: tuple[str, ...] = ()
    while True:
        try:
            return _wire_decoder(own_keys).decode(data), own_keys
        except msgspec.ValidationError as exc:
            key = _unknown_own_key(exc)
            if key is None or len(own_keys) >= _WIRE_MAX_OWN_KEYS:
                return None
            own_keys = tuple(sorted((*own_keys, key)))
        except (msgspec.DecodeError, RecursionError):  # not JSON, too deep
            return None


# Raw values nesting deeper than this go to the general reader, whose parser limits the depth of
# the whole document (orjson: 1024 levels); these values are flat in practice.
_WIRE_EXTRA_MAX_OPENINGS: Final = 64


def _raw_value(raw: msgspec.Raw) -> Any:
    """A raw JSON value read by orjson, as the general reader reads it (msgspec would read
    integers beyond 64 bits differently); ``_NOT_READ`` for a value to leave to the general
    reader (nested too deep, or not JSON orjson takes)."""
    text = bytes(raw)
    if text[:1] == b'"' and b"\\" not in text:  # a string without escapes (a timestamp, an id)
        try:
            return text[1:-1].decode()  # strict UTF-8, as orjson reads it
        except UnicodeDecodeError:
            return _NOT_READ
    if text == b"[]":  # what API-response keys hold nearly always
        return []
    if text == b"null":
        return None
    if text.count(b"[") + text.count(b"{") > _WIRE_EXTRA_MAX_OPENINGS:
        return _NOT_READ
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return _NOT_READ


_NOT_READ: Final = object()


def _wire_extra(
    m: _WireMessage, own: tuple[tuple[str, str], ...] = ()
) -> tuple[tuple[str, Any], ...] | None:
    """``extra`` of a message with API-response keys or keys of the user's own (``own``: pairs
    of key and struct field, see :func:`_wire_decoder`), sorted by key as the general reader
    sorts it; None to leave the file to the general reader.

    ``refusal`` is text or null; the other values are read by :func:`_raw_value`.
    """
    unset = msgspec.UNSET
    pairs: list[tuple[str, Any]] = []
    if m.annotations is not unset or m.audio is not unset:
        for key, raw in (("annotations", m.annotations), ("audio", m.audio)):
            if raw is not unset:
                value = _raw_value(raw)
                if value is _NOT_READ:
                    return None
                pairs.append((key, value))
    if m.refusal is not unset:
        pairs.append(("refusal", m.refusal))
    api = len(pairs)
    for key, field in own:
        raw = getattr(m, field)
        if raw is unset:
            continue
        text = bytes(raw)
        if text[:1] == b'"' and b"\\" not in text:  # _raw_value's first case, inlined
            try:
                pairs.append((key, text[1:-1].decode()))
            except UnicodeDecodeError:
                return None
            continue
        value = _raw_value(raw)
        if value is _NOT_READ:
            return None
        pairs.append((key, value))
    if api and len(pairs) > api:  # keys are distinct, so the sort never compares values
        pairs.sort()
    return tuple(pairs)


def _load_openai_fast(data: bytes) -> tuple[Message, ...] | None:
    """The messages of OpenAI JSON ``data`` in the common shape, or None for the general reader."""
    full = _load_openai_fast_full(data)
    return None if full is None else full[0]


def _load_openai_fast_full(data: bytes) -> tuple[tuple[Message, ...], bytes | None] | None:
    """The messages of OpenAI JSON ``data`` in the common shape and the raw JSON of its
    top-level ``tools`` (None when absent), or None for the general reader."""
    if not _LAYOUT_WORKS:
        return None
    decoded = _wire_decode(data)
    if decoded is None:
        return None
    wire, own_keys = decoded
    own_fields = tuple((key, f"own_{i}") for i, key in enumerate(own_keys))
    tools: bytes | None = None
    if isinstance(wire, _WireChat):
        if not (wire.system is wire.mapping is wire.conversations is msgspec.UNSET):
            return None
        items = wire.messages
        if isinstance(wire.tools, msgspec.Raw):
            tools = bytes(wire.tools)
    else:
        items = wire
    # The builders of _fast_message_full and _fast_tool_call, inlined: a call per message would be
    # a tenth of the whole load.
    new, message_layout, call_layout = object.__new__, _MessageLayout, _ToolCallLayout
    swap, new_message = _MESSAGE_SWAP, _new_message_full
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
        if own_fields or not (m.annotations is m.audio is m.refusal is msgspec.UNSET):
            found = _wire_extra(m, own_fields)
            if found is None:
                return None
            extra = found
        if not swap:
            append(
                new_message(
                    m.role, m.content or "", own, m.name, calls, m.tool_call_id, False, False,
                    None, extra,
                )
            )  # fmt: skip
            continue
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
    return tuple(out), tools
