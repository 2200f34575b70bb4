"""Decisions held as runs (:class:`DecisionRuns`) read exactly like the dict of every id.

The fast paths that read runs (decision counts, a round's decisions, the UI's decision codes,
the zoom and the dropped system prompts) are compared with the plain computation over a dict
on generated chats.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Mapping

import numpy as np
import pytest
from chatgen import assistant, budgets, chats, system, user
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.counted import CountedChat
from ctxlab.model import Message
from ctxlab.strategies import (
    Decision,
    SlidingWindow,
    TrimResult,
    WindowDrop,
    suffix_decisions,
)
from ctxlab.strategies.base import DecisionRuns, round_decisions, run_decisions
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures, render


def plain_window_drop(chat: CountedChat, strategy: WindowDrop) -> dict[str, Decision]:
    """Window drop's decisions built id by id, as before runs (its own cut)."""
    pinned, cut = strategy._cut(chat, len(chat))
    decisions = suffix_decisions(chat.ids, cut, before=Decision.DROPPED)
    decisions.update(dict.fromkeys(chat.ids[:pinned], Decision.PINNED))
    return decisions


def plain_codes(chat: CountedChat, decisions: Mapping[str, Decision]) -> list[int]:
    order = list(figures.DECISIONS)
    return [order.index(decisions.get(i, Decision.KEPT)) for i in chat.ids]


def plain_zoom(
    chat: CountedChat, decisions: Mapping[str, Decision], share: float = figures.ZOOM_SHARE
) -> tuple[int, int] | None:
    """The zoom as first written: round by round, message by message."""
    starts, n = chat.starts, len(chat.messages)
    if not starts:
        return None
    stops = (*starts[1:], n)

    def sent(k: int) -> bool:
        return any(
            decisions.get(chat.messages[i].id, Decision.KEPT).is_sent
            for i in range(starts[k], stops[k])
        )

    first = len(starts)
    while first > 0 and sent(first - 1):
        first -= 1
    total = chat.prefix[-1]
    if first == 0 or first == len(starts) or total <= 0:
        return None
    end_tokens = total - chat.prefix[starts[first]]
    if end_tokens >= share * total:
        return None
    lo = first
    while lo > 0 and (
        first - lo < 3 or chat.prefix[starts[first]] - chat.prefix[starts[lo - 1]] <= end_tokens / 4
    ):
        lo -= 1
    return (lo, len(starts))


def plain_round(
    chat: CountedChat, decisions: Mapping[str, Decision], k: int
) -> dict[Decision, int]:
    stop = chat.starts[k + 1] if k + 1 < len(chat.starts) else len(chat)
    out: dict[Decision, int] = {}
    for i in range(chat.starts[k], stop):
        d = decisions.get(chat.ids[i], Decision.KEPT)
        out[d] = out.get(d, 0) + 1
    return out


def assert_same_mapping(runs: Mapping[str, Decision], plain: dict[str, Decision]) -> None:
    assert list(runs) == list(plain)
    assert list(runs.values()) == list(plain.values())
    assert list(runs.items()) == list(plain.items())
    assert len(runs) == len(plain)
    assert runs == plain and plain == runs
    for key, value in plain.items():
        assert key in runs
        assert runs[key] is value
        assert runs.get(key) is value
    assert "no such id" not in runs
    assert runs.get("no such id") is None
    assert runs.get("no such id", Decision.KEPT) is Decision.KEPT
    with pytest.raises(KeyError):
        runs["no such id"]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), messages=chats(max_turns=8), keep_system=st.booleans())
def test_window_drop_runs_equal_the_dict_and_every_fast_reader_equals_the_plain_one(
    counter: TokenCounter, data: st.DataObject, messages: tuple[Message, ...], keep_system: bool
) -> None:
    chat = counter.counted(messages)
    strategy = WindowDrop(budget=data.draw(budgets(chat.total)), keep_system=keep_system)
    result = strategy.apply(messages, counter)
    plain = plain_window_drop(chat, strategy)
    if messages:
        assert isinstance(result.decisions, DecisionRuns)
    assert_same_mapping(result.decisions, plain)
    as_plain = TrimResult(result.messages, plain, result.tokens_before, result.tokens_after)
    assert result.decision_counts() == as_plain.decision_counts()
    for k in range(len(chat.starts)):
        assert round_decisions(chat, result, k) == round_decisions(chat, as_plain, k)
        assert round_decisions(chat, result, k) == plain_round(chat, plain, k)
        assert strategy.explain_round(chat, result, k) == strategy.explain_round(chat, as_plain, k)
    codes = figures.decision_codes(chat, result.decisions)
    assert codes.tolist() == plain_codes(chat, plain)
    assert figures.decision_codes(chat, plain).tolist() == codes.tolist()
    assert figures.zoom_rounds(chat, result.decisions) == plain_zoom(chat, plain)
    assert render.dropped_instructions(chat, result) == render.dropped_instructions(chat, as_plain)
    assert figures.round_blocks(chat, result.decisions) == figures.round_blocks(chat, plain)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), messages=chats(min_turns=1, max_turns=8))
def test_any_runs_read_like_their_dict(
    counter: TokenCounter, data: st.DataObject, messages: tuple[Message, ...]
) -> None:
    chat = counter.counted(messages)
    n = len(chat)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=5)))
    picks = data.draw(st.lists(st.sampled_from(list(Decision)), min_size=6, max_size=6))
    runs = [*zip(cuts, picks, strict=False), (n, picks[-1])]
    decisions = run_decisions(chat, runs)
    plain: dict[str, Decision] = {}
    start = 0
    for stop, decision in runs:
        plain.update(dict.fromkeys(chat.ids[start:stop], decision))
        start = max(start, stop)
    assert_same_mapping(decisions, plain)
    result = TrimResult((), decisions, 0, 0)
    counts = {d: list(plain.values()).count(d) for d in Decision}
    assert result.decision_counts() == counts
    assert figures.decision_codes(chat, decisions).tolist() == plain_codes(chat, plain)
    assert figures.zoom_rounds(chat, decisions) == plain_zoom(chat, plain)
    for k in range(len(chat.starts)):
        assert round_decisions(chat, result, k) == plain_round(chat, plain, k)


def test_adjacent_runs_of_one_decision_merge_and_empty_runs_vanish(
    counter: TokenCounter,
) -> None:
    messages = [system("s"), user("q", "u0"), assistant("a", "a0"), user("q", "u1")]
    chat = counter.counted(messages)
    runs = run_decisions(
        chat,
        [(0, Decision.PINNED), (1, Decision.DROPPED), (2, Decision.DROPPED), (4, Decision.KEPT)],
    )
    assert isinstance(runs, DecisionRuns)
    assert runs.stops == (2, 4)
    assert list(runs.run_lengths()) == [(Decision.DROPPED, 2), (Decision.KEPT, 2)]


def test_runs_must_cover_the_chat(counter: TokenCounter) -> None:
    chat = counter.counted([user("q", "u0"), assistant("a", "a0")])
    with pytest.raises(ValueError, match="runs end at 1"):
        run_decisions(chat, [(1, Decision.KEPT)])
    with pytest.raises(ValueError, match="cover every id"):
        DecisionRuns(chat.ids, chat.positions, (1,), (Decision.KEPT,))
    with pytest.raises(ValueError, match="ascending"):
        DecisionRuns(chat.ids, chat.positions, (1, 1, 2), (Decision.KEPT,) * 3)


def test_a_chat_that_repeats_an_id_gets_a_plain_dict(counter: TokenCounter) -> None:
    messages = [user("q", "x"), assistant("a", "x"), user("q2", "y")]
    chat = counter.counted(messages)
    decisions = run_decisions(chat, [(1, Decision.DROPPED), (3, Decision.KEPT)])
    assert type(decisions) is dict
    assert decisions == {"x": Decision.KEPT, "y": Decision.KEPT}


def test_bulk_get_builds_the_dict_once(counter: TokenCounter) -> None:
    chat = counter.counted([user("q", "u0"), assistant("a", "a0")])
    runs = run_decisions(chat, [(1, Decision.DROPPED), (2, Decision.KEPT)])
    assert isinstance(runs, DecisionRuns)
    assert runs.as_dict() is runs.as_dict()
    assert list(map(runs.get, chat.ids)) == [Decision.DROPPED, Decision.KEPT]
    assert runs.as_dict() == {"u0": Decision.DROPPED, "a0": Decision.KEPT}


def test_codes_of_runs_are_read_only_like_the_plain_ones(counter: TokenCounter) -> None:
    chat = counter.counted([user("q", "u0"), assistant("a", "a0")])
    runs = run_decisions(chat, [(1, Decision.DROPPED), (2, Decision.KEPT)])
    codes = figures.decision_codes(chat, runs)
    assert codes.dtype == np.int8
    assert not codes.flags.writeable


def test_runs_pickle_and_copy_as_their_dict(counter: TokenCounter) -> None:
    chat = counter.counted([system("s"), user("q", "u0"), assistant("a", "a0")])
    result = WindowDrop(budget=1, keep_system=True).apply(chat.messages, counter)
    assert isinstance(result.decisions, DecisionRuns)
    plain = dict(result.decisions.items())
    for copied in (pickle.loads(pickle.dumps(result)), copy.deepcopy(result)):
        assert type(copied.decisions) is dict
        assert copied.decisions == plain
        assert copied == result


def with_late_system(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The chat with system messages in its middle and at its end (instructions anywhere)."""
    middle = len(messages) // 2
    return (
        *messages[:middle],
        system("late rule", id="late-sys"),
        *messages[middle:],
        system("last rule", id="end-sys"),
    )


@settings(max_examples=80, deadline=None)
@given(
    messages=st.one_of(chats(max_turns=8), chats(max_turns=8).map(with_late_system)),
    window=st.integers(1, 12),
    trigger=st.one_of(st.none(), st.integers(1, 20)),
)
def test_sliding_window_runs_equal_the_dict(
    counter: TokenCounter,
    messages: tuple[Message, ...],
    window: int,
    trigger: int | None,
) -> None:
    strategy = SlidingWindow(window=window, trigger_at=trigger)
    result = strategy.apply(messages, counter)
    chat = counter.counted(messages)
    start = strategy._window_start(chat, len(chat))
    plain = suffix_decisions(chat.ids, start, before=Decision.DROPPED)
    plain.update(
        dict.fromkeys((chat.ids[i] for i in chat.instruction_positions()), Decision.PINNED)
    )
    if messages:
        assert isinstance(result.decisions, DecisionRuns)
    assert_same_mapping(result.decisions, plain)
    as_plain = TrimResult(result.messages, plain, result.tokens_before, result.tokens_after)
    assert result.decision_counts() == as_plain.decision_counts()
    assert figures.decision_codes(chat, result.decisions).tolist() == plain_codes(chat, plain)
