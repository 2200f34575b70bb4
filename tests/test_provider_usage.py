"""The provider's billed prompt beside ctxlab's count of the same call (real transcripts)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.formats import CallUsage, load_chat_file
from ctxlab.model import Message, Role
from ctxlab.provider_usage import compare_usage
from ctxlab.tokens import TokenCounter

FORMATS = Path(__file__).parent / "fixtures" / "formats"
SESSION = FORMATS / "claude_code" / "project" / "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"


def test_each_recorded_call_is_compared_with_the_request_that_produced_it(
    counter: TokenCounter,
) -> None:
    loaded = load_chat_file(SESSION, conversation="agent-a2271d1")
    result = compare_usage(loaded.messages, loaded.usage, counter)
    assert len(result.calls) == len(loaded.usage) and result.unmatched == ()
    ids = [m.id for m in loaded.messages]
    for call in result.calls:
        i = ids.index(call.message_id)
        assert call.index == i
        assert call.counted_prompt == counter.count_messages(loaded.messages[:i])
    raw = {
        d["message"]["id"]: d["message"]["usage"]
        for d in map(
            json.loads,
            (
                SESSION.parent
                / "29ccd257-68b1-427f-ae5f-6524b7cb6f20"
                / "subagents"
                / "agent-a2271d1.jsonl"
            )
            .read_text()
            .splitlines(),
        )
        if d["type"] == "assistant"
    }
    first = result.calls[0]
    usage = raw[first.message_id]
    billed = (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )
    assert first.billed_prompt == billed
    assert result.hidden_fixed == billed - first.counted_prompt > 0  # Claude Code's prompt
    last = result.calls[-1]
    assert result.tokenizer_ratio == (last.billed_prompt - billed) / (
        last.counted_prompt - first.counted_prompt
    )
    assert f"{result.hidden_fixed:+,}" in result.summary()


def test_usage_of_a_message_not_in_the_chat_is_listed_as_unmatched(counter: TokenCounter) -> None:
    chat = (Message(Role.USER, "hi", "u"), Message(Role.ASSISTANT, "hello", "a"))
    usage = (CallUsage("a", 10, 2), CallUsage("gone", 5, 1))
    result = compare_usage(chat, usage, counter)
    assert [c.message_id for c in result.calls] == ["a"] and result.unmatched == ("gone",)
    assert result.tokenizer_ratio is None
    assert compare_usage(chat, (), counter).summary().startswith("The transcript records no")
