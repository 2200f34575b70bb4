"""Fixtures for the real-browser tests: one ``streamlit run`` server and one chromium per session.

Every test in this folder is marked ``browser``; the folder is skipped with a reason when
/usr/bin/chromium is missing (``scripts/install_system_deps.sh`` installs it, and CI runs that).
The server's stdout and stderr go to ``test-artifacts/streamlit-server.log`` (one file per
pytest-xdist worker: ``streamlit-server-gw0.log``...) so tests can check what the app logged; a
failing test leaves a screenshot in ``test-artifacts/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import CONTEXT_OPTIONS, COUNT_MESSAGES, serve_app

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of this folder ``browser``; skip them all when chromium is missing."""
    skip = pytest.mark.skip(
        reason=f"{CHROMIUM} not found: run `bash scripts/install_system_deps.sh` "
        "(Debian chromium) to enable the browser tests"
    )
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)
            if not CHROMIUM.exists():
                item.add_marker(skip)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the item so the ``page`` fixture can see a failure."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def streamlit_log() -> Path:
    """The file that receives the test server's stdout and stderr (this worker's server's)."""
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return ARTIFACTS / (f"streamlit-server-{worker}.log" if worker else "streamlit-server.log")


@pytest.fixture(scope="session")
def streamlit_server(streamlit_log: Path) -> Iterator[str]:
    """Run ``streamlit run app.py`` on a free local port; yield its base URL."""
    if not (REPO / "app.py").exists():
        pytest.skip("app.py does not exist yet")
    with serve_app(streamlit_log) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless Debian chromium for the session (no ``playwright install`` needed)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: run `bash scripts/install_system_deps.sh`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: object, request: pytest.FixtureRequest) -> Iterator[object]:
    """A fresh 1600x1000 page per test; a screenshot lands in test-artifacts/ on failure."""
    from playwright.sync_api import Browser

    assert isinstance(browser, Browser)
    context = browser.new_context(
        viewport={"width": 1600, "height": 1000},
        **CONTEXT_OPTIONS,
    )
    context.add_init_script(COUNT_MESSAGES)
    page = context.new_page()
    try:
        yield page
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            ARTIFACTS.mkdir(exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid)[-120:]
            try:
                page.screenshot(path=str(ARTIFACTS / f"FAILED-{name}.png"), full_page=True)
            except Exception as exc:  # the page may be gone; the test failure matters more
                print(f"could not save a screenshot: {exc}")
        context.close()
