"""Issue 6 item 6 in a real browser: two sessions at once share no chat, key or result."""

from __future__ import annotations

import json

from browser_support import (
    CONTEXT_OPTIONS,
    COUNT_MESSAGES,
    EXCEPTION,
    choose,
    combobox,
    metric_value,
    open_app,
    paste_chat,
    pick_radio,
    rerun_after,
)
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from ctxlab.strategies import get_strategy_class

KEY = "sk-proj-BROWSERTEST" + "SessionAOnly7Hq2Wx9Lp4Zc"
MARKER = "SESSION-A-PRIVATE-MARKER"
CHAT_A = [
    {"role": "system", "content": f"You are a test assistant. {MARKER}"},
    *[
        msg
        for i in range(6)
        for msg in (
            {"role": "user", "content": f"{MARKER} question {i}: " + "words " * 40},
            {"role": "assistant", "content": f"{MARKER} answer {i}: " + "reply " * 60},
        )
    ],
]


def _caption(page: Page) -> str:
    return " ".join(
        page.locator(
            "[data-testid='stSidebar'] [data-testid='stCaptionContainer']"
        ).all_inner_texts()
    )


def test_two_sessions_at_once_see_only_their_own_chat_key_and_results(
    streamlit_server: str, browser: Browser
) -> None:
    a_context = browser.new_context(viewport={"width": 1600, "height": 1000}, **CONTEXT_OPTIONS)
    a_context.add_init_script(COUNT_MESSAGES)
    b_context = browser.new_context(viewport={"width": 1600, "height": 1000}, **CONTEXT_OPTIONS)
    b_context.add_init_script(COUNT_MESSAGES)
    try:
        a, b = a_context.new_page(), b_context.new_page()
        open_app(a, streamlit_server)
        open_app(b, streamlit_server, query="chat=support_function_calls&strategy=window-drop")

        paste_chat(a, json.dumps(CHAT_A))
        assert f"{len(CHAT_A)} messages" in _caption(a)
        choose(a, "Strategy", get_strategy_class("summarize").title)
        pick_radio(a, "OpenAI-compatible endpoint")
        key_box = a.get_by_label("API key", exact=True).first
        key_box.fill(KEY)
        rerun_after(a, lambda: key_box.press("Enter"))
        a_sent = metric_value(a, "Tokens sent")

        # B works meanwhile: a budget change, a rerun of its own.
        rerun_after(b, lambda: b.get_by_role("slider").first.press("PageDown"))
        for page in (a, b):
            expect(page.locator(EXCEPTION)).to_have_count(0)

        b_html = b.content()
        assert MARKER not in b_html and KEY not in b_html
        assert MARKER not in b.url and KEY not in b.url and KEY not in a.url
        expect(combobox(b, "Sample chat")).to_have_value(
            "Support: refund and replacement with function calls"
        )
        expect(combobox(b, "Strategy")).to_have_value(get_strategy_class("window-drop").title)
        assert b.get_by_label("API key", exact=True).count() == 0

        # A reloads its view after B's runs: still its own chat, strategy, key and result.
        _rerun_by_shortcut(a)
        assert f"{len(CHAT_A)} messages" in _caption(a)
        expect(combobox(a, "Strategy")).to_have_value(get_strategy_class("summarize").title)
        # the key left the password box for A's server-side session; A is told it is set
        expect(a.get_by_text("A key you entered is set for this session.")).to_be_visible()
        assert a.get_by_label("API key", exact=True).first.input_value() == ""
        assert b.get_by_text("A key you entered is set for this session.").count() == 0
        assert metric_value(a, "Tokens sent") == a_sent
        assert "support_function_calls" not in a.url
    finally:
        a_context.close()
        b_context.close()


def _rerun_by_shortcut(page: Page, attempts: int = 3) -> None:
    """Rerun the page's own session with Streamlit's "r" shortcut and wait for the run.

    Now and then a press starts no run at all (one test run in three to five on this machine;
    the cause was not found: the page is idle and the heading has the focus), so the press is
    repeated until a run follows. What the test checks is what A sees after its own rerun.
    """
    for attempt in range(attempts):
        page.locator("h1").first.click()
        try:
            rerun_after(page, lambda: page.keyboard.press("r"), timeout_ms=10_000)
            return
        except PlaywrightTimeoutError:
            if attempt == attempts - 1:
                raise
