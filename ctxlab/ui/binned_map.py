"""The round map of a long chat, binned: a fixed number of token ranges, each split by decision.

On a chat of tens of thousands of rounds, drawing a block per round (or merging blocks, which
needs every round's decisions and previews) costs time in proportion to the chat on every click.
The binned map cuts the chat (or its first ``stop`` messages) into at most ``bins`` ranges of
whole rounds of about equal tokens, the same cut for every configuration of one chat, and draws
each range as segments, one per decision, whose widths are that range's tokens with that
decision. Nothing is merged into "mixed": every decision's token total over the map equals its
total over the messages (the invariant :func:`decision_bins` keeps), so the map is exact at any
size, only coarser in position.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise, repeat

import numpy as np
import plotly.graph_objects as go

from ctxlab.catalog import ModelInfo
from ctxlab.counted import CountedChat
from ctxlab.strategies.base import Decision, DecisionRuns
from ctxlab.ui.figures import (
    AXIS_TITLE,
    DECISION_COLOURS,
    DECISION_LEGEND,
    MAX_BLOCKS,
    OVERHEAD_COLOUR,
    OVERHEAD_LABEL,
    label_lines,
    strip_layout,
    strip_xaxis,
    tail_lines,
    tail_marks,
)

__all__ = [
    "BINS",
    "ORDER",
    "Bin",
    "Codes",
    "bin_edges",
    "binned_map_figure",
    "decision_bins",
    "decision_codes",
    "wants_bins",
]

BINS = 200
"""Ranges of a binned map (a strip a few hundred pixels wide shows no finer detail)."""

ORDER: tuple[Decision, ...] = (
    Decision.PINNED,
    Decision.SUMMARIZED,
    Decision.DROPPED,
    Decision.CLEARED,
    Decision.KEPT,
)
"""Decision codes (index in this tuple) and the order of a range's segments, left to right."""
_CODE = {d: k for k, d in enumerate(ORDER)}
Codes = Sequence[int] | np.ndarray
"""Decision codes of messages in order: a list, or an integer array."""


def wants_bins(chat: CountedChat, stop: int | None = None) -> bool:
    """True when the round map of ``chat.messages[:stop]`` has more rounds than a map draws
    blocks (:data:`ctxlab.ui.figures.MAX_BLOCKS`): there the binned map replaces it."""
    end = len(chat) if stop is None else stop
    return chat.rounds_in_prefix(end) > MAX_BLOCKS


@dataclass(frozen=True, slots=True)
class Bin:
    """Messages ``start..stop-1`` (whole rounds ``first..last``) at tokens ``x0..x0+tokens``.

    ``split`` holds the tokens of each decision in :data:`ORDER` (zeros included); they sum to
    ``tokens``.
    """

    first: int
    last: int
    start: int
    stop: int
    x0: int
    tokens: int
    split: tuple[int, ...]


def decision_codes(
    chat: CountedChat,
    decisions: Mapping[str, Decision],
    stop: int | None = None,
    missing: Decision = Decision.KEPT,
) -> list[int]:
    """The code (index in :data:`ORDER`) of each of the first ``stop`` messages' decision;
    a message ``decisions`` does not name gets ``missing``."""
    ids = chat.ids if stop is None else chat.ids[:stop]
    if isinstance(decisions, DecisionRuns) and (decisions.ids is ids or decisions.ids == ids):
        # A decision per run, repeated: O(runs) Python work (a scrubber step asks about the
        # head of a long chat, whose decisions a window drop gives as runs).
        return list(chain.from_iterable(repeat(_CODE[d], n) for d, n in decisions.run_lengths()))
    # map() keeps the per-message work in C: a scrubber step runs this over a long prefix.
    return list(map(_CODE.__getitem__, map(decisions.get, ids, repeat(missing, len(ids)))))


def bin_edges(chat: CountedChat, stop: int | None = None, bins: int = BINS) -> list[int]:
    """Message indices where the ranges of ``chat.messages[:stop]`` begin, then ``stop``.

    Every edge but the last is a round start; ranges hold about ``1/bins`` of the tokens each
    (a round bigger than that is a range of its own). Ascending, distinct, from 0.
    """
    end = len(chat) if stop is None else stop
    if end <= 0:
        return [0]
    rounds = chat.rounds_in_prefix(end)
    starts, prefix = chat.starts[:rounds], chat.prefix
    total = prefix[end]
    edges = [0]
    for k in range(1, bins):
        at = bisect_left(prefix, total * k / bins, 0, end + 1)
        r = bisect_right(starts, at) - 1  # the round holding that token: begin the range there
        if r > 0 and starts[r] > edges[-1]:
            edges.append(starts[r])
    edges.append(end)
    return edges


def decision_bins(chat: CountedChat, codes: Codes, edges: Sequence[int] | None = None) -> list[Bin]:
    """The ranges between ``edges`` (default :func:`bin_edges` over ``len(codes)`` messages),
    each with its tokens per decision.

    Invariant: for every decision, the sum of its split over the bins equals the tokens of the
    messages with that code; the bins tile messages ``0..len(codes)-1`` in order.
    """
    stop = len(codes)
    cuts = list(edges) if edges is not None else bin_edges(chat, stop)
    starts, prefix = chat.starts, chat.prefix
    width = len(ORDER)
    lengths = np.asarray(np.diff(cuts), dtype=np.int64)
    # Each message's (range, decision) cell, its tokens summed per cell in C: a scrubber step
    # bins a prefix of up to the whole chat. Sums of token counts stay far below 2**53, so the
    # float weights bincount adds are exact.
    cell = np.repeat(np.arange(len(lengths), dtype=np.int64) * width, lengths)
    cell += np.asarray(codes, dtype=np.int64)
    sums = np.bincount(cell, weights=_counts(chat)[:stop], minlength=len(lengths) * width)
    splits = sums.astype(np.int64).reshape(len(lengths), width).tolist()
    return [
        Bin(
            first=bisect_right(starts, a) - 1 if a else 0,
            last=max(bisect_right(starts, b - 1) - 1, 0),
            start=a,
            stop=b,
            x0=prefix[a],
            tokens=prefix[b] - prefix[a],
            split=tuple(split),
        )
        for (a, b), split in zip(pairwise(cuts), splits, strict=True)
    ]


def _counts(chat: CountedChat) -> np.ndarray:
    """The chat's token counts as bincount weights (float64, exact below 2**53), built once
    per chat."""
    return chat.derived("binned_map.counts", lambda c: np.asarray(c.counts, dtype=np.float64))


def _hover(b: Bin) -> str:
    rounds = f"round {b.first}" if b.first == b.last else f"rounds {b.first}–{b.last}"
    parts = (
        ", ".join(f"{n:,} {d.value}" for d, n in zip(ORDER, b.split, strict=True) if n)
        or "no tokens"
    )
    return f"<b>{rounds}</b><br>messages {b.start}–{b.stop - 1} · {b.tokens:,} tokens<br>{parts}"


def binned_map_figure(
    bins: Sequence[Bin],
    *,
    title: str | None = None,
    height: int = 190,
    budget: int | None = None,
    window: ModelInfo | None = None,
    x_range: tuple[float, float] | None = None,
    overhead: int = 0,
) -> go.Figure:
    """One horizontal strip: each range drawn as a segment per decision, width = tokens.

    Hover gives a range's rounds, messages and tokens per decision. ``budget``/``window`` are
    vertical lines where the newest that-many tokens begin (``overhead``, the request's fixed
    tokens, taken off first); ``x_range`` fixes the axis so several maps of one chat line up.
    A positive ``overhead`` is also drawn as its own block just before the first range (at
    negative x), as :func:`ctxlab.ui.figures.round_map_figure` draws it.
    """
    hovers = [_hover(b) for b in bins]
    traces: list[go.Bar] = []
    for k, decision in enumerate(ORDER):
        xs, bases, texts, spans = [], [], [], []
        for b, hover in zip(bins, hovers, strict=True):
            n = b.split[k]
            if n:
                xs.append(n)
                bases.append(b.x0 + sum(b.split[:k]))
                texts.append(hover)
                spans.append(f"{b.start}:{b.stop}")
        if not xs:
            continue
        traces.append(
            go.Bar(
                name=DECISION_LEGEND[decision.value],
                legendgroup=decision.value,
                orientation="h",
                y=["rounds"] * len(xs),
                x=xs,
                base=bases,
                marker={"color": DECISION_COLOURS[decision.value], "line": {"width": 0}},
                customdata=texts,
                hovertemplate="%{customdata}<extra></extra>",
                # the range's messages, "start:stop": a click selects its first message
                # (ctxlab.ui.message_selection reads it from the selection event)
                ids=spans,
            )
        )
    if overhead > 0:
        # the request's tool definitions, sent with every call: a block before round 0, as on
        # the unbinned round map
        traces.append(
            go.Bar(
                name=OVERHEAD_LABEL,
                legendgroup="overhead",
                orientation="h",
                y=["rounds"],
                x=[overhead],
                base=[-overhead],
                marker={"color": OVERHEAD_COLOUR, "line": {"width": 0}},
                customdata=[f"<b>{OVERHEAD_LABEL}</b><br>{overhead:,} tokens on every call"],
                hovertemplate="%{customdata}<extra></extra>",
            )
        )
    x_axis = strip_xaxis()
    x_axis["title"]["text"] = f"{AXIS_TITLE} (binned)"
    end = bins[-1].x0 + bins[-1].tokens if bins else 0
    high = float(end)
    if x_range is not None:
        low = x_range[0] - overhead if overhead > 0 else x_range[0]
        x_axis.update(range=[low, x_range[1]], autorange=False)
        high = float(x_range[1])
    lines = tail_lines(budget, window, max(overhead, 0))
    shapes, notes = tail_marks(end, lines, high=high)
    layout = strip_layout(title, height + 80, label_rows=label_lines(lines))
    layout.update(
        xaxis=x_axis,
        yaxis={"visible": False},
        shapes=shapes,
        annotations=notes,
    )
    layout["bargap"] = 0.15
    # One layout, given whole: every update_layout call re-validates it (milliseconds each, on
    # every scrubber step).
    return go.Figure(data=traces, layout=layout)
