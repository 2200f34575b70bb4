"""Fleet evaluation benchmark: overhead, scaling, Ray, an absolute run, the Fleet page.

Run ``python bench/bench_fleet.py`` (defaults sized for a shared 2-core machine, a few minutes)
or ``--quick``. Prints markdown tables; no timing assertions. Every figure that matters is a
ratio of two runs measured side by side in this process:

* **overhead**: ``run_corpus`` with a one-process pool (hashing, pickling, DuckDB writes
  included) against the same per-conversation work (``load_chat`` + ``evaluate_conversation``)
  in a plain loop. Target <= 1.25x.
* **scaling**: the pool with 2 workers against 1. Target >= 1.7x throughput.
* **Ray**: a local Ray instance (127.0.0.1, 2 CPUs) against the 2-worker pool. Target <= 1.5x.
* **absolute**: the 2-worker run's rate, and what it means for 10,000 conversations.
* **page**: the Fleet page (AppTest, no browser) opening a synthetic 100,000-conversation
  results file and redrawing after a filter change. Target < 1 s each.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from make_fleet_corpus import write_sized  # noqa: E402

from ctxlab.corpus import parse_grid, run_corpus  # noqa: E402
from ctxlab.corpus.evaluate import evaluate_conversation  # noqa: E402
from ctxlab.corpus.store import Store  # noqa: E402
from ctxlab.formats import load_chat  # noqa: E402

GRID_SPECS = (
    "window-drop:budget=8000,16000,32000",
    "clear-tool-results:trigger_tokens=30000",
    "summarize:trigger_token_budget=16000",
    "sliding-window:window=40",
)


def _grid() -> list:  # type: ignore[type-arg]
    return [c for spec in GRID_SPECS for c in parse_grid(spec)]


def _rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def bench_runs(corpus: Path, work: Path, ray: bool) -> dict[str, float]:
    grid = _grid()
    files = sorted(corpus.glob("*.json"))
    times: dict[str, float] = {}
    start = time.perf_counter()
    for path in files:
        evaluate_conversation(load_chat(path), grid)
    times["loop"] = time.perf_counter() - start
    for label, backend, workers in (("pool1", "pool", 1), ("pool2", "pool", 2)):
        summary = run_corpus(
            corpus, grid, work / f"{label}.duckdb", backend=backend, workers=workers
        )
        assert summary.failed == 0 and summary.evaluated == len(files), summary
        times[label] = summary.seconds
    if ray:
        summary = run_corpus(corpus, grid, work / "ray.duckdb", backend="ray", workers=2)
        assert summary.failed == 0, summary
        times["ray"] = summary.seconds
    return times


def synthetic_results(db: Path, conversations: int) -> None:
    """A results file shaped like a real run over ``conversations`` chats, made in SQL."""
    grid = _grid()
    with Store(db) as store:
        store.add_configurations(grid)
        con = store.con
        con.execute("SELECT setseed(0.14)")
        con.execute(
            f"""
            INSERT INTO conversations
            SELECT md5(i::VARCHAR), md5(i::VARCHAR), 'chat_' || i || '.json', '0',
                   'Conversation ' || i, 10 + (i * 7919) % 400, 5 + (i * 7919) % 200
            FROM range({conversations}) t(i)
            """
        )
        con.execute(
            """
            INSERT INTO results
            SELECT v.conversation_key, c.config_key, v.turns,
                   v.turns * 9000, (v.turns * 9000 * (0.3 + random() * 0.6))::BIGINT,
                   (4000 + random() * 40000)::BIGINT, (random() * 3)::BIGINT,
                   (random() * 1.2)::BIGINT, 0, 0,
                   v.turns * 0.02 * random(), v.turns * 0.01 * random(), v.turns * 0.025,
                   20, 40 + random() * 60
            FROM conversations v CROSS JOIN configurations c
            """
        )
        con.execute(
            """
            INSERT INTO call_tokens
            SELECT c.config_key, (pow(10, 2 + random() * 3))::BIGINT // 10 * 10,
                   (1 + random() * 500)::BIGINT
            FROM configurations c CROSS JOIN range(4000)
            """
        )
        con.execute(
            """
            INSERT INTO call_problems
            SELECT r.conversation_key, r.config_key, 'orphan-tool-result', r.invalid_calls
            FROM results r WHERE r.invalid_calls > 0
            """
        )
        con.execute(
            """
            INSERT INTO sources SELECT v.source_key, c.config_key
            FROM conversations v CROSS JOIN configurations c
            """
        )
        con.execute(
            """
            INSERT INTO errors SELECT md5('e' || i), 'broken_' || i || '.json', NULL, NULL,
                   c.config_key, 'read', 'line 1: invalid JSON'
            FROM range(300) t(i) CROSS JOIN configurations c
            """
        )


def bench_page(folder: Path, conversations: int) -> dict[str, float]:
    from streamlit.testing.v1 import AppTest

    folder.mkdir(parents=True, exist_ok=True)
    synthetic_results(folder / "fleet_100k.duckdb", conversations)
    os.environ["CTXLAB_RESULTS_DIR"] = str(folder)
    page = str(ROOT / "pages" / "5_Fleet.py")
    warm = AppTest.from_file(page, default_timeout=300)
    warm.run()  # imports and Streamlit start-up, not the page's work
    at = AppTest.from_file(page, default_timeout=300)
    start = time.perf_counter()
    at.run()
    opened = time.perf_counter() - start
    assert not at.exception, at.exception
    chooser = at.multiselect(key="fleet-filter")
    start = time.perf_counter()
    chooser.set_value(list(chooser.value)[:3]).run()
    redraw = time.perf_counter() - start
    assert not at.exception and len(at.dataframe[0].value) == 3
    at2 = AppTest.from_file(page, default_timeout=300)
    start = time.perf_counter()
    at2.run()
    cached = time.perf_counter() - start
    return {"open": opened, "redraw": redraw, "open_cached": cached}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--conversations", type=int, default=60)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--page-conversations", type=int, default=100_000)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--no-page", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="12 conversations, 20,000 for the page"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.page_conversations = 12, 20_000
    versions = ", ".join(
        f"{p} {metadata.version(p)}" for p in ("duckdb", "pyarrow", "streamlit") if _has(p)
    )
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {versions}"
        + (f", ray {metadata.version('ray')}" if _has("ray") else "")
    )
    print()
    grid = _grid()
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-fleet-") as tmp:
        work = Path(tmp)
        corpus = work / "corpus"
        write_sized(corpus, args.conversations, args.messages)
        size = sum(p.stat().st_size for p in corpus.iterdir()) / 1e6
        print(
            f"Corpus: {args.conversations} conversations x ~{args.messages} messages "
            f"({size:.1f} MB; support, coding-agent and plain chats in turn), "
            f"{len(grid)} configurations: {'; '.join(GRID_SPECS)}"
        )
        print()
        times = bench_runs(corpus, work, ray=not args.no_ray and _has("ray"))
        n = args.conversations
        rows = [
            [
                "plain loop (load_chat + evaluate_conversation)",
                f"{times['loop']:.1f}",
                f"{n / times['loop']:.2f}",
                "1.00x",
                "",
            ],
            [
                "run_corpus, pool, 1 worker",
                f"{times['pool1']:.1f}",
                f"{n / times['pool1']:.2f}",
                f"{times['pool1'] / times['loop']:.2f}x",
                "overhead <= 1.25x",
            ],
            [
                "run_corpus, pool, 2 workers",
                f"{times['pool2']:.1f}",
                f"{n / times['pool2']:.2f}",
                f"{times['pool2'] / times['loop']:.2f}x",
                f"speed-up vs 1 worker {times['pool1'] / times['pool2']:.2f}x (>= 1.7x)",
            ],
        ]
        if "ray" in times:
            rows.append(
                [
                    "run_corpus, Ray local, 2 CPUs",
                    f"{times['ray']:.1f}",
                    f"{n / times['ray']:.2f}",
                    f"{times['ray'] / times['loop']:.2f}x",
                    f"vs 2-worker pool {times['ray'] / times['pool2']:.2f}x (<= 1.5x)",
                ]
            )
        _table(["run", "seconds", "conversations/s", "vs loop", "target"], rows)
        rate = n / times["pool2"]
        print(
            f"Absolute (2 workers): {rate:.2f} conversations/s x {len(grid)} configurations; "
            f"10,000 conversations of ~{args.messages} messages would take about "
            f"{10_000 / rate / 60:.0f} min at this rate (extrapolated, not run). "
            f"Peak RSS of this process (loop, parent of every run): "
            f"{_rss_mb(resource.RUSAGE_SELF):.0f} MB."
        )
        print()
        if not args.no_page:
            page = bench_page(work / "results", args.page_conversations)
            _table(
                ["Fleet page, AppTest", "seconds", "target"],
                [
                    [
                        f"open a {args.page_conversations:,}-conversation results file",
                        f"{page['open']:.2f}",
                        "< 1 s",
                    ],
                    ["redraw after a filter change", f"{page['redraw']:.2f}", "< 1 s"],
                    ["open again (cached reads, new session)", f"{page['open_cached']:.2f}", ""],
                ],
            )
    return 0


def _has(package: str) -> bool:
    try:
        metadata.version(package)
    except metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    raise SystemExit(main())
