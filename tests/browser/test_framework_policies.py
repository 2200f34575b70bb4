"""Framework policies in a real browser: the sidebar's group control switches the strategy
picker to the framework policies, and picking one shows what that framework does with the chat.

The server loads the test policies (tests/framework_policy.py) as any plug-in: through a
``ctxlab.strategies`` entry point of a distribution on its PYTHONPATH.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import EXCEPTION, choose, combobox, open_app, rerun_after, serve_app
from playwright.sync_api import Page, expect

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from framework_policy import plugin_path  # noqa: E402


@pytest.fixture(scope="module")
def plugin_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = plugin_path(tmp_path_factory.mktemp("plugin"))
    path = os.pathsep.join(
        p for p in (str(folder), str(TESTS), os.environ.get("PYTHONPATH", "")) if p
    )
    log = tmp_path_factory.mktemp("log") / "streamlit-frameworks.log"
    with serve_app(log, {"PYTHONPATH": path}) as base_url:
        yield base_url


def test_the_group_control_opens_framework_policies_and_the_trigger_panel(
    plugin_server: str, page: Page
) -> None:
    open_app(page, plugin_server, query="chat=coding_agent_session&strategy=window-drop")
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(combobox(page, "Strategy")).to_have_value("Window drop")
    group = sidebar.locator("[data-testid='stRadio']").filter(has_text="Framework policies")
    rerun_after(page, group.locator("label").filter(has_text="Framework policies").first.click)
    choose(page, "Strategy", "TestFramework · WindowMemory")
    panel = page.locator("[data-testid='stExpander']").filter(
        has_text="What TestFramework does with this chat"
    )
    expect(panel.first).to_be_visible()
    expect(panel.first).to_contain_text(
        "Never fires: trigger is None (TestFramework's default); set trigger=tokens=N."
    )
    expect(panel.first).to_contain_text(
        "TestFramework thinks 21,750 tokens, the model sees 32,791: a token trigger fires "
        "11,041 tokens late"
    )
    expect(panel.first).to_contain_text("Not reproduced exactly: the placeholder's exact wording")
    assert "strategy=test-framework-window" in page.url
    expect(page.locator(EXCEPTION)).to_have_count(0)
