"""The typed fast path of ``load_chat`` gives exactly what the general reader gives.

OpenAI JSON bytes in the common shape are decoded by msgspec into structs (``_load_openai_fast``);
everything else goes through the general reader. An already-parsed value never takes the fast
path, so ``load_chat(orjson.loads(data))`` is the reference for ``load_chat(data)``: same
messages field by field (``extra`` included, which equality ignores), or the same error.
"""

from __future__ import annotations

import gc
import json
import sys
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import formats
from ctxlab.errors import ChatFormatError
from ctxlab.formats import dump_chat, load_chat
from ctxlab.model import Message, Role, ToolCall

_MISSING = object()

# Values a field may take: mostly the plain shape, often something the fast path must decline.
_texts = st.sampled_from(["", "hi", "m0", "m1", "m2", "c1", "é ✓ 😀", "a\nb"])
_ids = st.one_of(_texts, st.none(), st.integers(0, 3), st.just(_MISSING))
_optional_text = st.one_of(st.just(_MISSING), _texts, st.none(), st.integers(0, 2), st.just([]))
_roles = st.one_of(
    st.sampled_from([r.value for r in Role]), st.sampled_from(["robot", "", "USER"]), st.none()
)
_deep: Any = 1
for _ in range(80):
    _deep = [_deep]
# Values of the API-response keys kept in `extra`: flat, nested, a big integer, deep.
_extra_values = st.one_of(
    st.none(),
    _texts,
    st.just([]),
    st.just([{"type": "url_citation", "url_citation": {"url": "https://x", "start_index": 0}}]),
    st.just({"id": "audio_1", "expires_at": 1, "data": "AAAA", "transcript": "hi"}),
    st.just(2**70),
    st.just(_deep),
)
_function_calls = st.one_of(
    st.none(),
    st.just({"name": "f", "arguments": '{"a": 1}'}),
    st.just({"name": "f"}),
    st.just({"name": "f", "arguments": {"a": 1}}),
    st.just({"arguments": "{}"}),
    st.just("f"),
)


@st.composite
def _tool_calls(draw: st.DrawFn, plain: bool = False) -> Any:
    def call() -> dict[str, Any]:
        fn: dict[str, Any] = {"name": draw(_texts), "arguments": draw(_texts)}
        if not plain:
            fn["name"] = draw(st.one_of(_texts, st.none()))
            fn["arguments"] = draw(st.one_of(_texts, st.none(), st.just({"a": 1})))
        if draw(st.booleans()):
            fn["extra_in_function"] = 1
        tc: dict[str, Any] = {"function": fn, "id": draw(_texts)}
        if plain:
            if draw(st.booleans()):
                tc["type"] = "function"
        else:
            for key, values in (("id", _ids), ("type", st.one_of(st.just("function"), _ids))):
                value = draw(values)
                if value is _MISSING:
                    tc.pop(key, None)
                else:
                    tc[key] = value
        if draw(st.booleans()):
            tc["index"] = 0
        return tc

    kind = draw(st.integers(0, 9))
    if kind == 0:
        return None
    if kind == 1 and not plain:
        return "not a list"
    return [call() for _ in range(draw(st.integers(0, 2)))]


@st.composite
def _messages(draw: st.DrawFn) -> dict[str, Any]:
    """A message with any mix of valid, odd and invalid fields."""
    m: dict[str, Any] = {}
    role = draw(_roles)
    if role is not None or draw(st.booleans()):
        m["role"] = role
    content = draw(
        st.one_of(
            _texts,
            st.none(),
            st.just(_MISSING),
            st.just([{"type": "text", "text": "part"}]),
            st.just(3),
        )
    )
    if content is not _MISSING:
        m["content"] = content
    for key, values in (("id", _ids), ("name", _optional_text), ("tool_call_id", _optional_text)):
        value = draw(values)
        if value is not _MISSING:
            m[key] = value
    if draw(st.integers(0, 2)) == 0:
        m["tool_calls"] = draw(_tool_calls())
    if draw(st.integers(0, 4)) == 0:
        m["function_call"] = draw(_function_calls)
    for key in ("annotations", "audio", "refusal"):
        if draw(st.integers(0, 4)) == 0:
            m[key] = draw(_extra_values)
    if draw(st.integers(0, 9)) == 0:
        m[draw(st.sampled_from(["is_summary", "compaction_meta", "metadata"]))] = None
    return m


@st.composite
def _plain_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A message in the shape the fast path reads (ids are made unique by the caller)."""
    m: dict[str, Any] = {"role": draw(st.sampled_from([r.value for r in Role]))}
    if draw(st.booleans()):
        m["content"] = draw(st.one_of(_texts, st.none()))
    for key in ("name", "tool_call_id"):
        if draw(st.booleans()):
            m[key] = draw(st.one_of(_texts, st.none()))
    if draw(st.booleans()):
        m["tool_calls"] = draw(_tool_calls(plain=True))
    if draw(st.integers(0, 4)) == 0:
        m["function_call"] = draw(st.one_of(st.none(), st.just({"name": "f", "arguments": ""})))
    for key in ("annotations", "audio"):
        if draw(st.integers(0, 4)) == 0:
            m[key] = draw(_extra_values.filter(lambda v: v is not _deep))
    if draw(st.integers(0, 4)) == 0:
        m["refusal"] = draw(st.one_of(st.none(), _texts))  # the API's refusal: text or null
    return m


def _with_ids(messages: list[dict[str, Any]], ids: list[Any]) -> list[dict[str, Any]]:
    out = []
    for k, (m, own) in enumerate(zip(messages, ids, strict=True)):
        m = dict(m)
        if own == "own":
            m["id"] = f"own{k}"
        elif own is not _MISSING:
            m["id"] = own  # None, or an id such as "m1" that an assigned id would also take
        out.append(m)
    return out


@st.composite
def _documents(draw: st.DrawFn, plain: bool = False) -> Any:
    if plain:
        messages = draw(st.lists(_plain_messages(), max_size=8))
        ids = st.sampled_from(["own", None, _MISSING, "m1", "m2"])
        chosen = draw(st.lists(ids, min_size=len(messages), max_size=len(messages)))
        named = [i for i in chosen if isinstance(i, str) and i != "own"]
        if len(named) != len(set(named)):  # a duplicate own id is an error, not this path
            chosen = [_MISSING if isinstance(i, str) and i != "own" else i for i in chosen]
        messages = _with_ids(messages, chosen)
    else:
        messages = draw(st.lists(_messages(), max_size=8))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return messages
    doc: dict[str, Any] = {"messages": messages}
    if kind == 2:
        doc["model"] = "gpt-4o"
        doc["tools"] = [{"type": "function", "function": {"name": "f"}}]
    elif kind == 3 and not plain:
        doc[draw(st.sampled_from(["system", "mapping", "conversations"]))] = None
    return doc


def _json(value: Any) -> bytes:
    # The stdlib writes integers beyond 64 bits, which orjson.dumps refuses.
    return json.dumps(value, ensure_ascii=False).encode()


def _fields(m: Message) -> tuple[Any, ...]:
    return (
        type(m),
        type(m.role),
        m.role,
        m.content,
        m.id,
        m.name,
        m.tool_calls,
        tuple(type(c) for c in m.tool_calls),
        m.tool_call_id,
        m.is_compaction,
        m.is_summary,
        m.compaction_meta,
        m.extra,
    )


def _outcome(source: Any) -> tuple[str, Any]:
    try:
        return "ok", [_fields(m) for m in load_chat(source)]
    except ChatFormatError as exc:
        return "error", str(exc)


@settings(max_examples=500, deadline=None)
@given(_documents())
def test_fast_path_and_general_reader_agree(doc: Any) -> None:
    data = _json(doc)
    assert _outcome(data) == _outcome(orjson.loads(data))


@settings(max_examples=300, deadline=None)
@given(_documents(plain=True))
def test_the_common_shape_takes_the_fast_path_and_agrees(doc: Any) -> None:
    data = _json(doc)
    fast = formats._load_openai_fast(data)
    assert fast is not None
    assert [_fields(m) for m in fast] == _outcome(orjson.loads(data))[1]


@settings(max_examples=100, deadline=None)
@given(st.lists(_messages(), max_size=8))
def test_bytes_and_json_text_load_alike(messages: list[dict[str, Any]]) -> None:
    data = _json({"messages": messages})
    assert _outcome(data) == _outcome(data.decode())


def test_assigned_ids_step_around_own_ids_on_the_fast_path() -> None:
    data = b'[{"role":"user","content":"a"},{"role":"user","content":"b","id":"m0"}]'
    assert formats._load_openai_fast(data) is not None
    assert [m.id for m in load_chat(data)] == ["m0_1", "m0"]


def test_duplicate_ids_leave_the_fast_path_and_name_both_places() -> None:
    data = b'{"messages":[{"role":"user","content":"a","id":"x"},{"role":"user","id":"x"}]}'
    assert formats._load_openai_fast(data) is None
    with pytest.raises(ChatFormatError, match=r"\$\.messages\[0\] has the same id") as info:
        load_chat(data)
    assert info.value.where == "$.messages[1].id"


def test_a_tool_call_chat_round_trips_through_the_fast_path() -> None:
    chat = (
        Message(Role.SYSTEM, "be brief", "s"),
        Message(Role.USER, "list files", "m1"),
        Message(Role.ASSISTANT, "", "m2", tool_calls=(ToolCall("c1", "ls", '{"p":"."}'),)),
        Message(Role.TOOL, "a.py", "m3", tool_call_id="c1"),
        Message(Role.ASSISTANT, "a.py", "m4", name="bot"),
    )
    data = dump_chat(chat).encode()
    assert formats._load_openai_fast(data) == chat
    assert load_chat(data) == chat


def test_loading_leaves_the_gc_on_and_an_application_freeze_alone() -> None:
    data = orjson.dumps([{"role": "user", "content": str(i)} for i in range(2000)])
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        load_chat(data)
        assert gc.get_freeze_count() == frozen  # not released by the loader's promotion
    finally:
        gc.unfreeze()
    assert gc.isenabled()
    load_chat(data)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_fast_builders_match_the_model() -> None:
    # If Message or ToolCall change shape, the fast builders switch off and the fast path with
    # them: loading stays correct but loses its speed, so say it loudly here.
    assert formats._LAYOUT_WORKS


def test_a_value_the_general_reader_finds_too_deep_is_too_deep_on_the_fast_path_too() -> None:
    # 1,022 levels parse alone, but not inside the document (orjson stops at 1,024 levels).
    # msgspec stops at Python's recursion limit, so raise it: the loader must not rely on it.
    deep = b"[" * 1022 + b"1" + b"]" * 1022
    data = b'{"messages": [{"role": "assistant", "content": "", "refusal": ' + deep + b"}]}"
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        assert formats._load_openai_fast(data) is None
        with pytest.raises(ChatFormatError, match="depth"):
            load_chat(data)
    finally:
        sys.setrecursionlimit(limit)


# -- keys of the user's own ------------------------------------------------------------------------

_own_keys = st.sampled_from(["timestamp", "metadata", "x-trace id", "extra", "ünïcode", "0"])
_own_values = st.one_of(
    st.none(), _texts, st.integers(-3, 3), st.just(2**70), st.just({"a": [1, {"b": None}]})
)


@st.composite
def _own_key_documents(draw: st.DrawFn) -> Any:
    """A common-shape document whose messages carry keys of the user's own (some, or all)."""
    doc = draw(_documents(plain=True))
    messages = doc if isinstance(doc, list) else doc["messages"]
    for m in messages:
        for key in draw(st.lists(_own_keys, max_size=3, unique=True)):
            m[key] = draw(_own_values)
    return doc


@settings(max_examples=300, deadline=None)
@given(_own_key_documents())
def test_keys_of_the_users_own_take_the_fast_path_and_agree(doc: Any) -> None:
    data = _json(doc)
    fast = formats._load_openai_fast(data)
    assert fast is not None
    assert [_fields(m) for m in fast] == _outcome(orjson.loads(data))[1]


@settings(max_examples=300, deadline=None)
@given(st.lists(_messages(), max_size=8), st.data())
def test_the_general_reader_reads_parsed_and_given_values_alike(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    # Bytes the fast path declines are parsed and read with the per-layout plans
    # (trusted values); a value passed in is read by the checking reader.
    for m in messages:
        if data.draw(st.booleans()):
            m[data.draw(_own_keys)] = data.draw(_own_values)
    m_bad = {
        "role": "user",
        "content": "x",
        "is_summary": None,
    }  # sends bytes to the general reader
    doc = {"messages": [*messages, m_bad]}
    raw = _json(doc)
    assert formats._load_openai_fast(raw) is None
    assert _outcome(raw) == _outcome(orjson.loads(raw))


def test_every_message_with_a_timestamp_loads_on_the_fast_path_with_it_in_extra() -> None:
    msgs = [{"role": "user", "content": str(i), "timestamp": f"t{i}"} for i in range(50)]
    msgs[7]["source"] = {"app": "cli"}  # a second key of the user's own, once
    data = orjson.dumps({"messages": msgs})
    fast = formats._load_openai_fast(data)
    assert fast is not None
    assert fast[0].extra == (("timestamp", "t0"),)
    assert fast[7].extra == (("source", {"app": "cli"}), ("timestamp", "t7"))
    assert [m.extra for m in fast] == [m.extra for m in load_chat(orjson.loads(data))]


@pytest.mark.parametrize("key", ['say "hi"', "back\\slash", "tab\there"])
def test_a_key_msgspec_cannot_name_leaves_the_fast_path_and_is_kept(key: str) -> None:
    data = orjson.dumps([{"role": "user", "content": "a", key: 1}])
    assert formats._load_openai_fast(data) is None
    assert load_chat(data)[0].extra == ((key, 1),)


def test_more_own_keys_than_the_fast_path_discovers_take_the_general_reader() -> None:
    limit = formats._fastpath._WIRE_MAX_OWN_KEYS
    up_to = orjson.dumps([{"role": "user", "content": "a", **{f"k{i}": i for i in range(limit)}}])
    beyond = orjson.dumps(
        [{"role": "user", "content": "a", **{f"k{i}": i for i in range(limit + 1)}}]
    )
    assert formats._load_openai_fast(up_to) is not None
    assert formats._load_openai_fast(beyond) is None
    assert len(load_chat(beyond)[0].extra) == limit + 1


def test_an_unknown_compaction_field_still_takes_the_general_reader() -> None:
    data = orjson.dumps([{"role": "user", "content": "a", "is_summary": True, "t": 1}])
    assert formats._load_openai_fast(data) is None
    assert load_chat(data)[0].is_summary


def test_an_own_key_string_that_is_not_utf8_is_left_to_the_general_reader() -> None:
    data = b'[{"role": "user", "content": "a", "t": "caf\xe9"}]'  # Latin-1, not UTF-8
    assert formats._load_openai_fast(data) is None
    assert _outcome(data)[0] == "error"
    escaped = b'[{"role": "user", "content": "a", "t": "caf\\u00e9 \\"x\\""}]'
    fast = formats._load_openai_fast(escaped)
    assert fast is not None and fast[0].extra == (("t", 'café "x"'),)
