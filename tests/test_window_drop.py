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


TWO_ROUNDS = (
    system("be brief", "s"),
    user("first question " * 20, "u1"),
    assistant("first answer " * 20, "a1"),
    user("second", "u2"),
    assistant("second answer", "a2"),
)
"""A system prompt, a long first round and a short second one."""


def test_known_answer_drops_the_oldest_round(counter: TokenCounter) -> None:
    chat = TWO_ROUNDS
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


def oracle_keep_system(
    chat: tuple[Message, ...], budget: int, counter: TokenCounter
) -> tuple[Message, ...]:
    """Brute force: the leading system messages, then the longest fitting suffix of the rounds."""
    pinned = 0
    while pinned < len(chat) and chat[pinned].role.is_instruction:
        pinned += 1
    head = chat[:pinned]
    if pinned == len(chat):
        return head
    starts = sorted({max(r.start, pinned) for r in split_rounds(chat)} - {len(chat)})
    for start in starts:  # longest first
        if counter.count_messages(head + chat[start:]) <= budget:
            return head + chat[start:]
    return head + chat[starts[-1] :]


@given(chat_and_budget(), st.data())
def test_keep_system_pins_the_system_prompt_and_fits_the_rest(
    case: tuple[tuple[Message, ...], int], data: st.DataObject
) -> None:
    from ctxlab.tokens import get_counter

    counter = get_counter("gpt-4o")
    chat, budget = case
    strategy = WindowDrop(budget, keep_system=True)
    result = strategy.apply(chat, counter)
    assert result.messages == oracle_keep_system(chat, budget, counter)
    assert result.tokens_after == counter.count_messages(result.messages)
    lead = 0
    while lead < len(chat) and chat[lead].role.is_instruction:
        lead += 1
    assert all(result.decisions[m.id] is Decision.PINNED for m in chat[:lead])
    counted = counter.counted(chat)
    for stop in {0, len(chat), data.draw(st.integers(0, len(chat)))}:
        projection = strategy.project(counted, stop, counter)
        applied = strategy.apply(chat[:stop], counter)
        assert projection.messages_sent == len(applied.messages)
        assert projection.tokens_sent == applied.tokens_after


def test_keep_system_changes_only_the_system_prompt_decision(counter: TokenCounter) -> None:
    chat = (
        system("be brief " * 30, "s"),
        user("first question " * 20, "u1"),
        assistant("first answer " * 20, "a1"),
        user("second", "u2"),
        assistant("second answer", "a2"),
    )
    budget = counter.count_messages(chat[3:]) + counter.count_messages(chat[:1])
    plain = WindowDrop(budget).apply(chat, counter)
    pinned = WindowDrop(budget, keep_system=True).apply(chat, counter)
    assert plain.decisions["s"] is Decision.DROPPED
    assert pinned.decisions["s"] is Decision.PINNED
    assert [m.id for m in pinned.messages] == ["s", "u2", "a2"]


def test_every_round_says_why_with_the_numbers_that_decided(counter: TokenCounter) -> None:
    chat = TWO_ROUNDS
    budget = counter.count_messages(chat[3:])
    strategy = WindowDrop(budget)
    result = strategy.apply(chat, counter)
    counted = counter.counted(chat)
    dropped = strategy.explain_round(counted, result, 1)
    needs = counter.count_messages(chat[1:])
    assert dropped == (
        f"dropped: keeping it (and every newer round) needs {needs:,} tokens with the "
        f"{budget:,}-token budget"
    )
    assert strategy.explain_round(counted, result, 2).startswith("kept: ")
    pinned = WindowDrop(budget, keep_system=True)
    assert pinned.explain_round(counted, pinned.apply(chat, counter), 0).startswith(
        "pinned: the leading system prompt"
    )


@given(chat=chats(), budget=st.integers(1, 5_000))
def test_decision_counts_count_every_decision_including_the_absent_ones(
    chat: tuple[Message, ...], budget: int, counter: TokenCounter
) -> None:
    result = WindowDrop(budget=budget).apply(chat, counter)
    counts = result.decision_counts()
    assert list(counts) == list(Decision)
    for decision in Decision:
        assert counts[decision] == sum(1 for d in result.decisions.values() if d is decision)
