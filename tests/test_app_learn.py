"""AppTest: the Learn page's live examples run on the engine and react to their sliders."""

from __future__ import annotations

from app_support import page

from ctxlab.ui.examples import FAKE_KEY


def test_learn_page_runs_every_example() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    assert not at.exception
    assert len(at.main.header) == 4


def test_sliding_window_orphan_is_flagged_and_window_drop_is_clean() -> None:
    at = page("pages/4_Learn.py")
    at.run()
    at.slider(key="learn-window").set_value(6).run()
    assert any("orphan" in e.value or "tool result" in e.value for e in at.error)
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
