"""openai-agents-session, openai-responses-truncation and openrouter-middle-out: the documented
rules on the oracle chats, expected values computed from the rule itself."""

from __future__ import annotations

import json

import pytest
from chatgen import chats
from hypothesis import given
from oracle_support import oracle_chats

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.openai_agents_session import OpenAIAgentsSession, session_items
from ctxlab.strategies.frameworks.openai_responses_truncation import OpenAIResponsesTruncation
from ctxlab.strategies.frameworks.openrouter_middle_out import OpenRouterMiddleOut
from ctxlab.tokens import TokenCounter

CHATS = oracle_chats()


@given(chats())
def test_agents_session_decides_every_message_and_keeps_the_input(chat: list[Message]) -> None:
    from ctxlab.tokens import get_counter

    counter = get_counter("gpt-4o")
    before = tuple(chat)
    for limit in (None, 1, 4):
        result = OpenAIAgentsSession(limit=limit).apply(chat, counter)
        assert set(result.decisions) == {m.id for m in chat}
        assert tuple(chat) == before


def test_agents_session_default_never_fires_and_limit_counts_items(counter: TokenCounter) -> None:
    chat = CHATS["coding_agent_session"]
    _, stored, _ = session_items(chat)
    assert not OpenAIAgentsSession().trigger_report(chat, counter).fires
    report = OpenAIAgentsSession(limit=3).trigger_report(chat, counter)
    assert report.fires and report.estimate == len(stored) and report.unit == "items"
    assert "SessionSettings(limit=7)" in OpenAIAgentsSession(limit=7).config_code()
    with pytest.raises(ParameterError, match="limit"):
        OpenAIAgentsSession(limit="3")  # type: ignore[arg-type]


def test_agents_session_partial_assistant_message_is_a_stand_in(counter: TokenCounter) -> None:
    from ctxlab.model import ToolCall

    chat = [
        Message(Role.USER, "go", "u"),
        Message(
            Role.ASSISTANT,
            "calling two tools",
            "a",
            tool_calls=(ToolCall("c1", "f", "{}"), ToolCall("c2", "g", "{}")),
        ),
        Message(Role.TOOL, "r1", "t1", tool_call_id="c1"),
        Message(Role.TOOL, "r2", "t2", tool_call_id="c2"),
    ]
    # items: u, a-text, c1, c2, out1, out2 -> the last 4 are c1, c2, out1, out2
    result = OpenAIAgentsSession(limit=4).apply(chat, counter)
    assert result.decisions["u"] is Decision.DROPPED
    assert result.decisions["a"] is Decision.CLEARED
    (stand_in,) = result.inserted
    assert stand_in.id == "a" and stand_in.content == "" and len(stand_in.tool_calls) == 2
    # the last 2 are the outputs alone: their calls were cut, so the SDK drops them (#4322)
    result = OpenAIAgentsSession(limit=2).apply(chat, counter)
    assert result.messages == ()
    assert any("4322" in w for w in result.warnings)


def test_responses_truncation_disabled_keeps_everything_and_warns(counter: TokenCounter) -> None:
    chat = CHATS["coding_agent_session"]
    total = counter.count_messages(chat)
    assert total > 8192  # gpt-4's window
    result = OpenAIResponsesTruncation(model="gpt-4").apply(chat, counter)
    assert result.messages == tuple(chat)
    assert any("400" in w for w in result.warnings)
    assert not OpenAIResponsesTruncation(model="gpt-4").trigger_report(chat, counter).fires
    body = json.loads(OpenAIResponsesTruncation(truncation="auto").config_code().split("\n", 1)[1])
    assert body["truncation"] == "auto"


@pytest.mark.parametrize("name", sorted(CHATS))
def test_responses_truncation_auto_drops_the_oldest_until_it_fits(
    name: str, counter: TokenCounter
) -> None:
    chat = CHATS[name]
    window = 8192
    result = OpenAIResponsesTruncation(truncation="auto", model="gpt-4").apply(chat, counter)
    pinned = 1 if chat[0].role.is_instruction else 0
    # the rule: the fewest oldest messages dropped so that the rest fits, the system prompt kept
    start = pinned
    while counter.count_messages([*chat[:pinned], *chat[start:]]) > window:
        start += 1
    while start < len(chat) and chat[start].role.is_tool_result:
        start += 1
    if counter.count_messages(chat) <= window:
        start = pinned
    expected = [*chat[:pinned], *chat[start:]]
    assert list(result.messages) == expected
    dropped = {m.id for m in chat[pinned:start]}
    assert {i for i, d in result.decisions.items() if d is Decision.DROPPED} == dropped


@pytest.mark.parametrize("name", sorted(CHATS))
def test_middle_out_removes_middle_messages(name: str, counter: TokenCounter) -> None:
    chat = CHATS[name]
    strategy = OpenRouterMiddleOut(transforms="middle-out", model="gpt-4")
    result = strategy.apply(chat, counter)
    total = counter.count_messages(chat)
    if total <= 8192:
        assert result.messages == tuple(chat)
        return
    kept = [i for i, m in enumerate(chat) if result.decisions[m.id] is not Decision.DROPPED]
    pinned = 1 if chat[0].role.is_instruction else 0
    # the first and the last conversation messages stay unless a tool pair repair removes them
    assert len(chat) - 1 in kept
    assert set(range(pinned)) <= set(kept)
    # what is removed is a middle run: the kept messages are a head and a tail, plus repairs
    removed = [i for i in range(pinned, len(chat)) if i not in kept]
    assert removed and removed[0] > pinned - 1
    assert counter.count_messages(result.messages) <= 8192 or len(kept) <= pinned + 2


def test_middle_out_default_is_off_above_8k_and_on_at_8k(counter: TokenCounter) -> None:
    chat = CHATS["coding_agent_session"]
    assert not OpenRouterMiddleOut(model="gpt-4o").enabled
    assert OpenRouterMiddleOut(model="gpt-4").enabled  # 8,192-token context
    assert OpenRouterMiddleOut(model="gpt-4o").apply(chat, counter).messages == tuple(chat)
    body = json.loads(OpenRouterMiddleOut(transforms="none").config_code().split("\n", 1)[1])
    assert body["transforms"] == []


def test_middle_out_message_cap_keeps_half_from_each_end(counter: TokenCounter) -> None:
    chat = [
        Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"m{i}", f"m{i}") for i in range(12)
    ]
    result = OpenRouterMiddleOut(transforms="middle-out", message_cap=6).apply(chat, counter)
    assert [m.id for m in result.messages] == ["m0", "m1", "m2", "m9", "m10", "m11"]
    assert all(m.role is not Role.SYSTEM for m in result.messages)
