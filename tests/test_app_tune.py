"""AppTest: Tune sweeps a parameter and applies the chosen value to the Playground."""

from __future__ import annotations

import pytest
from app_support import page, param_widget, sample_names

from ctxlab.strategies import get_strategy_class, parameters, strategy_names

SAMPLES = sample_names()


@pytest.mark.parametrize("name", SAMPLES)
def test_tune_loads_each_sample(name: str) -> None:
    at = page("pages/3_Tune.py", chat=name, strategy="window-drop")
    at.run()
    assert not at.exception
    assert at.get("plotly_chart")


@pytest.mark.parametrize("strategy", strategy_names())
def test_every_strategy_with_a_number_can_be_swept(strategy: str) -> None:
    at = page("pages/3_Tune.py", chat=SAMPLES[0], strategy=strategy)
    at.run()
    assert not at.exception
    numeric = [i for i in parameters(get_strategy_class(strategy)) if i.kind in ("int", "float")]
    if numeric and not at.get("plotly_chart"):  # then the page says why nothing is swept
        assert any("nothing to tune" in i.value for i in at.info), strategy
    elif not numeric:
        assert not at.get("plotly_chart")


def test_apply_sets_the_playground_parameter() -> None:
    at = page("pages/3_Tune.py", chat=SAMPLES[0], strategy="window-drop")
    at.run()
    assert not at.exception
    pick = next(s for s in at.select_slider if s.key.startswith("tune-pick"))
    chosen = pick.options[1]
    pick.set_value(float(chosen.replace(",", ""))).run()
    at.button[0].click().run()
    assert not at.exception
    budget = param_widget(at, "budget")
    assert budget.value == int(float(chosen.replace(",", "")))
