"""Real browser: a click on a round map block or a message table row selects the message the
inspector shows, on a real Claude Code session uploaded through the sidebar.

Plotly swallows plain element clicks (its drag layer), so the map is clicked with the mouse at
a block's bounding-box centre. The table is a glide-data-grid canvas: its rows are clicked at
computed coordinates (header and rows are Streamlit's default 35 px high; the row-selection
checkboxes are the first, narrow column), as Streamlit's own end-to-end tests do.
"""

from __future__ import annotations

import re
from pathlib import Path

from browser_support import (
    EXCEPTION,
    RERUN_DONE,
    arm_rerun_watch,
    open_app,
    open_tab,
    pick_radio,
    rerun_after,
    wait_for_app,
)
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from ctxlab.formats import load_chat
from ctxlab.model import Message

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "tests/fixtures/formats/claude_code/thinking_session.jsonl"
ROW_PX = 35
"""Height of the table's header and of each row (Streamlit's default row height)."""
MARKER_X = 18
"""Pixels from the table's left edge to the middle of the row-selection checkbox column."""


def session_messages() -> tuple[Message, ...]:
    """The fixture's first conversation as ctxlab reads it (the one the upload opens)."""
    return tuple(load_chat(SESSION))


def open_playground_with_the_session(page: Page, base_url: str) -> None:
    open_app(page, base_url)
    link = page.locator("[data-testid='stSidebarNav'] a").filter(has_text="Playground").first
    rerun_after(page, link.click)
    pick_radio(page, "Upload")
    uploader = page.locator("[data-testid='stSidebar'] input[type='file']").first
    rerun_after(page, lambda: uploader.set_input_files(SESSION))
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text(SESSION.name)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def inspector(page: Page) -> Locator:
    """The inspector's header line (``#index · id … · role · …``)."""
    panel = page.get_by_role("tabpanel", name="Messages", exact=True).first
    return panel.locator("[data-testid='stText']").filter(has_text=re.compile(r"^#\d+ · id ")).first


def assert_inspector_shows(page: Page, index: int, message: Message) -> None:
    expect(inspector(page)).to_have_text(
        re.compile(rf"^#{index} · id {re.escape(message.id)} · {message.role.value} · ")
    )
    panel = page.get_by_role("tabpanel", name="Messages", exact=True).first
    code = panel.locator("[data-testid='stCode']").first
    expect(code).to_contain_text(message.content.strip()[:40])


def test_a_click_on_a_round_map_block_shows_its_first_message_in_the_inspector(
    streamlit_server: str, page: Page
) -> None:
    messages = session_messages()
    open_playground_with_the_session(page, streamlit_server)
    open_tab(page, "Problems")  # a click opens the inspector's tab, whatever tab is open
    chart = page.locator("[data-testid='stPlotlyChart']").filter(has_text="Round map").first
    blocks = chart.locator("g.trace.bars g.point path")
    expect(blocks.first).to_be_visible()
    assert blocks.count() >= 3
    chosen = blocks.nth(2)
    chosen.scroll_into_view_if_needed()
    box = chosen.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)  # the hover names the block's messages
    hover = chart.locator(".hoverlayer")
    expect(hover).to_contain_text("messages ")
    found = re.search(r"messages (\d+)–(\d+)", hover.text_content() or "")
    assert found is not None
    first = int(found[1])
    assert first > 0  # not the message the inspector shows before any click
    rerun_after(page, lambda: page.mouse.click(x, y))
    expect(page.get_by_role("tab", name="Messages", exact=True).first).to_have_attribute(
        "aria-selected", "true"
    )
    assert_inspector_shows(page, first, messages[first])
    expect(page.locator(EXCEPTION)).to_have_count(0)


def message_table(page: Page) -> Locator:
    panel = page.get_by_role("tabpanel", name="Messages", exact=True).first
    table = panel.locator("[data-testid='stDataFrame']").first
    expect(table.locator("canvas").first).to_be_visible()
    table.scroll_into_view_if_needed()
    return table


def click_row(page: Page, table: Locator, row: int) -> None:
    """Tick row ``row`` (0 = the first row shown) in the row-selection column.

    Right after a sort by a header click the grid takes the first click on a row as focus
    only (seen in chromium 156, Streamlit 1.67): when that click selects nothing, click again.
    """
    box = table.bounding_box()
    assert box is not None
    x, y = box["x"] + MARKER_X, box["y"] + ROW_PX * (row + 1) + ROW_PX / 2
    arm_rerun_watch(page)
    page.mouse.click(x, y)
    try:
        page.wait_for_function(RERUN_DONE, timeout=5_000, polling=50)
    except PlaywrightTimeoutError:
        arm_rerun_watch(page)
        page.mouse.click(x, y)
        page.wait_for_function(RERUN_DONE, timeout=60_000, polling=50)
    wait_for_app(page)


def test_a_click_on_a_table_row_shows_that_message_even_when_the_table_is_sorted(
    streamlit_server: str, page: Page
) -> None:
    messages = session_messages()
    n = len(messages)
    open_playground_with_the_session(page, streamlit_server)
    table = message_table(page)
    click_row(page, table, 5)
    assert_inspector_shows(page, 5, messages[5])

    # Sort by the "index" column, newest first (two clicks on its header: ascending, then
    # descending); the sort happens in the browser, without a rerun.
    table = message_table(page)
    box = table.bounding_box()
    assert box is not None
    header = (box["x"] + MARKER_X * 2 + 30, box["y"] + ROW_PX / 2)
    page.mouse.click(*header)
    page.wait_for_timeout(300)
    page.mouse.click(*header)
    page.wait_for_timeout(300)
    wait_for_app(page)
    click_row(page, table, 2)  # the third row shown: message n - 3
    assert_inspector_shows(page, n - 3, messages[n - 3])
    expect(page.locator(EXCEPTION)).to_have_count(0)
