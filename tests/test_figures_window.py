"""The model's window on the charts: a line labelled ``gpt-4o window 128,000`` where it fits the
data, an off-scale arrow (``↑ gpt-4o window 128,000``) where it is far above it, and the budget."""

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
    """Label (one line) -> the shape drawn with it; off-scale labels (an arrow, no line) out."""
    texts = [
        a.text.replace("<br>", " ")
        for a in fig.layout.annotations
        if not a.text.startswith(("← ", "↑ "))
    ]
    shapes = [s for s in fig.layout.shapes if s.type == "line"]
    assert len(texts) == len(shapes)
    return {t: s.to_plotly_json() for t, s in zip(texts, shapes, strict=True)}


def _off_scale(fig: Any) -> list[str]:
    return [
        a.text.replace("<br>", " ")
        for a in fig.layout.annotations
        if a.text.startswith(("← ", "↑ "))
    ]


def test_round_map_draws_window_and_budget_where_their_newest_tokens_begin(
    counter: TokenCounter,
) -> None:
    counted = counter.counted(example_chat())
    decisions = dict.fromkeys((m.id for m in counted.messages), Decision.KEPT)
    total = sum(max(c, 0) for c in counted.counts)
    fig = figures.round_map_figure(counted, decisions, budget=100, window=GPT4)
    lines = _lines(fig)
    assert 100 < total < 8_192
    # the window holds the whole chat: an arrow at the strip's left end, not a line at 0
    assert "gpt-4 window 8,192" not in lines
    assert _off_scale(fig) == ["← gpt-4 window 8,192"]
    assert lines["budget 100"]["x0"] == total - 100
    assert not _lines(figures.round_map_figure(counted, decisions))


def test_context_chart_draws_the_window_as_a_horizontal_line() -> None:
    fig = figures.context_tokens_figure([10, 20], [20], 3, 25, window=GPT4O)
    lines = _lines(fig)
    assert lines["budget 25"]["y0"] == 25
    # 128,000 above a 33-token chat: off scale, the axis fits the chat
    assert _off_scale(fig) == ["↑ gpt-4o window 128,000"]
    assert fig.layout.yaxis.range[1] == 33 * 1.05
    near = figures.context_tokens_figure([60_000, 40_000], [40_000], 3, 25, window=GPT4O)
    assert _lines(near)["gpt-4o window 128,000"]["y0"] == 128_000
    assert near.layout.yaxis.range[1] == 128_000 * 1.05


def test_replay_chart_draws_the_window_as_a_horizontal_line() -> None:
    rows = [
        {"turn": 1, "tokens_sent": 10, "tokens_untrimmed": 10, "summarizer_calls": 0},
        {"turn": 2, "tokens_sent": 15, "tokens_untrimmed": 30, "summarizer_calls": 0},
    ]
    fig = figures.replay_tokens_figure(rows, 20, window=GPT4)
    assert _lines(fig)["budget 20"]["y0"] == 20
    assert _off_scale(fig) == ["↑ gpt-4 window 8,192"]
    assert not _off_scale(figures.replay_tokens_figure(rows, 20))
    big = [{**r, "tokens_untrimmed": 5_000} for r in rows]
    assert _lines(figures.replay_tokens_figure(big, 20, window=GPT4))["gpt-4 window 8,192"]
