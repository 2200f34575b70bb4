"""The round map's budget and window lines: what plotly's add_vline draws, for less."""

from __future__ import annotations

import plotly.graph_objects as go
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.ui import figures


def _strip() -> go.Figure:
    return go.Figure(go.Bar(x=[1], y=["rounds"], orientation="h"))


@given(total=st.integers(0, 10**7), size=st.integers(0, 10**7))
def test_a_tail_line_is_add_vlines_shape_with_its_label_above_the_strip(
    total: int, size: int
) -> None:
    ours, theirs = _strip(), _strip()
    figures.add_tail_lines(ours, total, [(size, "budget", "#c62828", "dash")])
    theirs.add_vline(
        x=max(total - size, 0),
        line={"color": "#c62828", "dash": "dash", "width": 2},
        annotation_text="budget",
        annotation_position="top left" if total > size else "top right",
        annotation_font_size=figures.FONT_SIZE,
    )
    assert ours.layout.shapes[0].to_plotly_json() == theirs.layout.shapes[0].to_plotly_json()
    label = theirs.layout.annotations[0].to_plotly_json()
    label["yanchor"] = "bottom"  # above the strip rather than over its blocks
    assert ours.layout.annotations[0].to_plotly_json() == label


def test_lines_are_added_after_the_figures_own_shapes() -> None:
    fig = _strip()
    fig.add_hline(y=0)
    figures.add_tail_lines(fig, 100, [(40, "a", "red", "dash"), (200, "b", "blue", "dot")])
    assert [s.x0 for s in fig.layout.shapes] == [0, 60, 0]
    assert [a.text for a in fig.layout.annotations] == ["a", "b"]
    assert [a.xanchor for a in fig.layout.annotations] == ["right", "left"]


def test_budget_and_window_lines_leave_out_the_fixed_overhead() -> None:
    from ctxlab.catalog import get_model

    window = get_model("gpt-4o")
    lines = figures.tail_lines(8000, window, 500)
    assert lines[0][:2] == (7500, "budget 8,000")
    assert lines[1][0] == window.context_window - 500
    assert figures.tail_lines(None, None, 0) == []
