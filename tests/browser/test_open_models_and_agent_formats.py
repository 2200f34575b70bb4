"""A user's path through issue 25 in Chromium: upload a real Gemini CLI session, count it as a
Qwen model (exact, with the qwen extra) and as a Claude model (approximate, with the opt-in to
count with the provider), then walk to Compare through the sidebar.

The chat's size is read from the raw file (one message per user or gemini entry); the token
total shown must be the engine's count for that model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from browser_support import EXCEPTION, choose, open_app, pick_radio, rerun_after, wait_for_app
from playwright.sync_api import Page, expect

from ctxlab.formats import load_chat_file
from ctxlab.tokens import get_counter

pytestmark = pytest.mark.browser

SESSION = (
    Path(__file__).resolve().parents[1]
    / "fixtures/formats/gemini_cli/vibecodingtracker_session.json"
)


def _sidebar_caption(page: Page, pattern: str) -> str:
    line = page.locator("[data-testid='stSidebar'] [data-testid='stCaptionContainer']").filter(
        has_text=re.compile(pattern)
    )
    expect(line.first).to_be_visible()
    return line.first.inner_text()


def test_a_gemini_cli_session_counted_as_qwen_and_as_claude(
    streamlit_server: str, page: Page
) -> None:
    raw = json.loads(SESSION.read_text(encoding="utf-8"))
    expected = sum(1 for m in raw["messages"] if m["type"] in ("user", "gemini"))

    open_app(page, streamlit_server)
    pick_radio(page, "Upload")
    chooser = page.locator("[data-testid='stSidebar'] input[type='file']").first
    rerun_after(page, lambda: chooser.set_input_files(str(SESSION)))
    wait_for_app(page)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    caption = _sidebar_caption(page, r"\d messages · ")
    assert f"{expected} messages" in caption

    messages = load_chat_file(SESSION).messages
    choose(page, "Model / tokenizer", "Qwen · qwen3-max · 262k window")
    caption = _sidebar_caption(page, r"\d messages · ")
    qwen = get_counter("qwen3-max")
    assert qwen.is_exact
    assert f"{qwen.counted(messages).total:,} tokens" in caption
    assert "qwen3-bpe" in caption

    choose(
        page, "Model / tokenizer", "Anthropic · claude-sonnet-4-5 · 200k window · approximate count"
    )
    expect(page.get_by_text("Approximate counts: no public tokenizer")).to_be_visible()
    # The opt-in is there, and nothing is sent before its button is pressed.
    expect(page.get_by_text("Count with Anthropic")).to_be_visible()

    link = page.locator("[data-testid='stSidebarNav'] a").filter(has_text="Compare").first
    rerun_after(page, link.click)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    assert f"{expected} messages" in _sidebar_caption(page, r"\d messages · ")
