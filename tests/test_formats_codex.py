"""Codex rollouts: a real rollout and a small two-turn one (see PROVENANCE.md).

Expected values are computed from the raw lines. Compactions are built from the two-turn
rollout by documented edits (no public rollout with a ``compacted`` line was found).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.errors import ChatFormatError
from ctxlab.formats import detect_format, list_conversations, load_chat, load_chat_file
from ctxlab.model import Role
from ctxlab.validate import validate

HERE = Path(__file__).parent / "fixtures" / "formats" / "codex"
REAL = HERE / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
TWO = HERE / "turn_two.jsonl"
COMPACTED = HERE / "turn_two_compacted.jsonl"  # TWO with a compaction (see compacted_copy)
REPLACED = HERE / "turn_two_replaced.jsonl"  # the same with a replacement_history


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


SUMMARY = "Summary of the first turn: the user asked what Codex does; it answered."


def compacted_copy(tmp_path: Path, payload: dict[str, Any], name: str = "compacted.jsonl") -> Path:
    """Documented edit of the real two-turn rollout: a compaction between its two turns, as
    Codex writes it (a turn_context line, the summarizing call's token_count, then the
    ``compacted`` line), inserted after line 13 (the first turn's task_complete)."""
    text = TWO.read_text().splitlines()
    lines = raw(TWO)
    assert lines[12]["payload"]["type"] == "task_complete"
    turn = text[4]  # the turn_context line of the first turn
    assert lines[4]["type"] == "turn_context"
    billed = json.loads(text[11])  # a token_count with numbers, standing for the summarizer's
    billed["payload"]["info"]["last_token_usage"]["output_tokens"] = 4321
    line = {"timestamp": lines[12]["timestamp"], "type": "compacted", "payload": payload}
    edited = [*text[:13], turn, json.dumps(billed), json.dumps(line), *text[13:]]
    path = tmp_path / name
    path.write_text("\n".join(edited) + "\n")
    return path


def replacement() -> list[dict[str, Any]]:
    """The first real user message (kept by the server), then the summary as a user message."""
    summary = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": SUMMARY}],
    }
    return [raw(TWO)[5]["payload"], summary]


def test_the_compacted_fixtures_are_the_documented_edits(tmp_path: Path) -> None:
    made = compacted_copy(tmp_path, {"message": SUMMARY})
    assert made.read_bytes() == COMPACTED.read_bytes()
    made = compacted_copy(tmp_path, {"message": "", "replacement_history": replacement()})
    assert made.read_bytes() == REPLACED.read_bytes()
    assert detect_format(COMPACTED) == "codex"


def user_texts(item: dict[str, Any]) -> str:
    return "\n".join(p["text"] for p in item["content"])


def test_a_compaction_rebuilds_the_context_as_codex_does() -> None:
    path = COMPACTED
    lines = raw(TWO)
    items = [d["payload"] for d in lines if d["type"] == "response_item"]
    before, after = items[:5], items[5:]  # the first turn, then the second (file order)
    assert [i.get("role") for i in before] == ["developer", "user", "user", None, "assistant"]
    # Codex's rule: the items before the first real user message, the real user messages,
    # then the summary as a user message; then what follows. Computed here from the raw items.
    initial = before[:2]  # the developer message and the <environment_context> user message
    real_users = [user_texts(i) for i in before if i.get("role") == "user"][1:]
    loaded = load_chat_file(path)
    messages = loaded.messages
    assert messages[0].role is Role.SYSTEM
    expected_users = [
        user_texts(initial[1]),
        *real_users,
        SUMMARY,
        *[user_texts(i) for i in after if i.get("role") == "user"],
    ]
    assert [m.content for m in messages if m.role is Role.USER] == expected_users
    assert [m.content for m in messages if m.role is Role.DEVELOPER] == [
        user_texts(i) for i in (*initial, *after) if i.get("role") == "developer"
    ]
    said = [user_texts(i) for i in items if i.get("role") == "assistant"]
    assert [m.content for m in messages if m.role is Role.ASSISTANT] == said[1:]  # turn 2 only
    (summary,) = [m for m in messages if dict(m.extra).get("codex_compaction_summary")]
    assert summary.role is Role.USER and summary.content == SUMMARY
    left_out = len(before) - len(initial) - len(real_users)  # the reasoning and the answer
    n = 16  # the compacted line
    assert loaded.warnings == (
        f"line {n}: Codex compacted the history once; the conversation is what the model saw "
        f"after the last compaction ({left_out} earlier items left out; conversation 'full' "
        "has the whole rollout)",
    )
    # Only the second turn's call is billed here; the summarizer's call is not.
    last = lines[23]["payload"]["info"]["last_token_usage"]
    (usage,) = loaded.usage
    assert usage.message_id == messages[-1].id
    assert (usage.input_tokens, usage.output_tokens) == (
        last["input_tokens"],
        last["output_tokens"],
    )


def test_the_whole_rollout_is_its_own_conversation_with_the_summary_inline() -> None:
    path = COMPACTED
    convs = list_conversations(path)
    assert [cid for cid, _ in convs] == ["context", "full"]
    assert list_conversations(TWO) == [
        ("0", convs[0][1].removesuffix(" (what the model saw last)"))
    ]
    full = load_chat_file(path, conversation="full")
    original = load_chat_file(TWO)
    without = [m for m in full.messages if m.content != SUMMARY]
    assert [(m.role, m.content) for m in without] == [
        (m.role, m.content) for m in original.messages
    ]
    assert [m.content for m in full.messages].index(SUMMARY) == next(
        k for k, m in enumerate(full.messages) if m.content == "What languages can you work with?"
    ) - 3  # after the first turn, before the second turn's developer and context messages
    # The summarizing call's token_count (4321 output tokens) bills nothing.
    assert [(u.input_tokens, u.output_tokens) for u in full.usage] == [
        (u.input_tokens, u.output_tokens) for u in original.usage
    ]
    assert full.warnings == ()


def test_a_replacement_history_becomes_the_context() -> None:
    lines = raw(TWO)
    path = REPLACED
    loaded = load_chat_file(path)
    after = [d["payload"] for d in lines[13:] if d["type"] == "response_item"]
    users = [user_texts(i) for i in (*replacement(), *after) if i.get("role") == "user"]
    assert [m.content for m in loaded.messages if m.role is Role.USER] == users
    assert loaded.messages[0].role is Role.SYSTEM  # base_instructions stay: sent every call
    assert "(5 earlier items left out" in loaded.warnings[0]
    assert not any(dict(m.extra).get("codex_compaction_summary") for m in loaded.messages)
    # An empty message adds nothing inline to the whole rollout.
    full = load_chat(path, conversation="full")
    assert len(full) == len(load_chat(TWO))


def test_a_user_message_over_the_budget_is_cut_in_the_middle(tmp_path: Path) -> None:
    text = TWO.read_text().splitlines()
    first = json.loads(text[5])
    long = " ".join(f"word{k}" for k in range(20_000))  # about 28k tokens at 4 bytes a token
    first["payload"]["content"][0]["text"] = long
    source = tmp_path / "long.jsonl"
    source.write_text("\n".join([*text[:5], json.dumps(first), *text[6:]]) + "\n")
    path = compacted_copy(tmp_path, {"message": SUMMARY}, name="long_compacted.jsonl")
    edited = path.read_text().splitlines()
    edited[5] = json.dumps(first)
    path.write_text("\n".join(edited) + "\n")
    users = [m.content for m in load_chat(path) if m.role is Role.USER]
    cut = users[1]
    budget = 20_000
    removed = -(-len(long.encode()) // 4) - budget
    assert cut == f"{long[: budget * 2]}…{removed} tokens truncated…{long[-budget * 2 :]}"
    assert users[2] == SUMMARY


def test_a_bad_compacted_line_names_its_place(tmp_path: Path) -> None:
    path = compacted_copy(tmp_path, {"message": 3})
    with pytest.raises(ChatFormatError) as err:
        load_chat(path)
    assert err.value.where == "compacted.jsonl: line 16, $.payload.message"
    path = compacted_copy(tmp_path, {"message": "", "replacement_history": {"a": 1}})
    with pytest.raises(ChatFormatError) as err:
        load_chat(path)
    assert "line 16, $.payload.replacement_history" in (err.value.where or "")


def test_a_rollback_drops_the_last_turns_as_codex_does(tmp_path: Path) -> None:
    """Documented edit: a ``thread_rolled_back`` event (one turn) appended to the real
    two-turn rollout. Codex cuts the history at the last real user message."""
    event = {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 1}}
    path = tmp_path / "rolled_back.jsonl"
    path.write_text(TWO.read_text() + json.dumps(event) + "\n")
    lines = raw(TWO)
    items = [d["payload"] for d in lines if d["type"] == "response_item"]
    last_user = max(
        k
        for k, i in enumerate(items)
        if i.get("role") == "user" and not user_texts(i).startswith("<environment_context>")
    )
    kept = items[:last_user]
    loaded = load_chat_file(path)
    assert [m.content for m in loaded.messages if m.role is Role.USER] == [
        user_texts(i) for i in kept if i.get("role") == "user"
    ]
    assert [m.content for m in loaded.messages if m.role is Role.ASSISTANT] == [
        user_texts(i) for i in kept if i.get("role") == "assistant"
    ]
    gone = len(items) - len(kept)
    assert loaded.warnings == (
        f"line {len(lines) + 1}: the user rolled back 1 turn; their {gone} items are left out "
        "(conversation 'full' has the whole rollout)",
    )
    assert [m.content for m in load_chat(path, conversation="full")] == [
        m.content for m in load_chat(TWO)
    ]
    bad = {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": "x"}}
    path.write_text(TWO.read_text() + json.dumps(bad) + "\n")
    with pytest.raises(ChatFormatError) as err:
        load_chat(path)
    assert err.value.where == f"{path.name}: line {len(lines) + 1}, $.payload.num_turns"


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.integers(-3, 40),
        st.none(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=3),
    )
)
def test_any_rollback_count_loads_or_names_the_place(turns: Any) -> None:
    event = {"type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": turns}}
    data = (COMPACTED.read_text() + json.dumps(event) + "\n").encode()
    try:
        loaded = load_chat_file(data, name="r.jsonl")
    except ChatFormatError as exc:
        assert exc.where == f"r.jsonl: line {len(raw(COMPACTED)) + 1}, $.payload.num_turns"
        return
    assert isinstance(turns, int) and turns >= 0
    assert len(loaded.messages) <= len(load_chat(COMPACTED))


def test_an_encrypted_compaction_item_is_a_visible_summary(tmp_path: Path) -> None:
    """Remote compaction keeps the summary as a ``compaction`` item encrypted for the server
    (openai/codex ``ResponseItem::Compaction``, alias ``compaction_summary``). Documented
    edit: the two-turn rollout compacted into the first user message and such an item."""
    secret = "gAAAA" + "x" * 995
    replaced = [raw(TWO)[5]["payload"], {"type": "compaction", "encrypted_content": secret}]
    path = compacted_copy(tmp_path, {"message": "", "replacement_history": replaced})
    messages = load_chat(path)
    (summary,) = [m for m in messages if dict(m.extra).get("codex_compaction_summary")]
    assert summary.role is Role.USER
    assert f"{len(secret):,} characters" in summary.content and secret not in summary.content
    first = user_texts(replaced[0])
    assert [m.content for m in messages if m.role is Role.USER][:2] == [first, summary.content]


def test_a_built_in_tool_item_after_a_user_message_does_not_repeat_it(tmp_path: Path) -> None:
    """A web search item right after the user's message is the assistant's, alone."""
    lines = TWO.read_text().splitlines()
    search = {
        "type": "response_item",
        "payload": {"type": "web_search_call", "action": {"query": "codex languages"}},
    }
    at = 18  # right after the second user message (line 18)
    assert raw(TWO)[at - 1]["payload"].get("role") == "user"
    path = tmp_path / "search.jsonl"
    path.write_text("\n".join([*lines[:at], json.dumps(search), *lines[at:]]) + "\n")
    messages = load_chat(path)
    k = next(i for i, m in enumerate(messages) if m.content.startswith("[web_search_call]"))
    assert messages[k].role is Role.ASSISTANT
    assert messages[k].content == '[web_search_call] {"action":{"query":"codex languages"}}'
    assert messages[k - 1].content == "What languages can you work with?"
