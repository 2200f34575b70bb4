"""Codex rollouts: a real rollout and a small two-turn one (see PROVENANCE.md).

Expected values are computed from the raw lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.formats import detect_format, load_chat, load_chat_file
from ctxlab.model import Role
from ctxlab.validate import validate

HERE = Path(__file__).parent / "fixtures" / "formats" / "codex"
REAL = HERE / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
TWO = HERE / "turn_two.jsonl"


def raw(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def items(path: Path, kind: str) -> list[dict[str, Any]]:
    return [
        d["payload"]
        for d in raw(path)
        if d["type"] == "response_item" and d["payload"].get("type") == kind
    ]


def test_every_function_call_is_a_tool_call_answered_by_its_output() -> None:
    calls = items(REAL, "function_call")
    outputs = items(REAL, "function_call_output")
    messages = load_chat(REAL)
    loaded = [tc for m in messages for tc in m.tool_calls]
    assert [(tc.id, tc.name, tc.arguments) for tc in loaded] == [
        (c["call_id"], c["name"], c["arguments"]) for c in calls
    ]
    results = [m for m in messages if m.role is Role.TOOL]
    assert [(m.tool_call_id, m.content) for m in results] == [
        (o["call_id"], o["output"]) for o in outputs
    ]
    assert not [p for p in validate(messages) if "tool" in p.code]
    assert detect_format(REAL) == "codex"


def test_the_system_prompt_is_base_instructions_and_user_events_fill_missing_user_items() -> None:
    lines = raw(REAL)
    meta = next(d["payload"] for d in lines if d["type"] == "session_meta")
    messages = load_chat(REAL)
    assert messages[0].role is Role.SYSTEM
    assert messages[0].content == meta["base_instructions"]["text"]
    asked = [
        d["payload"]["message"]
        for d in lines
        if d["type"] == "event_msg" and d["payload"]["type"] == "user_message"
    ]
    assert [m.content for m in messages if m.role is Role.USER] == asked
    said = [
        "\n".join(p["text"] for p in item["content"])
        for item in items(REAL, "message")
        if item["role"] == "assistant"
    ]
    assert [m.content for m in messages if m.role is Role.ASSISTANT and m.content] == said


def test_token_count_events_bill_the_latest_assistant_message() -> None:
    lines = raw(TWO)
    loaded = load_chat_file(TWO)
    expected = []
    assistant_seen = 0
    for d in lines:
        p = d["payload"]
        if d["type"] == "response_item" and p.get("role") == "assistant":
            assistant_seen += 1
        if d["type"] == "event_msg" and p["type"] == "token_count" and p["info"]:
            expected.append((assistant_seen, p["info"]["last_token_usage"]))
    by_turn = dict(expected)  # a later event for the same message replaces the earlier
    assistants = [m for m in loaded.messages if m.role is Role.ASSISTANT]
    assert [u.message_id for u in loaded.usage] == [assistants[k - 1].id for k in by_turn]
    for u, last in zip(loaded.usage, by_turn.values(), strict=True):
        assert (u.input_tokens, u.output_tokens, u.cache_read_input_tokens) == (
            last["input_tokens"],
            last["output_tokens"],
            last["cached_input_tokens"],
        )
        assert u.prompt_tokens == last["input_tokens"]  # OpenAI's input includes the cache


def test_developer_items_keep_their_role_and_reasoning_is_kept_apart() -> None:
    messages = load_chat(TWO)
    developer = [
        "\n".join(p["text"] for p in i["content"])
        for i in items(TWO, "message")
        if i["role"] == "developer"
    ]
    assert [m.content for m in messages if m.role is Role.DEVELOPER] == developer
    reasoning = items(TWO, "reasoning")
    assert reasoning and all(r["summary"] == [] for r in reasoning)
    kept = [dict(m.extra).get("reasoning") for m in messages if m.role is Role.ASSISTANT]
    assert kept == [
        [f"[encrypted reasoning, {len(r['encrypted_content']):,} characters]"] for r in reasoning
    ]
    assert not any("encrypted" in m.content for m in messages)
