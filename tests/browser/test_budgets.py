"""Issue 11 item 3 in a real browser: a budget typed in the number box changes "Tokens sent",
and the window badge says whether the context fits gpt-4o's window."""

from __future__ import annotations

from browser_support import EXCEPTION, metric_value, open_app, rerun_after
from playwright.sync_api import Page, expect

BUDGET = "Token budget"


def _sent(page: Page) -> int:
    return int(metric_value(page, "Tokens sent").replace(",", ""))


def _type_budget(page: Page, value: int) -> None:
    box = page.get_by_label(BUDGET, exact=True).first
    expect(box).to_be_editable()
    box.fill(str(value))
    rerun_after(page, lambda: box.press("Enter"))
    expect(box).to_have_value(str(value))


def test_typing_a_budget_changes_tokens_sent_and_the_window_badge(
    streamlit_server: str, page: Page
) -> None:
    query = "chat=large_agent_10k&strategy=window-drop&model=gpt-4o"
    from ctxlab.samples import ensure_generated

    ensure_generated("large_agent_10k")
    open_app(page, streamlit_server, query=query)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    expect(page.get_by_text("Fits gpt-4o's 128,000-token window")).to_be_visible()

    _type_budget(page, 20_000)
    sent = _sent(page)
    assert sent <= 20_000
    assert "budget=20000" in page.url
    expect(page.get_by_text("Fits gpt-4o's 128,000-token window")).to_be_visible()

    _type_budget(page, 300_000)
    over = _sent(page)
    assert 128_000 < over <= 300_000
    expect(
        page.get_by_text(f"Over gpt-4o's 128,000-token window by {over - 128_000:,} tokens")
    ).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)
