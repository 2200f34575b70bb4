"""AppTest: Replay charts every call and scrubs to any turn's context."""

from __future__ import annotations

import json
from typing import Any

import pytest
from app_support import page, param_widget, sample_names

from ctxlab.strategies import strategy_names

SAMPLES = sample_names()


@pytest.mark.parametrize("name", SAMPLES)
def test_replay_loads_each_sample(name: str) -> None:
    at = page("pages/2_Replay.py", chat=name, strategy="window-drop")
    at.run()
    assert not at.exception
    assert any(m.label == "Calls" for m in at.metric)


@pytest.mark.parametrize("strategy", strategy_names())
def test_every_strategy_replays_and_the_scrubber_moves(strategy: str) -> None:
    at = page("pages/2_Replay.py", chat=SAMPLES[0], strategy=strategy)
    at.run()
    assert not at.exception
    scrubber = at.slider(key="replay-turn")
    scrubber.set_value(max(scrubber.min, scrubber.value // 2)).run()
    assert not at.exception
    assert any(h.value.startswith("Context at turn") for h in at.subheader)


def test_a_parameter_change_changes_the_replay() -> None:
    at = page("pages/2_Replay.py", chat=SAMPLES[0], strategy="window-drop")
    at.run()
    before = next(m.value for m in at.metric if m.label == "Input tokens, all calls")
    budget = param_widget(at, "budget")
    budget.set_value(budget.max).run()
    assert not at.exception
    assert next(m.value for m in at.metric if m.label == "Input tokens, all calls") != before


def test_on_the_10k_chat_fact_retention_waits_until_asked() -> None:
    at = page("pages/2_Replay.py", chat="large_agent_10k", strategy="window-drop")
    at.run()
    assert not at.exception
    toggle = at.toggle(key="replay-facts")
    assert toggle.value is False
    assert not any(c.value.startswith("Fact retention at turn") for c in at.caption)
    toggle.set_value(True).run()
    assert not at.exception
    assert any(c.value.startswith("Fact retention at turn") for c in at.caption)


def test_replay_shows_the_untrimmed_baseline_with_prompt_cache() -> None:
    at = page("pages/2_Replay.py", chat=SAMPLES[0], strategy="window-drop")
    at.run()
    assert not at.exception
    labels = {m.label: m.value for m in at.metric}
    assert labels["Cost, untrimmed + cache"].startswith("$")
    chart = next(c for c in at.get("plotly_chart") if "Cumulative cost" in c.proto.spec)
    assert "untrimmed, with prompt cache" in chart.proto.spec


def _tokens_chart(at: Any) -> dict[str, Any]:
    chart = next(c for c in at.get("plotly_chart") if c.key == "replay-tokens")
    spec: dict[str, Any] = json.loads(chart.proto.spec)
    return spec


def test_a_step_keeps_the_tokens_charts_data_revision_and_a_new_replay_changes_it() -> None:
    """The browser's Plotly redraws only what a revision says changed: a step (same data, the
    turn line moved) keeps it; a new replay (new data) must not, or the old series would stay."""
    at = page("pages/2_Replay.py", chat=SAMPLES[0], strategy="window-drop", budget="2000")
    at.run()
    first = _tokens_chart(at)
    revision = first["layout"]["datarevision"]
    scrubber = at.slider(key="replay-turn")
    turn = max(scrubber.min, scrubber.value - 1)
    scrubber.set_value(turn).run()
    stepped = _tokens_chart(at)
    assert stepped["layout"]["datarevision"] == revision
    assert stepped["data"] == first["data"]
    lines = [s for s in stepped["layout"]["shapes"] if s["yref"] == "y domain"]
    assert [line["x0"] for line in lines] == [turn]
    param_widget(at, "budget").set_value(1000).run()
    assert not at.exception
    rebuilt = _tokens_chart(at)
    assert rebuilt["layout"]["datarevision"] != revision
    assert rebuilt["data"] != first["data"]


def test_replay_cost_labels_fit_a_quarter_of_the_page_and_explain_themselves() -> None:
    """Issue 23: "Session cost (trimmed, with prompt cac…" was cut off."""
    at = page("pages/2_Replay.py", chat=SAMPLES[0], strategy="window-drop")
    at.run()
    assert not at.exception
    costs = [m for m in at.metric if m.label.startswith("Cost, ")]
    assert [m.label for m in costs] == [
        "Cost, trimmed",
        "Cost, untrimmed",
        "Cost, trimmed + cache",
        "Cost, untrimmed + cache",
    ]
    assert all(len(m.label) <= 24 and m.help for m in at.metric if m.label.startswith("Cost"))


def test_the_turn_caption_and_the_round_map_agree_on_the_chat_size() -> None:
    """Issue 23: the map ended at 32,616 tokens while the caption said 32,619; the difference
    is the reply priming, which the caption now names."""
    from ctxlab.formats import load_chat_file
    from ctxlab.replay import replay
    from ctxlab.samples import sample_path
    from ctxlab.strategies import build_strategy
    from ctxlab.tokens import get_counter
    from ctxlab.ui.timeline import turn_caption

    counter = get_counter("gpt-4o")
    messages = load_chat_file(sample_path("coding_agent_session")).messages
    rep = replay(messages, build_strategy("window-drop", {"budget": 8000}), counter)
    row = rep.rows[-1]
    prefix = counter.counted(messages[: row.message_index])
    caption = turn_caption(len(rep), row.message_index, row, prefix.reply_priming)
    assert f"spans {prefix.prefix[-1]:,} of them" in caption  # the map's axis ends there
    assert f"of {row.tokens_untrimmed:,} tokens" in caption
    assert row.tokens_untrimmed == prefix.prefix[-1] + prefix.reply_priming
