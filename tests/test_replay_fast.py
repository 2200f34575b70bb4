"""The fast replay of a projection equals the plain per-turn replay, field for field.

``replay`` builds a projection's rows from :meth:`Strategy.project_many` in one pipeline; the
plain path (``_replay_projection_per_turn``: ``project`` then ``_Costing.row`` at every call)
is the reference. Floats are compared bit for bit (``float.hex``), not approximately.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Sequence
from typing import Any

import pytest
from chatgen import budgets, chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.model import Message, Role
from ctxlab.pricing import ModelPrice, PriceTable
from ctxlab.replay import (
    COLUMNS,
    EXACT_CONTEXT_LIMIT,
    ReplayRow,
    _Costing,
    _replay_projection,
    _replay_projection_per_turn,
    assistant_turns,
    replay,
)
from ctxlab.strategies import Strategy
from ctxlab.strategies.base import Projection
from ctxlab.strategies.clear_tool_results import ClearToolResults
from ctxlab.strategies.sliding_window import SlidingWindow
from ctxlab.strategies.trim_last import TrimLast
from ctxlab.strategies.window_drop import WindowDrop
from ctxlab.tokens import TokenCounter

PROJECTIONS = ("window-drop", "trim-last", "clear-tool-results", "sliding-window")


def exact(value: Any) -> Any:
    """A value whose equality is bit equality for floats (0.0 vs -0.0, 0.1 + 0.2 vs 0.3)."""
    return ("float", value.hex()) if isinstance(value, float) else (type(value).__name__, value)


def fields_of(rows: Sequence[ReplayRow]) -> list[list[Any]]:
    return [[exact(getattr(r, c)) for c in COLUMNS] for r in rows]


@st.composite
def long_chats(draw: st.DrawFn) -> tuple[Message, ...]:
    """Generated chats whose messages are repeated up to 60 times over, so that contexts pass
    the 1,024 tokens from which OpenAI bills cached input (the cache columns then vary)."""
    chat = draw(chats(min_turns=1, max_turns=7))
    times = draw(st.integers(1, 60))
    return tuple(m.replace(content=" ".join([m.content] * times)) for m in chat)


@st.composite
def projection_strategies(draw: st.DrawFn, total: int) -> Strategy:
    """Any projection strategy with drawn parameters (budgets around the chat's ``total``)."""
    name = draw(st.sampled_from(PROJECTIONS))
    if name == "window-drop":
        return WindowDrop(budget=draw(budgets(total)), keep_system=draw(st.booleans()))
    if name == "trim-last":
        return TrimLast(
            max_tokens=draw(st.one_of(st.just(0), budgets(total))),
            start_on_user=draw(st.booleans()),
            include_system=draw(st.booleans()),
            end_on=draw(st.sampled_from(["", "assistant", "user, tool", "system"])),
        )
    if name == "clear-tool-results":
        return ClearToolResults(
            trigger_tokens=draw(st.one_of(st.just(0), budgets(total))),
            keep_tool_results=draw(st.integers(0, 4)),
            clear_at_least=draw(st.sampled_from([0, 1, 50, 10**6])),
            exclude_tools=draw(st.sampled_from(["", "search", "search, read_file"])),
            clear_tool_inputs=draw(st.booleans()),
        )
    return SlidingWindow(
        window=draw(st.integers(0, 12)), trigger_at=draw(st.one_of(st.none(), st.integers(0, 20)))
    )


prices = st.one_of(st.integers(0, 60), st.floats(0, 100, allow_nan=False, allow_infinity=False))


@st.composite
def price_tables(draw: st.DrawFn) -> PriceTable:
    cached = draw(st.one_of(st.none(), prices))
    inp = draw(prices)
    write = draw(st.one_of(st.none(), prices.map(lambda extra: inp + extra)))  # >= input
    return PriceTable.of([ModelPrice("m", inp, cached, draw(prices), write)], as_of="test")


@settings(max_examples=300)
@given(chat=long_chats(), data=st.data())
def test_fast_projection_replay_equals_the_per_turn_replay(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    strategy = data.draw(projection_strategies(counted.total))
    table = data.draw(price_tables())
    model = data.draw(st.sampled_from(["m", "unpriced"]))
    exact_limit = data.draw(st.sampled_from([0, 3, EXACT_CONTEXT_LIMIT]))
    indices = assistant_turns(chat)[: data.draw(st.integers(0, 40))]

    def rows(run: Any) -> tuple[list[Any], _Costing]:
        warnings: list[str] = []
        costing = _Costing(table.get(model), table, warnings)
        out = run(counted, indices, strategy, counter, costing, exact_limit)
        assert warnings == []
        return fields_of(out), costing

    fast, fast_costing = rows(_replay_projection)
    plain, plain_costing = rows(_replay_projection_per_turn)
    assert fast == plain
    # the running state a later call would continue from is the same too
    for name in ("cumulative", "cumulative_untrimmed", "cumulative_cached", "previous_index"):
        assert exact(getattr(fast_costing, name)) == exact(getattr(plain_costing, name))


@pytest.mark.parametrize(
    "strategy",
    [
        WindowDrop(budget=300),
        WindowDrop(budget=300, keep_system=True),
        TrimLast(max_tokens=300, end_on="assistant"),
        ClearToolResults(trigger_tokens=200, keep_tool_results=1),
        ClearToolResults(trigger_tokens=200, clear_tool_inputs=True),
        SlidingWindow(window=3),
    ],
    ids=lambda s: s.name,
)
@settings(max_examples=60)
@given(chat=chats(max_turns=8), data=st.data())
def test_project_many_equals_project_at_every_stop(
    strategy: Strategy, chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    stops = data.draw(
        st.one_of(
            st.just(list(range(len(chat) + 1))),
            st.lists(st.integers(0, len(chat)), max_size=12),  # any order, repeats
        )
    )
    many = list(strategy.project_many(counted, stops, counter))
    assert many == [strategy.project(counted, s, counter) for s in stops]


def test_project_many_of_the_base_class_is_project_at_each_stop(counter: TokenCounter) -> None:
    class Halve(Strategy):
        name = "halve"
        title = summary = "test"

        def apply(self, messages, counter, summarizer=None):  # type: ignore[no-untyped-def]
            return WindowDrop(budget=100).apply(messages[len(messages) // 2 :], counter)

    chat = counter.counted(long_chat_of(6))
    stops = [0, 3, 1, len(chat)]
    assert list(Halve().project_many(chat, stops, counter)) == [
        Halve().project(chat, s, counter) for s in stops
    ]


def long_chat_of(turns: int) -> tuple[Message, ...]:
    from ctxlab.model import Role

    out: list[Message] = [Message(Role.SYSTEM, "You are terse. " * 30, "s")]
    for t in range(turns):
        out.append(Message(Role.USER, f"question {t} " * 200, f"u{t}"))
        out.append(Message(Role.ASSISTANT, f"answer {t} " * 150, f"a{t}"))
    return tuple(out)


def test_rows_of_the_fast_path_are_ordinary_frozen_replay_rows(counter: TokenCounter) -> None:
    result = replay(long_chat_of(8), WindowDrop(budget=10**6), counter)
    assert result.rows and any(r.cached_tokens for r in result.rows)
    for row in result.rows:
        assert type(row) is ReplayRow
        twin = ReplayRow(**{c: getattr(row, c) for c in COLUMNS})
        assert row == twin and hash(row) == hash(twin) and repr(row) == repr(twin)
        assert dataclasses.asdict(row) == dataclasses.asdict(twin)
        assert pickle.loads(pickle.dumps(row)) == row and copy.copy(row) == row
        assert dataclasses.replace(row, turn=0).turn == 0
        with pytest.raises(dataclasses.FrozenInstanceError):
            row.turn = 99  # type: ignore[misc]
        for same in (row, twin):  # whatever a frozen slots dataclass raises (a TypeError on 3.11)
            with pytest.raises((AttributeError, TypeError)):
                same.extra = 1  # type: ignore[attr-defined]


def test_assistant_turns_are_found_once_per_chat(counter: TokenCounter) -> None:
    chat = long_chat_of(5)
    first = replay(chat, WindowDrop(budget=2000), counter)
    again = replay(chat, SlidingWindow(window=2), counter, turns=3)
    assert [r.message_index for r in first.rows] == assistant_turns(chat)
    assert [r.message_index for r in again.rows] == assistant_turns(chat)[:3]
    assert counter.counted(chat).derived("replay.assistant_turns", lambda c: None) == tuple(
        assistant_turns(chat)
    )


@settings(max_examples=200)
@given(chat=long_chats(), data=st.data())
def test_cache_prefixes_of_every_projection_equal_those_of_the_materialized_contexts(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    """The prefix short cuts (same front, one more stand-in) against the message-by-message
    comparison, including tool results that already read as the placeholder (the stand-in
    then equals the original, so the common prefix goes on past the new site)."""
    from ctxlab.insights import cache_series
    from ctxlab.strategies.clear_tool_results import DEFAULT_PLACEHOLDER

    already = data.draw(st.sets(st.integers(0, max(len(chat) - 1, 0)), max_size=4))
    chat = tuple(
        m.replace(content=DEFAULT_PLACEHOLDER) if i in already and m.is_tool_result else m
        for i, m in enumerate(chat)
    )
    strategy = data.draw(projection_strategies(counter.count_messages(chat)))
    result = replay(chat, strategy, counter)
    contexts = [strategy.apply(chat[: r.message_index], counter).messages for r in result.rows]
    expected = [s.prefix_tokens for s in cache_series(contexts, counter)]
    assert [r.cacheable_prefix_tokens for r in result.rows] == expected


@pytest.mark.parametrize("keep", [0, 1])
def test_a_result_that_already_reads_as_the_placeholder_keeps_the_cache_going(
    keep: int, counter: TokenCounter
) -> None:
    """Clearing a tool result whose content is the placeholder changes nothing that is sent,
    so the cacheable prefix runs past it (to the next result actually cleared)."""
    from chatgen import assistant, call, tool, user

    from ctxlab.insights import cache_series
    from ctxlab.strategies.clear_tool_results import DEFAULT_PLACEHOLDER

    chat: list[Message] = []
    for t in range(6):
        output = DEFAULT_PLACEHOLDER if t % 2 == 0 else f"result {t} " * 80
        chat += [
            user(f"step {t} " * 60, f"u{t}"),
            assistant("", f"c{t}", call(f"call_{t}")),
            tool(output, f"t{t}", f"call_{t}"),
            assistant(f"done {t} " * 40, f"a{t}"),
        ]
    strategy = ClearToolResults(trigger_tokens=0, keep_tool_results=keep)
    result = replay(chat, strategy, counter)
    contexts = [strategy.apply(chat[: r.message_index], counter).messages for r in result.rows]
    expected = [s.prefix_tokens for s in cache_series(contexts, counter)]
    assert [r.cacheable_prefix_tokens for r in result.rows] == expected
    assert [r.cacheable_prefix_tokens for r in result.rows] == [
        r.cacheable_prefix_tokens
        for r in _replay_projection_per_turn(
            counter.counted(tuple(chat)),
            assistant_turns(chat),
            strategy,
            counter,
            _Costing(None, PriceTable.of([]), []),
        )
    ]


@st.composite
def chats_with_instructions(draw: st.DrawFn) -> tuple[Message, ...]:
    """Generated chats with system messages inserted anywhere (a pinned head of several, or
    instructions later in the chat), repeated so that contexts pass 1,024 tokens."""
    chat = list(draw(long_chats()))
    for k in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(chat)))
        chat.insert(at, Message(Role.SYSTEM, f"be brief {k} " * draw(st.integers(1, 40)), f"s{k}"))
    return tuple(chat)


@settings(max_examples=200)
@given(chat=chats_with_instructions(), data=st.data())
def test_window_drop_columns_are_project_many(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    strategy = WindowDrop(
        budget=data.draw(budgets(counted.total)), keep_system=data.draw(st.booleans())
    )
    stops = sorted(data.draw(st.lists(st.integers(0, len(chat)), max_size=30)))
    columns = strategy.project_columns(counted, stops)
    got = list(
        zip(
            columns.messages_sent.tolist(),
            columns.tokens_sent.tolist(),
            columns.start.tolist(),
            columns.end.tolist(),
            columns.pinned.tolist(),
            strict=True,
        )
    )
    expected = [
        (p.messages_sent, p.tokens_sent, p.start, p.end, p.pinned)
        for p in strategy.project_many(counted, stops, counter)
    ]
    assert got == expected


@settings(max_examples=200)
@given(chat=chats_with_instructions(), data=st.data())
def test_window_drop_replay_from_columns_equals_the_per_turn_replay(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    """The column path (array costing, every common cache step in arrays) against the plain
    per-turn replay, bit for bit, on chats with pinned heads and late instructions."""
    counted = counter.counted(chat)
    strategy = WindowDrop(
        budget=data.draw(budgets(counted.total)), keep_system=data.draw(st.booleans())
    )
    table = data.draw(price_tables())
    indices = assistant_turns(chat)

    def rows(run: Any) -> tuple[list[Any], _Costing]:
        costing = _Costing(table.get("m"), table, [])
        return fields_of(run(counted, indices, strategy, counter, costing)), costing

    fast, fast_costing = rows(_replay_projection)
    plain, plain_costing = rows(_replay_projection_per_turn)
    assert fast == plain
    for name in (
        "cumulative",
        "cumulative_untrimmed",
        "cumulative_cached",
        "cumulative_untrimmed_cached",
        "previous_index",
    ):
        assert exact(getattr(fast_costing, name)) == exact(getattr(plain_costing, name))


def test_a_subclass_that_changes_project_many_is_not_replayed_from_inherited_columns(
    counter: TokenCounter,
) -> None:
    """Columns answer for the project_many of the class that defines them: a subclass with a
    project_many of its own is replayed through it."""
    import dataclasses as dc

    @dc.dataclass(frozen=True, slots=True)
    class SendsEverything(WindowDrop):
        def project_many(self, chat: Any, stops: Sequence[int], counter: Any) -> Any:
            for stop in stops:
                yield Projection(stop, chat.tokens(0, stop), 0, stop)

    chat = tuple(
        m
        for k in range(30)
        for m in (
            Message(Role.USER, f"question {k} " * 40, f"u{k}"),
            Message(Role.ASSISTANT, f"answer {k} " * 40, f"a{k}"),
        )
    )
    sent = replay(chat, SendsEverything(budget=500), counter, model="gpt-4o")
    assert [r.messages_sent for r in sent.rows] == [r.messages_untrimmed for r in sent.rows]
    dropped = replay(chat, WindowDrop(budget=500), counter, model="gpt-4o")
    assert [r.messages_sent for r in dropped.rows] != [r.messages_untrimmed for r in dropped.rows]
