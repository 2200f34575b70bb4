"""AppTest: the Learn page's live examples run on the engine and react to their sliders."""

from __future__ import annotations

import json

from app_support import page

from ctxlab.strategies import strategy_names
from ctxlab.ui.examples import FAKE_KEY
from ctxlab.ui.frameworks import learn_pair
from ctxlab.ui.text import literal_text


def test_learn_page_runs_every_example() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    assert not at.exception
    headers = [h.value for h in at.main.header]
    # one more section, contrasting two frameworks, once two framework policies are registered
    contrasted = len(learn_pair(strategy_names())) == 2
    assert len(headers) == 9 + contrasted
    assert ("9 · Two frameworks, one chat" in headers) == contrasted
    for topic in (
        "Tokens",
        "round",
        "rewrite",
        "Tool calls",
        "system prompt",
        "Trim last",
        "Prompt caching",
        "redaction",
        "Your own chat",
    ):
        assert any(topic in h for h in headers), topic
    # every chart has a title
    for chart in at.get("plotly_chart"):
        title = json.loads(chart.proto.spec)["layout"].get("title") or {}
        assert str(title.get("text") or "").strip(), chart.proto.id


def test_projection_and_replacement_are_said_in_words() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    body = " ".join(m.value for m in at.markdown)
    assert "Projection" in body and "Replacement" in body
    assert not any("replace=" in c.value for c in at.caption)


def test_problem_positions_are_the_tables_positions() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    # a window of 6 messages starts on the tool result #8 of the table (its call #6 dropped)
    at.slider(key="learn-window").set_value(6).run()
    errors = [literal_text(e.value) for e in at.error]
    assert any("message #" in e for e in errors)
    assert not any("messages[" in e for e in errors)


def test_sliding_window_orphan_is_flagged_and_window_drop_is_clean() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    at.slider(key="learn-window").set_value(6).run()
    errors = [literal_text(e.value) for e in at.error]
    assert any("orphan" in e or "tool result" in e for e in errors)
    assert any("accept" in s.value for s in at.success)


def test_planted_key_is_redacted_from_the_summarizer_request() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    assert not at.exception
    assert any("[REDACTED" in c.value for c in at.code)
    assert all(FAKE_KEY not in c.value for c in at.code)
    assert any("not in the request" in c.value for c in at.caption)


def test_budget_slider_changes_the_window_drop_example() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    before = [c.value for c in at.caption]
    at.slider(key="learn-budget").set_value(40).run()
    assert not at.exception
    assert [c.value for c in at.caption] != before


def test_section_three_says_nothing_is_dropped_at_the_largest_budget() -> None:
    """Issue 23: at the largest budget the caption still said "the dropped rounds come back"."""
    at = page("pages/4_Learn.py")
    at.run()
    assert not at.exception
    slider = at.slider(key="learn-budget")
    caption = next(c.value for c in at.caption if c.value.startswith("Sends "))
    assert "dropped rounds come back" in caption and "messages dropped" in caption
    slider.set_value(slider.max).run()
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Sends "))
    assert "nothing is dropped" in caption
    assert "come back" not in caption
    # counts read as English: "1 cache break", never "1 cache breaks"
    texts = [c.value for c in at.caption]
    assert not any(" 1 cache breaks" in t or t.startswith("1 cache breaks") for t in texts)
    assert any(" in " in t and "call" in t for t in texts if "cache break" in t)
