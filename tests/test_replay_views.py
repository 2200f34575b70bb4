"""What a Replay derives once and keeps (row dicts, totals, break turns, recent contexts):
the same values as computing them afresh, whatever the order they are asked in."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from chatgen import chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.model import Message
from ctxlab.replay import CONTEXTS_KEPT, carries_history, replay
from ctxlab.strategies import get_strategy_class, strategy_names
from ctxlab.tokens import TokenCounter

# strategies a replay recomputes from the full chat at every call (not the ones that carry a
# rewritten history forward: summarizers and stateful framework policies)
PROJECTIONS = [n for n in strategy_names() if not carries_history(get_strategy_class(n)())]


@settings(max_examples=30)
@given(chat=chats(min_turns=1, max_turns=8))
def test_row_dicts_and_totals_equal_the_rows_themselves(
    chat: tuple[Message, ...], counter: TokenCounter
) -> None:
    strategy = get_strategy_class("window-drop").suggested(counter.counted(chat))
    rep = replay(chat, strategy, counter)
    dicts = rep.rows_as_dicts()
    assert dicts == [asdict(r) for r in rep.rows]
    if dicts:
        dicts[0]["tokens_sent"] = -1  # a caller's edit never reaches the replay
    assert rep.rows_as_dicts() == [asdict(r) for r in rep.rows]
    for column in ("tokens_sent", "tokens_untrimmed", "summarizer_calls"):
        assert getattr(rep, column) == sum(getattr(r, column) for r in rep.rows)
    assert rep.cache_break_turns() == rep.cache_break_turns()


@pytest.mark.parametrize("name", PROJECTIONS)
@settings(max_examples=25)
@given(chat=chats(min_turns=2, max_turns=8), data=st.data())
def test_the_context_at_any_turn_equals_the_strategy_on_that_prefix(
    name: str, chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    strategy = get_strategy_class(name).suggested(counter.counted(chat))
    rep = replay(chat, strategy, counter)
    if not rep.rows:
        return
    # more visits than the replay keeps, in any order, some repeated
    turns = data.draw(
        st.lists(st.integers(1, len(rep)), min_size=1, max_size=2 * CONTEXTS_KEPT + 2)
    )
    for turn in turns:
        expected = strategy.apply(chat[: rep.rows[turn - 1].message_index], counter)
        got = rep.context_at(turn)
        assert got.messages == expected.messages
        assert dict(got.decisions) == dict(expected.decisions)
        assert (got.tokens_before, got.tokens_after) == (
            expected.tokens_before,
            expected.tokens_after,
        )
        assert got.warnings == expected.warnings


def test_the_tokens_chart_reads_rows_views_as_it_reads_row_dicts(counter: TokenCounter) -> None:
    from chatgen import assistant, user

    from ctxlab.summarizers import OfflineSummarizer
    from ctxlab.ui.figures import MAX_POINTS, replay_tokens_figure
    from ctxlab.ui.timeline import RowsView

    long_chat = tuple(
        m
        for k in range(MAX_POINTS + 300)
        for m in (user(f"q{k}", f"u{k}"), assistant(f"a{k}", f"a{k}"))
    )
    long_replay = replay(long_chat, get_strategy_class("sliding-window")(window=10), counter)
    summarized = replay(
        long_chat[:80],
        get_strategy_class("summarize").suggested(counter.counted(long_chat[:40])),
        counter,
        summarizer=OfflineSummarizer(),
    )
    assert summarized.summarizer_calls > 0  # the chart's summarizer markers are drawn too
    for rep in (long_replay, summarized):
        for turn in (1, len(rep)):
            assert (
                replay_tokens_figure(RowsView(rep.rows), 500, turn=turn).to_dict()
                == replay_tokens_figure(rep.rows_as_dicts(), 500, turn=turn).to_dict()
            )


@settings(max_examples=30)
@given(chat=chats(min_turns=1, max_turns=8), cached_price=st.sampled_from([None, 0.3]))
def test_every_calls_cost_is_exactly_the_price_tables_cost(
    chat: tuple[Message, ...], cached_price: float | None, counter: TokenCounter
) -> None:
    from ctxlab.insights import cached_input_tokens
    from ctxlab.pricing import ModelPrice, PriceTable

    price = ModelPrice("m", 2.5, cached_price, 10.0)
    table = PriceTable({"m": price}, as_of="2026-01-01", source="test")
    strategy = get_strategy_class("window-drop").suggested(counter.counted(chat))
    rep = replay(chat, strategy, counter, model="m", prices=table)
    previous = 0
    for r in rep.rows:
        assert r.call_cost == price.cost(r.tokens_sent, r.output_tokens)
        assert r.call_cost_untrimmed == price.cost(r.tokens_untrimmed, r.output_tokens)
        assert r.cached_tokens is not None
        assert r.call_cost_with_cache == price.cost(
            r.tokens_sent, r.output_tokens, min(r.cached_tokens, r.tokens_sent)
        )
        untrimmed_cached = cached_input_tokens(counter.counted(chat).prefix[previous])
        assert r.call_cost_untrimmed_with_cache == price.cost(
            r.tokens_untrimmed, r.output_tokens, min(untrimmed_cached, r.tokens_untrimmed)
        )
        previous = r.message_index
