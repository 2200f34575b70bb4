"""Issue 4 in a real browser: the round map, the budget slider, shareable URLs, screenshots.

Also issue 5 item 5: the time from a key press on the budget slider to the updated page on the
10k-message sample, printed (no timing assertion; speed is reported, not tested).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_support import (
    CONTEXT_OPTIONS,
    COUNT_MESSAGES,
    EXCEPTION,
    combobox,
    metric_value,
    open_app,
    rerun_after,
    slider_input,
    slider_value,
)
from playwright.sync_api import Browser, Page, expect

from ctxlab.strategies import get_strategy_class

ROUND_MAP_TITLE = "Round map (width = tokens"
BUDGET = "Token budget (log scale)"
"""The budget's log slider (issue 11: the number box beside it is labelled "Token budget")."""
SCREENSHOT_VIEWPORT = {"width": 1600, "height": 1100}


def _kept(page: Page) -> int:
    return int(metric_value(page, "Kept").replace(",", ""))


def test_playground_renders_the_round_map_as_a_plotly_chart(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query="chat=coding_agent_session&strategy=window-drop")
    chart = page.locator("[data-testid='stPlotlyChart']").filter(has_text=ROUND_MAP_TITLE)
    expect(chart.first).to_be_visible()
    expect(chart.first.locator(".js-plotly-plot .main-svg").first).to_be_attached()
    assert chart.first.locator("g.trace").count() >= 1
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_arrow_keys_on_the_budget_slider_change_the_kept_count(
    streamlit_server: str, page: Page
) -> None:
    open_app(page, streamlit_server, query="chat=support_function_calls&strategy=window-drop")
    kept = _kept(page)
    budget = slider_value(page, BUDGET)
    slider = slider_input(page, BUDGET)
    slider.focus()
    for _ in range(10):  # from the suggested budget down towards the minimum
        rerun_after(page, lambda: slider.press("ArrowLeft"))
        if _kept(page) != kept:
            break
    assert slider_value(page, BUDGET) != budget
    assert _kept(page) < kept
    lowered = _kept(page)
    slider.focus()
    rerun_after(page, lambda: slider.press("End"))
    assert _kept(page) > lowered
    expect(page.locator(EXCEPTION)).to_have_count(0)
    assert f"budget={slider_value(page, BUDGET).replace(',', '')}" in page.url


def test_a_shared_url_restores_chat_strategy_budget_and_metrics(
    streamlit_server: str, page: Page
) -> None:
    query = "chat=support_function_calls&strategy=window-drop&model=gpt-4o&budget=1001"
    open_app(page, streamlit_server, query=query)
    expect(combobox(page, "Sample chat")).to_have_value(
        "Support: refund and replacement with function calls"
    )
    expect(combobox(page, "Strategy")).to_have_value(get_strategy_class("window-drop").title)
    expect(combobox(page, "Model / tokenizer")).to_have_value("OpenAI · gpt-4o · 128k window")
    assert slider_value(page, BUDGET) == "1,001"
    expect(page.get_by_label("Token budget", exact=True).first).to_have_value("1001")
    restored_kept, restored_sent = _kept(page), metric_value(page, "Tokens sent")

    # The same state reached by hand gives the same metrics.
    other = page.context.new_page()
    try:
        open_app(other, streamlit_server, query=query)
        assert (_kept(other), metric_value(other, "Tokens sent")) == (restored_kept, restored_sent)
    finally:
        other.close()
    assert int(restored_sent.replace(",", "")) <= 1001
    assert "budget=1001" in page.url


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/", "playground"),
        ("/Compare", "compare"),
        ("/Replay", "replay"),
        ("/Tune", "tune"),
        ("/Learn", "learn"),
        ("/Fleet", "fleet"),
    ],
)
def test_each_page_renders_and_a_screenshot_of_it_can_be_taken(
    streamlit_server: str, browser: Browser, path: str, name: str, tmp_path: Path
) -> None:
    # The README's pictures in docs/ are written by scripts/docs_screenshots.py, never by a
    # test (a test run leaves the checkout clean); this takes the same picture into tmp_path.
    context = browser.new_context(viewport=SCREENSHOT_VIEWPORT, **CONTEXT_OPTIONS)  # type: ignore[arg-type]
    context.add_init_script(COUNT_MESSAGES)
    page = context.new_page()
    try:
        open_app(page, streamlit_server, path, query="chat=coding_agent_session")
        expect(page.locator(EXCEPTION)).to_have_count(0)
        shot = tmp_path / f"{name}.png"
        page.screenshot(path=str(shot))
        assert shot.read_bytes().startswith(b"\x89PNG")
    finally:
        context.close()


def test_key_press_to_updated_round_map_on_the_10k_sample_is_reported(
    streamlit_server: str, page: Page
) -> None:
    from ctxlab.samples import ensure_generated

    ensure_generated("large_agent_10k")
    open_app(page, streamlit_server, query="chat=large_agent_10k&strategy=window-drop")
    expect(page.locator(EXCEPTION)).to_have_count(0)
    slider = slider_input(page, BUDGET)
    figures = []
    for i in range(5):
        before = metric_value(page, "Tokens sent")
        key = "PageDown" if i % 2 == 0 else "PageUp"  # a tenth of the range: the cut moves
        slider.focus()
        start = time.perf_counter()
        rerun_after(page, lambda key=key: slider.press(key))  # type: ignore[misc]
        expect(page.locator("[data-testid='stMetricValue']").first).not_to_have_text(before)
        figures.append(time.perf_counter() - start)
    print(
        "\n10k sample, key press -> updated metrics and round map (s): "
        + ", ".join(f"{t:.2f}" for t in figures)
    )
    expect(page.locator(EXCEPTION)).to_have_count(0)
