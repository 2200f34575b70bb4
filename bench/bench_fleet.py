"""Fleet evaluation benchmark: overhead, scaling, Ray, absolute runs, memory, the Fleet page.

Run ``python bench/bench_fleet.py`` (defaults sized for a shared 2-core machine, a few minutes)
or ``--quick``. Prints markdown tables; no timing assertions. Every ratio compares runs made
side by side in this process:

* **overhead**: the two columns of a pair do the same per-conversation work on the same files:
  *plain loop* = ``evaluate_conversation(load_chat(path), grid)`` for every file, in this
  process, results dropped (imports and the tokenizer loaded before the clock starts);
  *pool, 1 worker* = ``run_corpus(folder, grid, db, workers=1)``: listing and hashing the files,
  a fresh fork server and worker (imports, tokenizer), pickling to and from the worker, the
  DuckDB writes, as a new ``ctxlab eval`` pays them. Pairs run alternately (``--repeat``,
  default 3) so that load from other processes hits both columns alike; each row gives wall
  seconds and CPU seconds of this process and all its descendants (read from /proc).
  Target <= 1.25x.
* **scaling**: the pool with 2 workers against the mean of the 1-worker runs. Target >= 1.7x.
* **Ray**: a local Ray instance (127.0.0.1, 2 CPUs) against the 2-worker pool. Target <= 1.5x.
* **absolute** (``--absolute N``): ``python -m ctxlab eval`` with 2 workers on N conversations of
  ``--messages`` messages against the six configurations.
* **memory** (``--rss-100k``): ``python -m ctxlab eval`` with 2 workers on a JSONL table of
  100,000 conversations of 10-20 messages, two configurations; the peak of the summed RSS (and
  PSS) of the CLI process, its fork server and workers, sampled every 0.5 s. Target < 1 GB.
* **page**: the Fleet page (AppTest, no browser) opening a synthetic 100,000-conversation
  results file and redrawing after a filter change. Target < 1 s each.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from make_fleet_corpus import write_sized, write_table  # noqa: E402

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


_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _proc_stat(pid: int) -> tuple[int, float, int] | None:
    """(parent pid, CPU seconds, RSS bytes) of ``pid`` from /proc, None once it has gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15, rss 24 (pages)
    cpu = (int(fields[11]) + int(fields[12])) / _TICK
    return int(fields[1]), cpu, int(fields[21]) * _PAGE


def _pss(pid: int) -> int:
    """Proportional set size of ``pid`` in bytes (shared pages split between their users)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class TreeSampler:
    """Samples a process and all its descendants from /proc every ``interval`` seconds.

    ``peak_tree`` is the largest sum of RSS over the tree at one sample (pages shared by a
    fork server and its workers counted once per process, so an upper bound), ``peak_pss`` the
    largest sum of PSS (shared pages split between their users), ``peak_single`` the largest
    RSS of one process, ``cpu`` the CPU seconds of every process seen (each one's last
    sample; a process that exits between samples loses at most ``interval`` of CPU).
    """

    def __init__(self, root: int, interval: float = 0.2) -> None:
        self.root = root
        self.interval = interval
        self.peak_tree = 0
        self.peak_pss = 0
        self.peak_single = 0
        self.processes = 0
        self._cpu: dict[int, float] = {}
        self._cpu_start: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._sample()
        self._cpu_start = dict(self._cpu)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def cpu(self) -> float:
        """CPU seconds used by the tree since the sampler started."""
        return sum(c - self._cpu_start.get(pid, 0.0) for pid, c in self._cpu.items())

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        stats = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                stat = _proc_stat(int(name))
                if stat is not None:
                    stats[int(name)] = stat
        tree = {self.root}
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _, _) in stats.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        total = pss = 0
        for pid in tree:
            if pid in stats:
                _, cpu, rss = stats[pid]
                self._cpu[pid] = cpu
                total += rss
                pss += _pss(pid)
                self.peak_single = max(self.peak_single, rss)
        self.peak_tree = max(self.peak_tree, total)
        self.peak_pss = max(self.peak_pss, pss)
        self.processes = max(self.processes, len(self._cpu))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def _fresh_fork_server() -> None:
    """Stop the pool's fork server, so the next run starts its own as a new ``ctxlab eval`` does."""
    from multiprocessing import forkserver

    stop = getattr(forkserver._forkserver, "_stop", None)  # private; absent: runs share it
    if stop is not None:
        stop()


def _pool_run(corpus: Path, db: Path, backend: str, workers: int, n: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process and its descendants) of one ``run_corpus``."""
    _fresh_fork_server()
    with TreeSampler(os.getpid()) as tree:
        summary = run_corpus(corpus, _grid(), db, backend=backend, workers=workers)
    assert summary.failed == 0 and summary.evaluated == n, summary
    return summary.seconds, tree.cpu


def _loop_run(files: Sequence[Path]) -> tuple[float, float]:
    """Wall and CPU seconds of the same per-conversation work in a plain loop, no pool, no DB."""
    grid = _grid()
    with TreeSampler(os.getpid()) as tree:
        start = time.perf_counter()
        for path in files:
            evaluate_conversation(load_chat(path), grid)
        wall = time.perf_counter() - start
    return wall, tree.cpu


def bench_runs(corpus: Path, work: Path, ray: bool, repeat: int) -> dict[str, list[float]]:
    """Loop and 1-worker pool alternately ``repeat`` times, then 2 workers, then Ray.

    Values are ``[wall, cpu]`` per run; overhead pairs are ``loop<i>`` / ``pool1_<i>``.
    """
    files = sorted(corpus.glob("*.json"))
    evaluate_conversation(load_chat(files[0]), _grid())  # tokenizer and imports: not timed
    times: dict[str, list[float]] = {}
    for i in range(repeat):
        times[f"loop{i}"] = list(_loop_run(files))
        db = work / f"pool1_{i}.duckdb"
        times[f"pool1_{i}"] = list(_pool_run(corpus, db, "pool", 1, len(files)))
    times["pool2"] = list(_pool_run(corpus, work / "pool2.duckdb", "pool", 2, len(files)))
    if ray:
        times["ray"] = list(_pool_run(corpus, work / "ray.duckdb", "ray", 2, len(files)))
    return times


def cli_run(corpus: Path, specs: Sequence[str], db: Path, workers: int) -> dict[str, float]:
    """``ctxlab eval`` as a user runs it, sampled: time, counts, peak RSS of its process tree."""
    grid = [arg for spec in specs for arg in ("--grid", spec)]
    command = [sys.executable, "-m", "ctxlab", "eval", str(corpus), *grid, "--db", str(db)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--workers", str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    with TreeSampler(process.pid, interval=0.5) as tree:
        out, _ = process.communicate()
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        raise SystemExit(f"ctxlab eval failed ({process.returncode}):\n{out}")
    with Store(db, read_only=True) as store:
        conversations = store.count("conversations")
        calls = store.count("calls")
        failed = store.count("errors")
    return {
        "seconds": seconds,
        "conversations": conversations,
        "calls": calls,
        "errors": failed,
        "peak_tree_mb": tree.peak_tree / 2**20,
        "peak_pss_mb": tree.peak_pss / 2**20,
        "peak_single_mb": tree.peak_single / 2**20,
        "processes": tree.processes,
        "cpu": tree.cpu,
        "db_mb": db.stat().st_size / 1e6,
    }


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min)"


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


def _overhead_rows(times: dict[str, list[float]], n: int, repeat: int) -> list[list[str]]:
    rows = []
    for i in range(repeat):
        (lw, lc), (pw, pc) = times[f"loop{i}"], times[f"pool1_{i}"]
        rows.append(
            [f"plain loop, pair {i + 1}", f"{lw:.1f}", f"{lc:.1f}", f"{n / lw:.2f}", "", ""]
        )
        rows.append(
            [
                f"run_corpus, pool, 1 worker, pair {i + 1}",
                f"{pw:.1f}",
                f"{pc:.1f}",
                f"{n / pw:.2f}",
                f"**{pw / lw:.2f}x** (CPU {pc / lc:.2f}x)",
                "overhead <= 1.25x",
            ]
        )
    one = sum(times[f"pool1_{i}"][0] for i in range(repeat)) / repeat
    loop = sum(times[f"loop{i}"][0] for i in range(repeat)) / repeat
    w2, c2 = times["pool2"]
    rows.append(
        [
            "run_corpus, pool, 2 workers",
            f"{w2:.1f}",
            f"{c2:.1f}",
            f"{n / w2:.2f}",
            f"{w2 / loop:.2f}x",
            f"speed-up vs mean 1 worker {one / w2:.2f}x (>= 1.7x)",
        ]
    )
    if "ray" in times:
        wr, cr = times["ray"]
        rows.append(
            [
                "run_corpus, Ray local, 2 CPUs",
                f"{wr:.1f}",
                f"{cr:.1f}",
                f"{n / wr:.2f}",
                f"{wr / loop:.2f}x",
                f"vs 2-worker pool {wr / w2:.2f}x (<= 1.5x)",
            ]
        )
    return rows


def _cli_rows(label: str, r: dict[str, float]) -> list[str]:
    return [
        label,
        f"{r['conversations']:,.0f}",
        f"{r['calls']:,.0f}",
        f"{r['errors']:,.0f}",
        f"{r['seconds']:,.0f}",
        f"{r['conversations'] / r['seconds']:,.1f}",
        f"{r['cpu']:,.0f}",
        f"{r['peak_tree_mb']:,.0f}",
        f"{r['peak_pss_mb']:,.0f}",
        f"{r['peak_single_mb']:,.0f}",
        f"{r['db_mb']:,.0f}",
    ]


CLI_HEADER = (
    "ctxlab eval, 2 workers",
    "conversations",
    "call rows",
    "error rows",
    "seconds",
    "conversations/s",
    "CPU s (tree)",
    "peak RSS, tree (MB)",
    "peak PSS, tree (MB)",
    "peak RSS, one process (MB)",
    "DuckDB file (MB)",
)
RSS_SPECS = ("window-drop:budget=2000,4000",)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--conversations", type=int, default=60)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument(
        "--repeat", type=int, default=3, help="loop / 1-worker pairs, run alternately (3)"
    )
    parser.add_argument("--page-conversations", type=int, default=100_000)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--no-page", action="store_true")
    parser.add_argument("--no-runs", action="store_true", help="skip loop / pool / Ray rows")
    parser.add_argument(
        "--absolute",
        type=int,
        default=0,
        metavar="N",
        help="also run ctxlab eval on N conversations of --messages messages, 6 configurations",
    )
    parser.add_argument(
        "--absolute-dir",
        type=Path,
        default=None,
        help="write the --absolute corpus here and keep it (reused when it holds N files)",
    )
    parser.add_argument(
        "--rss-100k",
        action="store_true",
        help="also run ctxlab eval on a 100,000-row JSONL table of 10-20-message chats",
    )
    parser.add_argument("--rss-conversations", type=int, default=100_000, help=argparse.SUPPRESS)
    parser.add_argument(
        "--quick", action="store_true", help="12 conversations, 1 pair, 20,000 for the page"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.page_conversations, args.repeat = 12, 20_000, 1
    versions = ", ".join(
        f"{p} {metadata.version(p)}" for p in ("duckdb", "pyarrow", "streamlit") if _has(p)
    )
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {versions}"
        + (f", ray {metadata.version('ray')}" if _has("ray") else "")
        + f"; niceness {os.nice(0)}; start: {_load()}"
    )
    print()
    grid = _grid()
    with tempfile.TemporaryDirectory(prefix="ctxlab-bench-fleet-") as tmp:
        work = Path(tmp)
        if not args.no_runs:
            corpus = work / "corpus"
            write_sized(corpus, args.conversations, args.messages)
            size = sum(p.stat().st_size for p in corpus.iterdir()) / 1e6
            print(
                f"Corpus: {args.conversations} conversations x ~{args.messages} messages "
                f"({size:.1f} MB; support, coding-agent and plain chats in turn), "
                f"{len(grid)} configurations: {'; '.join(GRID_SPECS)}"
            )
            print()
            n = args.conversations
            times = bench_runs(corpus, work, not args.no_ray and _has("ray"), args.repeat)
            _table(
                ["run", "seconds", "CPU s", "conversations/s", "vs loop (same pair)", "target"],
                _overhead_rows(times, n, args.repeat),
            )
            print(
                f"End: {_load()}. Peak RSS of this process: {_rss_mb(resource.RUSAGE_SELF):.0f} MB."
            )
            print()
        if args.absolute:
            corpus = args.absolute_dir or work / "absolute"
            if len(list(corpus.glob("chat_*.json"))) != args.absolute:
                write_sized(corpus, args.absolute, args.messages)
            size = sum(p.stat().st_size for p in corpus.iterdir()) / 1e6
            print(
                f"Absolute: {args.absolute:,} conversations x ~{args.messages} messages "
                f"({size:,.0f} MB), {len(grid)} configurations; start: {_load()}"
            )
            print()
            result = cli_run(corpus, GRID_SPECS, work / "absolute.duckdb", 2)
            _table(
                CLI_HEADER, [_cli_rows(f"{args.absolute:,} x ~{args.messages} messages", result)]
            )
            print(f"End: {_load()}.")
            print()
        if args.rss_100k:
            table = write_table(work / "table.jsonl", args.rss_conversations)
            size = table.stat().st_size / 1e6
            print(
                f"Memory: a JSONL table of {args.rss_conversations:,} conversations of 10-20 "
                f"messages ({size:,.0f} MB), grid {'; '.join(RSS_SPECS)}; start: {_load()}"
            )
            print()
            result = cli_run(table, RSS_SPECS, work / "rss.duckdb", 2)
            _table(CLI_HEADER, [_cli_rows(f"{args.rss_conversations:,} table rows", result)])
            print(f"End: {_load()}. Target: peak RSS of the run under 1 GB.")
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
