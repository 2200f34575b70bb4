#!/usr/bin/env python3
"""Rewrite the README's screenshots (docs/<page>.png) from the running playground.

Starts ``streamlit run app.py`` on a free local port (the same server settings as ``ctxlab
app``), opens each page on the ``coding_agent_session`` sample in Debian's chromium at
1600x1100, waits until the script is idle and every element has rendered, and saves the page.
The tests never write into docs/ (a test run leaves the checkout clean); run this when the app's
look changed and commit the pictures:

    .venv/bin/python scripts/docs_screenshots.py            # every page
    .venv/bin/python scripts/docs_screenshots.py tune learn  # some pages
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))  # the browser tests' server and waits
sys.path.insert(0, str(ROOT))

from browser_support import COUNT_MESSAGES, EXCEPTION, open_app, serve_app  # noqa: E402

PAGES = {
    "playground": "/",
    "compare": "/Compare",
    "replay": "/Replay",
    "tune": "/Tune",
    "learn": "/Learn",
    "fleet": "/Fleet",
}
VIEWPORT = {"width": 1600, "height": 1100}
CHROMIUM = Path("/usr/bin/chromium")
SAMPLE = "coding_agent_session"
PLOTLY_SETTLE_MS = 500
"""Plotly animates its first layout; a picture taken mid-transition shows half-drawn bars."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help=f"default: every page ({', '.join(PAGES)})")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="default: docs/")
    args = parser.parse_args(argv)
    names = args.pages or list(PAGES)
    unknown = [name for name in names if name not in PAGES]
    if unknown:
        parser.error(f"unknown page {unknown[0]!r}; pages: {', '.join(PAGES)}")
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} not found: run `bash scripts/install_system_deps.sh`", file=sys.stderr)
        return 1
    from playwright.sync_api import expect, sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    log = ROOT / "test-artifacts" / "docs-screenshots-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with serve_app(log) as base_url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            for name in names:
                context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
                context.add_init_script(COUNT_MESSAGES)
                page = context.new_page()
                try:
                    open_app(page, base_url, PAGES[name], query=f"chat={SAMPLE}")
                    expect(page.locator(EXCEPTION)).to_have_count(0)
                    page.wait_for_timeout(PLOTLY_SETTLE_MS)
                    target = args.out / f"{name}.png"
                    page.screenshot(path=str(target))
                    print(target)
                finally:
                    context.close()
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
