"""Helpers for the real-browser tests (Playwright driving Debian's chromium).

Import them in a browser test with ``from browser_support import open_app, wait_for_app``.
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

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


def open_app(page: Page, base_url: str, path: str = "/", query: str = "") -> None:
    """Open ``path`` of the app (``query`` without the ``?``) and wait until it is idle."""
    url = base_url.rstrip("/") + path + (f"?{query}" if query else "")
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page)
