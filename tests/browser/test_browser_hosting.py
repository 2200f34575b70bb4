"""Issue 22, the key rule in a real browser: the server's key never reaches a visitor's endpoint.

The app runs with a marker key in its environment (``OPENAI_API_KEY``: the hosted profile) and
private addresses allowed (``CTXLAB_ALLOW_PRIVATE_ENDPOINTS=1``), so the only thing standing
between the marker and the stand-in endpoint on 127.0.0.1 is the key rule; the stand-in is not
among the key endpoints (``CTXLAB_KEY_ENDPOINTS`` is unset: only the official API). Clicking
through the sidebar as a visitor would: the stand-in never sees the marker in any header or
body, and with the visitor's own key it sees exactly that key. A pasted path is text: the same
error whether the path is a chat file, a folder or nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser_support import EXCEPTION, open_app, paste_chat, pick_radio, rerun_after, serve_app
from playwright.sync_api import Page, expect

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

pytest_plugins = ["fake_openai"]

REPO = Path(__file__).resolve().parents[2]
MARKER = "sk-proj-OPERATORMARKER" + "Zq8Xw3Lm5Nv7Bc9Df1Gh2Jk4Ps6"
VISITOR = "sk-proj-VISITORKEY" + "Pq7Rt0Uy2Wx4Za6Bc8De0Fg"
QUERY = "chat=support_function_calls&strategy=summarize&trigger_token_budget=0"
ERROR = "[data-testid='stAlertContentError']"


@pytest.fixture(scope="module")
def hosted_server() -> Iterator[str]:
    """The app with the operator's (marker) key in its environment."""
    log = REPO / "test-artifacts" / "streamlit-hosted.log"
    log.parent.mkdir(exist_ok=True)
    env = {
        "OPENAI_API_KEY": MARKER,
        "CTXLAB_ALLOW_PRIVATE_ENDPOINTS": "1",
        "CTXLAB_KEY_ENDPOINTS": "",
        "CTXLAB_PROFILE": "",
        "OPENAI_BASE_URL": "",
    }
    with serve_app(log, env) as base_url:
        yield base_url


def _enter(page: Page, label: str, text: str) -> None:
    box = page.get_by_label(label, exact=True).first
    box.fill(text)
    rerun_after(page, lambda: box.press("Enter"))


def _run(page: Page) -> None:
    rerun_after(page, page.get_by_role("button", name="Run summarizer").click)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def _marker_seen(fake: FakeOpenAI) -> bool:
    marker_auth = hashlib.sha256(f"Bearer {MARKER}".encode()).hexdigest()
    return any(
        r.auth_sha256 == marker_auth or MARKER in repr(r.headers) or MARKER in repr(r.body)
        for r in fake.requests
    )


def test_the_servers_key_never_reaches_a_visitors_endpoint(
    hosted_server: str, page: Page, fake_openai: FakeOpenAI
) -> None:
    open_app(page, hosted_server, query=QUERY)
    pick_radio(page, "OpenAI-compatible endpoint")
    _enter(page, "Base URL", fake_openai.base_url)
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(sidebar.get_by_text("bring your own key for this endpoint")).to_be_visible()

    _run(page)
    expect(page.locator(ERROR).filter(has_text="nothing was changed")).to_be_visible()
    assert fake_openai.requests == [], "nothing is sent without the visitor's key"
    assert MARKER not in page.content()

    _enter(page, "API key", VISITOR)
    expect(sidebar.get_by_text("Key: your key")).to_be_visible()
    _run(page)
    expect(page.locator(ERROR)).to_have_count(0)
    sent = fake_openai.chat_requests()
    assert sent, "the visitor's key was used against their endpoint"
    visitor_auth = hashlib.sha256(f"Bearer {VISITOR}".encode()).hexdigest()
    assert all(r.auth_sha256 == visitor_auth for r in fake_openai.requests)
    assert not _marker_seen(fake_openai)
    assert MARKER not in page.content() and VISITOR not in page.content()


def test_a_pasted_path_is_only_text(hosted_server: str, page: Page, tmp_path: Path) -> None:
    chat_file = REPO / "sample_chats" / "support_function_calls.json"
    shown = {}
    for text in (str(chat_file), str(REPO / "sample_chats"), str(tmp_path / "nothing.json")):
        open_app(page, hosted_server)
        paste_chat(page, text)
        error = page.locator("[data-testid='stSidebar'] " + ERROR).first
        expect(error).to_be_visible()
        shown[text] = error.inner_text()
    assert len(set(shown.values())) == 1, shown
    assert "invalid JSON" in next(iter(shown.values()))
