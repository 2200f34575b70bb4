"""What a large chat costs the new faces: reading it, the report and the round-map zoom.

Run ``python bench/bench_report.py`` (the committed coding sample and the generated 10k sample)
or add ``--chat PATH`` for any other file, e.g. the 100k chat written by
``python scripts/make_large_chat.py --messages 100000 --out /tmp/chats/large_100k.json``.

Prints one markdown table: messages, file size, read time, first count, the report's build time
and size (plotly.js inlined: about 4.8 MB of it is the library), and the zoom computation. The
budget is a realistic 128k tokens. No timing assertions; these machines are noisy.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ctxlab.formats import load_chat
from ctxlab.samples import sample_path
from ctxlab.strategies import build_strategy
from ctxlab.tokens import get_counter
from ctxlab.ui import figures, report

BUDGET = 128_000


def measure(path: Path) -> dict[str, str]:
    start = time.perf_counter()
    messages = load_chat(path)
    read = time.perf_counter() - start
    counter = get_counter("gpt-4o")
    start = time.perf_counter()
    counted = counter.counted(messages)
    count = time.perf_counter() - start
    strategy = build_strategy("window-drop", {"budget": BUDGET})
    result = strategy.apply(messages, counter)
    start = time.perf_counter()
    html = report.report_html(
        report.playground_report(path.stem, "gpt-4o", counted, strategy, result)
    )
    build = time.perf_counter() - start
    start = time.perf_counter()
    zoom = figures.zoom_rounds(counted, result.decisions)
    zoom_ms = (time.perf_counter() - start) * 1000
    return {
        "chat": path.stem,
        "messages": f"{len(messages):,}",
        "file MB": f"{path.stat().st_size / 1e6:,.1f}",
        "read s": f"{read:.2f}",
        "first count s": f"{count:.2f}",
        "report s": f"{build:.2f}",
        "report MB": f"{len(html.encode()) / 1e6:.2f}",
        "zoom": "none" if zoom is None else f"rounds {zoom[0]:,}–{zoom[1] - 1:,}",
        "zoom ms": f"{zoom_ms:.1f}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chat", type=Path, action="append", default=[], help="more chat files")
    args = parser.parse_args(argv)
    paths = [sample_path("coding_agent_session"), sample_path("large_agent_10k"), *args.chat]
    rows = [measure(p) for p in paths]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(row[c] for c in columns) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
