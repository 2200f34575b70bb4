"""The model's window on the charts: a line labelled ``gpt-4o window 128,000``, and the budget."""

from __future__ import annotations

from typing import Any

from ctxlab.catalog import get_model
from ctxlab.strategies import Decision
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.examples import example_chat

GPT4 = get_model("gpt-4")
GPT4O = get_model("gpt-4o")


def _lines(fig: Any) -> dict[str, dict[str, Any]]:
    """Annotation text -> the shape drawn with it (plotly adds them in the same order)."""
    texts = [a.text for a in fig.layout.annotations]
    shapes = list(fig.layout.shapes)
    assert len(texts) == len(shapes)
    return {t: s.to_plotly_json() for t, s in zip(texts, shapes, strict=True)}


def test_round_map_draws_window_and_budget_where_their_newest_tokens_begin(
    counter: TokenCounter,
) -> None:
    counted = counter.counted(example_chat())
    decisions = dict.fromkeys((m.id for m in counted.messages), Decision.KEPT)
    total = sum(max(c, 0) for c in counted.counts)
    fig = figures.round_map_figure(counted, decisions, budget=100, window=GPT4)
    lines = _lines(fig)
    assert total > 100
    assert lines["gpt-4 window 8,192"]["x0"] == max(total - 8_192, 0)
    assert lines["budget 100"]["x0"] == total - 100
    assert not _lines(figures.round_map_figure(counted, decisions))


def test_context_chart_draws_the_window_as_a_horizontal_line() -> None:
    fig = figures.context_tokens_figure([10, 20], [20], 3, 25, window=GPT4O)
    lines = _lines(fig)
    assert lines["gpt-4o window 128,000"]["y0"] == 128_000
    assert lines["budget 25"]["y0"] == 25


def test_replay_chart_draws_the_window_as_a_horizontal_line() -> None:
    rows = [
        {"turn": 1, "tokens_sent": 10, "tokens_untrimmed": 10, "summarizer_calls": 0},
        {"turn": 2, "tokens_sent": 15, "tokens_untrimmed": 30, "summarizer_calls": 0},
    ]
    fig = figures.replay_tokens_figure(rows, 20, window=GPT4O)
    assert _lines(fig)["gpt-4o window 128,000"]["y0"] == 128_000
    assert "gpt-4o window 128,000" not in _lines(figures.replay_tokens_figure(rows, 20))
