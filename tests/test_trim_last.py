"""TrimLast reproduces langchain_core's trim_messages(strategy="last") exactly."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence

import pytest
from chatgen import assistant, budgets, call, chats, system, tool, user
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.trim_last import TrimLast
from ctxlab.tokens import TokenCounter, get_counter

lc = pytest.importorskip("langchain_core.messages")  # the `test` extra installs it


def to_langchain(messages: Sequence[Message]) -> list[object]:
    out: list[object] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            out.append(lc.SystemMessage(m.content, id=m.id))
        elif m.role is Role.DEVELOPER:
            kwargs = {"__openai_role__": "developer"}
            out.append(lc.SystemMessage(m.content, id=m.id, additional_kwargs=kwargs))
        elif m.role is Role.USER:
            out.append(lc.HumanMessage(m.content, id=m.id))
        elif m.role is Role.ASSISTANT:
            calls = [
                {"name": c.name, "args": json.loads(c.arguments), "id": c.id} for c in m.tool_calls
            ]
            out.append(lc.AIMessage(m.content, id=m.id, tool_calls=calls))
        else:
            out.append(lc.ToolMessage(m.content, id=m.id, tool_call_id=m.tool_call_id or ""))
    return out


def langchain_kept_ids(
    chat: Sequence[Message], strategy: TrimLast, counter: TokenCounter
) -> list[str]:
    """LangChain's answer, with a token counter equal to ctxlab's.

    ctxlab compares ``count_messages(kept)`` (reply priming once) with the budget. LangChain
    counts the set-aside system message and the rest separately, so a list counter that added
    the priming would count it twice; the equivalent setting is a counter that sums the
    per-message counts and a budget of ``max_tokens - reply_priming``.
    """
    per_id = {m.id: counter.count_message(m) for m in chat}
    end_on = [
        {"user": "human", "assistant": "ai"}.get(n, n) for n in strategy.end_on.split(",") if n
    ]
    kept = lc.trim_messages(
        to_langchain(chat),
        max_tokens=strategy.max_tokens - counter.accounting.reply_priming,
        token_counter=lambda ms: sum(per_id[m.id] for m in ms),
        strategy="last",
        allow_partial=False,
        include_system=strategy.include_system,
        start_on="human" if strategy.start_on_user else None,
        end_on=end_on or None,
    )
    return [m.id for m in kept]


CHAT = (
    system("be brief", "s"),
    user("first " * 30, "u1"),
    assistant("one " * 30, "a1"),
    user("second", "u2"),
    assistant("", "a2", call("c1")),
    tool("result " * 10, "t1", "c1"),
    assistant("two", "a3"),
)


def test_keeps_the_system_prompt_and_the_newest_messages_that_fit(counter: TokenCounter) -> None:
    budget = counter.count_messages((CHAT[0], *CHAT[3:]))
    result = TrimLast(max_tokens=budget).apply(CHAT, counter)
    assert [m.id for m in result.messages] == ["s", "u2", "a2", "t1", "a3"]
    assert result.decisions["s"] is Decision.PINNED
    assert result.decisions["u1"] is Decision.DROPPED
    assert result.tokens_after == counter.count_messages(result.messages) <= budget


def test_without_start_on_user_it_can_split_a_call_from_its_result(
    counter: TokenCounter,
) -> None:
    budget = counter.count_messages((CHAT[0], *CHAT[5:]))
    split = TrimLast(max_tokens=budget, start_on_user=False).apply(CHAT, counter)
    assert [m.id for m in split.messages] == ["s", "t1", "a3"]
    assert split.warnings and "tool result" in split.warnings[0]
    on_user = TrimLast(max_tokens=budget).apply(CHAT, counter)
    assert [m.id for m in on_user.messages] == ["s"]  # no user message in what fits


def test_the_system_prompt_is_kept_even_over_budget(counter: TokenCounter) -> None:
    result = TrimLast(max_tokens=1).apply(CHAT, counter)
    assert [m.id for m in result.messages] == ["s"]
    assert result.warnings


def test_end_on_drops_trailing_messages_of_other_types(counter: TokenCounter) -> None:
    result = TrimLast(max_tokens=10_000, end_on="user").apply(CHAT, counter)
    assert [m.id for m in result.messages] == ["s", "u1", "a1", "u2"]
    with pytest.raises(ParameterError, match="end_on"):
        TrimLast(end_on="robot")


strategies = st.builds(
    TrimLast,
    max_tokens=st.just(0),
    start_on_user=st.booleans(),
    include_system=st.booleans(),
    end_on=st.sampled_from(["", "", "user", "assistant", "tool", "user,tool"]),
)


@settings(max_examples=80)
@given(chats(max_turns=7), strategies, st.data())
def test_kept_ids_equal_langchain_trim_messages_last(
    chat: tuple[Message, ...], template: TrimLast, data: st.DataObject
) -> None:
    counter = get_counter("gpt-4o")
    budget = data.draw(budgets(counter.count_messages(chat)))
    strategy = TrimLast(budget, template.start_on_user, template.include_system, template.end_on)
    snapshot = copy.deepcopy(chat)
    result = strategy.apply(chat, counter)
    assert chat == snapshot
    assert [m.id for m in result.messages] == langchain_kept_ids(chat, strategy, counter)
    assert result.tokens_after == counter.count_messages(result.messages)
    assert set(result.decisions) == {m.id for m in chat}
    pinned = [i for i, d in result.decisions.items() if d is Decision.PINNED]
    if result.tokens_after > budget:  # only the pinned system message, or nothing, is sent
        assert len(result.messages) == len(pinned) <= 1
