"""The typed fast path of ``load_chat`` gives exactly what the general reader gives.

OpenAI JSON bytes in the common shape are decoded by msgspec into structs (``_load_openai_fast``);
everything else goes through the general reader. An already-parsed value never takes the fast
path, so ``load_chat(orjson.loads(data))`` is the reference for ``load_chat(data)``: same
messages field by field (``extra`` included, which equality ignores), or the same error.
"""

from __future__ import annotations

import gc
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


@st.composite
def _tool_calls(draw: st.DrawFn) -> Any:
    def call() -> dict[str, Any]:
        fn: dict[str, Any] = {
            "name": draw(st.one_of(_texts, st.none())),
            "arguments": draw(st.one_of(_texts, st.none(), st.just({"a": 1}))),
        }
        if draw(st.booleans()):
            fn["extra_in_function"] = 1
        tc: dict[str, Any] = {"function": fn}
        for key, values in (("id", _ids), ("type", st.one_of(st.just("function"), _ids))):
            value = draw(values)
            if value is not _MISSING:
                tc[key] = value
        if draw(st.booleans()):
            tc["index"] = 0
        return tc

    kind = draw(st.integers(0, 9))
    if kind == 0:
        return None
    if kind == 1:
        return "not a list"
    return [call() for _ in range(draw(st.integers(0, 2)))]


@st.composite
def _messages(draw: st.DrawFn) -> dict[str, Any]:
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
    if draw(st.integers(0, 9)) == 0:
        m[draw(st.sampled_from(["refusal", "is_summary", "function_call"]))] = None
    return m


@st.composite
def _documents(draw: st.DrawFn) -> Any:
    messages = draw(st.lists(_messages(), max_size=8))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return messages
    doc: dict[str, Any] = {"messages": messages}
    if kind == 2:
        doc["model"] = "gpt-4o"
        doc["tools"] = [{"type": "function", "function": {"name": "f"}}]
    elif kind == 3:
        doc[draw(st.sampled_from(["system", "mapping", "conversations"]))] = None
    return doc


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


def _plain(doc: Any) -> bool:
    """Whether every message of ``doc`` is in the shape the fast path must take."""
    messages = doc if isinstance(doc, list) else doc["messages"]
    if isinstance(doc, dict) and doc.keys() & {"system", "mapping", "conversations"}:
        return False
    own_ids = [m["id"] for m in messages if m.get("id") is not None]
    if len(own_ids) != len(set(own_ids)):
        return False
    for m in messages:
        if not m.keys() <= {"role", "content", "id", "name", "tool_calls", "tool_call_id"}:
            return False
        if m.get("role") not in {r.value for r in Role}:
            return False
        if not all(m.get(k) is None or type(m.get(k)) is str for k in ("id", "name")):
            return False
        if not (m.get("tool_call_id") is None or type(m["tool_call_id"]) is str):
            return False
        if not (m.get("content") is None or type(m["content"]) is str):
            return False
        calls = m.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            return False
        for tc in calls:
            fn = tc["function"]
            if not all(type(tc.get(k, "function")) is str for k in ("id", "type")):
                return False
            if "id" not in tc or not all(type(fn.get(k)) is str for k in ("name", "arguments")):
                return False
    return True


@settings(max_examples=400, deadline=None)
@given(_documents())
def test_fast_path_and_general_reader_agree(doc: Any) -> None:
    data = orjson.dumps(doc)
    fast = formats._load_openai_fast(data)
    assert (fast is not None) == _plain(doc)
    assert _outcome(data) == _outcome(orjson.loads(data))


@settings(max_examples=100, deadline=None)
@given(st.lists(_messages(), max_size=8))
def test_fast_path_holds_for_bytes_paths_and_text_alike(messages: list[dict[str, Any]]) -> None:
    data = orjson.dumps({"messages": messages})
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
