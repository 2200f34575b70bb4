"""The binned round map: ranges of whole rounds that keep every decision's token total."""

from __future__ import annotations

from collections import Counter

from chatgen import assistant, chats, user
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.model import Message
from ctxlab.strategies import Decision
from ctxlab.strategies.base import DecisionRuns, run_decisions
from ctxlab.tokens import TokenCounter
from ctxlab.ui.binned_map import (
    ORDER,
    bin_edges,
    binned_map_figure,
    decision_bins,
    decision_codes,
    wants_bins,
)
from ctxlab.ui.figures import DECISION_LEGEND, MAX_BLOCKS


def raw_totals(
    chat: tuple[Message, ...], counts: tuple[int, ...], picked: list[Decision], stop: int
) -> Counter[Decision]:
    """Tokens per decision, summed straight from the messages (no bins involved)."""
    totals: Counter[Decision] = Counter()
    for i in range(stop):
        totals[picked[i]] += counts[i]
    return totals


@settings(max_examples=60)
@given(chat=chats(min_turns=1, max_turns=10), data=st.data())
def test_bins_tile_the_prefix_and_keep_every_decisions_total(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    stop = data.draw(st.integers(0, len(chat)))
    bins_wanted = data.draw(st.integers(1, 12))
    picked = data.draw(
        st.lists(st.sampled_from(list(Decision)), min_size=len(chat), max_size=len(chat))
    )
    decisions = {m.id: d for m, d in zip(chat, picked, strict=True)}
    codes = decision_codes(counted, decisions, stop)
    edges = bin_edges(counted, stop, bins_wanted)
    bins = decision_bins(counted, codes, edges)
    # the ranges tile messages 0..stop-1, start on round starts, and are at most bins_wanted
    assert [b.start for b in bins] + [stop] == edges or (stop == 0 and bins == [])
    assert all(b.start in counted.starts for b in bins)
    assert len(bins) <= bins_wanted
    for b in bins:
        assert sum(b.split) == b.tokens == sum(counted.counts[b.start : b.stop])
        assert b.x0 == sum(counted.counts[: b.start])
    expected = raw_totals(chat, counted.counts, picked, stop)
    for k, decision in enumerate(ORDER):
        assert sum(b.split[k] for b in bins) == expected[decision]


@settings(max_examples=30)
@given(chat=chats(min_turns=1, max_turns=8), data=st.data())
def test_the_figure_draws_each_decisions_tokens_once(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    picked = data.draw(
        st.lists(st.sampled_from(list(Decision)), min_size=len(chat), max_size=len(chat))
    )
    decisions = {m.id: d for m, d in zip(chat, picked, strict=True)}
    fig = binned_map_figure(
        decision_bins(counted, decision_codes(counted, decisions), bin_edges(counted, bins=5))
    )
    drawn = {trace.name: sum(trace.x) for trace in fig.data}
    expected = raw_totals(chat, counted.counts, picked, len(chat))
    for decision in Decision:
        assert drawn.get(DECISION_LEGEND[decision.value], 0) == expected[decision]


def test_a_message_the_decisions_do_not_name_gets_the_missing_decision(
    counter: TokenCounter,
) -> None:
    messages = (user("a", "u1"), assistant("b", "a1"), user("c", "u2"))
    counted = counter.counted(messages)
    codes = decision_codes(counted, {"u1": Decision.DROPPED}, missing=Decision.SUMMARIZED)
    assert [ORDER[c] for c in codes] == [Decision.DROPPED, Decision.SUMMARIZED, Decision.SUMMARIZED]


def test_only_chats_with_more_rounds_than_a_map_draws_are_binned(counter: TokenCounter) -> None:
    def rounds(n: int) -> tuple[Message, ...]:
        return tuple(m for k in range(n) for m in (user("q", f"u{k}"), assistant("a", f"a{k}")))

    assert not wants_bins(counter.counted(rounds(MAX_BLOCKS)))
    many = counter.counted(rounds(MAX_BLOCKS + 1))
    assert wants_bins(many)
    assert not wants_bins(many, stop=2 * MAX_BLOCKS)  # the prefix before the last round


def test_tool_definitions_are_a_block_before_the_first_range(counter: TokenCounter) -> None:
    from ctxlab.ui.figures import OVERHEAD_LABEL

    messages = (user("a", "u1"), assistant("b", "a1"))
    counted = counter.counted(messages)
    bins = decision_bins(counted, decision_codes(counted, {}))
    fig = binned_map_figure(bins, overhead=70, x_range=(0.0, float(counted.prefix[-1])))
    block = next(t for t in fig.data if t.name == OVERHEAD_LABEL)
    assert (list(block.x), list(block.base)) == ([70], [-70])
    assert list(fig.layout.xaxis.range) == [-70.0, float(counted.prefix[-1])]
    assert OVERHEAD_LABEL not in {t.name for t in binned_map_figure(bins).data}


@settings(max_examples=40)
@given(chat=chats(min_turns=1, max_turns=8), data=st.data())
def test_decisions_given_as_runs_code_as_the_plain_mapping(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    stop = data.draw(st.integers(0, len(chat)))
    head = counted.head(stop)
    cuts = sorted(data.draw(st.lists(st.integers(0, stop), max_size=4)))
    picked = data.draw(st.lists(st.sampled_from(list(Decision)), min_size=5, max_size=5))
    runs = run_decisions(head, [*zip(cuts, picked, strict=False), (stop, picked[-1])])
    assert isinstance(runs, DecisionRuns)
    plain = dict(runs.items())
    # the runs of a head (its ids a slice of the chat's, equal but not the same tuple)
    assert decision_codes(counted, runs, stop) == decision_codes(counted, plain, stop)
