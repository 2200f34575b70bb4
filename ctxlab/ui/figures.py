"""Plotly figures: pure functions from engine values to ``go.Figure``; no Streamlit here.

Every figure is readable on a projector (fonts of 16 px) and stays small whatever the chat: a
round map never draws more than :data:`MAX_BLOCKS` blocks (adjacent rounds are binned) and a
line never holds more than :data:`MAX_POINTS` points. Chat text reaches a figure only through
:func:`ctxlab.ui.text.hover_safe`, because Plotly renders hover labels as markup.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ctxlab.catalog import ModelInfo
from ctxlab.counted import CountedChat
from ctxlab.provider_usage import UsageComparison
from ctxlab.replay import Replay
from ctxlab.strategies.base import Decision, DecisionRuns
from ctxlab.ui.text import hover_safe

__all__ = [
    "BUDGET_COLOUR",
    "DECISIONS",
    "DECISION_COLOURS",
    "DECISION_LEGEND",
    "DECISION_MEANING",
    "FONT_SIZE",
    "LABEL_FONT_SIZE",
    "MAX_BARS",
    "MAX_BLOCKS",
    "MAX_POINTS",
    "OFF_SCALE",
    "OVERHEAD_COLOUR",
    "OVERHEAD_LABEL",
    "TAIL_NOTE",
    "USAGE_TITLE",
    "RoundBlock",
    "TailLine",
    "add_limit_lines",
    "add_tail_lines",
    "cache_figure",
    "context_tokens_figure",
    "decision_codes",
    "disagreement_figure",
    "fit_axis",
    "label_lines",
    "label_rows_margin",
    "limit_lines",
    "off_scale",
    "replay_cost_figure",
    "replay_tokens_figure",
    "round_blocks",
    "round_map_figure",
    "round_map_zoom_figure",
    "sample_points",
    "session_cost_figure",
    "strip_layout",
    "strip_xaxis",
    "tail_lines",
    "tail_marks",
    "usage_comparison_figure",
    "wrap_label",
    "zoom_rounds",
]

FONT_SIZE = 16
MAX_BLOCKS = 400
MAX_POINTS = 2000
MAX_BARS = 500
"""Bars (and markers) a per-call chart draws at most: each is an SVG element the browser lays
out on every redraw (2,000 bars and 2,000 markers took longer to draw than the page's run), and
a chart a thousand pixels wide shows no more."""
MIXED = "mixed"
ZOOM_SHARE = 0.05
"""A round map gets a zoomed strip when the sent end is less than this share of its width."""
_SENT = frozenset({Decision.KEPT, Decision.PINNED, Decision.CLEARED})

# Colour-blind-safe-ish palette; dropped is the quiet grey so what is sent stands out.
DECISION_COLOURS: Mapping[str, str] = {
    Decision.KEPT.value: "#2e7d32",
    Decision.PINNED.value: "#1565c0",
    Decision.CLEARED.value: "#8e24aa",
    Decision.SUMMARIZED.value: "#ef6c00",
    Decision.DROPPED.value: "#b0b0b0",
    MIXED: "#f2c94c",
}

DECISION_LEGEND: Mapping[str, str] = {
    Decision.KEPT.value: "kept",
    Decision.PINNED.value: "pinned",
    Decision.CLEARED.value: "cleared",
    Decision.SUMMARIZED.value: "summarized",
    Decision.DROPPED.value: "dropped",
    MIXED: "mixed (hover)",
}
"""Legend text per colour: every colour a chart uses says what it means, in a word that fits
a legend in the narrowest column (:data:`DECISION_MEANING` says more, in hovers and captions)."""

DECISION_MEANING: Mapping[str, str] = {
    Decision.KEPT.value: "kept",
    Decision.PINNED.value: "pinned (always sent)",
    Decision.CLEARED.value: "cleared (placeholder sent)",
    Decision.SUMMARIZED.value: "summarized (folded into the summary)",
    Decision.DROPPED.value: "dropped (not sent)",
    MIXED: "mixed (messages with different decisions; hover for the split)",
}
"""What each legend word means."""


@dataclass(frozen=True, slots=True)
class RoundBlock:
    """One block of the round map: rounds ``first..last`` (inclusive), one colour.

    ``decision`` is the decision shared by every message of the block, or ``"mixed"``.
    """

    first: int
    last: int
    start: int  # first message index
    stop: int  # one past the last message index
    tokens: int
    decision: str
    roles: tuple[tuple[str, int], ...]
    preview: str
    decisions: tuple[tuple[str, int], ...] = ()

    @property
    def label(self) -> str:
        return (
            f"round {self.first}" if self.first == self.last else f"rounds {self.first}–{self.last}"
        )


def _layout(fig: go.Figure, *, title: str | None, height: int) -> go.Figure:
    """A chart's layout: the title pinned to the figure's top, the legend at the bottom of
    the figure under the x axis (a legend above the plot wraps into the title in a narrow
    column), margins that grow to fit the axes' labels."""
    fig.update_layout(
        title={"text": title, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 8}}
        if title
        else None,
        height=height + LEGEND_PX,
        font={"size": FONT_SIZE},
        hoverlabel={"font": {"size": FONT_SIZE}},
        margin={"l": 20, "r": 20, "t": 50 if title else 20, "b": 20 + LEGEND_PX},
        legend={
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0,
            "x": 0,
            "font": {"size": LABEL_FONT_SIZE},
        },
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


LEGEND_PX = 60
"""Pixels a chart's legend gets under its x axis: two rows of short entries."""


DECISIONS: tuple[Decision, ...] = tuple(Decision)
"""Every decision, in the order the codes of :func:`decision_codes` index."""
_DECISION_CODE: Mapping[Decision, int] = {d: i for i, d in enumerate(DECISIONS)}
_MIXED_CODE = -1


@dataclass(frozen=True, slots=True, eq=False)
class _ChatTables:
    """What the round map needs of a chat whatever the decisions: built once per chat.

    ``role_prefix[role][i]`` counts the messages of ``role`` among the first ``i``;
    ``starts`` / ``stops`` bound each round; ``previews`` fills in lazily (only the rounds that
    lead a block are ever previewed).
    """

    starts: np.ndarray
    stops: np.ndarray
    role_prefix: Mapping[str, np.ndarray]
    previews: dict[int, str]


def _chat_tables(chat: CountedChat) -> _ChatTables:
    def build(c: CountedChat) -> _ChatTables:
        n = len(c.messages)
        roles = [m.role.value for m in c.messages]
        role_prefix: dict[str, np.ndarray] = {}
        for role in sorted(set(roles)):
            hits = np.fromiter((r == role for r in roles), dtype=np.int64, count=n)
            role_prefix[role] = np.concatenate(([0], np.cumsum(hits)))
        starts = np.asarray(c.starts, dtype=np.int64)
        stops = np.append(starts[1:], n).astype(np.int64)
        return _ChatTables(starts, stops, role_prefix, {})

    return chat.derived("figures.round_map_tables", build)


def _round_preview(chat: CountedChat, tables: _ChatTables, k: int) -> str:
    """Round ``k``'s preview: its user message (else its first message), 100 characters."""
    found = tables.previews.get(k)
    if found is None:
        messages = chat.messages
        a, b = int(tables.starts[k]), int(tables.stops[k])
        lead = next((messages[i] for i in range(a, b) if messages[i].role.value == "user"), None)
        found = tables.previews.setdefault(k, (lead or messages[a]).preview(100))
    return found


def decision_codes(chat: CountedChat, decisions: Mapping[str, Decision]) -> np.ndarray:
    """Each message's decision as its index in :data:`DECISIONS` (a missing id counts as
    kept), one ``int8`` per message in chat order.

    The codes of the last mapping asked for are kept with the chat, so the round map, its zoom
    and the message table of one run compute them once. A mapping is recognised by identity:
    it must not change once asked about (a ``TrimResult``'s never does). The array is
    read-only.
    """
    # One slot, replaced whole: sessions on other threads share the chat, so a reader sees
    # either the old pair or the new one, never codes of another mapping.
    held: dict[str, tuple[Mapping[str, Decision], np.ndarray]] = chat.derived(
        "figures.last_codes", lambda _: {}
    )
    last = held.get("last")
    if last is not None and last[0] is decisions:
        return last[1]
    ids = chat.ids
    if isinstance(decisions, DecisionRuns) and decisions.ids is ids:
        # one code per run, repeated in C: O(runs) Python work whatever the chat's length
        runs = list(decisions.run_lengths())
        codes = np.repeat(
            np.fromiter((_DECISION_CODE[d] for d, _ in runs), dtype=np.int8, count=len(runs)),
            np.fromiter((n for _, n in runs), dtype=np.int64, count=len(runs)),
        )
    else:
        # map() keeps the per-message work in C: this runs on every rerun over the whole chat.
        looked_up = map(decisions.get, ids, repeat(Decision.KEPT, len(ids)))
        codes = np.fromiter(
            map(_DECISION_CODE.__getitem__, looked_up), dtype=np.int8, count=len(ids)
        )
    codes.setflags(write=False)
    held["last"] = (decisions, codes)
    return codes


def _code_tables(
    chat: CountedChat, codes: np.ndarray
) -> tuple[np.ndarray, Mapping[Decision, np.ndarray]]:
    """``(changes, decision_prefix)`` of ``codes``: ``changes[i]`` is how many times the
    decision changes among messages ``0..i`` (a run-length index); ``decision_prefix[d][i]``
    counts the messages with decision ``d`` among the first ``i`` (decisions present only).

    Kept with the chat for the last ``codes`` array asked about (by identity, as
    :func:`decision_codes` keeps its arrays), so a map and its zoom share one pass.
    """
    held: dict[str, tuple[np.ndarray, np.ndarray, dict[Decision, np.ndarray]]] = chat.derived(
        "figures.last_code_tables", lambda _: {}
    )
    last = held.get("last")
    if last is not None and last[0] is codes:
        return last[1], last[2]
    changes = np.concatenate(([0], np.cumsum(codes[1:] != codes[:-1])))
    decision_prefix = {
        d: np.concatenate(([0], np.cumsum(codes == c)))
        for c, d in enumerate(DECISIONS)
        if (codes == c).any()
    }
    held["last"] = (codes, changes, decision_prefix)
    return changes, decision_prefix


def round_blocks(
    chat: CountedChat,
    decisions: Mapping[str, Decision],
    max_blocks: int = MAX_BLOCKS,
    *,
    rounds: tuple[int, int] | None = None,
) -> list[RoundBlock]:
    """The round map's blocks: one per round, or at most ``max_blocks`` when there are more.

    Above the limit, runs of adjacent rounds with the same decision become one block first;
    if that is still too many, consecutive blocks are binned evenly (a bin whose rounds
    differ is ``"mixed"``). Blocks tile the chat (or the rounds ``first..stop-1`` given as
    ``rounds``) in order; their tokens sum to those messages' tokens (reply priming excluded),
    and each block's ``decisions`` split counts every one of its messages.

    The work per call is one pass over the decisions (vectorised) plus the blocks drawn: the
    per-round tables (roles, bounds, previews) are built once per chat.
    """
    tables = _chat_tables(chat)
    nrounds = len(tables.starts)
    lo, hi = (0, nrounds) if rounds is None else rounds
    lo, hi = max(lo, 0), min(hi, nrounds)
    if hi <= lo:
        return []
    codes = decision_codes(chat, decisions)
    starts, stops = tables.starts[lo:hi], tables.stops[lo:hi]
    changes, decision_prefix = _code_tables(chat, codes)
    uniform = changes[stops - 1] == changes[starts]
    round_code = np.where(uniform, codes[starts], _MIXED_CODE)
    prefix = chat.prefix

    def block(first: int, last: int, code: int) -> RoundBlock:
        """Rounds ``first..last`` (indices into the chat) as one block."""
        a, b = int(tables.starts[first]), int(tables.stops[last])
        roles = tuple((r, int(p[b] - p[a])) for r, p in tables.role_prefix.items() if p[b] > p[a])
        split = tuple(
            sorted((d.value, int(p[b] - p[a])) for d, p in decision_prefix.items() if p[b] > p[a])
        )
        return RoundBlock(
            first,
            last,
            a,
            b,
            prefix[b] - prefix[a],
            MIXED if code == _MIXED_CODE else DECISIONS[code].value,
            roles,
            _round_preview(chat, tables, first),
            split,
        )

    count = hi - lo
    if count <= max_blocks:
        return [block(lo + j, lo + j, int(round_code[j])) for j in range(count)]
    # Runs of adjacent rounds with the same decision ("mixed" rounds form runs too).
    edges = np.flatnonzero(round_code[1:] != round_code[:-1]) + 1
    run_first = np.concatenate(([0], edges))
    run_last = np.append(edges - 1, count - 1)
    if len(run_first) <= max_blocks:
        return [
            block(lo + int(f), lo + int(t), int(round_code[f]))
            for f, t in zip(run_first, run_last, strict=True)
        ]
    size = -(-len(run_first) // max_blocks)
    out = []
    for i in range(0, len(run_first), size):
        group = slice(i, min(i + size, len(run_first)))
        f, t = int(run_first[group][0]), int(run_last[group][-1])
        single = group.stop - group.start == 1
        out.append(block(lo + f, lo + t, int(round_code[f]) if single else _MIXED_CODE))
    return out


def _hover(block: RoundBlock, why: str | None = None) -> str:
    roles = ", ".join(f"{n} {role}" for role, n in block.roles)
    messages = f"messages {block.start}–{block.stop - 1}"
    decision = DECISION_MEANING.get(block.decision, block.decision)
    if block.decision == MIXED:
        decision = "mixed: " + ", ".join(f"{n:,} {d}" for d, n in block.decisions)
    reason = ""
    if why:
        # the reason of the block's newest round (a binned block spans several)
        prefix = "" if block.first == block.last else f"round {block.last}: "
        reason = f"<br><i>{hover_safe(prefix + why)}</i>"
    return (
        f"<b>{block.label}</b> · {decision}{reason}<br>{messages} · {block.tokens:,} tokens"
        f"<br>{roles}<br>{hover_safe(block.preview)}"
    )


WINDOW_COLOUR = "#6a1b9a"
BUDGET_COLOUR = "#c62828"
OVERHEAD_COLOUR = "#00838f"
"""The round map's block for the request's fixed overhead (teal: no decision uses it)."""
OVERHEAD_LABEL = "tool definitions"
"""The overhead block's legend entry; its hover says it is sent with every call."""
MAX_HOVER_PARTS = 30
"""The overhead block's hover lists at most this many parts (then says how many more)."""


def _overhead_hover(label: str, tokens: int, parts: Sequence[tuple[str, int]]) -> str:
    lines = [f"<b>{hover_safe(label)}</b>", f"{tokens:,} tokens on every call"]
    lines += [f"{hover_safe(name)}: {n:,} tokens" for name, n in parts[:MAX_HOVER_PARTS]]
    if len(parts) > MAX_HOVER_PARTS:
        lines.append(f"… and {len(parts) - MAX_HOVER_PARTS:,} more")
    return "<br>".join(lines)


TailLine = tuple[int, str, str, str]
"""``(size, label, colour, dash)``: a line where the newest ``size`` tokens begin."""

LABEL_FONT_SIZE = 14
"""Line labels and axis titles of the strips: readable on a projector, short enough for the
narrowest column the app uses (Compare with four configurations, about 190 px of chart)."""
LABEL_ROW_PX = 21
"""Height of one text line of a line label: each label of a chart gets its own rows, so two
labels never overprint whatever the chart's width and however close their lines are."""
LABEL_LINE_CHARS = 16
"""A line label longer than this breaks at its last space onto a second line: the longest,
``← gpt-4.1 window 1,047,576``, is wider than a chart in the narrowest column."""
OFF_SCALE = 3.0
"""A limit (budget, window) more than this many times the chart's data is drawn off scale (an
arrow with its value) instead of stretching the axis until the data is a sliver."""
OFF_SCALE_LEFT = "← "
OFF_SCALE_UP = "↑ "
TAIL_NOTE = "tail-line"
"""The ``name`` of a line label's annotation (how :mod:`ctxlab.ui.strip` finds them)."""


def label_rows_margin(rows: int) -> int:
    """Pixels of top margin that ``rows`` text lines of line labels need above a strip."""
    return rows * LABEL_ROW_PX + (10 if rows else 0)


def wrap_label(text: str, width: int = LABEL_LINE_CHARS) -> str:
    """``text`` on two lines (a Plotly ``<br>``) when longer than ``width`` characters, broken
    at its last space: ``gpt-4o window<br>128,000``."""
    if len(text) <= width or " " not in text:
        return text
    head, _, tail = text.rpartition(" ")
    return f"{head}<br>{tail}"


def label_lines(lines: Sequence[TailLine]) -> int:
    """Text lines the labels of ``lines`` take above a strip (see :func:`tail_marks`)."""
    return sum(wrap_label(OFF_SCALE_LEFT + text).count("<br>") + 1 for _, text, _, _ in lines)


def fit_axis(data_top: float, limits: Sequence[float], factor: float = OFF_SCALE) -> float:
    """The top of a value axis that shows ``data_top`` and every limit within ``factor`` times
    it (5% headroom); a limit above that is off scale (see :func:`off_scale`)."""
    top = max(float(data_top), 1.0)
    shown = [float(v) for v in limits if not off_scale(v, data_top, factor)]
    return max([top, *shown]) * 1.05


def off_scale(limit: float, data_top: float, factor: float = OFF_SCALE) -> bool:
    """Whether ``limit`` is so far above ``data_top`` that drawing it would squash the data."""
    return float(limit) > factor * max(float(data_top), 1.0)


def add_tail_lines(
    fig: go.Figure,
    total: int,
    lines: Sequence[TailLine],
    axis: str = "",
    *,
    low: float = 0.0,
    high: float | None = None,
) -> None:
    """Vertical lines on a round map of ``total`` tokens where the newest ``size`` tokens of
    each line begin, each labelled in its own row above the strip (see :func:`tail_marks`).

    The shapes and annotations are written in one layout update (``add_vline`` costs about
    30 ms a line, a fixed cost on every click). ``axis`` names the strip's axes in a figure of
    several (``"2"``: ``x2`` / ``y2``); ``low``/``high`` are the ends of its x axis.
    """
    shapes, notes = tail_marks(total, lines, axis, low=low, high=high)
    if shapes or notes:
        fig.update_layout(
            shapes=[*fig.layout.shapes, *shapes], annotations=[*fig.layout.annotations, *notes]
        )


def tail_marks(
    total: int,
    lines: Sequence[TailLine],
    axis: str = "",
    *,
    low: float = 0.0,
    high: float | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The shapes and annotations of :func:`add_tail_lines`.

    Label ``k`` sits in row ``k`` above the strip. A line inside the axis (``low..high``) is a
    dashed/dotted vertical line whose label starts at the nearer end of the axis and points
    at the line's top with an arrow: the label has most of the chart's width whatever the
    line's position, so it is not clipped. A line that would begin before ``low`` (the limit
    holds the whole chart, or more than the strip shows) draws no line: its label sits at the
    left end, ``← budget 16,000``, the arrow saying it lies off the strip to the left.
    """
    right = float(total if high is None else high)
    span = max(right - low, 1.0)
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    used = 0  # text lines taken by the labels below this one
    for size, text, colour, dash in lines:
        x = total - size
        shown = wrap_label((OFF_SCALE_LEFT if x < low else "") + text)
        rise = 6 + used * LABEL_ROW_PX
        used += shown.count("<br>") + 1
        common = {
            "name": TAIL_NOTE,
            "xref": f"x{axis}",
            "y": 1,
            "yref": f"y{axis} domain",
            "yanchor": "bottom",
            "font": {"size": LABEL_FONT_SIZE, "color": colour},
        }
        if x < low:
            notes.append(
                {
                    **common,
                    "text": shown,
                    "hovertext": f"{text} tokens hold everything shown: the line would begin "
                    "left of the strip",
                    "x": low,
                    "xanchor": "left",
                    "align": "left",
                    "yshift": rise,
                    "showarrow": False,
                }
            )
            continue
        shapes.append(
            {
                "type": "line",
                "x0": x,
                "x1": x,
                "xref": f"x{axis}",
                "y0": 0,
                "y1": 1,
                "yref": f"y{axis} domain",
                "line": {"color": colour, "dash": dash, "width": 2},
            }
        )
        left_half = (x - low) / span < 0.5
        notes.append(
            {
                **common,
                "text": shown,
                "x": x,
                "xanchor": "left" if left_half else "right",
                "align": "left" if left_half else "right",
                "showarrow": True,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": colour,
                "axref": f"x{axis}",
                "ax": low if left_half else right,
                "ayref": "pixel",
                "ay": -rise,
                "standoff": 0,
            }
        )
    return shapes, notes


def tail_lines(budget: int | None, window: ModelInfo | None, overhead: int) -> list[TailLine]:
    """The round map's budget and window lines; both include the request's fixed
    ``overhead``, so each marks where the newest ``limit - overhead`` message tokens begin."""
    lines: list[TailLine] = []
    if budget is not None:
        lines.append((max(budget - overhead, 0), f"budget {budget:,}", BUDGET_COLOUR, "dash"))
    if window is not None:
        size = max(window.context_window - overhead, 0)
        lines.append((size, window.window_label(), WINDOW_COLOUR, "dot"))
    return lines


def zoom_rounds(
    chat: CountedChat, decisions: Mapping[str, Decision], share: float = ZOOM_SHARE
) -> tuple[int, int] | None:
    """The rounds a zoomed strip should show, or None when the round map reads well as is.

    The *sent end* is the last run of rounds holding a message that is sent (kept, pinned or
    cleared). When its tokens are under ``share`` of the chat's message tokens, and something
    before it is not sent, the zoom is ``(first, stop)``: the sent end plus, for context, at
    least three earlier rounds and earlier rounds worth up to a quarter of its tokens. On a
    100,000-message chat trimmed to a realistic budget the sent end is a sliver of the strip;
    the zoom gives it the whole width.
    """
    starts = chat.starts
    if not starts:
        return None
    codes = decision_codes(chat, decisions)
    is_sent = np.isin(codes, [c for c, d in enumerate(DECISIONS) if d in _SENT])
    # whether each round holds a sent message (one pass in C), then the last run of them
    round_sent = np.logical_or.reduceat(is_sent, np.asarray(starts, dtype=np.int64))
    unsent = np.flatnonzero(~round_sent)
    first = int(unsent[-1]) + 1 if len(unsent) else 0
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


def round_map_figure(
    chat: CountedChat,
    decisions: Mapping[str, Decision],
    *,
    title: str | None = None,
    max_blocks: int = MAX_BLOCKS,
    height: int = 190,
    explain: Callable[[int], str] | None = None,
    budget: int | None = None,
    window: ModelInfo | None = None,
    x_range: tuple[float, float] | None = None,
    rounds: tuple[int, int] | None = None,
    overhead: int = 0,
    overhead_parts: Sequence[tuple[str, int]] = (),
    overhead_label: str = OVERHEAD_LABEL,
) -> go.Figure:
    """One horizontal strip: a block per round, width = tokens, colour = decision.

    A request's fixed ``overhead`` (its tool definitions) is drawn as its own block of that
    width just before round 0 (at negative x, so the rounds keep their positions and maps of
    one chat still line up); it is not drawn in a zoom (``rounds``).

    Hover shows the round(s), decision (the split of a mixed block), why (``explain(round)``,
    the strategy's sentence for the block's newest round), message range, tokens, role counts
    and an escaped preview of the round's user message.

    Args:
        explain: the strategy's reason for a round's decisions, by round index.
        budget / window: vertical lines where the newest that-many tokens of the chat begin
            (everything right of a line fits in it; a line at 0 means the whole chat does).
        x_range: fixed x axis range (tokens); several maps of one chat given the same range
            (e.g. ``(0, chat.prefix[-1])``) line up block for block.
        rounds: draw only rounds ``first..stop-1`` (a zoom); x positions stay the chat's
            cumulative tokens.
        overhead: tokens every request pays besides its messages (0: no block). Budget and
            window include it, so their lines mark where the newest ``budget - overhead``
            tokens of messages begin.
        overhead_parts: ``(name, tokens)`` listed in the block's hover (e.g. per tool).
        overhead_label: the block's legend entry and hover title.
    """
    bars, end = _strip_bars(
        chat,
        decisions,
        max_blocks=max_blocks,
        explain=explain,
        rounds=rounds,
        overhead=overhead,
        overhead_parts=overhead_parts,
        overhead_label=overhead_label,
    )
    fixed = max(overhead, 0)
    lines = tail_lines(budget, window, fixed)
    start = _strip_start(chat, rounds)
    high = float(end) if x_range is None else float(x_range[1])
    shapes, notes = tail_marks(end, lines, low=start, high=high)
    xaxis = strip_xaxis()
    if x_range is not None:
        low = x_range[0] - fixed if fixed and rounds is None else x_range[0]
        xaxis.update(range=[low, x_range[1]], autorange=False)
    layout = strip_layout(title, height + 80, label_rows=label_lines(lines))
    layout.update(xaxis=xaxis, yaxis={"visible": False}, shapes=shapes, annotations=notes)
    return go.Figure(data=bars, layout=layout)


AXIS_TITLE = "tokens, oldest → newest"
ZOOM_GAP_PX = 70
"""Pixels between the two strips of :func:`round_map_zoom_figure` for the upper strip's axis
title and ticks; the lower strip's line labels get their rows on top of this."""


def _strip_start(chat: CountedChat, rounds: tuple[int, int] | None) -> float:
    """Where a strip's first round begins (tokens): 0, or the zoom's first round."""
    if rounds is None or not chat.starts:
        return 0.0
    first = min(max(rounds[0], 0), len(chat.starts) - 1)
    return float(chat.prefix[chat.starts[first]])


def strip_xaxis() -> dict[str, Any]:
    """A strip's x axis: its title in the labels' size (it must fit the narrowest column)."""
    return {"title": {"text": AXIS_TITLE, "font": {"size": LABEL_FONT_SIZE}}, "automargin": True}


def round_map_zoom_figure(
    chat: CountedChat,
    decisions: Mapping[str, Decision],
    zoom: tuple[int, int],
    *,
    title: str | None = None,
    max_blocks: int = MAX_BLOCKS,
    height: int = 190,
    explain: Callable[[int], str] | None = None,
    budget: int | None = None,
    window: ModelInfo | None = None,
    x_range: tuple[float, float] | None = None,
    overhead: int = 0,
    overhead_parts: Sequence[tuple[str, int]] = (),
    overhead_label: str = OVERHEAD_LABEL,
) -> go.Figure:
    """The round map (the upper strip, as :func:`round_map_figure` draws it) and its zoom on
    rounds ``zoom`` (the lower strip, as ``round_map_figure(..., rounds=zoom)`` draws it) in
    one figure: one chart for the browser to draw on every click instead of two.

    Both strips hold the same bars, hovers and budget/window lines as the two figures; the
    zoom's bars share the upper strip's legend entries (clicking one hides both).
    """
    fixed = max(overhead, 0)
    lines = tail_lines(budget, window, fixed)
    strip = functools.partial(
        _strip_bars,
        chat,
        decisions,
        max_blocks=max_blocks,
        explain=explain,
        overhead=overhead,
        overhead_parts=overhead_parts,
        overhead_label=overhead_label,
    )
    top, top_end = strip(rounds=None)
    low, low_end = strip(rounds=zoom, axis="2")
    high = float(top_end) if x_range is None else float(x_range[1])
    shapes, notes = tail_marks(top_end, lines, high=high)
    zoom_shapes, zoom_notes = tail_marks(
        low_end, lines, "2", low=_strip_start(chat, zoom), high=float(low_end)
    )
    gap = ZOOM_GAP_PX + label_rows_margin(label_lines(lines))
    total = 2 * height + 100 + gap - ZOOM_GAP_PX
    layout = strip_layout(title, total, label_rows=label_lines(lines))
    area = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    share = max((area - gap) / 2 / area, 0.1)
    xaxis = {**strip_xaxis(), "anchor": "y"}
    if x_range is not None:
        xaxis.update(range=[x_range[0] - fixed if fixed else x_range[0], x_range[1]])
        xaxis["autorange"] = False
    layout.update(
        xaxis=xaxis,
        yaxis={"visible": False, "domain": [1 - share, 1]},
        xaxis2={"anchor": "y2"},
        yaxis2={"visible": False, "domain": [0, share]},
        shapes=[*shapes, *zoom_shapes],
        annotations=[*notes, *zoom_notes],
    )
    return go.Figure(data=[*top, *low], layout=layout)


STRIP_LEGEND_PX = 90
"""Pixels under a strip for its axis and legend: the legend's short entries wrap into three
rows in the narrowest column."""


def strip_layout(title: str | None, height: int, *, label_rows: int = 0) -> dict[str, Any]:
    """A round map's layout (:func:`_layout`'s, legend and margins under the strip), as one
    dict: each ``update_layout`` validates the whole layout again, a fixed cost per click.

    The title is pinned to the top of the figure and ``label_rows`` rows of line labels get
    their own space between it and the strip; the legend sits under the axis, in the
    figure's bottom margin, so neither collides with the title whatever the width.
    """
    top = (44 if title else 10) + label_rows_margin(label_rows)
    layout: dict[str, Any] = {
        "barmode": "overlay",
        "bargap": 0.15,
        "height": height + label_rows_margin(label_rows) + STRIP_LEGEND_PX - 80,
        "font": {"size": FONT_SIZE},
        "hoverlabel": {"font": {"size": FONT_SIZE}},
        "margin": {"l": 10, "r": 10, "t": top, "b": 60 + STRIP_LEGEND_PX},
        # Plotly hides the legend of a one-trace chart: a strip that is all "kept" must still
        # say what its colour means.
        "showlegend": True,
        "legend": {
            "orientation": "h",
            "yref": "container",
            "y": 0,
            "yanchor": "bottom",
            "x": 0,
            "font": {"size": LABEL_FONT_SIZE},
        },
    }
    if title is not None:
        layout["title"] = {
            "text": title,
            "y": 1,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": 8},
        }
    return layout


def _strip_bars(
    chat: CountedChat,
    decisions: Mapping[str, Decision],
    *,
    max_blocks: int,
    explain: Callable[[int], str] | None,
    rounds: tuple[int, int] | None,
    overhead: int,
    overhead_parts: Sequence[tuple[str, int]],
    overhead_label: str,
    axis: str = "",
) -> tuple[list[go.Bar], int]:
    """The bars of one round map strip (see :func:`round_map_figure`) and where its last
    block ends (tokens). ``axis`` puts them on another strip's axes (``"2"``: ``x2`` / ``y2``),
    where they share the first strip's legend entries instead of adding their own."""
    blocks = round_blocks(chat, decisions, max_blocks, rounds=rounds)
    placed: dict[str, Any] = (
        {"xaxis": f"x{axis}", "yaxis": f"y{axis}", "showlegend": False} if axis else {}
    )
    bars: list[go.Bar] = []
    offsets: list[int] = []
    x = chat.prefix[blocks[0].start] if blocks and rounds is not None else 0
    for block in blocks:
        offsets.append(x)
        x += max(block.tokens, 1)
    for decision, colour in DECISION_COLOURS.items():
        picked = [(b, o) for b, o in zip(blocks, offsets, strict=True) if b.decision == decision]
        if not picked:
            continue
        bars.append(
            go.Bar(
                name=DECISION_LEGEND[decision],
                legendgroup=decision,
                orientation="h",
                y=["rounds"] * len(picked),
                x=[max(b.tokens, 1) for b, _ in picked],
                base=[o for _, o in picked],
                marker={"color": colour, "line": {"color": "white", "width": 1}},
                customdata=[_hover(b, explain(b.last) if explain else None) for b, _ in picked],
                hovertemplate="%{customdata}<extra></extra>",
                # the block's messages, "start:stop": a click selects its first message
                # (ctxlab.ui.message_selection reads it from the selection event)
                ids=[f"{b.start}:{b.stop}" for b, _ in picked],
                **placed,
            )
        )
    if overhead > 0 and rounds is None:
        bars.append(
            go.Bar(
                name=overhead_label,
                legendgroup="overhead",
                orientation="h",
                y=["rounds"],
                x=[overhead],
                base=[-overhead],
                marker={"color": OVERHEAD_COLOUR, "line": {"color": "white", "width": 1}},
                customdata=[_overhead_hover(overhead_label, overhead, overhead_parts)],
                hovertemplate="%{customdata}<extra></extra>",
                **placed,
            )
        )
    return bars, x


def sample_points(n: int, limit: int = MAX_POINTS) -> list[int]:
    """At most ``limit`` indices spread evenly over ``range(n)``, always including the last."""
    if n <= limit:
        return list(range(n))
    step = n / (limit - 1)
    picked = sorted({min(int(i * step), n - 1) for i in range(limit - 1)} | {n - 1})
    return picked


def _cumulative(counts: Sequence[int], priming: int) -> list[int]:
    out: list[int] = []
    total = priming
    for c in counts:
        total += c
        out.append(total)
    return out


def add_limit_lines(
    fig: go.Figure,
    data_top: float,
    limits: Sequence[tuple[float, str, str, str]],
    *,
    factor: float = OFF_SCALE,
) -> None:
    """Horizontal limit lines (``(value, label, colour, dash)``: a budget, the model's window)
    on a chart whose data reaches ``data_top``, and the value axis fitted to the data.

    A limit within ``factor`` times the data is a line, its label above the line (the first
    limit's at the left end, the next at the right, so two close lines keep their labels
    apart); the axis reaches it. A limit beyond that is off scale: no line, and a label
    pinned to the top left of the plot, ``↑ gpt-4.1 window 1,047,576``, one row per limit,
    so a 6,400-token chat is not squashed against a 128,000-token axis.
    """
    top = fit_axis(data_top, [v for v, *_ in limits], factor)
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    above = 0
    for k, (value, text, colour, dash) in enumerate(limits):
        font = {"size": LABEL_FONT_SIZE, "color": colour}
        if off_scale(value, data_top, factor):
            notes.append(
                {
                    "text": wrap_label(OFF_SCALE_UP + text),
                    "hovertext": f"{text}: far above this chart's data, drawn off scale",
                    "xref": "paper",
                    "x": 0,
                    "xanchor": "left",
                    "align": "left",
                    "yref": "paper",
                    "y": 1,
                    "yanchor": "top",
                    "yshift": -above * LABEL_ROW_PX,
                    "showarrow": False,
                    "font": font,
                }
            )
            above += notes[-1]["text"].count("<br>") + 1
            continue
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": value,
                "y1": value,
                "line": {"color": colour, "dash": dash, "width": 2},
            }
        )
        left = k % 2 == 0
        notes.append(
            {
                "text": wrap_label(text),
                "xref": "paper",
                "x": 0 if left else 1,
                "xanchor": "left" if left else "right",
                "align": "left" if left else "right",
                "yref": "y",
                "y": value,
                "yanchor": "bottom",
                "showarrow": False,
                "font": font,
            }
        )
    fig.update_layout(
        shapes=[*fig.layout.shapes, *shapes], annotations=[*fig.layout.annotations, *notes]
    )
    fig.update_yaxes(range=[0, top], autorange=False)


def limit_lines(budget: int | None, window: ModelInfo | None) -> list[tuple[float, str, str, str]]:
    """The budget and window of a tokens chart, as :func:`add_limit_lines` takes them."""
    out: list[tuple[float, str, str, str]] = []
    if budget is not None:
        out.append((float(budget), f"budget {budget:,}", BUDGET_COLOUR, "dash"))
    if window is not None:
        out.append((float(window.context_window), window.window_label(), WINDOW_COLOUR, "dot"))
    return out


def context_tokens_figure(
    untrimmed_counts: Sequence[int],
    sent_counts: Sequence[int],
    reply_priming: int,
    budget: int | None = None,
    *,
    title: str | None = None,
    height: int = 380,
    window: ModelInfo | None = None,
) -> go.Figure:
    """Cumulative context tokens by message position: the whole chat vs what is sent.

    The sent line ends at the context's token total; the budget, when the strategy has one,
    and the model's context ``window``, when known, are horizontal lines.
    """
    fig = go.Figure()
    for name, counts, colour in (
        ("whole chat", untrimmed_counts, DECISION_COLOURS["dropped"]),
        ("context sent", sent_counts, DECISION_COLOURS["kept"]),
    ):
        cumulative = _cumulative(counts, reply_priming)
        idx = sample_points(len(cumulative))
        fig.add_trace(
            go.Scatter(
                name=name,
                x=[i + 1 for i in idx],
                y=[cumulative[i] for i in idx],
                mode="lines",
                line={"color": colour, "width": 3},
            )
        )
    top = max(
        max(_cumulative(untrimmed_counts, reply_priming), default=reply_priming),
        max(_cumulative(sent_counts, reply_priming), default=reply_priming),
    )
    add_limit_lines(fig, top, limit_lines(budget, window))
    fig.update_xaxes(title_text="messages")
    fig.update_yaxes(title_text="tokens")
    return _layout(fig, title=title, height=height)


def _rows_sampled(rows: Sequence[Mapping[str, object]]) -> list[Mapping[str, object]]:
    return [rows[i] for i in sample_points(len(rows))]


def _series(values: Sequence[Any]) -> np.ndarray:
    """A chart's numeric series as one array: plotly validates and copies it in C (a list of
    2,000 points costs ~15 ms of per-element checks) and sends it as a typed array."""
    return np.asarray(values)


def replay_tokens_figure(
    rows: Sequence[Mapping[str, object]],
    budget: int | None = None,
    *,
    turn: int | None = None,
    height: int = 420,
    window: ModelInfo | None = None,
) -> go.Figure:
    """Tokens sent per call vs the untrimmed chat, the budget, and the summarizer calls.

    Args:
        rows: replay rows as dicts (``turn``, ``tokens_sent``, ``tokens_untrimmed``,
            ``summarizer_calls``).
        budget: horizontal budget line, if any.
        window: the model, whose context window is drawn as a horizontal line, if known.
        turn: the scrubber's turn, drawn as a vertical line.
        height: figure height in pixels.
    """
    picked = _rows_sampled(rows)
    fig = go.Figure()
    x = _series([r["turn"] for r in picked])
    fig.add_trace(
        go.Scatter(
            name="untrimmed",
            x=x,
            y=_series([r["tokens_untrimmed"] for r in picked]),
            mode="lines",
            line={"color": DECISION_COLOURS["dropped"], "width": 3},
        )
    )
    fig.add_trace(
        go.Scatter(
            name="sent",
            x=x,
            y=_series([r["tokens_sent"] for r in picked]),
            mode="lines",
            line={"color": DECISION_COLOURS["kept"], "width": 3},
        )
    )
    calls = [r for r in rows if r.get("summarizer_calls")]
    if calls:
        fig.add_trace(
            go.Scatter(
                name="summarizer call",
                x=[r["turn"] for r in calls],
                y=[r["tokens_sent"] for r in calls],
                mode="markers",
                marker={"color": DECISION_COLOURS["summarized"], "size": 12, "symbol": "star"},
            )
        )
    top = max(
        [float(r["tokens_untrimmed"]) for r in rows]  # type: ignore[arg-type]
        + [float(r["tokens_sent"]) for r in rows],  # type: ignore[arg-type]
        default=0.0,
    )
    add_limit_lines(fig, top, limit_lines(budget, window))
    if turn is not None:
        fig.add_vline(x=turn, line={"color": "#424242", "dash": "dot", "width": 2})
    fig.update_xaxes(title_text="assistant turn")
    fig.update_yaxes(title_text="tokens per call")
    return _layout(fig, title="Tokens sent per call", height=height)


def replay_cost_figure(
    turns: Sequence[int],
    trimmed: Sequence[float],
    untrimmed: Sequence[float],
    *,
    cached: Sequence[float] | None = None,
    untrimmed_cached: Sequence[float] | None = None,
    height: int = 380,
) -> go.Figure:
    """Cumulative cost (USD) of the calls by turn: untrimmed, trimmed, and, when given, both
    with the provider's prompt-cache price (the fair baseline: the untrimmed chat caches too).

    Solid lines pay full price; dashed lines get the cache.
    """
    idx = sample_points(len(turns))
    fig = go.Figure()
    series: list[tuple[str, Sequence[float], str, str]] = [
        ("untrimmed", untrimmed, DECISION_COLOURS["dropped"], "solid"),
        ("trimmed", trimmed, DECISION_COLOURS["kept"], "solid"),
    ]
    if untrimmed_cached is not None:
        series.append(
            ("untrimmed, with prompt cache", untrimmed_cached, "#616161", "dash"),
        )
    if cached is not None:
        series.append(("trimmed, with prompt cache", cached, DECISION_COLOURS["pinned"], "dash"))
    for name, values, colour, dash in series:
        fig.add_trace(
            go.Scatter(
                name=name,
                x=_series([turns[i] for i in idx]),
                y=_series([values[i] for i in idx]),
                mode="lines",
                line={"color": colour, "width": 3, "dash": dash},
            )
        )
    fig.update_xaxes(title_text="assistant turn")
    fig.update_yaxes(title_text="cumulative cost (USD)", rangemode="tozero", tickprefix="$")
    return _layout(fig, title="Cumulative cost", height=height)


USAGE_TITLE = "Billed by the provider vs counted by ctxlab"
BILLED_COLOURS: Mapping[str, str] = {
    "billed: uncached input": "#90a4ae",
    "billed: cache read": "#1565c0",
    "billed: cache write": "#ef6c00",
}


def session_cost_figure(rep: Replay) -> go.Figure | None:
    """:func:`replay_cost_figure` of a replay: trimmed and untrimmed, each with the prompt
    cache where known; None when the model has no price."""
    if rep.total_cost is None or not rep.rows:
        return None
    rows = rep.rows

    def series(values: list[float | None], known: bool) -> list[float] | None:
        return [v or 0.0 for v in values] if known else None

    return replay_cost_figure(
        [r.turn for r in rows],
        [r.cumulative_cost or 0.0 for r in rows],
        [r.cumulative_cost_untrimmed or 0.0 for r in rows],
        cached=series(
            [r.cumulative_cost_with_cache for r in rows], rep.total_cost_with_cache is not None
        ),
        untrimmed_cached=series(
            [r.cumulative_cost_untrimmed_with_cache for r in rows],
            rep.total_cost_untrimmed_with_cache is not None,
        ),
    )


def usage_comparison_figure(comparison: UsageComparison, *, height: int = 380) -> go.Figure:
    """Per recorded call: the prompt the provider billed (a bar, split into uncached input,
    cache read and cache write) beside ctxlab's count of the same request (a line).

    The x axis is the call's number (1 = the first recorded call); the hover gives the
    assistant message's position and the difference. Where the bar stands above the line, the
    provider saw tokens the transcript does not show. At most :data:`MAX_BARS` calls are drawn
    (evenly spread, the last always included).
    """
    calls = comparison.calls
    idx = sample_points(len(calls), MAX_BARS)
    picked = [calls[i] for i in idx]
    x = [i + 1 for i in idx]
    hover = [
        f"call {i + 1} (message {c.index:,})<br>billed {c.billed_prompt:,} · counted "
        f"{c.counted_prompt:,}<br>difference {c.difference:+,}"
        for i, c in zip(idx, picked, strict=True)
    ]
    parts = {
        "billed: uncached input": [
            c.billed_prompt - c.cache_read_input_tokens - c.cache_creation_input_tokens
            for c in picked
        ],
        "billed: cache read": [c.cache_read_input_tokens for c in picked],
        "billed: cache write": [c.cache_creation_input_tokens for c in picked],
    }
    fig = go.Figure()
    for name, values in parts.items():
        if not any(values):
            continue
        fig.add_trace(
            go.Bar(
                name=name,
                x=x,
                y=values,
                marker={"color": BILLED_COLOURS[name]},
                customdata=hover,
                hovertemplate="%{customdata}<extra>" + name + "</extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            name="counted by ctxlab",
            x=x,
            y=[c.counted_prompt for c in picked],
            mode="lines+markers",
            line={"color": DECISION_COLOURS["kept"], "width": 3},
            customdata=hover,
            hovertemplate="%{customdata}<extra>counted by ctxlab</extra>",
        )
    )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text="recorded call")
    fig.update_yaxes(title_text="prompt tokens", rangemode="tozero")
    return _layout(fig, title=USAGE_TITLE, height=height)


def cache_figure(
    turns: Sequence[int],
    tokens_sent: Sequence[int],
    cacheable: Sequence[int],
    breaks: Sequence[int],
    *,
    height: int = 420,
) -> go.Figure:
    """Per call: the cacheable prefix and the rest of the tokens sent (stacked), with a marker
    at every call that broke the cache (``breaks``: turn numbers). At most :data:`MAX_BARS`
    calls and as many break markers are drawn, evenly spread, the last always included."""
    idx = sample_points(len(turns), MAX_BARS)
    x = _series([turns[i] for i in idx])
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            name="cacheable prefix",
            x=x,
            y=_series([cacheable[i] for i in idx]),
            marker_color=DECISION_COLOURS["pinned"],
        )
    )
    fig.add_trace(
        go.Bar(
            name="not cacheable",
            x=x,
            y=_series([tokens_sent[i] - cacheable[i] for i in idx]),
            marker_color=DECISION_COLOURS["summarized"],
        )
    )
    position = {t: k for k, t in enumerate(turns)}
    known = [t for t in breaks if t in position]
    shown = [known[i] for i in sample_points(len(known), MAX_BARS)]  # spread over the chat
    if shown:
        fig.add_trace(
            go.Scatter(
                name="cache break",
                x=shown,
                y=[tokens_sent[position[t]] for t in shown],
                mode="markers",
                marker={"color": "#c62828", "size": 10, "symbol": "x"},
            )
        )
    fig.update_layout(barmode="stack", bargap=0)
    fig.update_xaxes(title_text="assistant turn")
    fig.update_yaxes(title_text="tokens per call", rangemode="tozero")
    return _layout(fig, title="Cacheable prefix per call", height=height)


def disagreement_figure(
    exact: Sequence[int], heuristic: Sequence[int], *, height: int = 360
) -> go.Figure:
    """Exact tokens against the chars/4 estimate, one point per message, with the y = x line.

    Points under the line are messages a chars/4 budget under-counts (it would trim too late).
    """
    idx = sample_points(len(exact))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            name="message",
            x=[exact[i] for i in idx],
            y=[heuristic[i] for i in idx],
            mode="markers",
            marker={"color": DECISION_COLOURS["pinned"], "size": 7, "opacity": 0.6},
        )
    )
    top = max([*exact, *heuristic, 1])
    fig.add_trace(
        go.Scatter(
            name="exact = estimate",
            x=[0, top],
            y=[0, top],
            mode="lines",
            line={"color": "#424242", "dash": "dash", "width": 2},
        )
    )
    fig.update_xaxes(title_text="exact tokens (tokenizer + chat format)")
    fig.update_yaxes(title_text="chars / 4 estimate")
    return _layout(fig, title="Exact count vs chars/4", height=height)
