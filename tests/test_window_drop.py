"""WindowDrop: the longest suffix of whole rounds that fits, checked against a brute force."""

from __future__ import annotations

import copy

from chatgen import assistant, budgets, call, chats, system, tool, user
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.model import Message
from ctxlab.rounds import split_rounds
from ctxlab.strategies.base import Decision
from ctxlab.strategies.window_drop import WindowDrop
from ctxlab.tokens import TokenCounter


def oracle_cut(chat: tuple[Message, ...], budget: int, counter: TokenCounter) -> int:
    """Index where the kept suffix starts: brute force over every suffix of whole rounds."""
    starts = [r.start for r in split_rounds(chat)]
    for start in starts:  # longest first
        if counter.count_messages(chat[start:]) <= budget:
            return start
    return starts[-1]


@st.composite
def chat_and_budget(draw: st.DrawFn) -> tuple[tuple[Message, ...], int]:
    from ctxlab.tokens import get_counter

    chat = draw(chats(min_turns=1, max_turns=7))
    return chat, draw(budgets(get_counter("gpt-4o").count_messages(chat)))


def test_known_answer_drops_the_oldest_round(counter: TokenCounter) -> None:
    chat = (
        system("be brief", "s"),
        user("first question " * 20, "u1"),
        assistant("first answer " * 20, "a1"),
        user("second", "u2"),
        assistant("second answer", "a2"),
    )
    budget = counter.count_messages(chat[3:])
    result = WindowDrop(budget).apply(chat, counter)
    assert [m.id for m in result.messages] == ["u2", "a2"]
    assert result.decisions["s"] is Decision.DROPPED
    assert not result.warnings


@given(chat_and_budget())
def test_result_is_the_longest_fitting_suffix_of_whole_rounds(
    case: tuple[tuple[Message, ...], int],
) -> None:
    from ctxlab.tokens import get_counter

    counter = get_counter("gpt-4o")
    chat, budget = case
    snapshot = copy.deepcopy(chat)
    result = WindowDrop(budget).apply(chat, counter)
    cut = oracle_cut(chat, budget, counter)
    assert result.messages == chat[cut:]
    assert chat == snapshot  # input unchanged
    assert set(result.decisions) == {m.id for m in chat}
    assert result.tokens_after == counter.count_messages(result.messages)
    assert result.tokens_before == counter.count_messages(chat)
    kept_calls = {c.id for m in result.messages for c in m.tool_calls}
    for m in result.messages:
        if m.tool_call_id is not None:
            assert m.tool_call_id in kept_calls  # never splits a call from its result
    over = result.tokens_after > budget
    assert bool(result.warnings) == over
    if over:
        assert cut == split_rounds(chat)[-1].start  # only the last round, kept anyway
    assert not result.replace


def test_the_last_round_is_kept_over_budget_with_a_warning(counter: TokenCounter) -> None:
    chat = (
        user("hi", "u1"),
        assistant("", "a1", call("c1")),
        tool("big " * 200, "t1", "c1"),
        assistant("done", "a2"),
    )
    result = WindowDrop(10).apply(chat, counter)
    assert result.messages == chat
    assert result.warnings and "over the budget" in result.warnings[0]
