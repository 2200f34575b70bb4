"""AppTest: Compare shows 2-4 configurations, their metrics and where they disagree."""

from __future__ import annotations

import pytest
from app_support import page, sample_names

from ctxlab.strategies import get_strategy_class, strategy_names

SAMPLES = sample_names()


def metrics_of(at: object) -> object:
    return next(d.value for d in at.dataframe if "configuration" in d.value.columns)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", SAMPLES)
def test_compare_loads_each_sample(name: str) -> None:
    at = page("pages/1_Compare.py", chat=name)
    at.run()
    assert not at.exception
    maps = [c for c in at.get("plotly_chart") if not str(c.key).endswith("-zoom")]
    assert len(maps) == 2
    assert len(metrics_of(at)) == 2


@pytest.mark.parametrize("strategy", strategy_names())
def test_every_strategy_can_be_compared_and_disagreements_are_listed(strategy: str) -> None:
    at = page("pages/1_Compare.py", chat=SAMPLES[0])
    at.run()
    at.sidebar.number_input(key="cmp.count").set_value(3).run()
    at.selectbox(key="cmp2.strategy").set_value(strategy).run()
    assert not at.exception
    metrics = metrics_of(at)
    title = get_strategy_class(strategy).title
    assert len(metrics) == 3 and metrics["configuration"].iloc[2] == f"3: {title}"
    disagreements = next(d.value for d in at.dataframe if "preview" in d.value.columns)
    assert {"index", "role", "tokens", "preview"} <= set(disagreements.columns)
