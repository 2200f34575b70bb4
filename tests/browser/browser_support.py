"""Helpers for the real-browser tests (Playwright driving Debian's chromium).

Import them in a browser test with ``from browser_support import open_app, wait_for_app``.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, Page, expect

from ctxlab.launch import server_environment

REPO = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
            return bool(response.status == 200 and response.read().strip() == b"ok")
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def serve_app(log_path: Path, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free local port, its output in ``log_path``, with ``env``
    added to this process's environment; yields the base URL once healthy, stops it after."""
    with serve_app_process(log_path, env) as (base_url, _pid):
        yield base_url


@contextlib.contextmanager
def serve_app_process(
    log_path: Path, env: Mapping[str, str] | None = None
) -> Iterator[tuple[str, int]]:
    """:func:`serve_app`, yielding the server's process id too (to read its memory)."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless=true",
        "--server.address=127.0.0.1",
        f"--server.port={port}",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
    ]
    # the server runs as `ctxlab app` and scripts/run_app.sh start it (ctxlab.launch)
    full_env = {**server_environment(), "PYTHONUNBUFFERED": "1", **(env or {})}
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=full_env
        )
        try:
            deadline = time.monotonic() + SERVER_START_TIMEOUT_S
            while not healthy(base_url):
                if process.poll() is not None:
                    raise RuntimeError(
                        f"streamlit exited with {process.returncode} before it was healthy; "
                        f"see {log_path}"
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"streamlit was not healthy after {SERVER_START_TIMEOUT_S:.0f} s; "
                        f"see {log_path}"
                    )
                time.sleep(0.2)
            yield base_url, process.pid
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


CONTEXT_OPTIONS: dict[str, Any] = {"reduced_motion": "reduce"}
"""Options for every browser context of these tests: with ``prefers-reduced-motion`` the app
draws no CSS animation (the running indicator, skeletons), so headless chromium composites no
frames for them; a page load then costs its GPU process 0.2 s of CPU instead of 2.2 s (measured
on the coding-agent sample on 2 cores). What the tests read is the same, animation or not."""

APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
"""The app element once Streamlit has finished running the script."""

SKELETON = "[data-testid='stSkeleton']"
"""Placeholders Streamlit shows until an element's lazily loaded frontend code has rendered;
on 2 cores they can outlive the script run by several seconds."""

EXCEPTION = "[data-testid='stException']"
"""The element Streamlit renders for an uncaught exception."""


def wait_for_app(page: Page, timeout_ms: float = 60_000) -> None:
    """Wait until the script has run to the end and every element has rendered.

    Use it after a page load or a widget change. The app's state goes ``initial`` ->
    ``running`` -> ``notRunning``, so waiting for ``notRunning`` never returns early on a load.
    """
    expect(page.locator(APP_IDLE)).to_be_attached(timeout=timeout_ms)
    # A rerun may have been queued by the last interaction: wait for the idle state to hold.
    page.wait_for_timeout(200)
    expect(page.locator(APP_IDLE)).to_be_attached(timeout=timeout_ms)
    expect(page.locator(SKELETON)).to_have_count(0, timeout=timeout_ms)


def open_app(
    page: Page, base_url: str, path: str = "/", query: str = "", timeout_ms: float = 60_000
) -> None:
    """Open ``path`` of the app (``query`` without the ``?``) and wait until it is idle (a
    failure guard of ``timeout_ms``: a large chat on a loaded machine needs a longer one)."""
    url = base_url.rstrip("/") + path + (f"?{query}" if query else "")
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page, timeout_ms)


SCRIPT_RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
"""The app element while the script runs."""


def metric_value(page: Page, label: str) -> str:
    """The displayed value of the ``st.metric`` whose label is exactly ``label``."""
    metric = page.locator("[data-testid='stMetric']").filter(
        has=page.locator("[data-testid='stMetricLabel']", has_text=label)
    )
    return metric.first.locator("[data-testid='stMetricValue']").inner_text().strip()


def slider_input(page: Page, label: str) -> Locator:
    """The keyboard-focusable range input of the slider labelled ``label``."""
    return page.locator(f"input[type='range'][aria-label='{label}']").first


def slider_value(page: Page, label: str) -> str:
    """The value a slider shows on its thumb."""
    slider = page.locator("[data-testid='stSlider']").filter(
        has=page.locator(f"input[aria-label='{label}']")
    )
    return slider.first.locator("[data-testid='stSliderThumbValue']").inner_text().strip()


COUNT_MESSAGES = """(() => {
  // Counts the messages the app's websocket receives: a run too short for the app to ever
  // render its "running" state (React batches the start and the end) still sends some.
  const Native = window.WebSocket;
  window.__ctxMsgs = 0;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => { window.__ctxMsgs += 1; });
    }
  };
})();"""
"""Init script for a browser context (``context.add_init_script``): see :data:`RERUN_DONE`."""

ARM_WATCH = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  window.__ctxRuns = 0;
  window.__ctxMsgsAtArm = window.__ctxMsgs || 0;
  if (window.__ctxObserver) window.__ctxObserver.disconnect();
  // A run that starts and ends between two observer callbacks shows only as the old value of
  // a record ("running"): reading the attribute now would miss it.
  window.__ctxObserver = new MutationObserver((records) => {
    for (const r of records) {
      if (r.oldValue === "running" || app.getAttribute("data-test-script-state") === "running") {
        window.__ctxRuns += 1;
      }
    }
  });
  window.__ctxObserver.observe(app, {
    attributes: true, attributeFilter: ["data-test-script-state"], attributeOldValue: true});
}"""
RERUN_DONE = """() => (window.__ctxRuns > 0 || (window.__ctxMsgs || 0) > window.__ctxMsgsAtArm)
  && document.querySelector("[data-testid='stApp']").getAttribute("data-test-script-state")
  === "notRunning"
"""
"""A run started after :func:`arm_rerun_watch` has ended: the app was seen running, or (on a
page with :data:`COUNT_MESSAGES`) the server sent something since; then the app is idle."""


def arm_rerun_watch(page: Page) -> None:
    """Start counting script runs; call it just before an interaction (see :func:`rerun_after`)."""
    page.evaluate(ARM_WATCH)


def wait_for_rerun(page: Page, timeout_ms: float = 60_000) -> None:
    """Wait until a run started after :func:`arm_rerun_watch` has finished, then for idle."""
    page.wait_for_function(RERUN_DONE, timeout=timeout_ms, polling=20)
    wait_for_app(page, timeout_ms)


def rerun_after(page: Page, action: Callable[[], object], timeout_ms: float = 60_000) -> None:
    """Do ``action`` (a click, a key press) and wait for the rerun it causes to finish."""
    arm_rerun_watch(page)
    action()
    wait_for_rerun(page, timeout_ms)


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the ``st.selectbox`` labelled ``label`` and wait for the rerun."""
    box = combobox(page, label)
    box.click()
    box.fill(option)
    option_el = page.get_by_role("option").filter(has_text=option).first
    expect(option_el).to_be_visible()
    rerun_after(page, option_el.click)
    expect(box).to_have_value(option)


def pick_radio(page: Page, option: str) -> None:
    """Click the radio option labelled ``option`` and wait for the rerun."""
    rerun_after(
        page, page.locator("[data-testid='stRadio'] label").filter(has_text=option).first.click
    )


def combobox(page: Page, label: str) -> Locator:
    """The input of the ``st.selectbox`` labelled ``label``; its value is the shown option."""
    return page.get_by_role("combobox", name=label, exact=True).first


def paste_chat(page: Page, text: str) -> None:
    """Switch the sidebar to "Paste", enter ``text`` and press "Load pasted chat"."""
    pick_radio(page, "Paste")
    area = page.locator(".st-key-ctx-paste textarea").first
    expect(area).to_be_editable()
    for _ in range(3):  # a rerun still in flight can re-render the box: enter it again
        area.fill(text)
        rerun_after(page, lambda: area.press("Control+Enter"))
        if area.input_value() == text:
            break
    expect(area).to_have_value(text)
    button = page.get_by_role("button", name="Load pasted chat")
    expect(button).to_be_visible()
    rerun_after(page, button.click)


def open_tab(page: Page, name: str) -> Locator:
    """Open the tab ``name``; tabs may be lazy (a rerun draws the open one). Its panel."""
    arm_rerun_watch(page)
    page.get_by_role("tab", name=name, exact=True).first.click()
    with contextlib.suppress(PlaywrightError):  # an eager tab switches without a rerun
        page.wait_for_function(RERUN_DONE, timeout=3_000, polling=20)
    wait_for_app(page)
    return page.get_by_role("tabpanel", name=name, exact=True).first
