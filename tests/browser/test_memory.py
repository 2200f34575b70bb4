"""Issue 22: the memory of viewers who left returns to within 1.5x of an idle server's.

A real server (``streamlit run app.py``, started as ``ctxlab app`` starts it) with a session TTL
of a few seconds; six Chromium pages open six different 20,000-message chats of the chats
folder at once, then close. See
``memory_support`` for how the figures are taken (the server's ``VmRSS``), and
``bench/bench_memory.py`` for the same measure with more and larger chats.
"""

from __future__ import annotations

from pathlib import Path

from memory_support import measure
from playwright.sync_api import Browser


def test_the_memory_of_viewers_who_left_returns_near_the_idle_figure(
    browser: Browser, tmp_path: Path
) -> None:
    figures = measure(browser, tmp_path, tmp_path / "server.log", viewers=6, messages=20_000)
    # The viewers did cost memory while they were there (the measure is not vacuous) ...
    assert figures.peak_mb > figures.idle_mb * 1.15, figures
    # ... and it is given back once they left.
    assert figures.ratio <= 1.5, figures
