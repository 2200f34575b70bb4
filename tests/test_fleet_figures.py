"""Fleet figures: pure functions of report values."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.ui.fleet_figures import (
    ecdf_figure,
    pareto_figure,
    pareto_front,
    problems_figure,
    retention_figure,
)

points = st.lists(
    st.tuples(st.floats(0, 1000, allow_nan=False), st.floats(0, 100, allow_nan=False)),
    min_size=1,
    max_size=12,
)


@given(points)
def test_pareto_front_points_are_not_dominated_and_others_are(
    pts: list[tuple[float, float]],
) -> None:
    front = set(pareto_front(pts))

    def dominated(i: int) -> bool:
        x, y = pts[i]
        return any(
            ox <= x and oy >= y and (ox < x or oy > y) for j, (ox, oy) in enumerate(pts) if j != i
        )

    assert front == {i for i in range(len(pts)) if not dominated(i)}
    assert front  # a finite set always has an undominated point


def _report(label: str, cost: float | None, retention: float | None) -> dict[str, object]:
    return {"label": label, "cost": cost, "cost_with_cache": cost, "retention": retention}


def test_pareto_figure_leaves_out_configurations_without_price_or_retention() -> None:
    fig = pareto_figure(
        [_report("a", 1.0, 80.0), _report("b", 2.0, 95.0), _report("c", None, 90.0)]
    )
    # one point per configuration, named in the legend (no labels written beside points)
    assert [(t.name, list(t.x)) for t in fig.data[:2]] == [("a", [1.0]), ("b", [2.0])]
    assert all(t.mode in ("markers", "lines") for t in fig.data)
    assert "1 configuration(s)" in fig.layout.title.text
    assert fig.data[2].name == "Pareto front"
    assert fig.layout.showlegend


def test_distribution_figures_draw_one_trace_per_configuration_label() -> None:
    labels = {"k1": "window-drop budget=8000", "k2": "<b>sliding</b>"}
    ecdf = pd.DataFrame(
        {"config_key": ["k1", "k1", "k2", "k2"], "share": [0, 1, 0, 1], "tokens": [5, 9, 3, 4]}
    )
    fig = ecdf_figure(ecdf, labels)
    assert [t.name for t in fig.data] == ["window-drop budget=8000", "&lt;b&gt;sliding&lt;/b&gt;"]
    stats = pd.DataFrame(
        {
            "config_key": ["k1", "k2"],
            "low": [10.0, 50.0],
            "q1": [20.0, 60.0],
            "median": [30.0, 70.0],
            "q3": [40.0, 80.0],
            "high": [90.0, 100.0],
        }
    )
    boxes = retention_figure(stats, labels)
    assert [list(b.median) for b in boxes.data] == [[30.0], [70.0]]
    # each box at its own position, and the legend names it
    assert [list(b.x) for b in boxes.data] == [[b.name] for b in boxes.data]
    assert len({b.x[0] for b in boxes.data}) == 2 and boxes.layout.showlegend
    problems = pd.DataFrame(
        {
            "config_key": ["k2", "k2"],
            "code": ["orphan-tool-result", "starts-with-assistant"],
            "problems": [4, 1],
        }
    )
    bars = problems_figure(problems, labels)
    assert [list(t.x) for t in bars.data] == [[0, 4], [0, 1]]
    assert list(bars.data[0].y) == ["window-drop budget=8000", "&lt;b&gt;sliding&lt;/b&gt;"]


def test_a_fleet_legend_sits_under_the_axes_with_room_for_every_entry() -> None:
    labels = {f"k{i}": f"configuration number {i} with a long label" for i in range(7)}
    ecdf = pd.DataFrame({"config_key": list(labels), "share": [1.0] * 7, "tokens": list(range(7))})
    fig = ecdf_figure(ecdf, labels)
    legend = fig.layout.legend
    assert legend.orientation == "v" and legend.yref == "container" and legend.y == 0
    # the bottom margin holds the axis and one row per entry: the legend covers no axis label
    assert fig.layout.margin.b >= 7 * 24
    assert fig.layout.height >= 430 + 7 * 24
