"""The report a user downloads opens in another browser page with no network request at all."""

from __future__ import annotations

import json
from pathlib import Path

from browser_support import CONTEXT_OPTIONS, COUNT_MESSAGES, EXCEPTION, open_app
from playwright.sync_api import Browser, Page, expect

HOSTILE = Path(__file__).resolve().parents[2] / "sample_chats" / "hostile_content.json"


def test_downloaded_report_opens_offline_with_inert_chat_text(
    streamlit_server: str, page: Page, browser: Browser, tmp_path: Path
) -> None:
    open_app(page, streamlit_server, query="chat=hostile_content&strategy=window-drop")
    expect(page.locator(EXCEPTION)).to_have_count(0)
    button = page.get_by_role("button", name="Download report")
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=120_000) as info:
        button.click()
    target = tmp_path / "report.html"
    info.value.save_as(target)
    assert target.stat().st_size > 1_000_000  # plotly.js is inside

    context = browser.new_context(viewport={"width": 1400, "height": 1000}, **CONTEXT_OPTIONS)

    context.add_init_script(COUNT_MESSAGES)
    try:
        viewer = context.new_page()
        requests: list[str] = []
        dialogs: list[str] = []
        viewer.on("request", lambda r: requests.append(r.url))
        viewer.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        viewer.goto(target.as_uri(), wait_until="load")
        # The charts draw from the inlined plotly.js (SVG made in the page).
        expect(viewer.locator(".js-plotly-plot .main-svg").first).to_be_attached(timeout=30_000)
        viewer.wait_for_timeout(1_000)  # anything deferred (images, fonts, beacons) would fire
        assert requests == [target.as_uri()], requests
        assert dialogs == []
        raw = json.loads(HOSTILE.read_text(encoding="utf-8"))["messages"]
        probe = next(m["content"] for m in raw if m["content"].startswith("<script>"))
        expect(viewer.get_by_text(probe.split(" Can")[0]).first).to_be_visible()
        for message in raw[:3]:
            expect(viewer.get_by_text(message["id"], exact=True).first).to_be_attached()
        assert viewer.title().startswith("ctxlab report")
    finally:
        context.close()
