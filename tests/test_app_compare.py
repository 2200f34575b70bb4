"""AppTest: Compare shows 2-4 configurations, their metrics and where they disagree."""

from __future__ import annotations

import pytest
from app_support import page, pick_strategy, sample_names

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
    pick_strategy(at, strategy, slot=2)
    assert not at.exception
    metrics = metrics_of(at)
    title = get_strategy_class(strategy).title
    assert len(metrics) == 3 and metrics["configuration"].iloc[2] == f"3: {title}"
    disagreements = next(d.value for d in at.dataframe if "preview" in d.value.columns)
    assert {"index", "role", "tokens", "preview"} <= set(disagreements.columns)


def widget_value(at: object, suffix: str) -> object:
    """The value of the one widget whose key ends with ``suffix`` (keys carry a chat token)."""
    found = [
        w
        for kind in ("slider", "number_input", "toggle")
        for w in at.get(kind)  # type: ignore[attr-defined]
        if str(getattr(w, "key", "")).split("@")[0].endswith(suffix)
    ]
    assert len(found) == 1, [getattr(w, "key", "") for w in found]
    return found[0].value


def test_set_up_in_the_url_is_restored_and_written_back() -> None:
    at = page(
        "pages/1_Compare.py",
        chat="coding_agent_session",
        cmp="3",
        cmp1="sliding-window",
        **{"cmp1.window": "7", "cmp3.max_tokens": "5000"},
        cmp3="trim-last",
    )
    at.run()
    assert not at.exception
    assert at.sidebar.number_input(key="cmp.count").value == 3
    assert at.selectbox(key="cmp0.strategy").value == "sliding-window"
    assert at.selectbox(key="cmp2.strategy").value == "trim-last"
    assert widget_value(at, "cmp0.p.sliding-window.window") == 7
    assert widget_value(at, "cmp2.p.trim-last.max_tokens") == 5000
    metrics = metrics_of(at)
    assert list(metrics["configuration"]) == [
        f"1: {get_strategy_class('sliding-window').title}",
        f"2: {get_strategy_class(strategy_names()[1]).title}",
        f"3: {get_strategy_class('trim-last').title}",
    ]
    query = at.query_params
    assert str(query["cmp"]) in ("3", "['3']")
    assert "7" in str(query["cmp1.window"]) and "trim-last" in str(query["cmp3"])
    at.selectbox(key="cmp1.strategy").set_value("window-drop").run()
    assert "window-drop" in str(at.query_params["cmp2"])


def test_defaults_are_comparable_with_the_sidebar_budget() -> None:
    from ctxlab import load_chat
    from ctxlab.samples import sample_path
    from ctxlab.tokens import get_counter
    from ctxlab.ui.compare_setup import messages_within

    at = page("pages/1_Compare.py", chat="coding_agent_session", strategy="window-drop")
    at.run()
    assert not at.exception
    budgets = [
        w.value
        for kind in ("slider", "number_input")
        for w in at.get(kind)
        if str(w.key).split("@")[0] in ("p.window-drop.budget", "cmp0.p.window-drop.budget")
        and str(w.key).split("@")[1].isdigit()  # the number box, not the log scale's
    ]
    assert len(budgets) == 2 and budgets[0] == budgets[1]
    sidebar_budget = budgets[0]
    counted = get_counter("gpt-4o").counted(load_chat(sample_path("coding_agent_session")))
    assert widget_value(at, "cmp1.p.sliding-window.window") == messages_within(
        counted, int(sidebar_budget)
    )


def test_cost_columns_and_the_offline_stand_in_note() -> None:
    at = page(
        "pages/1_Compare.py",
        chat="coding_agent_session",
        cmp="2",
        cmp1="window-drop",
        cmp2="summarize",
    )
    at.run()
    assert not at.exception
    metrics = metrics_of(at)
    for column in ("cost per call", "cost per session", "cost per session, prompt cache"):
        assert all(str(v).startswith("$") for v in metrics[column]), metrics[column]
    assert list(metrics["summaries by"]) == ["—", "offline stand-in"]
    notes = [i.value for i in at.info]
    assert any("offline extractive stand-in, not a real model" in n for n in notes)
    at2 = page("pages/1_Compare.py", chat="coding_agent_session", cmp="2", cmp1="window-drop")
    at2.run()
    assert not any("stand-in" in i.value for i in at2.info)
