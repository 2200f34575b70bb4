"""Round maps of huge chats: a zoom on the sent end, and maps that share one axis."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from chatgen import assistant, system, user

from ctxlab.catalog import get_model
from ctxlab.model import Message
from ctxlab.strategies import Decision, build_strategy
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures


def long_chat(rounds: int) -> list[Message]:
    messages = [system("You are terse.")]
    for k in range(rounds):
        messages += [user(f"question {k} " * 5, f"u{k}"), assistant(f"answer {k} " * 20, f"a{k}")]
    return messages


def test_a_sliver_of_kept_rounds_gets_a_zoom_that_starts_before_it(
    counter: TokenCounter,
) -> None:
    messages = long_chat(2_000)
    counted = counter.counted(messages)
    result = build_strategy("window-drop", {"budget": 2_000}).apply(messages, counter)
    zoom = figures.zoom_rounds(counted, result.decisions)
    assert zoom is not None
    first, stop = zoom
    assert stop == len(counted.starts)
    kept_rounds = [
        k
        for k, start in enumerate(counted.starts)
        if result.decisions[messages[start].id] is Decision.KEPT
    ]
    # the zoom holds every kept round and at least three dropped ones before them
    assert first <= kept_rounds[0] - 3
    assert set(kept_rounds) <= set(range(first, stop))
    # and it is still a small part of the chat: the kept end gets the width
    assert stop - first < len(counted.starts) / 10
    fig = figures.round_map_figure(counted, result.decisions, rounds=zoom)
    bases = [b for trace in fig.data for b in trace.base]
    assert min(bases) == counted.prefix[counted.starts[first]]
    widths = sum(w for trace in fig.data for w in trace.x)
    assert widths == counted.prefix[-1] - counted.prefix[counted.starts[first]]
    kept = next(t for t in fig.data if t.name == "kept")
    assert len(kept.x) == len(kept_rounds)  # one block per kept round, none merged


def test_no_zoom_when_the_sent_end_is_wide_or_nothing_is_dropped(counter: TokenCounter) -> None:
    messages = long_chat(300)
    counted = counter.counted(messages)
    wide = build_strategy("window-drop", {"budget": counted.total // 2}).apply(messages, counter)
    assert figures.zoom_rounds(counted, wide.decisions) is None
    everything = {m.id: Decision.KEPT for m in messages}
    assert figures.zoom_rounds(counted, everything) is None
    nothing_at_end = {
        **everything,
        messages[-1].id: Decision.DROPPED,
        messages[-2].id: Decision.DROPPED,
    }
    assert figures.zoom_rounds(counted, nothing_at_end) is None


def test_round_blocks_of_a_range_tile_exactly_those_rounds(counter: TokenCounter) -> None:
    messages = long_chat(50)
    counted = counter.counted(messages)
    decisions = {m.id: Decision.KEPT for m in messages}
    blocks = figures.round_blocks(counted, decisions, rounds=(10, 20))
    assert [b.first for b in blocks] == list(range(10, 20))
    assert blocks[0].start == counted.starts[10] and blocks[-1].stop == counted.starts[20]
    assert (
        sum(b.tokens for b in blocks)
        == counted.prefix[counted.starts[20]] - counted.prefix[counted.starts[10]]
    )


def test_maps_given_one_range_share_their_axis(counter: TokenCounter) -> None:
    messages = long_chat(40)
    counted = counter.counted(messages)
    axis = (0.0, float(counted.prefix[-1]))
    for values in ({"budget": 500}, {"budget": counted.total}):
        result = build_strategy("window-drop", values).apply(messages, counter)
        fig = figures.round_map_figure(counted, result.decisions, x_range=axis)
        assert tuple(fig.layout.xaxis.range) == axis
        assert fig.layout.xaxis.autorange is False
    default = figures.round_map_figure(counted, {m.id: Decision.KEPT for m in messages})
    assert default.layout.xaxis.range is None


def _bars(traces: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [
        (t.name, t.legendgroup, tuple(t.x), tuple(t.base), tuple(t.customdata), t.marker.color)
        for t in traces
    ]


def test_the_zoom_figure_holds_both_strips_in_one_chart(counter: TokenCounter) -> None:
    messages = long_chat(2_000)
    counted = counter.counted(messages)
    strategy = build_strategy("window-drop", {"budget": 2_000})
    result = strategy.apply(messages, counter)
    zoom = figures.zoom_rounds(counted, result.decisions)
    assert zoom is not None
    explain = functools.partial(strategy.explain_round, counted, result)
    common: dict[str, Any] = {
        "explain": explain,
        "budget": 2_000,
        "window": get_model("gpt-4o"),
        "overhead": 40,
        "overhead_parts": (("search", 40),),
    }
    fig = figures.round_map_zoom_figure(counted, result.decisions, zoom, title="Map", **common)
    top = figures.round_map_figure(counted, result.decisions, **common)
    low = figures.round_map_figure(counted, result.decisions, rounds=zoom, **common)
    upper = [t for t in fig.data if t.xaxis in (None, "x")]
    lower = [t for t in fig.data if t.xaxis == "x2"]
    assert len(upper) + len(lower) == len(fig.data)
    # the same bars and hovers as the two figures; the lower strip adds no legend entries
    assert _bars(upper) == _bars(top.data)
    assert _bars(lower) == _bars(low.data)
    assert all(t.yaxis == "y2" and t.showlegend is False for t in lower)
    assert {t.legendgroup for t in lower} <= {t.legendgroup for t in upper}
    # the budget and window lines of both, each on its own strip
    shapes = [(s.x0, s.xref, s.yref) for s in fig.layout.shapes]
    assert shapes == [
        *((s.x0, "x", "y domain") for s in top.layout.shapes),
        *((s.x0, "x2", "y2 domain") for s in low.layout.shapes),
    ]
    notes = [(a.text, a.x, a.xref) for a in fig.layout.annotations]
    assert notes == [
        *((a.text, a.x, "x") for a in top.layout.annotations),
        *((a.text, a.x, "x2") for a in low.layout.annotations),
    ]
    # the upper strip above the lower one, not overlapping
    assert fig.layout.yaxis.domain[0] > fig.layout.yaxis2.domain[1]
    assert fig.layout.xaxis2.anchor == "y2"
    assert fig.layout.title.text == "Map"
