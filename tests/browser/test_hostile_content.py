"""Issue 6 item 5 in a real browser: hostile chat content is inert text; nothing leaves the machine.

Every test page fails on a JavaScript dialog (``alert``), records every request it makes, and
finally checks that the flags the planted scripts would set are undefined, that no element the
content describes (``<img onerror>``, ``<iframe>``, ``<svg onload>``) was created, and that every
request went to the app itself (127.0.0.1 / localhost) or to ``data:`` / ``blob:`` URLs.
"""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from browser_support import (
    EXCEPTION,
    combobox,
    open_app,
    open_tab,
    paste_chat,
    rerun_after,
)
from playwright.sync_api import Dialog, Page, Request, expect

REPO = Path(__file__).resolve().parents[2]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
PLANTED = [
    {"role": "system", "content": "<script>window.__xss = 1; alert('xss')</script>"},
    {
        "role": "user",
        "content": '<img src=x onerror="window.__xss_img = 1; alert(2)"> '
        '<svg onload="window.__xss_svg = 1"></svg> ![p](http://example.invalid/p.png?paste) '
        "[go](javascript:window.__xss_link=1) pass\u200bword invoice_\u202egpj.exe",
    },
    {
        "role": "assistant",
        "content": '<iframe src="http://example.invalid/frame"></iframe><style>body{display:none}'
        '</style><a href="javascript:window.__xss_a=1">x</a>',
    },
    {"role": "user", "content": "plain question"},
    {"role": "assistant", "content": "plain answer"},
]
FLAGS = ["__xss", "__xss_img", "__xss_svg", "__xss_link", "__xss_a"]


class Guard:
    """Records dialogs and requests of a page."""

    def __init__(self, page: Page) -> None:
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        page.on("dialog", self._dialog)
        page.on("request", self._request)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, request: Request) -> None:
        self.requests.append(request.url)

    def foreign_requests(self) -> list[str]:
        out = []
        for url in self.requests:
            parsed = urlparse(url)
            if parsed.scheme in ("data", "blob"):
                continue
            if parsed.scheme in ("http", "https", "ws", "wss") and parsed.hostname in LOCAL_HOSTS:
                continue
            out.append(url)
        return out


@pytest.fixture
def guarded(page: Page) -> Iterator[tuple[Page, Guard]]:
    guard = Guard(page)
    yield page, guard
    assert guard.dialogs == [], f"a script ran and opened a dialog: {guard.dialogs}"
    assert guard.foreign_requests() == [], "requests left the machine"


def _assert_inert(page: Page) -> None:
    for flag in FLAGS:
        assert page.evaluate(f"typeof window.{flag}") == "undefined", f"{flag} was set"
    assert "pwned" not in page.title()
    for selector in ("img[onerror]", "svg[onload]", "iframe", "a[href^='javascript:']"):
        assert page.locator(f"[data-testid='stApp'] {selector}").count() == 0, selector
    assert page.locator("[data-testid='stApp'] img[src*='example.invalid']").count() == 0
    body = page.inner_text("body")
    assert "\u202e" not in body and "\u200b" not in body
    expect(page.locator(EXCEPTION)).to_have_count(0)


def _read_every_message(page: Page) -> list[str]:
    """Step the message reader through every message; the code block text of each."""
    box = page.locator(".st-key-reader-index input").first
    label = page.locator(".st-key-reader-index label").first.inner_text()
    last = int(label.split("–")[-1].rstrip(")"))
    shown = []
    for index in range(last + 1):
        if index:
            box.fill(str(index))
            rerun_after(page, lambda: box.press("Enter"))
        reader = page.get_by_role("tabpanel", name="Messages").locator("[data-testid='stCode']")
        reader = reader.first
        shown.append(reader.inner_text())
    return shown


def test_the_hostile_sample_is_inert_text_in_table_reader_transcript_and_json(
    streamlit_server: str, guarded: tuple[Page, Guard]
) -> None:
    page, _ = guarded
    open_app(page, streamlit_server, query="chat=hostile_content&strategy=window-drop")
    expect(combobox(page, "Sample chat")).to_have_value(
        "Hostile content: HTML, scripts, trackers, invisible characters"
    )
    texts = _read_every_message(page)
    joined = "\n".join(texts)
    assert "<script>alert(1)</script>" in joined  # shown literally, as text
    assert "![x](http://example.invalid/pixel.png)" in joined
    assert "\\u202e" in joined and "\\u200b" in joined  # invisible characters made visible
    for tab in ("Context chart", "Problems", "Facts", "Lineage", "Context JSON"):
        panel = open_tab(page, tab)
        _assert_inert(page)
    context_json = panel.locator("[data-testid='stCode']")
    expect(context_json.first).to_be_visible()
    assert "</textarea><textarea>" in context_json.first.inner_text()  # shown as text
    _assert_inert(page)

    # The summarizer transcript (summarize strategy, offline backend) shows the same content.
    open_app(page, streamlit_server, query="chat=hostile_content&strategy=summarize")
    panel = open_tab(page, "Summarizer request")
    expect(panel.get_by_text("Transcript").first).to_be_visible()
    # The highlighted transcript is the app's one HTML view: the markup in it is text.
    expect(panel.locator("[data-testid='stHtml'] pre").first).to_contain_text("<script>")
    # Hover every round-map block: hover labels are built from escaped previews.
    chart = page.locator("[data-testid='stPlotlyChart']").first
    for bar in chart.locator("g.point path").all()[:40]:
        box = bar.bounding_box()
        if box and box["width"] > 0:
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.wait_for_timeout(30)
    _assert_inert(page)


def test_a_pasted_chat_with_planted_scripts_runs_none_of_them(
    streamlit_server: str, guarded: tuple[Page, Guard]
) -> None:
    page, _ = guarded
    open_app(page, streamlit_server)
    paste_chat(page, json.dumps(PLANTED))
    expect(
        page.locator("[data-testid='stSidebar']").get_by_text("5 messages").first
    ).to_be_visible()
    texts = _read_every_message(page)
    assert any("<script>window.__xss = 1" in t for t in texts)
    assert any("<iframe" in t for t in texts)
    open_tab(page, "Context JSON")
    _assert_inert(page)


class _PixelServer(http.server.ThreadingHTTPServer):
    """A local web server standing in for the host of a planted image or link: it records every
    path a browser asks it for."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.paths.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.fixture
def pixel_server() -> Iterator[_PixelServer]:
    server = _PixelServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_keys_quoted_in_an_error_load_nothing_and_link_nowhere(
    streamlit_server: str, guarded: tuple[Page, Guard], pixel_server: _PixelServer
) -> None:
    """Issue 22: an unknown document's keys are listed in the error box as text; the image,
    link, HTML and bare URL among them make no request and no element."""
    page, _ = guarded
    host = f"127.0.0.1:{pixel_server.server_address[1]}"
    keys = [
        f"![p](http://{host}/pixel.png)",
        "[login](https://evil.example)",
        f"<img src=http://{host}/img.png onerror=alert(1)>",
        f"http://{host}/bare",
        ":red[x]",
        "$x$",
        ":material/home:",
    ]
    open_app(page, streamlit_server)
    paste_chat(page, json.dumps({key: 1 for key in keys}))
    error = page.locator("[data-testid='stSidebar'] [data-testid='stAlertContentError']").first
    expect(error).to_contain_text("not a chat")
    shown = error.inner_text()
    for key in keys:
        assert key in shown, key
    page.wait_for_timeout(1_000)  # time for an image or prefetch to go out, if one would
    assert pixel_server.paths == [], "the page fetched from the planted host"
    app = page.locator("[data-testid='stApp']")
    assert app.locator(f"img[src*='{host}'], a[href*='{host}']").count() == 0
    assert app.locator("a[href*='evil.example']").count() == 0
    assert error.locator("a, img, [data-testid='stIconMaterial'], .katex").count() == 0
    _assert_inert(page)


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, state = fields[1], fields[3]
            address, port_hex = local.split(":")
            if state == "0A" and int(port_hex, 16) == port:
                found.add(address)
    return found


def test_the_app_listens_on_loopback_only_by_default(streamlit_server: str) -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"
    port = urlparse(streamlit_server).port
    assert port is not None
    addresses = _listening_addresses(port)
    assert addresses, "the test server is listening"
    assert addresses == {"0100007F"}, f"listening on {addresses}, not only 127.0.0.1"


def test_the_config_alone_binds_a_plain_streamlit_run_to_loopback() -> None:
    """``streamlit run app.py`` without --server.address listens on 127.0.0.1 only."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    command = [sys.executable, "-m", "streamlit", "run", "app.py", f"--server.port={port}"]
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while not _listening_addresses(port) and time.monotonic() < deadline:
            assert process.poll() is None, "streamlit exited"
            time.sleep(0.2)
        assert _listening_addresses(port) == {"0100007F"}
    finally:
        process.terminate()
        process.wait(timeout=10)
