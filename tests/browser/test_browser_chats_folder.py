"""A chat in the server's chats folder (CTXLAB_CHATS_DIR) opens with ?chat=NAME."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import EXCEPTION, open_app, serve_app
from playwright.sync_api import Page, expect

from ctxlab.samples import ensure_large_chat, generate_large_chat

REPO = Path(__file__).resolve().parents[2]
NAME = "folder_agent_chat"
LARGE = "agent_100k"
"""The project's own 100,000-message chat (about 100 MB: over any sane upload, hence the folder)."""
LARGE_CACHE = Path(tempfile.gettempdir()) / "ctxlab-test-chats" / f"{LARGE}-seed100000.json"
"""Where the 100k chat is kept between runs: generating it costs about 6 s of CPU, and the same
seed gives a byte-identical file, rewritten when the generator's version changes."""


def _place_large_chat(target: Path) -> None:
    """The seeded 100k chat at ``target``: a hard link to the copy kept between runs (written
    atomically, so a concurrent run never reads half a file), or a copy when linking fails."""
    cached = ensure_large_chat(LARGE_CACHE, 100_000, seed=100_000)
    try:
        os.link(cached, target)
    except OSError:
        shutil.copyfile(cached, target)


@pytest.fixture(scope="module")
def chats_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("chats")
    messages = generate_large_chat(300, seed=7)
    (folder / f"{NAME}.json").write_text(json.dumps({"messages": messages}), encoding="utf-8")
    _place_large_chat(folder / f"{LARGE}.json")
    return folder


@pytest.fixture(scope="module")
def folder_server(chats_folder: Path) -> Iterator[str]:
    """A server of its own, started with CTXLAB_CHATS_DIR pointing at the test's folder."""
    with serve_app(chats_folder / "server.log", {"CTXLAB_CHATS_DIR": str(chats_folder)}) as url:
        yield url


def test_a_chat_of_the_folder_opens_by_name(
    folder_server: str, chats_folder: Path, page: Page
) -> None:
    raw = json.loads((chats_folder / f"{NAME}.json").read_text(encoding="utf-8"))["messages"]
    open_app(page, folder_server, query=f"chat={NAME}&strategy=window-drop")
    expect(page.locator(EXCEPTION)).to_have_count(0)
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(sidebar.get_by_text(f"{len(raw):,} messages", exact=False).first).to_be_visible()
    expect(sidebar.get_by_text(f"{NAME} (chats folder").first).to_be_visible()
    assert f"chat={NAME}" in page.url


def test_a_path_in_the_url_never_opens_a_file(folder_server: str, page: Page) -> None:
    open_app(page, folder_server, query="chat=../pyproject&strategy=window-drop")
    expect(page.locator(EXCEPTION)).to_have_count(0)
    assert "chat=..%2Fpyproject" not in page.url and "chat=../pyproject" not in page.url


def test_the_100k_chat_opens_from_the_folder_and_its_round_map_zooms_on_the_sent_end(
    folder_server: str, chats_folder: Path, page: Page
) -> None:
    from browser_support import metric_value

    raw = json.loads((chats_folder / f"{LARGE}.json").read_bytes())
    messages = raw["messages"] if isinstance(raw, dict) else raw
    # counting 100k messages on two busy cores can take minutes: the guard only fails a hang
    query = f"chat={LARGE}&model=gpt-4o&strategy=window-drop"
    open_app(page, folder_server, query=query, timeout_ms=300_000)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(sidebar.get_by_text(f"{len(messages):,} messages", exact=False).first).to_be_visible()
    # the default budget is a share of gpt-4o's window, not of a 30M-token chat
    sent = int(metric_value(page, "Tokens sent").replace(",", ""))
    assert 0 < sent <= 128_000
    expect(page.get_by_text("Zoom on the newest end", exact=False).first).to_be_visible()
    expect(
        page.get_by_text("Fits gpt-4o's 128,000-token window", exact=False).first
    ).to_be_visible()
