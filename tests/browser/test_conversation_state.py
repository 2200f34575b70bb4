"""Issue 23 in a real browser, by clicking: the conversation is part of the state, and a newly
opened chat shows trimming with the derived budget explained.

The chats are real: the Claude Code session ``thinking_session.jsonl`` (two conversations: the
main thread, 15 messages, and a rewound branch, 12) and the Codex rollout, from
``tests/fixtures/formats`` (provenance there). Each is loaded through the sidebar's uploader.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from browser_support import (
    CONTEXT_OPTIONS,
    EXCEPTION,
    combobox,
    metric_value,
    open_app,
    pick_radio,
    rerun_after,
    serve_app,
    wait_for_app,
)
from playwright.sync_api import Browser, Page, expect

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
CLAUDE_CODE = FORMATS / "claude_code" / "thinking_session.jsonl"
CODEX = FORMATS / "codex" / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
PICKER = "Conversation (2 in this file)"
SECOND = "2. rewound:"
REPO = Path(__file__).resolve().parents[2]


def go_to(page: Page, name: str) -> None:
    """Click ``name`` in the sidebar's page list and wait for that page to finish."""
    link = page.locator("[data-testid='stSidebarNav'] a").filter(has_text=name).first
    rerun_after(page, link.click)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def upload(page: Page, path: Path) -> None:
    """Switch the sidebar to "Upload" and give the uploader ``path``, as a user picks a file."""
    radio = page.locator("[data-testid='stSidebar'] [data-testid='stRadio']").first
    if not radio.get_by_role("radio", name="Upload").is_checked():
        pick_radio(page, "Upload")
    chooser = page.locator("[data-testid='stSidebar'] input[type='file']").first
    rerun_after(page, lambda: chooser.set_input_files(str(path)))
    wait_for_app(page)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def chat_caption(page: Page) -> str:
    """The sidebar's line naming the chat: ``<name> · N messages · …``."""
    line = page.locator("[data-testid='stSidebar'] [data-testid='stCaptionContainer']").filter(
        has_text=re.compile(r"\d messages · ")
    )
    return line.first.inner_text()


def messages_in(page: Page) -> int:
    found = re.search(r"· ([\d,]+) messages ·", chat_caption(page))
    assert found, chat_caption(page)
    return int(found.group(1).replace(",", ""))


def test_the_picked_conversation_holds_across_pages_and_in_the_link(
    streamlit_server: str, page: Page, browser: Browser
) -> None:
    open_app(page, streamlit_server)
    upload(page, CLAUDE_CODE)
    assert messages_in(page) == 15  # the main thread first
    box = combobox(page, PICKER)
    expect(box).to_be_visible()
    box.click()
    option = page.get_by_role("option").filter(has_text=SECOND).first
    rerun_after(page, option.click)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    assert messages_in(page) == 12
    for name in ("Compare", "Replay", "Playground"):
        go_to(page, name)
        assert messages_in(page) == 12, name
        expect(combobox(page, PICKER)).to_have_value(re.compile(r"^2\. rewound"))
    # Tune's Apply switches pages by code (st.switch_page): the conversation and its picker stay,
    # and so they do on the next click in the page list (issue 23: it fell back to the first).
    go_to(page, "Tune")
    apply = page.get_by_role("button", name=re.compile(r"^Apply .* in the Playground$"))
    rerun_after(page, apply.first.click)
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Playground")).to_be_visible()
    assert messages_in(page) == 12
    expect(combobox(page, PICKER)).to_have_value(re.compile(r"^2\. rewound"))
    go_to(page, "Replay")
    assert messages_in(page) == 12
    go_to(page, "Playground")
    assert messages_in(page) == 12
    query = parse_qs(urlparse(page.url).query)
    assert query["conv"] == ["rewind-1"]
    assert query["upload"] == [CLAUDE_CODE.name]
    # Compare's link carries it too.
    go_to(page, "Compare")
    assert parse_qs(urlparse(page.url).query)["conv"] == ["rewind-1"]
    # The link, opened elsewhere, asks for the file and then opens conversation 2 of it.
    other = browser.new_page(**CONTEXT_OPTIONS)
    try:
        open_app(other, streamlit_server, query=urlparse(page.url).query)
        expect(other.get_by_text("which a link cannot carry")).to_be_visible()
        chooser = other.locator("[data-testid='stSidebar'] input[type='file']").first
        rerun_after(other, lambda: chooser.set_input_files(str(CLAUDE_CODE)))
        wait_for_app(other)
        assert messages_in(other) == 12
    finally:
        other.close()


def test_a_newly_uploaded_chat_opens_trimmed_with_the_budget_explained(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query="strategy=window-drop&model=gpt-4o")
    for path in (CLAUDE_CODE, CODEX):
        upload(page, path)
        caption = page.locator("[data-testid='stMain'] [data-testid='stCaptionContainer']").filter(
            has_text="change it in the sidebar"
        )
        expect(caption.first).to_be_visible()
        text = caption.first.inner_text()
        assert re.match(r"Budget [\d,]+ tokens: \d+% of this [\d,]+-token chat", text), text
        budget = int(re.search(r"Budget ([\d,]+)", text).group(1).replace(",", ""))  # type: ignore[union-attr]
        total = int(re.search(r"this ([\d,]+)-token", text).group(1).replace(",", ""))  # type: ignore[union-attr]
        assert budget < total
        assert metric_value(page, "Dropped") not in ("0", "")
        sent = int(metric_value(page, "Tokens sent").replace(",", ""))
        assert 0 < sent <= budget


def test_trim_last_on_the_codex_rollout_sends_more_than_the_system_prompt(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query="strategy=trim-last&model=gpt-4o")
    upload(page, CODEX)
    caption = page.locator("[data-testid='stMain'] [data-testid='stCaptionContainer']").filter(
        has_text="change it in the sidebar"
    )
    expect(caption.first).to_be_visible()
    assert metric_value(page, "Dropped") not in ("0", "")
    assert int(metric_value(page, "Kept").replace(",", "")) > 0


def test_a_first_request_to_a_page_url_runs_the_router_without_private_flags(
    browser: Browser, tmp_path: Path
) -> None:
    """A fresh server whose very first request opens /Learn: the page list is the router's
    (no "app" entry of the legacy pages/ mode) and the shared sidebar is drawn."""
    with serve_app(tmp_path / "server.log") as base_url:
        page = browser.new_page(**CONTEXT_OPTIONS)
        try:
            open_app(page, base_url, "/Learn")
            expect(page.locator(EXCEPTION)).to_have_count(0)
            names = page.locator("[data-testid='stSidebarNav'] a").all_inner_texts()
            assert [n.split()[-1] for n in names] == [  # each after its icon
                "Playground",
                "Compare",
                "Replay",
                "Tune",
                "Learn",
                "Fleet",
            ]
            expect(
                page.locator("[data-testid='stSidebar']").get_by_text("Chat", exact=True)
            ).to_be_visible()
            assert urlparse(page.url).path.rstrip("/").endswith("Learn")
        finally:
            page.close()
    assert "Traceback" not in (tmp_path / "server.log").read_text(encoding="utf-8")
