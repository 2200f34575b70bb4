"""Issue 11 in a real browser: the natural click path tells the same truth as a shared link.

Every test here moves between pages by clicking the page list in the sidebar, as a user does,
never by opening a page URL (except where a test compares the clicked page with the same page
opened by URL).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from browser_support import (
    EXCEPTION,
    choose,
    metric_value,
    open_app,
    rerun_after,
    slider_input,
    slider_value,
    wait_for_app,
)
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

PAGES = ("Compare", "Replay", "Tune", "Learn", "Fleet", "Playground")
QUERY = "chat=coding_agent_session&model=gpt-4o&strategy=window-drop&budget=12000"
HEADLINE = ("Tokens sent", "Saved", "Messages sent", "Kept", "Dropped", "Pinned")


def go_to(page: Page, name: str) -> None:
    """Click ``name`` in the sidebar's page list and wait for that page to finish."""
    link = page.locator("[data-testid='stSidebarNav'] a").filter(has_text=name).first
    rerun_after(page, link.click)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def query_of(page: Page) -> dict[str, str]:
    """The shared set-up in the URL (a page's own entries, Compare's ``cmp…``, left out)."""
    query = parse_qs(urlparse(page.url).query)
    return {k: v[0] for k, v in query.items() if not k.startswith("cmp")}


def headline(page: Page) -> dict[str, str]:
    return {label: metric_value(page, label) for label in HEADLINE}


def keep_system_toggle(page: Page) -> None:
    toggle = page.locator("[data-testid='stSidebar'] label").filter(
        has_text="Keep the system prompt"
    )
    rerun_after(page, toggle.first.click)


def test_settings_and_numbers_survive_a_tour_of_every_page(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query=QUERY)
    keep_system_toggle(page)  # a setting changed by a click, not by the URL
    settings, numbers = query_of(page), headline(page)
    assert settings["budget"] == "12000" and settings["keep_system"] == "true"
    assert numbers["Pinned"] == "1"
    for name in PAGES:
        go_to(page, name)
        assert query_of(page) == settings, f"the settings changed on the way to {name}"
    assert headline(page) == numbers
    expect(page.get_by_role("heading", name="Playground")).to_be_visible()


def test_a_clicked_replay_shows_what_the_same_link_shows(streamlit_server: str, page: Page) -> None:
    open_app(page, streamlit_server, query=QUERY)
    keep_system_toggle(page)
    go_to(page, "Tune")  # a detour first: the state must survive more than one switch
    go_to(page, "Replay")
    labels = ("Calls", "Input tokens, all calls", "Cost, trimmed", "Summarizer calls")
    clicked = {label: metric_value(page, label) for label in labels}
    link = page.url
    assert "/Replay?" in link and "keep_system=true" in link
    fresh = page.context.new_page()
    try:
        fresh.goto(link, wait_until="domcontentloaded")
        wait_for_app(fresh)
        assert {label: metric_value(fresh, label) for label in labels} == clicked
    finally:
        fresh.close()


def test_no_deploy_button_and_people_names_for_pages(streamlit_server: str, page: Page) -> None:
    open_app(page, streamlit_server, query=QUERY)
    names = page.locator("[data-testid='stSidebarNav'] a").all_inner_texts()
    assert [n.split("\n")[-1].strip() for n in names] == list(("Playground", *PAGES[:-1]))
    expect(page.get_by_role("button", name="Deploy")).to_have_count(0)
    assert page.title() == "Playground"


def test_the_decision_filter_shows_every_decision_after_a_strategy_switch(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query=QUERY)
    table_filter = page.locator("[data-testid='stMultiSelect']").filter(has_text="Show decisions")
    remove = table_filter.get_by_role("button", name="Remove dropped")
    rerun_after(page, remove.first.click)
    expect(page.get_by_text("of 156 messages").first).not_to_have_text("156 of 156 messages")
    choose(page, "Strategy", "Summarize (compaction)")
    expect(page.get_by_text("156 of 156 messages").first).to_be_visible()
    for decision in ("kept", "summarized", "pinned"):
        expect(table_filter.get_by_role("button", name=f"Remove {decision}").first).to_be_attached()


def test_a_clicked_tune_recommends_what_the_same_link_recommends(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query=QUERY)
    keep_system_toggle(page)
    go_to(page, "Replay")
    go_to(page, "Tune")
    alert = "[data-testid='stAlertContainer']"
    clicked = page.locator(alert).filter(has_text="window").first.inner_text()
    link = page.url
    assert "/Tune?" in link and "keep_system=true" in link
    fresh = page.context.new_page()
    try:
        fresh.goto(link, wait_until="domcontentloaded")
        wait_for_app(fresh)
        assert fresh.locator(alert).filter(has_text="window").first.inner_text() == clicked
    finally:
        fresh.close()


def test_a_scrubber_step_moves_the_turn_and_keeps_the_session_figures(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query=QUERY)
    go_to(page, "Replay")
    labels = ("Calls", "Input tokens, all calls", "Cost, trimmed")
    before = {label: metric_value(page, label) for label in labels}
    calls = int(before["Calls"].replace(",", ""))
    expect(page.get_by_role("heading", name=f"Context at turn {calls}")).to_be_visible()
    scrubber = slider_input(page, "Turn")
    tokens_chart = page.locator(".js-plotly-plot").filter(has_text="Tokens sent per call")
    line_paths = tokens_chart.locator(".shapelayer path")
    for turn in (calls - 1, calls - 2):
        shapes_before = line_paths.evaluate_all("ps => ps.map(p => p.getAttribute('d'))")
        # The scrubber and what moves with it are one fragment: a step reruns that part alone.
        step_back(page, scrubber, turn)
        expect(page.get_by_role("heading", name=f"Context at turn {turn}")).to_be_visible()
        # the chart's series keep their revision; its turn line is redrawn where the turn is
        shapes_after = line_paths.evaluate_all("ps => ps.map(p => p.getAttribute('d'))")
        assert len(shapes_after) == len(shapes_before) and shapes_after != shapes_before
        strip = page.locator("figure").filter(has_text=f"Round map at turn {turn}")
        expect(strip).to_have_count(1)
        # the blocks survive the page's HTML sanitizer and are drawn, each with its tooltip
        block = strip.locator("[data-tokens]").last
        expect(block).to_be_visible()
        assert (block.bounding_box() or {"width": 0})["width"] > 0
        assert (block.get_attribute("title") or "").startswith("round")
        expect(page.locator(EXCEPTION)).to_have_count(0)
    assert {label: metric_value(page, label) for label in labels} == before
    assert "/Replay?" in page.url and "budget=12000" in page.url


def step_back(page: Page, scrubber: Locator, turn: int) -> None:
    """Press the left arrow on the focused scrubber until it shows ``turn`` and its run ended.

    A key press now and then starts no run in headless Chromium (see test_sessions): when the
    scrubber has not moved after a few seconds, press again; when it has, only wait.
    """
    for _ in range(3):
        scrubber.focus()
        try:
            rerun_after(page, lambda: scrubber.press("ArrowLeft"), timeout_ms=5_000)
        except PlaywrightTimeoutError:
            if slider_value(page, "Turn") != str(turn + 1):
                wait_for_app(page)
        if slider_value(page, "Turn") == str(turn):
            wait_for_app(page)
            return
    raise AssertionError(f"the scrubber never reached turn {turn}")
