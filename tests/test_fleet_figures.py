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
    assert list(fig.data[0].x) == [1.0, 2.0]
    assert "1 configuration(s)" in fig.layout.title.text
    assert fig.data[1].name == "Pareto front"


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
    problems = pd.DataFrame(
        {
            "config_key": ["k2", "k2"],
            "code": ["orphan-tool-result", "starts-with-assistant"],
            "problems": [4, 1],
        }
    )
    bars = problems_figure(problems, labels)
    assert [list(t.y) for t in bars.data] == [[0, 4], [0, 1]]
