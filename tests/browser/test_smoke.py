"""The Playground opens in a real browser and renders without an exception."""

from __future__ import annotations

import re

from browser_support import EXCEPTION, open_app
from playwright.sync_api import Page, expect


def test_playground_renders_its_heading_without_exception(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server)
    expect(page).to_have_title(re.compile(r"Playground"), timeout=30_000)
    expect(page.locator("h1").first).to_be_visible()
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_playground_opens_the_sample_named_in_the_url(streamlit_server: str, page: Page) -> None:
    open_app(page, streamlit_server, query="chat=support_function_calls")
    expect(page.locator(EXCEPTION)).to_have_count(0)
    expect(page.get_by_text("Support: refund and replacement").first).to_be_visible()
