"""The round map's budget and window lines: placed so no two labels overprint and none runs
out of the chart, with a limit that holds the whole chat drawn off scale (issue 23)."""

from __future__ import annotations

import re

import plotly.graph_objects as go
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.catalog import get_model
from ctxlab.model import Message, Role
from ctxlab.strategies import Decision
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.binned_map import binned_map_figure, decision_bins, decision_codes
from ctxlab.ui.strip import strip_html


def _strip() -> go.Figure:
    return go.Figure(go.Bar(x=[1], y=["rounds"], orientation="h"))


def _rise(note: go.layout.Annotation) -> float:
    """How far above the strip's top a label's box begins (pixels)."""
    return float(-note.ay) if note.showarrow else float(note.yshift)


@given(total=st.integers(1, 10**7), size=st.integers(0, 10**7))
def test_a_line_inside_the_chat_is_drawn_and_its_label_starts_at_the_nearer_end(
    total: int, size: int
) -> None:
    fig = _strip()
    figures.add_tail_lines(fig, total, [(size, "budget 8,000", "#c62828", "dash")])
    (note,) = fig.layout.annotations
    if size > total:  # the whole chat fits: nothing to draw inside the strip
        assert fig.layout.shapes == ()
        assert note.text == "← budget 8,000" and note.x == 0 and note.xanchor == "left"
        assert not note.showarrow and note.hovertext
        return
    (line,) = fig.layout.shapes
    assert line.x0 == line.x1 == total - size
    assert note.x == total - size and note.showarrow and note.axref == "x"
    nearer_left = (total - size) / total < 0.5
    assert note.ax == (0 if nearer_left else total)
    assert note.xanchor == ("left" if nearer_left else "right")


def test_a_window_far_above_the_chat_is_an_arrow_at_the_left_end_not_a_line_at_zero() -> None:
    window = get_model("gpt-4.1")
    fig = _strip()
    figures.add_tail_lines(fig, 6_420, figures.tail_lines(8_000, window, 0))
    assert fig.layout.shapes == ()
    texts = [n.text for n in fig.layout.annotations]
    assert texts == ["← budget 8,000", "← gpt-4.1 window<br>1,047,576"]


def test_each_label_has_rows_of_its_own_so_close_lines_never_overprint() -> None:
    fig = _strip()
    lines = [(100, "budget 100", "red", "dash"), (101, "gpt-4o window 128,000", "blue", "dot")]
    figures.add_tail_lines(fig, 1_000, lines)
    first, second = fig.layout.annotations
    # the first label is one text line: the second starts a full row above it
    assert _rise(second) - _rise(first) >= figures.LABEL_ROW_PX
    assert figures.label_lines(lines) == 3  # the window's label wraps onto two lines


def test_lines_are_added_after_the_figures_own_shapes() -> None:
    fig = _strip()
    fig.add_hline(y=0)
    figures.add_tail_lines(fig, 100, [(40, "a", "red", "dash"), (200, "b", "blue", "dot")])
    assert [s.x0 for s in fig.layout.shapes] == [0, 60]
    assert [a.text for a in fig.layout.annotations] == ["a", "← b"]
    assert [a.xanchor for a in fig.layout.annotations] == ["right", "left"]


def test_budget_and_window_lines_leave_out_the_fixed_overhead() -> None:
    window = get_model("gpt-4o")
    lines = figures.tail_lines(8000, window, 500)
    assert lines[0][:2] == (7500, "budget 8,000")
    assert lines[1][0] == window.context_window - 500
    assert figures.tail_lines(None, None, 0) == []


@given(text=st.text(min_size=0, max_size=60))
def test_a_long_label_wraps_once_at_its_last_space(text: str) -> None:
    wrapped = figures.wrap_label(text)
    assert wrapped.replace("<br>", " ", 1) == text or wrapped == text
    assert wrapped.count("<br>") <= 1 + text.count("<br>")


def test_an_axis_fits_the_data_and_leaves_far_limits_off_scale() -> None:
    assert figures.off_scale(128_000, 6_420) and not figures.off_scale(16_000, 6_420)
    assert figures.fit_axis(6_420, [16_000, 128_000]) == 16_000 * 1.05
    assert figures.fit_axis(6_420, [1_047_576]) == 6_420 * 1.05


def test_every_strip_builder_makes_room_above_the_strip_for_its_label_rows(
    counter: TokenCounter,
) -> None:
    chat = tuple(
        m
        for i in range(6)
        for m in (
            Message(Role.USER, "question " * 40, f"u{i}"),
            Message(Role.ASSISTANT, "answer " * 60, f"a{i}"),
        )
    )
    counted = counter.counted(chat)
    decisions = {m.id: Decision.DROPPED if k < 6 else Decision.KEPT for k, m in enumerate(chat)}
    window = get_model("gpt-4o")
    budget = counted.prefix[-1] // 2
    codes = decision_codes(counted, decisions)
    built = [
        figures.round_map_figure(counted, decisions, budget=budget, window=window, title="t"),
        figures.round_map_zoom_figure(
            counted, decisions, (3, 6), budget=budget, window=window, title="t"
        ),
        binned_map_figure(decision_bins(counted, codes), budget=budget, window=window, title="t"),
    ]
    rows = figures.label_lines(figures.tail_lines(budget, window, 0))
    assert rows == 3  # "budget N" and the wrapped "gpt-4o window / 128,000"
    for fig in built:
        highest = max(_rise(n) for n in fig.layout.annotations if n.name == figures.TAIL_NOTE)
        # the top margin holds the title and every row; the last row starts below it
        assert fig.layout.margin.t >= 44 + figures.label_rows_margin(rows)
        assert highest + 2 * figures.LABEL_ROW_PX <= fig.layout.margin.t
        assert fig.layout.showlegend and fig.layout.title.yref == "container"


def test_the_html_strip_places_labels_at_its_ends_and_marks_them_for_measuring(
    counter: TokenCounter,
) -> None:
    chat = (
        Message(Role.USER, "a " * 300, "u"),
        Message(Role.ASSISTANT, "b " * 300, "a"),
        Message(Role.USER, "c " * 30, "u2"),
        Message(Role.ASSISTANT, "d " * 30, "a2"),
    )
    counted = counter.counted(chat)
    decisions = {"u": Decision.DROPPED, "a": Decision.DROPPED}
    fig = figures.round_map_figure(counted, decisions, budget=100, window=get_model("gpt-4o"))
    body = strip_html(fig)
    labels = re.findall(r'<span data-strip-label title="[^"]*" style="([^"]*)"', body)
    assert len(labels) == 2
    # never positioned at the line (which may sit at either edge): at the nearer end, and
    # allowed to wrap inside the strip
    assert all(("left:0;" in s or "right:0;" in s) and "max-width:100%" in s for s in labels)
    assert 'data-strip="round map"' in body
