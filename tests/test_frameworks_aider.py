"""Aider's ChatSummary port: the recursion rules of aider/history.py on the oracle chats.

Expected values are computed plainly here from Aider's rules (not by calling the strategy's
helpers): the budget formula, the depth-0 split (newest messages under half the budget, moved
back to end the head on an assistant message), the summarizer's transcript and prompt, the
wrapper text, the appended "Ok." and the number of summarizer calls.
"""

from __future__ import annotations

import json

import pytest

from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.aider_chat_summary import (
    SUMMARIZE_PROMPT,
    SUMMARY_PREFIX,
    AiderChatSummary,
    max_chat_history_tokens,
)
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter
from tests.oracle_support import oracle_chats

COUNTER = get_counter("gpt-4o")
SUMMARY = "I asked you to fix the parser."


def _sizes(done: list[Message]) -> list[int]:
    return [
        COUNTER.count_text(json.dumps({"role": m.role.value, "content": m.content})) for m in done
    ]


def _done(chat: tuple[Message, ...]) -> list[Message]:
    return list(chat[1:]) if chat and chat[0].role.is_instruction else list(chat)


def test_budget_formula_and_flags() -> None:
    assert max_chat_history_tokens(128_000) == 8000
    assert max_chat_history_tokens(8_192) == 1024
    assert max_chat_history_tokens(1_000_000) == 8192
    assert AiderChatSummary().budget == 8000  # gpt-4o: 128,000 / 16
    assert AiderChatSummary(model="claude-sonnet-4-5").budget == 8192
    assert AiderChatSummary(max_chat_history_tokens=2000).budget == 2000
    code = AiderChatSummary(model="gpt-4o", max_chat_history_tokens=2000).config_code()
    assert "max-chat-history-tokens: 2000" in code
    assert "--max-chat-history-tokens 2000" in code
    with pytest.raises(ParameterError, match="model"):
        AiderChatSummary(model="no-such-model")


def test_prompt_strings_are_aiders() -> None:
    assert SUMMARIZE_PROMPT.startswith("*Briefly* summarize this partial conversation")
    assert SUMMARIZE_PROMPT.endswith('Start the summary with "I asked you...".\n')
    assert SUMMARY_PREFIX == "I spoke to you previously about a number of things.\n"


@pytest.mark.parametrize("name", list(oracle_chats()))
def test_under_the_budget_nothing_changes(name: str) -> None:
    chat = oracle_chats()[name]
    total = sum(_sizes(_done(chat)))
    strategy = AiderChatSummary(max_chat_history_tokens=total)
    result = strategy.apply(chat, COUNTER, ScriptedSummarizer([]))
    assert result.messages == chat
    assert result.summary_request is None
    assert strategy.trigger_report(chat, COUNTER).fires is False


@pytest.mark.parametrize("name", list(oracle_chats()))
def test_depth_zero_split_and_request(name: str) -> None:
    chat = oracle_chats()[name]
    done = _done(chat)
    sizes = _sizes(done)
    budget = max(sum(sizes) // 2, 1)
    summarizer = ScriptedSummarizer([SUMMARY] * 5)
    result = AiderChatSummary(max_chat_history_tokens=budget).apply(chat, COUNTER, summarizer)
    assert result.replace is True
    first = summarizer.requests[0]
    assert first.messages[0] == {"role": "system", "content": SUMMARIZE_PROMPT}

    # Aider's depth-0 split, plainly
    if len(done) <= 4:
        head = done
    else:
        split, tail_tokens = len(done), 0
        for i in range(len(done) - 1, -1, -1):
            if tail_tokens + sizes[i] < budget // 2:
                tail_tokens += sizes[i]
                split = i
            else:
                break
        while done[split - 1].role is not Role.ASSISTANT and split > 1:
            split -= 1
        head = done if split <= 4 else done[:split]
    transcript = ""
    for m in head:
        if m.role in (Role.USER, Role.ASSISTANT):
            transcript += f"# {m.role.value.upper()}\n{m.content}"
            if not transcript.endswith("\n"):
                transcript += "\n"
    assert first.messages[1] == {"role": "user", "content": transcript}

    # every request is Aider's; at most depth 0..4 -> 5 calls
    assert 1 <= len(summarizer.requests) <= 5
    # the result: [system] + summary (user) + the kept tail + "Ok." when the last is not
    # the assistant's
    pinned = 1 if chat[0].role.is_instruction else 0
    assert result.messages[:pinned] == chat[:pinned]
    summary = result.messages[pinned]
    assert summary.role is Role.USER
    assert summary.content == SUMMARY_PREFIX + SUMMARY
    tail = [m for m in chat if result.decisions[m.id] is Decision.KEPT]
    expected_tail_end = pinned + 1 + len(tail)
    assert list(result.messages[pinned + 1 : expected_tail_end]) == tail
    if tail and tail[-1].role is Role.ASSISTANT:
        assert len(result.messages) == expected_tail_end
    else:
        assert result.messages[-1].role is Role.ASSISTANT
        assert result.messages[-1].content == "Ok."
    assert set(result.inserted) == set(result.messages) - set(chat)
    # the kept tail is a suffix of the chat, and everything before it was summarized
    if tail:
        assert tail == list(chat[len(chat) - len(tail) :])
    assert {m.id for m in done if result.decisions[m.id] is Decision.SUMMARIZED} | {
        m.id for m in tail
    } == {m.id for m in done}


def test_recursion_when_summary_and_tail_do_not_fit() -> None:
    """A long summary reply forces Aider to summarize again (depth 1, 2, ...)."""
    chat = oracle_chats()["long_plain_chat"]
    done = _done(chat)
    budget = max(sum(_sizes(done)) // 4, 1)
    long_reply = "word " * (budget * 2)
    summarizer = ScriptedSummarizer([long_reply] * 10)
    result = AiderChatSummary(max_chat_history_tokens=budget).apply(chat, COUNTER, summarizer)
    # the summary never fits: depth 0, 1, 2, 3 split, depth 4 summarizes everything
    assert len(summarizer.requests) >= 2
    assert len(summarizer.requests) <= 5
    # each deeper request starts with the previous summary as a USER section
    second = summarizer.requests[1].messages[1]["content"]
    assert second.startswith("# USER\n" + SUMMARY_PREFIX + long_reply)
    assert any("summarizer" in w and "times" in w for w in result.warnings)


def test_failing_summarizer_leaves_history() -> None:
    chat = oracle_chats()["coding_agent_session"]
    budget = max(sum(_sizes(_done(chat))) // 2, 1)
    summarizer = ScriptedSummarizer([SummarizerError("down")])
    result = AiderChatSummary(max_chat_history_tokens=budget).apply(chat, COUNTER, summarizer)
    assert result.messages == chat
    assert result.replace is False
    assert "empty its chat history" in result.warnings[0]


def test_trigger_sentence() -> None:
    chat = oracle_chats()["coding_agent_session"]
    report = AiderChatSummary(max_chat_history_tokens=1000).trigger_report(chat, COUNTER)
    assert report.fires
    assert report.text.startswith("Summarizes above --max-chat-history-tokens 1,000")
    assert report.exact == COUNTER.count_messages(chat)
    assert report.estimate == sum(_sizes(_done(chat)))


def test_input_never_mutated() -> None:
    chat = oracle_chats()["support_function_calls"]
    copy = tuple(chat)
    AiderChatSummary(max_chat_history_tokens=500).apply(
        chat, COUNTER, ScriptedSummarizer([SUMMARY] * 5)
    )
    assert chat == copy
