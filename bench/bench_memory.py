"""ctxlab server memory: idle, with N viewers on different large chats, and after they left.

Run ``python bench/bench_memory.py`` (6 viewers, 20,000-message chats; about a minute on 2
cores) or ``--viewers 4 --messages 10000``. A real ``streamlit run app.py`` server serves the
generated chats from a chats folder; one Chromium page per chat opens ``?chat=NAME`` and waits
for the page to finish, all pages stay open together, then they close. The server's session TTL
is set to a few seconds (``STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL``) so that "left" comes
soon. Figures are the server process's resident set size (``VmRSS``), see
``tests/browser/memory_support.py``; the issue's goal is **left / idle <= 1.5**.

Prints a markdown table; makes no assertion (``tests/browser/test_memory.py`` does).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=6)
    parser.add_argument("--messages", type=int, default=20_000)
    args = parser.parse_args(argv)

    from memory_support import measure
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-memory-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            figures = measure(
                browser, Path(tmp), Path(tmp) / "server.log", args.viewers, args.messages
            )
        finally:
            browser.close()
    print(f"## Server memory, {figures.viewers} viewers x {figures.messages:,} messages\n")
    print("| idle MB | peak MB (viewers open) | after they left MB | left / idle |")
    print("|---:|---:|---:|---:|")
    print(
        f"| {figures.idle_mb:,.0f} | {figures.peak_mb:,.0f} | {figures.left_mb:,.0f} "
        f"| {figures.ratio:.2f}x |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
