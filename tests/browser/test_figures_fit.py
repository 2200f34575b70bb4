"""Issue 23 in a real browser: every figure stays readable at the narrowest column the app uses
(Compare with four configurations in a 1280x900 window) and on a projector (1920x1080).

A user uploads a real Claude Code session through the sidebar and clicks through Playground
(with its Context chart), Compare with four configurations, Replay, Tune and Fleet, then picks
a sample; on every page no two texts of one figure overlap and no text sticks out of its
chart or strip (:mod:`figure_text` measures each ``svg text`` of every Plotly chart and each
label of the HTML round-map strip).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import (
    CONTEXT_OPTIONS,
    COUNT_MESSAGES,
    EXCEPTION,
    open_app,
    open_tab,
    pick_radio,
    rerun_after,
    wait_for_app,
)
from figure_text import measure, text_problems
from playwright.sync_api import Browser, Page, expect

REPO = Path(__file__).resolve().parents[2]
CLAUDE_CODE = REPO / "tests" / "fixtures" / "formats" / "claude_code" / "thinking_session.jsonl"
VIEWPORTS = {"narrow": (1280, 900), "projector": (1920, 1080)}


@pytest.fixture(params=list(VIEWPORTS))
def sized_page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    width, height = VIEWPORTS[request.param]
    context = browser.new_context(viewport={"width": width, "height": height}, **CONTEXT_OPTIONS)
    context.add_init_script(COUNT_MESSAGES)
    try:
        yield context.new_page()
    finally:
        context.close()


def go_to(page: Page, name: str) -> None:
    link = page.locator("[data-testid='stSidebarNav'] a").filter(has_text=name).first
    rerun_after(page, link.click)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def check(page: Page, where: str, problems: list[str], *, least: int = 1) -> None:
    """Measure every figure on the page; there must be at least ``least`` of them."""
    page.wait_for_timeout(300)  # Plotly lays out its texts after Streamlit renders the chart
    figures = measure(page)
    assert len(figures) >= least, f"{where}: {len(figures)} figure(s) found"
    problems.extend(f"{where}: {p}" for p in text_problems(figures))


def test_no_figure_text_overlaps_or_is_clipped_on_any_page(
    streamlit_server: str, sized_page: Page
) -> None:
    page = sized_page
    problems: list[str] = []
    open_app(page, streamlit_server)
    pick_radio(page, "Upload")
    upload = page.locator("[data-testid='stSidebar'] input[type=file]")
    rerun_after(page, lambda: upload.set_input_files(str(CLAUDE_CODE)))
    wait_for_app(page)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    check(page, "Playground", problems)
    open_tab(page, "Context chart")
    check(page, "Playground, Context chart", problems, least=2)
    go_to(page, "Compare")
    count = page.get_by_label("Configurations")
    rerun_after(page, lambda: (count.fill("4"), count.press("Enter")))
    wait_for_app(page)
    expect(page.locator(".js-plotly-plot")).to_have_count(4)
    check(page, "Compare x4", problems, least=4)
    go_to(page, "Replay")
    check(page, "Replay", problems)
    go_to(page, "Tune")
    check(page, "Tune", problems)
    go_to(page, "Fleet")
    check(page, "Fleet", problems, least=4)
    go_to(page, "Playground")
    pick_radio(page, "Sample")
    wait_for_app(page)
    check(page, "Playground, sample", problems)
    # a sample the sidebar's budget trims: lines inside the strips, several legend entries
    go_to(page, "Compare")
    expect(page.locator(".js-plotly-plot")).to_have_count(4)
    check(page, "Compare x4, sample", problems, least=4)
    assert not problems, "\n".join(problems)


def test_the_reports_short_cells_never_break_and_tables_stay_on_the_page(
    browser: Browser, tmp_path: Path
) -> None:
    import json

    import pandas as pd

    from ctxlab import load_chat
    from ctxlab.strategies import build_strategy
    from ctxlab.tokens import get_counter
    from ctxlab.ui import report

    counter = get_counter("gpt-4o")
    messages = load_chat(REPO / "sample_chats" / "coding_agent_session.json")
    counted = counter.counted(messages)
    configs = []
    for name, values in (("window-drop", {"budget": 9000}), ("sliding-window", {"window": 30})):
        strategy = build_strategy(name, values)
        configs.append((name, strategy, strategy.apply(messages, counter)))
    metrics = pd.DataFrame(
        {
            f"a long metric column name {k}": [f"${0.0168 * (k + 1):.4f}", "$0.0001"]
            for k in range(12)
        }
    )
    html = report.report_html(
        report.compare_report("coding", "gpt-4o", counted, configs, metrics, conversation="1")
    )
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    context = browser.new_context(viewport={"width": 900, "height": 900}, **CONTEXT_OPTIONS)
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        broken = page.evaluate(
            """() => [...document.querySelectorAll("table.data td:not(.t), table.data th")]
                .filter((c) => {
                  const r = document.createRange(); r.selectNodeContents(c);
                  const tops = new Set([...r.getClientRects()].map((b) => Math.round(b.top)));
                  return tops.size > 1;  // the text runs on more than one line
                }).map((c) => c.textContent)"""
        )
        assert broken == [], json.dumps(broken[:10])
        # a wide table scrolls in its own box: the page itself is never wider than the window
        assert page.evaluate("document.documentElement.scrollWidth") <= 900
        assert "conversation" in page.locator("p.meta").inner_text()
    finally:
        context.close()
