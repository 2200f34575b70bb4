"""Viewers who come and go: the server's memory idle, with N viewers, and after they left.

Shared by ``tests/browser/test_memory.py`` (asserts the ratio) and ``bench/bench_memory.py``
(prints the figures). A real ``streamlit run app.py`` server serves N generated chats from a
chats folder (``CTXLAB_CHATS_DIR``); one Chromium page per chat opens ``?chat=NAME``, waits until
the page has run to the end, and closes. Streamlit drops a closed session's state once
``server.disconnectedSessionTTL`` seconds have passed (set low here), and the app then releases
what no session uses any more.

The figure is the server process's resident set size (``VmRSS`` of ``/proc/<pid>/status``): what
the operator's machine actually pays, allocator included. It is read after warm-up (one session
on a small sample, opened and left, so imports and encodings are loaded), with the N pages open,
and after they left, polling until it stops falling.

The server picks a chat's facts :data:`PREFETCH_DELAY_S` after its first showing
(``CTXLAB_FACTS_PREFETCH_DELAY_S``; an operator's server waits 20 s): the work the viewers'
pages defer is then done while they are open, and "after they left" need not wait 20 s for it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from browser_support import APP_IDLE, CONTEXT_OPTIONS, EXCEPTION, serve_app_process
from playwright.sync_api import Browser, expect

from ctxlab.samples import ensure_large_chat
from ctxlab.ui.insights_view import FACTS_PREFETCH_DELAY_ENV

SESSION_TTL_S = 2
"""``server.disconnectedSessionTTL`` of the measured server (Streamlit's default is 120 s)."""

WARM_UP_CHAT = "coding_agent_session"

PREFETCH_DELAY_S = 1.0
"""The measured server's delay before a chat's facts are picked (``FACTS_PREFETCH_DELAY_ENV``)."""

QUIET_CPU_S = 0.05
"""At most this much server CPU in :data:`QUIET_WINDOW_S`: the server has no work left."""
QUIET_WINDOW_S = 0.5


@dataclass(frozen=True, slots=True)
class MemoryFigures:
    """RSS in MB of the server: idle after warm-up, with the viewers open, after they left."""

    viewers: int
    messages: int
    idle_mb: float
    peak_mb: float
    left_mb: float

    @property
    def ratio(self) -> float:
        """After the viewers left / idle: the figure the issue bounds at 1.5."""
        return self.left_mb / self.idle_mb


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid`` in MB (``VmRSS``)."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_until_quiet(pid: int, deadline: float) -> None:
    """Until the server uses next to no CPU for :data:`QUIET_WINDOW_S` (its deferred work, a
    fact pick or a session's shutdown, is over), or ``deadline`` (``time.monotonic``) passed."""
    before = cpu_s(pid)
    while time.monotonic() < deadline:
        time.sleep(QUIET_WINDOW_S)
        now = cpu_s(pid)
        if now - before <= QUIET_CPU_S:
            return
        before = now


def make_chats(folder: Path, viewers: int, messages: int) -> list[str]:
    """``viewers`` different generated chats of ``messages`` messages in ``folder``; names."""
    names = []
    for k in range(viewers):
        name = f"viewer_chat_{k}"
        ensure_large_chat(folder / f"{name}.json", messages, seed=1000 + k)
        names.append(name)
    return names


def _settled(pid: int, timeout_s: float, shown_at: float, still_s: float = 5.0) -> float:
    """The lowest RSS seen until it has not fallen for ``still_s`` seconds (or ``timeout_s``
    passed), waiting first for the session TTL to pass and for the work the viewers' pages
    deferred (a chat's facts are picked :data:`PREFETCH_DELAY_S` after its first showing; the
    last page showed at ``shown_at``): that work is part of what the viewers cost, and it must
    be over."""
    time.sleep(SESSION_TTL_S + 1.0)
    time.sleep(max(0.0, shown_at + PREFETCH_DELAY_S + 1.0 - time.monotonic()))
    deadline = time.monotonic() + timeout_s
    _wait_until_quiet(pid, deadline)
    lowest = rss_mb(pid)
    since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = rss_mb(pid)
        if now < lowest - 0.5:
            lowest, since = now, time.monotonic()
        elif time.monotonic() - since >= still_s:
            break
    return lowest


def _open_pages(browser: Browser, base_url: str, chats: list[str]) -> Iterator[None]:
    """One page per chat, all open at once; yields once while they are open, then closes them."""
    contexts = []
    try:
        for chat in chats:
            context = browser.new_context(
                viewport={"width": 1400, "height": 900}, **CONTEXT_OPTIONS
            )
            contexts.append(context)
            page = context.new_page()
            page.goto(f"{base_url}/?chat={chat}", wait_until="domcontentloaded")
            expect(page.locator(APP_IDLE)).to_be_attached(timeout=180_000)
            page.wait_for_timeout(300)
            expect(page.locator(APP_IDLE)).to_be_attached(timeout=180_000)
            expect(page.locator(EXCEPTION)).to_have_count(0)
        yield None
    finally:
        for context in contexts:
            context.close()


def measure(
    browser: Browser, folder: Path, log_path: Path, viewers: int, messages: int
) -> MemoryFigures:
    """Serve ``viewers`` chats of ``messages`` messages and measure the server (see the module)."""
    chats = make_chats(folder, viewers, messages)
    env = {
        "CTXLAB_CHATS_DIR": str(folder),
        "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(SESSION_TTL_S),
        # A count store of its own, empty: the warm-up chat is then tokenized, so the idle
        # figure holds the tokenizer as every counting server does (with the run's shared store
        # holding the warm-up chat already, idle was taken before the tokenizer ever loaded,
        # and the ~70 MB it keeps read as memory the viewers did not give back).
        "CTXLAB_CACHE_DIR": str(folder / "count-store"),
        FACTS_PREFETCH_DELAY_ENV: str(PREFETCH_DELAY_S),
    }
    wait_s = SESSION_TTL_S + 60.0
    with serve_app_process(log_path, env) as (base_url, pid):
        shown_at = time.monotonic()
        for _ in _open_pages(browser, base_url, [WARM_UP_CHAT]):
            shown_at = time.monotonic()
        idle = _settled(pid, wait_s, shown_at)
        peak = 0.0
        for _ in _open_pages(browser, base_url, chats):
            peak = rss_mb(pid)
            shown_at = time.monotonic()
        left = _settled(pid, wait_s, shown_at)
    return MemoryFigures(viewers, messages, idle, peak, left)
