"""ShareGPT tool turns (Glaive) and LLaMA-Factory parts from its data (see PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab.errors import ChatFormatError
from ctxlab.formats import list_conversations, load_chat, load_chat_file
from ctxlab.model import Role
from ctxlab.validate import validate

HERE = Path(__file__).parent / "fixtures" / "formats" / "llama_factory"
GLAIVE = HERE / "glaive_toolcall_first3.json"
LF = HERE / "reason_tool_use_first3.jsonl"


@pytest.mark.parametrize("k", [0, 1, 2])
def test_glaive_function_calls_are_tool_calls_answered_by_observations(k: int) -> None:
    raw = json.loads(GLAIVE.read_text())[k]
    loaded = load_chat_file(GLAIVE, conversation=k)
    turns = raw["conversations"]
    expected_calls = [json.loads(t["value"]) for t in turns if t["from"] == "function_call"]
    calls = [tc for m in loaded.messages for tc in m.tool_calls]
    assert [(tc.name, json.loads(tc.arguments)) for tc in calls] == [
        (c["name"], c["arguments"]) for c in expected_calls
    ]
    observations = [t["value"] for t in turns if t["from"] == "observation"]
    results = [m for m in loaded.messages if m.role is Role.TOOL]
    assert [m.content for m in results] == observations
    assert [m.tool_call_id for m in results] == [tc.id for tc in calls]
    assert validate(loaded.messages) == ()
    assert [t.name for t in loaded.tools] == [t["name"] for t in json.loads(raw["tools"])]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_llama_factory_value_parts_reasoning_and_tool_calls(k: int) -> None:
    raw = json.loads(LF.read_text().splitlines()[k])
    loaded = load_chat_file(LF, conversation=k)
    said = [
        p["value"]
        for m in raw["messages"]
        if m["role"] != "tool"
        for p in m["content"]
        if p["type"] == "text"
    ]
    joined = "\n".join(m.content for m in loaded.messages)
    assert all(t in joined for t in said)  # no text lost
    answers = [
        json.loads(p["value"]) for m in raw["messages"] if m["role"] == "tool" for p in m["content"]
    ]
    flat = [a for answer in answers for a in (answer if isinstance(answer, list) else [answer])]
    got_answers = [json.loads(m.content) for m in loaded.messages if m.role is Role.TOOL]
    flat_got = [a for g in got_answers for a in (g if isinstance(g, list) else [g])]
    assert flat_got == flat
    reasoning = [
        p["value"] for m in raw["messages"] for p in m["content"] if p["type"] == "reasoning"
    ]
    kept = [p["value"] for m in loaded.messages for p in dict(m.extra).get("thinking", [])]
    assert kept == reasoning
    calls = [
        json.loads(p["value"])
        for m in raw["messages"]
        for p in m["content"]
        if p["type"] == "tool_call"
    ]
    got = [tc for m in loaded.messages for tc in m.tool_calls]
    assert [(tc.name, json.loads(tc.arguments)) for tc in got] == [
        (c["name"], c["arguments"]) for c in calls
    ]
    assert [p.code for p in validate(loaded.messages) if "tool" in p.code] == []
    assert [t.name for t in loaded.tools] == [
        t["function"]["name"] for t in json.loads(raw["tools"])
    ]


def test_parallel_results_in_one_tool_message_are_split_one_per_call() -> None:
    raw = json.loads(LF.read_text().splitlines()[2])
    first_results = json.loads(raw["messages"][3]["content"][0]["value"])
    messages = load_chat(LF, conversation=2)
    split = [m for m in messages if m.role is Role.TOOL][: len(first_results)]
    assert [json.loads(m.content) for m in split] == first_results


def test_titles_read_value_parts() -> None:
    first_user = [
        next(
            p["value"]
            for m in json.loads(line)["messages"]
            if m["role"] == "user"
            for p in m["content"]
        )
        for line in LF.read_text().splitlines()
    ]
    titles = [t for _, t in list_conversations(LF)]
    assert [t.rstrip("…") for t in titles] == [
        " ".join(u.split())[: len(t.rstrip("…"))] for u, t in zip(first_user, titles, strict=True)
    ]


def test_a_function_call_that_is_not_json_stays_text_with_a_warning() -> None:
    chat = {
        "conversations": [
            {"from": "human", "value": "hi"},
            {"from": "function_call", "value": "get_time()"},
        ]
    }
    loaded = load_chat_file(chat)
    assert loaded.messages[1].content == "get_time()" and loaded.messages[1].tool_calls == ()
    assert len(loaded.warnings) == 1 and "$.conversations[1].value" in loaded.warnings[0]


def test_a_text_part_without_text_or_value_is_reported_missing() -> None:
    with pytest.raises(ChatFormatError) as err:
        load_chat({"messages": [{"role": "user", "content": [{"type": "text"}]}]})
    assert err.value.where == "$.messages[0].content[0].text"
    assert err.value.reason == "expected a string, got missing"
