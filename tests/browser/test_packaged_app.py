"""`ctxlab app` serves the packaged playground: it renders in a browser from any directory.

The server is started the way a wheel's user starts it (``python -m ctxlab app``) with the
working directory outside the repository, so neither ``app.py`` nor ``.streamlit/`` is found
through the current directory: the entry script, its pages and the config come from the package.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import EXCEPTION, open_app
from install_support import free_port, serving
from playwright.sync_api import Page, expect

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def packaged_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    outside = tmp_path_factory.mktemp("elsewhere")
    port = free_port()
    command = [sys.executable, "-m", "ctxlab", "app", f"--server.port={port}"]
    # this checkout's ctxlab, whichever ctxlab the interpreter has installed
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    log = outside / "app.log"
    with serving(command, cwd=outside, port=port, log=log, env=env, timeout=120) as base:
        yield base


def test_the_packaged_playground_renders_a_sample_and_its_strategy_picker(
    packaged_app: str, page: Page
) -> None:
    open_app(page, packaged_app, query="chat=support_function_calls")
    expect(page.locator(EXCEPTION)).to_have_count(0)
    expect(page.locator("h1").first).to_have_text("Playground")
    expect(page.get_by_text("Support: refund and replacement").first).to_be_visible()
    expect(page.get_by_text("Strategy").first).to_be_visible()
