"""AppTest, a chat's first open: the numbers every first-screen view shows, computed from the
raw file with tiktoken, and the chat's facts picked only after that first screen.

The chat is written here as JSON; expected values come from that JSON and tiktoken itself
(OpenAI's cookbook accounting: 3 tokens per message, 1 per name, 3 of reply priming), never
from ctxlab's loader or counter.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from app_support import PLAYGROUND, page

from ctxlab.chats_folder import CHATS_DIR_ENV
from ctxlab.counted import CountedChat
from ctxlab.encodings import load_encoding
from ctxlab.insights import extract_facts
from ctxlab.ui import insights_view

USERS = 1_200  # more than one page of the message table (render.TABLE_PAGE_ROWS = 1,000)


def _raw_messages() -> list[dict[str, str]]:
    out = [{"role": "system", "content": "You review deployment logs. Be brief."}]
    for k in range(USERS):
        user = {
            "role": "user",
            "content": f"Check host web-{k:04d}.example.com at 10.0.{k % 256}.7",
        }
        if k % 7 == 0:
            user["name"] = f"ops_{k % 3}"
        out.append(user)
        out.append({"role": "assistant", "content": f"Host {k} answered in {k % 90 + 10} ms."})
    return out


@pytest.fixture
def chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    """The chat ``review_logs`` in the server's chats folder; its raw messages."""
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("CTXLAB_CACHE_DIR", "")  # every text counted, none read from a store
    raw = _raw_messages()
    (tmp_path / "review_logs.json").write_text(json.dumps(raw), encoding="utf-8")
    return raw


def _expected_counts(raw: list[dict[str, str]]) -> list[int]:
    """Tokens of each message by OpenAI's cookbook rules, with tiktoken's o200k_base."""
    enc = load_encoding("o200k_base")
    counts = []
    for m in raw:
        n = 3 + len(enc.encode_ordinary(m["role"])) + len(enc.encode_ordinary(m["content"]))
        if "name" in m:
            n += 1 + len(enc.encode_ordinary(m["name"]))
        counts.append(n)
    return counts


@pytest.fixture
def picks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the fact picks; the delayed pick after a first showing never starts by itself."""
    done: list[int] = []
    pick: Callable[[CountedChat], Any] = insights_view._pick_facts

    def counting(chat: CountedChat) -> Any:
        done.append(len(chat))
        return pick(chat)

    monkeypatch.setattr(insights_view, "_pick_facts", counting)
    monkeypatch.setattr(insights_view, "FACTS_PREFETCH_DELAY_S", 3_600.0)
    yield done


def test_the_first_open_shows_the_totals_rounds_and_table_of_the_raw_chat(
    chat: list[dict[str, str]], picks: list[int]
) -> None:
    counts = _expected_counts(chat)
    total = sum(counts) + 3  # reply priming
    # Each user message opens a round; the system message before the first is a round too.
    starts = [0] + [i for i, m in enumerate(chat) if m["role"] == "user"]
    at = page(PLAYGROUND, chat="review_logs", model="gpt-4o", strategy="window-drop")
    at.run()
    assert not at.exception
    caption = f"{len(chat):,} messages · {len(starts):,} rounds · {total:,} tokens"
    assert any(caption in c.value for c in at.sidebar.caption), [
        c.value for c in at.sidebar.caption
    ]
    table = next(d.value for d in at.dataframe if "preview" in d.value.columns)
    assert list(table["index"]) == list(range(1_000))  # the first page, in chat order
    assert list(table["tokens"]) == counts[:1_000]
    rounds = [sum(1 for s in starts if s <= i) - 1 for i in range(1_000)]
    assert list(table["round"]) == rounds
    assert list(table["role"]) == [m["role"] for m in chat[:1_000]]
    assert picks == []  # nothing on the first screen needs the chat's facts


def test_the_facts_tab_picks_the_facts_when_opened_first(
    chat: list[dict[str, str]], picks: list[int]
) -> None:
    at = page(PLAYGROUND, chat="review_logs", model="gpt-4o", strategy="window-drop")
    at.run()
    assert picks == []
    at.session_state["pg-tabs"] = "Facts"
    at.run()
    assert not at.exception
    assert picks == [len(chat)]  # picked once, on demand
    counted = at.session_state["ctx.counted"]
    assert insights_view.chat_facts(counted) == extract_facts(counted.messages)
    assert picks == [len(chat)]
    first = extract_facts(counted.messages)[0].text
    shown = [d.value for d in at.dataframe]
    assert any(first in str(v.to_dict()) for v in shown), (first, shown)


def test_the_sessions_next_run_starts_the_deferred_pick(
    chat: list[dict[str, str]], picks: list[int]
) -> None:
    at = page(PLAYGROUND, chat="review_logs", model="gpt-4o", strategy="window-drop")
    at.run()
    assert picks == []
    at.run()  # any second run: the first screen is drawn, the pick may go ahead
    assert not at.exception
    deadline = time.monotonic() + 300  # a bound on waiting for the pick, not a timing check
    while not picks and time.monotonic() < deadline:
        time.sleep(0.05)
    assert picks == [len(chat)]
    at.session_state["pg-tabs"] = "Facts"
    at.run()
    assert picks == [len(chat)]  # the tab finds them picked
