"""The Tune figure shows the real calls (a window far above them is an off-scale note) and the
sweep summarizes with a real summarizer, never placeholders."""

from __future__ import annotations

from ctxlab.catalog import get_model
from ctxlab.recommend import Question, Recommendation, SessionPoint
from ctxlab.strategies import get_strategy_class
from ctxlab.summarizers import OfflineSummarizer, ScriptedSummarizer
from ctxlab.ui.summary import Backend
from ctxlab.ui.tune_view import recommendation_figure, sweep_summarizer

POINTS = [
    SessionPoint(v, 7, largest, largest, 0.5 + v / 4000, 0.01 * v / 1000)
    for v, largest in ((31, 700), (120, 800), (500, 1_100), (1_516, 1_516))
]


def _figure(model: str) -> dict:  # type: ignore[type-arg]
    rec = Recommendation(Question.FITS_AND_KEEPS_FACTS, POINTS[2], 0, 0.8)
    fig = recommendation_figure(
        POINTS,
        parameter="Token budget",
        model=get_model(model),
        min_facts=0.8,
        recommendation=rec,
        log_x=True,
    )
    return fig.to_plotly_json()  # type: ignore[no-any-return]


def test_largest_call_axis_fits_the_calls_when_the_window_is_far_above() -> None:
    """On gpt-4.1 (1,047,576 tokens) a 1.5k-token chat drew a flat line at 0."""
    layout = _figure("gpt-4.1")["layout"]
    top = layout["yaxis"]["range"][1]
    assert 1_516 < top < 2 * 1_516
    notes = [a["text"] for a in layout["annotations"]]
    assert "↑ gpt-4.1 window 1,047,576 (off scale, above every call)" in notes
    assert not any(s.get("y0") == 1_047_576 for s in layout.get("shapes", []))


def test_a_window_near_the_calls_is_drawn_as_a_line() -> None:
    layout = _figure("gpt-4")["layout"]  # 8,192 tokens: over 1.5x the calls, a note too
    assert layout["yaxis"]["range"][1] < 2 * 1_516
    near = [
        SessionPoint(v, 3, largest, largest, None, None)
        for v, largest in ((10, 6_000), (20, 7_000))
    ]
    fig = recommendation_figure(
        near, parameter="Token budget", model=get_model("gpt-4"), min_facts=0.8
    ).to_plotly_json()
    assert any(s.get("y0") == 8_192 for s in fig["layout"]["shapes"])
    assert fig["layout"]["yaxis"]["range"][1] >= 8_192


def test_the_sweep_summarizes_with_a_real_summarizer() -> None:
    summarize, window_drop = get_strategy_class("summarize"), get_strategy_class("window-drop")
    assert sweep_summarizer(window_drop, None) == (None, "")
    endpoint = Backend(ScriptedSummarizer(["x"]), automatic=False, label="gpt-4o-mini at x")
    chosen, label = sweep_summarizer(summarize, endpoint)
    assert isinstance(chosen, OfflineSummarizer) and label == "offline"
    offline = Backend(OfflineSummarizer(), automatic=True, label="offline")
    assert sweep_summarizer(summarize, offline) == (offline.summarizer, "offline")
