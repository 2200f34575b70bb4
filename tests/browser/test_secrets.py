"""Issue 6 item 4 in a real browser: an API key typed in the sidebar never leaves the password box.

The key is really used (the fake OpenAI server receives it, checked by its sha256), and then
it must appear in none of: the URL, the page HTML, every download, the server log. A 401 whose
message echoes the key (as careless servers do) is part of the run, so the error path is
covered too.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from browser_support import (
    EXCEPTION,
    open_app,
    open_tab,
    pick_radio,
    rerun_after,
    wait_for_app,
)
from playwright.sync_api import Page, expect

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

pytest_plugins = ["fake_openai"]

KEY = "sk-proj-BROWSERTEST" + "Zq8Xw3Lm5Nv7Bc9Df1Gh2Jk4Ps6Rt0Uy"
QUERY = "chat=secrets_in_tool_outputs&strategy=summarize&trigger_token_budget=0"


def _enter(page: Page, label: str, text: str) -> None:
    box = page.get_by_label(label, exact=True).first
    box.fill(text)
    rerun_after(page, lambda: box.press("Enter"))


def _assert_not_in_html(page: Page) -> None:
    """The key is nowhere in the page: not in the HTML (the password box is emptied as soon as
    the key is entered), not in any text."""
    assert KEY not in page.content()
    assert KEY not in page.inner_text("body")
    boxes = page.locator("input[type='password']")
    assert all(boxes.nth(i).input_value() != KEY for i in range(boxes.count()))


def _downloads(page: Page) -> dict[str, str]:
    """Click every download button of the page; file name -> content."""
    files: dict[str, str] = {}
    buttons = page.locator("[data-testid='stDownloadButton'] button")
    for i in range(buttons.count()):
        if not buttons.nth(i).is_visible():  # in a closed tab
            continue
        with page.expect_download() as info:
            buttons.nth(i).click()
        download = info.value
        files[download.suggested_filename] = Path(download.path()).read_text(encoding="utf-8")
        # The app's download buttons change nothing (``on_click="ignore"``): no rerun follows a
        # click (the rerun watch was satisfied by the deferred file's own websocket reply).
        # Should one ever follow, the click sent it before the file came, and this waits for it.
        wait_for_app(page)
    return files


def test_a_typed_api_key_reaches_the_server_but_no_url_page_download_or_log(
    streamlit_server: str, page: Page, streamlit_log: Path, fake_openai: FakeOpenAI
) -> None:
    open_app(page, streamlit_server, query=QUERY)
    pick_radio(page, "OpenAI-compatible endpoint")
    _enter(page, "Base URL", fake_openai.base_url)
    _enter(page, "API key", KEY)

    fake_openai.script("401-echo")
    run_button = page.get_by_role("button", name="Run summarizer")
    rerun_after(page, run_button.click)
    expect(page.locator("[data-testid='stAlertContentError']").first).to_be_visible()
    _assert_not_in_html(page)

    rerun_after(page, page.get_by_role("button", name="Run summarizer").click)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    sent = fake_openai.chat_requests()
    assert len(sent) >= 2, "the key was used against the endpoint"
    expected = hashlib.sha256(f"Bearer {KEY}".encode()).hexdigest()
    assert all(r.auth_sha256 == expected for r in sent)
    expect(page.locator("[data-testid='stAlertContentError']")).to_have_count(0)
    expect(page.get_by_text("Preview: the context below")).to_have_count(0)

    files = _downloads(page)
    assert {"Context JSON", "Decisions CSV"} <= {
        t.strip() for t in page.locator("[data-testid='stDownloadButton']").all_inner_texts()
    }
    assert len(files) >= 3
    for name, text in files.items():
        assert KEY not in text, f"the key is in the download {name}"
    assert KEY not in page.url
    _assert_not_in_html(page)
    for path in ("/Compare", "/Replay"):
        open_app(page, streamlit_server, path)
        assert KEY not in page.url
        _assert_not_in_html(page)
    log = streamlit_log.read_text(encoding="utf-8", errors="replace")
    assert KEY not in log
    assert KEY[:24] not in log  # not even a prefix


def test_the_secrets_sample_shows_masked_spans_per_rule(streamlit_server: str, page: Page) -> None:
    open_app(page, streamlit_server, query=QUERY)
    panel = open_tab(page, "Summarizer request")
    expect(panel.get_by_text("Masked spans per rule")).to_be_visible()
    expect(panel.get_by_text("[REDACTED").first).to_be_attached()
