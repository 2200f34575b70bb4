"""Tests of ctxlab.formats: every import format, the dump round trip, and the error contract.

The contract under test: ``load_chat`` returns messages or raises ChatFormatError naming the
place (JSON path or JSONL line); ``load_chat(dump_chat(ms)) == ms``; ids are unique.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import formats
from ctxlab.errors import ChatFormatError
from ctxlab.formats import (
    FORMATS,
    detect_format,
    dump_chat,
    list_conversations,
    load_chat,
    message_to_openai,
    messages_to_openai,
)
from ctxlab.model import CompactionMeta, Message, Role, ToolCall

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "formats"
REAL_CHATS = Path(__file__).resolve().parent / "fixtures" / "real_chats"

S, U, A, T, F = Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL, Role.FUNCTION


def assert_same(got: tuple[Message, ...], expected: list[Message]) -> None:
    """Equal messages, `extra` included (Message equality ignores it)."""
    assert list(got) == expected
    assert [m.extra for m in got] == [m.extra for m in expected]


def assert_tool_pairs(ms: tuple[Message, ...]) -> None:
    """Each tool result answers a call of the closest assistant message before it."""
    calls: set[str | None] = set()
    for m in ms:
        if m.role is A:
            calls = {c.id for c in m.tool_calls}
        elif m.role is T:
            assert m.tool_call_id in calls, m


# --------------------------------------------------------------------------------------------
# each format, on a realistic hand-written example


def test_openai_json_with_content_parts_and_tool_calls() -> None:
    ms = load_chat(FIXTURES / "openai.json")
    weather = "get_weather"
    assert_same(
        ms,
        [
            Message(S, "You are a concise travel assistant.", "m0"),
            Message(
                U,
                "Here is my boarding pass.\n[image]\nWhat's the weather at both ends of the trip?",
                "m1",
            ),
            Message(
                A,
                "",
                "m2",
                tool_calls=(
                    ToolCall("call_Lis1", weather, '{"city":"Lisbon"}'),
                    ToolCall("call_Osl2", weather, '{"city":"Oslo"}'),  # a dict, dumped compactly
                ),
                extra=(("refusal", None),),
            ),
            Message(T, '{"temp_c": 24, "sky": "clear"}', "m3", tool_call_id="call_Lis1"),
            Message(T, '{"temp_c": 3, "sky": "snow"}', "m4", tool_call_id="call_Osl2"),
            Message(A, "Lisbon: 24 °C and clear. Oslo: 3 °C with snow — pack a coat.", "m5"),
            Message(U, "[audio]\n[file]", "m6"),
            Message(A, "[refusal: I can't open that file.]", "m7"),
        ],
    )
    assert_tool_pairs(ms)
    assert detect_format(FIXTURES / "openai.json") == "openai"


def test_jsonl_one_message_per_line() -> None:
    ms = load_chat(FIXTURES / "messages.jsonl")
    assert [m.role for m in ms] == [S, U, A, T, A]
    assert ms[2].tool_calls == (ToolCall("call_1", "run_tests", '{"path": "tests/"}'),)
    assert ms[3].tool_call_id == "call_1"
    assert ms[3].content.startswith("FAILED tests/test_rounds.py")
    assert [m.id for m in ms] == ["m0", "m1", "m2", "m3", "m4"]
    assert detect_format(FIXTURES / "messages.jsonl") == "openai-jsonl"
    # The same text without a .jsonl name is recognised as JSONL too.
    data = (FIXTURES / "messages.jsonl").read_bytes()
    assert load_chat(data) == ms
    assert load_chat(data, fmt="openai-jsonl") == ms
    assert load_chat(data, jsonl_mode="messages", name="x.jsonl") == ms


def test_finetune_jsonl_picks_a_conversation() -> None:
    path = FIXTURES / "finetune.jsonl"
    marv = "Marv is a factual chatbot that is also sarcastic."
    assert_same(
        load_chat(path),
        [
            Message(S, marv, "m0"),
            Message(U, "What's the capital of France?", "m1"),
            Message(A, "Paris, as if everyone doesn't know that already.", "m2"),
        ],
    )
    second = [
        Message(S, marv, "m0"),
        Message(U, "Who wrote 'Romeo and Juliet'?", "m1"),
        Message(
            A,
            "Oh, just some guy named William Shakespeare. Ever heard of him?",
            "m2",
            extra=(("weight", 1),),
        ),
    ]
    assert_same(load_chat(path, conversation=1), second)
    assert_same(load_chat(path, conversation="1"), second)
    assert_same(load_chat(path.read_bytes(), fmt="finetune-jsonl", conversation=1), second)
    assert list_conversations(path) == [
        ("0", "What's the capital of France?"),
        ("1", "Who wrote 'Romeo and Juliet'?"),
    ]
    assert detect_format(path) == "finetune-jsonl"
    with pytest.raises(ChatFormatError, match="out of range: the file holds 2"):
        load_chat(path, conversation=2)


def test_anthropic_system_tool_use_tool_result_image() -> None:
    ms = load_chat(FIXTURES / "anthropic.json")
    thinking = {
        "type": "thinking",
        "thinking": "The logo is Acme's; I need a quote.",
        "signature": "EqQBCgIYAhIM",
    }
    assert_same(
        ms,
        [
            Message(
                S, "You are a careful research assistant.\nCite the tool output you rely on.", "m0"
            ),
            Message(U, "[image]\nWhat is the stock price of the company in this logo?", "m1"),
            Message(
                A,
                "That is the Acme logo. Let me look up the price.",
                "m2",
                tool_calls=(ToolCall("toolu_01A", "get_stock_price", '{"ticker":"ACME"}'),),
                extra=(("thinking", [thinking]),),
            ),
            # tool results come first, then the rest of the user message
            Message(T, "ACME: 123.45 USD", "m3", tool_call_id="toolu_01A"),
            Message(U, "Also compare with last week.", "m4"),
            Message(
                A,
                "",
                "m5",
                tool_calls=(
                    ToolCall("toolu_01B", "get_stock_history", '{"ticker":"ACME","days":7}'),
                ),
            ),
            # a user message holding only a tool result leaves no empty user message behind
            Message(
                T, "upstream timeout", "m6", tool_call_id="toolu_01B", extra=(("is_error", True),)
            ),
            Message(
                A, "ACME trades at 123.45 USD; last week's history is unavailable right now.", "m7"
            ),
        ],
    )
    assert_tool_pairs(ms)
    assert detect_format(FIXTURES / "anthropic.json") == "anthropic"
    # The API form of a thinking assistant message carries no thinking; the dump keeps it.
    assert "thinking" not in message_to_openai(ms[2], ctxlab_fields=False)
    assert load_chat(dump_chat(ms))[2].extra == ms[2].extra


def test_anthropic_detected_without_system_from_blocks() -> None:
    chat = {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ]
    }
    assert detect_format(chat) == "anthropic"
    ms = load_chat(chat)
    assert [m.role for m in ms] == [U, A, T]
    assert ms[1].tool_calls == (ToolCall("t1", "f", "{}"),)
    assert ms[2] == Message(T, "", "m2", tool_call_id="t1")


def test_sharegpt_list_with_system_and_function_turns() -> None:
    path = FIXTURES / "sharegpt.json"
    assert_same(
        load_chat(path),
        [
            Message(U, "Who are you?", "m0"),
            Message(A, "I am Vicuna, a language model trained by researchers from LMSYS.", "m1"),
        ],
    )
    expected = [
        Message(S, "You have access to the get_exchange_rate function.", "m0"),
        Message(U, "How many euros is 100 dollars?", "m1"),
        # The function_call turn is a real tool call (ShareGPT files have no ids: call_<n>),
        # and the observation its answer, so the validator finds no orphan result.
        Message(
            A,
            "",
            "m2",
            tool_calls=(ToolCall("call_1", "get_exchange_rate", '{"base":"USD","target":"EUR"}'),),
        ),
        Message(T, '{"rate": 0.92}', "m3", tool_call_id="call_1"),
        Message(A, "100 US dollars is about 92 euros.", "m4"),
    ]
    assert_same(load_chat(path, conversation=1), expected)
    assert_same(load_chat(path, conversation="glaive_17"), expected)
    assert list_conversations(path) == [
        ("identity_0", "Who are you?"),
        ("glaive_17", "How many euros is 100 dollars?"),
    ]
    assert detect_format(path) == "sharegpt"


def test_chatgpt_export_follows_the_current_branch() -> None:
    path = FIXTURES / "chatgpt_export.json"
    ms = load_chat(path)
    assert_same(
        ms,
        [
            # the hidden empty system message is skipped; branch "a" (u-2a, a-2a) is not current
            Message(U, "Plan a day in Porto.", "u-1"),
            Message(
                A,
                "Morning in Ribeira, lunch at the Bolhão market, "
                "sunset from the Dom Luís I bridge.",
                "a-1",
            ),
            Message(U, "[image]\nWhat is this church with the blue tiles?", "u-2b"),
            Message(A, 'search("Porto church blue azulejo tiles side wall")', "a-2b"),
            Message(
                T,
                "# 【0†Igreja do Carmo†en.wikipedia.org】 "
                "The side wall is covered in azulejos (1912).",
                "t-2b",
                name="browser",
            ),
            Message(
                A, "That is the Igreja do Carmo; its azulejo side wall dates from 1912.", "a-3b"
            ),
        ],
    )
    assert detect_format(path) == "chatgpt-export"
    convs = list_conversations(path)
    assert convs == [
        ("6650a1b2-0000-4000-8000-000000000001", "Porto day trip"),
        ("6650a1b2-0000-4000-8000-000000000002", "Median of a list"),
    ]
    median = [
        Message(U, "Median of 3, 9, 1, 7?", "py-u1"),  # the empty system message is skipped
        Message(A, "import statistics\nstatistics.median([3, 9, 1, 7])", "py-a1"),
        Message(T, "5.0", "py-t1", name="python"),
        Message(A, "The median is 5.", "py-a2"),
    ]
    assert_same(load_chat(path, conversation=1), median)
    assert_same(load_chat(path, conversation=convs[1][0]), median)
    assert_same(load_chat(path, conversation="Median of a list"), median)
    with pytest.raises(ChatFormatError, match="no conversation with id or title 'nope'"):
        load_chat(path, conversation="nope")


def test_chatgpt_export_other_branch_and_no_current_node() -> None:
    export = json.loads((FIXTURES / "chatgpt_export.json").read_text(encoding="utf-8"))
    export[0]["current_node"] = "a-2a"
    assert [m.id for m in load_chat(export)] == ["u-1", "a-1", "u-2a", "a-2a"]
    del export[0]["current_node"]  # without one: follow the last child from the root
    assert [m.id for m in load_chat(export)][-1] == "a-3b"
    export[0]["mapping"]["u-1"]["parent"] = "a-1"  # a loop
    export[0]["current_node"] = "a-1"
    with pytest.raises(ChatFormatError, match="loop"):
        load_chat(export)


def test_legacy_function_call_and_function_role() -> None:
    ms = load_chat(FIXTURES / "legacy_function_call.json")
    call = ToolCall(None, "get_current_weather", '{"location": "Boston, MA"}')
    assert_same(
        ms,
        [
            Message(S, "You can call functions.", "m0"),
            Message(U, "Weather in Boston?", "m1"),
            Message(A, "", "m2", tool_calls=(call,)),
            Message(
                F,
                '{"temperature": "22", "unit": "celsius"}',
                "m3",
                name="get_current_weather",
            ),
            Message(A, "It is 22 °C in Boston.", "m4"),
        ],
    )
    # Written back in the legacy shape, which is what the API expects for it.
    assert message_to_openai(ms[2], ctxlab_fields=False) == {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "get_current_weather", "arguments": '{"location": "Boston, MA"}'},
    }
    assert message_to_openai(ms[3], ctxlab_fields=False)["role"] == "function"
    assert load_chat(dump_chat(ms)) == ms


# --------------------------------------------------------------------------------------------
# the real chats vendored in tests/fixtures/real_chats

REAL_COUNTS = {
    "tau_bench_airline_gpt4o_task2_trial1_fail.json": 62,
    "tau_bench_airline_gpt4o_task2_trial2_pass.json": 38,
    "swe_agent_pydicom_1458_gpt4.json": 26,
    "swe_agent_marshmallow_1867_function_calling.json": 28,
    "swe_agent_enigma_ctf_i_got_id.json": 43,
    "toolbench_g3_query3_chatgpt_function_call.json": 10,
    "aider_example_census_gpt4.json": 20,
    "aider_example_complex_change.json": 19,
    "oasst_thread_software_design.json": 6,
}


@pytest.mark.parametrize("file_name", sorted(REAL_COUNTS))
def test_real_chats_load_and_round_trip(file_name: str) -> None:
    path = REAL_CHATS / file_name
    if not path.exists():
        pytest.skip(f"{path} is not available")
    ms = load_chat(path)
    assert len(ms) == REAL_COUNTS[file_name]
    assert len({m.id for m in ms}) == len(ms)
    again = load_chat(dump_chat(ms))
    assert_same(again, list(ms))
    # The API form of the messages is the source's messages, with null contents kept null
    # only where tool calls stand beside them.
    source = json.loads(path.read_text(encoding="utf-8"))["messages"]
    api = messages_to_openai(ms)
    assert [m["role"] for m in api] == [m["role"] for m in source]
    assert [m.get("tool_call_id") for m in api] == [m.get("tool_call_id") for m in source]


def test_real_chat_details() -> None:
    tau = REAL_CHATS / "tau_bench_airline_gpt4o_task2_trial1_fail.json"
    toolbench = REAL_CHATS / "toolbench_g3_query3_chatgpt_function_call.json"
    if not (tau.exists() and toolbench.exists()):
        pytest.skip("real chats are not available")
    ms = load_chat(tau)
    tools = [m for m in ms if m.role is T]
    assert len(tools) == 27 and all(m.name for m in tools)  # tau keeps the legacy `name`
    assert sum(len(m.tool_calls) for m in ms) == 27
    assert_tool_pairs(ms)
    tb = load_chat(toolbench)
    legacy = [c for m in tb for c in m.tool_calls]
    assert len(legacy) == 4 and all(c.id is None for c in legacy)
    assert [m.role for m in tb].count(F) == 3
    assert tb[-1].tool_calls[0].name == "Finish"


# --------------------------------------------------------------------------------------------
# sources, ids, dump


def test_every_kind_of_source(tmp_path: Path) -> None:
    chat = {"messages": [{"role": "user", "content": "hé"}, {"role": "assistant", "content": "x"}]}
    text = json.dumps(chat, ensure_ascii=False)
    expected = (Message(U, "hé", "m0"), Message(A, "x", "m1"))
    file = tmp_path / "chat.json"
    file.write_text(text, encoding="utf-8")
    assert load_chat(file) == expected
    assert load_chat(str(file)) == expected
    assert load_chat(text) == expected
    assert load_chat("  \n" + text) == expected
    assert load_chat(text.encode()) == expected
    assert load_chat(bytearray(text.encode())) == expected
    assert load_chat(b"\xef\xbb\xbf" + text.encode()) == expected  # UTF-8 BOM
    assert load_chat(chat) == expected
    assert load_chat(chat["messages"]) == expected
    assert load_chat({"role": "user", "content": "hé"}) == expected[:1]  # one message
    assert load_chat([]) == () and load_chat({"messages": []}) == () and load_chat("[]") == ()


def test_ids_given_assigned_and_duplicated() -> None:
    ms = load_chat(
        [
            {"role": "user", "content": "a", "id": "m2"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},  # would be m2: taken by the first message
            {"role": "assistant", "content": "d", "id": 7},
        ]
    )
    assert [m.id for m in ms] == ["m2", "m1", "m2_1", "7"]
    with pytest.raises(ChatFormatError) as err:
        load_chat({"messages": [{"role": "user", "content": "a", "id": "x"}] * 2})
    assert err.value.where == "$.messages[1].id"
    assert "$.messages[0]" in err.value.reason  # names both places


def test_dump_shape_and_api_form() -> None:
    meta = CompactionMeta("m5", previous_compaction_id="c0", summary_text="so far")
    ms = (
        Message(U, "please summarise", "c1", is_compaction=True, compaction_meta=meta),
        Message(A, "so far", "s1", is_summary=True, extra=(("audio", {"id": "a1"}), ("x", 1))),
        Message(A, "", "m5", tool_calls=(ToolCall("k", "f", "{}", "custom"),)),
    )
    doc = json.loads(dump_chat(ms))
    assert list(doc) == ["messages"]
    assert doc["messages"][0] == {
        "id": "c1",
        "role": "user",
        "content": "please summarise",
        "is_compaction": True,
        "compaction_meta": {
            "tail_start_id": "m5",
            "previous_compaction_id": "c0",
            "summary_text": "so far",
        },
    }
    assert doc["messages"][2]["tool_calls"] == [
        {"id": "k", "type": "custom", "custom": {"name": "f", "input": "{}"}}
    ]
    # The API form: no ctxlab fields, only the extra keys the API knows.
    assert messages_to_openai(ms) == [
        {"role": "user", "content": "please summarise"},
        {"role": "assistant", "content": "so far", "audio": {"id": "a1"}},
        {"role": "assistant", "content": None, "tool_calls": doc["messages"][2]["tool_calls"]},
    ]
    assert detect_format(dump_chat(ms)) == "ctxlab"
    for indent in (None, 2, 4):
        assert_same(load_chat(dump_chat(ms, indent=indent)), list(ms))


def test_fast_builder_is_used_and_exact() -> None:
    """A fast Message builder is active (a model.py change would silently disable it): the
    ``__class__`` swap, or the slot descriptors where CPython refuses the swap."""
    assert formats._new_message_full is not Message
    fast = formats._new_message_full(Role.USER, "x", "m0", None, (), None, False, False, None, ())
    assert type(fast) is Message and fast == Message(Role.USER, "x", "m0")
    assert fast.extra == () and fast.tool_calls == () and hash(fast) == hash(Message(U, "x", "m0"))
    with pytest.raises(AttributeError):  # still frozen
        fast.content = "y"  # type: ignore[misc]


def test_formats_constant() -> None:
    assert FORMATS == (
        "openai",
        "openai-jsonl",
        "finetune-jsonl",
        "anthropic",
        "sharegpt",
        "chatgpt-export",
        "claude-code",
        "codex",
        "responses",
        "gemini",
        "chat-completion",
        "claude-ai-export",
        "gemini-cli",
        "pi",
        "cline",
        "opencode",
        "open-webui",
        "librechat",
        "ctxlab",
    )
    assert set(formats.__all__) >= {"load_chat", "dump_chat", "detect_format", "FORMATS"}
    for fmt in ("openai", "ctxlab", "anthropic"):
        assert load_chat('[{"role": "user", "content": "x"}]', fmt=fmt) == (Message(U, "x", "m0"),)


# --------------------------------------------------------------------------------------------
# errors: the place and what was expected


def _msgs(*ms: Any) -> bytes:
    return json.dumps({"messages": list(ms)}).encode()


ERROR_CASES: list[tuple[Any, str | None, str]] = [
    (b"", None, "empty input"),
    (b'{"messages": [\n  {"role": "user" "content": "x"}\n]}', "line 2", "invalid JSON ("),
    (b"[1,]", "line 1", "at column 3"),
    (b"42", "$", "got number"),
    (b'{"foo": 1, "bar": 2}', "$", "found keys: foo, bar"),
    (b'{"messages": {"role": "user"}}', "$.messages", "expected a list of messages, got object"),
    (_msgs("hello"), "$.messages[0]", "expected a message object, got string"),
    (_msgs({"content": "x"}), "$.messages[0].role", "missing role"),
    (_msgs({"role": "robot", "content": "x"}), "$.messages[0].role", "unknown role 'robot'"),
    (
        _msgs({"role": "user", "content": 5}),
        "$.messages[0].content",
        "expected a string or a list of content parts, got number",
    ),
    (
        _msgs({"role": "user", "content": [{"type": "text", "text": None}]}),
        "$.messages[0].content[0].text",
        "expected a string, got null",
    ),
    (
        _msgs({"role": "user", "content": [{"text": "x"}]}),
        "$.messages[0].content[0].type",
        "got missing",
    ),
    (
        _msgs({"role": "assistant", "content": "", "tool_calls": {"id": "a"}}),
        "$.messages[0].tool_calls",
        "expected a list of tool calls, got object",
    ),
    (
        [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": 3}}]}],
        "$[0].tool_calls[0].function.name",
        "expected a function name string, got number",
    ),
    (
        [{"role": "assistant", "function_call": "f()"}],
        "$[0].function_call",
        "expected a function_call object",
    ),
    (
        [{"role": "user", "content": "x", "is_summary": "yes"}],
        "$[0].is_summary",
        "expected true or false, got string",
    ),
    (
        [{"role": "user", "content": "x", "compaction_meta": {"tail_start_id": 1}}],
        "$[0].compaction_meta.tail_start_id",
        "expected a string or null, got number",
    ),
    (
        {"conversations": [{"from": "human", "value": "x"}, {"from": "alien", "value": "y"}]},
        "$.conversations[1].from",
        "unknown speaker 'alien'",
    ),
    (
        [{"mapping": {"r": {"message": None, "parent": None}}, "current_node": "q"}],
        "$[0].current_node",
        "node 'q' is not in the mapping",
    ),
    (
        {"system": 3, "messages": []},
        "$.system",
        "expected a string or a list of content parts, got number",
    ),
    (b'[{"role": "user", "content": "\xff"}]', "line 1", "not UTF-8 text (byte 0xff at column 31)"),
    ('[{"role": "user"}]'.encode("utf-16"), None, "UTF-16"),
    (b'[{"role": "user", "content": "a\x00b"}]', "line 1", "invalid JSON (unexpected control"),
    (b"[" * 5000 + b"]" * 5000, "line 1", "invalid JSON (depth limit exceeded"),
    (b'[{"role": "user", "content": "x", "n": 1e999}]', "line 1", "infinity"),
    ("no/such/file.json", None, "'no/such/file.json' is neither an existing file nor JSON text"),
    ("nul\x00l", None, "neither an existing file nor JSON text"),
    ("null", "$", "got null"),
    (3.5, None, "expected a path, bytes, JSON text, a list or a dict, got float"),
]


@pytest.mark.parametrize(("source", "where", "reason"), ERROR_CASES)
def test_errors_name_the_place(source: Any, where: str | None, reason: str) -> None:
    with pytest.raises(ChatFormatError) as err:
        load_chat(source)
    assert err.value.where == where
    assert reason in err.value.reason
    assert str(err.value) == (f"{where}: {err.value.reason}" if where else err.value.reason)


def test_jsonl_errors_name_the_line() -> None:
    data = b'{"role": "user", "content": "a"}\n\n{"role": "assistant", "content": "b" "x"}\n'
    with pytest.raises(ChatFormatError) as err:
        load_chat(data)
    assert err.value.where == "line 3"
    assert (
        err.value.reason == "invalid JSON (unexpected character, expected ',' or '}' at column 38)"
    )
    with pytest.raises(ChatFormatError) as err:
        load_chat(b'{"role": "user", "content": "a"}\n{"role": "user", "content": [3]}')
    assert err.value.where == "line 2, $.content[0]"
    with pytest.raises(ChatFormatError) as err:
        load_chat(b'{"messages": []}\n{"messages": [{"role": 1}]}', conversation=1)
    assert err.value.where == "line 2, $.messages[0].role"
    with pytest.raises(ChatFormatError) as err:
        load_chat(b"[1]\n[2]\n", fmt="openai-jsonl")
    assert err.value.where == "line 1"


def test_errors_carry_the_file_name(tmp_path: Path) -> None:
    bad = tmp_path / "broken.jsonl"
    bad.write_bytes(b'{"role": "user", "content": "a"}\n{"role": "user", "content": }\n')
    with pytest.raises(ChatFormatError) as err:
        load_chat(bad)
    assert err.value.where == "broken.jsonl: line 2"
    with pytest.raises(ChatFormatError) as err:
        load_chat(b"[1]", name="upload.json")
    assert str(err.value) == "upload.json: $[0]: expected a message object, got number"
    with pytest.raises(ChatFormatError, match="cannot read"):
        load_chat(tmp_path / "missing.json")
    with pytest.raises(ChatFormatError, match="unknown format 'yaml'"):
        load_chat(b"[]", fmt="yaml")


def test_python_values_that_are_not_json() -> None:
    with pytest.raises(ChatFormatError) as err:
        load_chat([{"role": "user", "content": "x", "meta": {1, 2}}])
    assert err.value.where == "$[0].meta"
    with pytest.raises(ChatFormatError, match="number nan"):
        load_chat([{"role": "user", "content": "x", "score": float("nan")}])
    with pytest.raises(ChatFormatError, match="string keys"):
        load_chat([{"role": "user", "content": "x", 1: "y"}])
    deep: list[Any] = []
    for _ in range(3000):
        deep = [deep]
    with pytest.raises(ChatFormatError, match="nesting"):
        load_chat([{"role": "user", "content": "x", "deep": deep}])
    with pytest.raises(ChatFormatError, match="nesting"):
        load_chat(
            [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": deep}}]}]
        )
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ChatFormatError):
        load_chat([{"role": "user", "content": "x", "loop": cyclic}])


# --------------------------------------------------------------------------------------------
# properties

_MESSAGE_KEYS = sorted(formats._MESSAGE_KEYS)
_text = st.text(max_size=12)
_json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
_json_value = st.recursive(
    _json_scalar,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3),
    max_leaves=4,
)
_tool_calls = st.builds(
    ToolCall,
    id=st.none() | _text,
    name=_text,
    arguments=_text,
    type=st.sampled_from(["function", "custom"]) | _text,
)
_extra = st.dictionaries(
    _text.filter(lambda k: k not in _MESSAGE_KEYS), _json_value, max_size=2
).map(lambda d: tuple(sorted(d.items())))


_messages = st.builds(
    Message,
    role=st.sampled_from(Role),
    content=st.text(max_size=30),
    id=_text,
    name=st.none() | _text,
    tool_calls=st.lists(_tool_calls, max_size=2).map(tuple),
    tool_call_id=st.none() | _text,
    is_compaction=st.booleans(),
    is_summary=st.booleans(),
    compaction_meta=st.none()
    | st.builds(CompactionMeta, st.none() | _text, st.none() | _text, st.none() | _text),
    extra=_extra,
)
_chats = st.lists(_messages, max_size=6, unique_by=lambda m: m.id).map(tuple)


@given(_chats, st.sampled_from([None, 2, 1]))
def test_dump_then_load_is_identity(ms: tuple[Message, ...], indent: int | None) -> None:
    again = load_chat(dump_chat(ms, indent=indent))
    assert again == ms
    assert [m.extra for m in again] == [m.extra for m in ms]


_keys = (
    st.sampled_from(
        [
            "role", "content", "messages", "tool_calls", "function", "name", "arguments", "id",
            "type", "text", "system", "conversations", "from", "value", "mapping",
            "current_node", "parent", "children", "message", "author", "parts", "content_type",
            "tool_use_id", "input", "function_call", "compaction_meta", "is_compaction",
            "tool_call_id", "metadata",
        ]
    )
    | _text
)  # fmt: skip
_words = st.sampled_from(
    ["user", "assistant", "tool", "system", "function", "human", "gpt", "text", "tool_use",
     "tool_result", "image_url", "r", "a"]
)  # fmt: skip
_any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _text | _words,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(_keys, c, max_size=5),
    max_leaves=25,
)


def _load_or_error(source: Any) -> None:
    try:
        ms = load_chat(source)
    except ChatFormatError:
        return
    assert all(isinstance(m, Message) for m in ms)
    assert len({m.id for m in ms}) == len(ms)
    assert load_chat(dump_chat(ms)) == ms


@given(_any_json)
def test_any_json_value_loads_or_raises_chat_format_error(value: Any) -> None:
    _load_or_error(value)
    _load_or_error(json.dumps(value).encode())  # NaN, Infinity, big ints: orjson's view
    for probe in (detect_format, list_conversations):
        with contextlib.suppress(ChatFormatError):
            probe(value)


@given(st.binary(max_size=60))
def test_any_bytes_load_or_raise_chat_format_error(data: bytes) -> None:
    _load_or_error(data)
    _load_or_error(b'{"messages": [' + data)
