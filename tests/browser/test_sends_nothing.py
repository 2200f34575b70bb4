"""Issue 23 in a real browser: a real Codex rollout uploaded through the sidebar, Trim last with
65,000 max tokens (what the app suggested before first views were derived from the chat) sends
only the system prompt; the app says so prominently, names the setting and its fix button makes
it send the conversation."""

from __future__ import annotations

from pathlib import Path

from browser_support import EXCEPTION, choose, metric_value, open_app, pick_radio, rerun_after
from playwright.sync_api import Page, expect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
(CODEX,) = sorted((FIXTURES / "codex").glob("rollout-2026-05-11T*.jsonl"))
NOTHING = "Nothing of the conversation is sent"


def test_uploaded_codex_rollout_trim_last_says_it_sends_nothing_and_the_fix_sends_messages(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server)
    pick_radio(page, "Upload")
    uploader = page.locator("[data-testid='stSidebar'] input[type='file']")
    rerun_after(page, lambda: uploader.set_input_files(str(CODEX)))
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text(CODEX.name)
    choose(page, "Strategy", "Trim last (LangChain)")
    box = page.get_by_label("Max tokens", exact=True).first
    expect(box).to_be_editable()
    box.fill("65000")
    rerun_after(page, lambda: box.press("Enter"))
    expect(box).to_have_value("65000")

    alert = page.locator("[data-testid='stAlert']").filter(has_text=NOTHING)
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("Max tokens (max_tokens)")
    expect(alert).to_contain_text("Start on a user message (start_on_user)")
    assert metric_value(page, "Messages sent") == "1"  # the system prompt only
    assert metric_value(page, "Saved") == "—"  # not a "Saved 97%" win
    # the message sits above the metrics: the first thing under the title
    metrics_top = page.locator("[data-testid='stMetric']").first.bounding_box()
    alert_box = alert.bounding_box()
    assert alert_box is not None and metrics_top is not None
    assert alert_box["y"] < metrics_top["y"]

    fix = page.get_by_role("button", name="Raise Max tokens to")
    expect(fix).to_be_visible()
    rerun_after(page, fix.click)
    expect(page.locator("[data-testid='stAlert']").filter(has_text=NOTHING)).to_have_count(0)
    assert int(metric_value(page, "Messages sent").replace(",", "")) > 1
    assert metric_value(page, "Saved").endswith("%")
    expect(page.locator(EXCEPTION)).to_have_count(0)
