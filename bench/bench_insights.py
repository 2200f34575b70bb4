"""ctxlab insights benchmark: automatic fact picking and fact retention at 1k, 10k, 100k messages.

Run ``python bench/bench_insights.py`` (``--sizes 1000,10000`` to pick sizes). The chats are the
generated agent loop of :func:`ctxlab.samples.generate_large_chat` (the ``large_agent_10k``
sample at 10k: about 8 MB of tool output). "before" is the picker as it was before issue 15,
kept verbatim in ``tests/test_facts_pinned.py`` as the reference the new one must equal; both
run in the same process, so their ratio is meaningful on a noisy machine. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

from ctxlab.formats import load_chat
from ctxlab.insights import extract_facts, fact_retention
from ctxlab.model import Message
from ctxlab.samples import generate_large_chat

ROOT = Path(__file__).resolve().parent.parent


def _reference() -> Callable[[Sequence[Message]], object]:
    """``old_extract_facts`` from tests/test_facts_pinned.py (the pre-issue-15 picker)."""
    spec = importlib.util.spec_from_file_location(
        "facts_reference", ROOT / "tests" / "test_facts_pinned.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.old_extract_facts  # type: ignore[no-any-return]


# Wall time, or with --cpu this process's CPU time, which a busy shared machine stretches less.
_clock: Callable[[], float] = time.perf_counter


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = _clock()
        fn()
        times.append(_clock() - start)
    return statistics.median(times)


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def row(n: int, runs: int, with_before: bool) -> list[str]:
    messages = load_chat(orjson.dumps({"messages": generate_large_chat(n)}))
    tool_mb = sum(len(m.content) for m in messages if m.role.value == "tool") / 1e6
    facts = extract_facts(messages)
    t_new = median_time(lambda: extract_facts(messages), runs)
    before = "—"
    ratio = "—"
    if with_before:
        old = _reference()
        assert old(messages) == facts, "the fast picker must find the same facts"
        t_old = median_time(lambda: old(messages), max(1, runs // 2))
        before = fmt_s(t_old)
        ratio = f"{t_old / t_new:,.1f}x"
    half = messages[len(messages) // 2 :]
    t_keep = median_time(lambda: fact_retention(messages, half, facts), runs)
    return [
        f"{len(messages):,}",
        f"{tool_mb:,.1f} MB",
        f"{len(facts):,}",
        fmt_s(t_new),
        before,
        ratio,
        fmt_s(t_keep),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--runs", type=int, default=5, help="repetitions (median)")
    parser.add_argument(
        "--no-before", action="store_true", help="skip the slow pre-issue-15 reference"
    )
    parser.add_argument("--cpu", action="store_true", help="time with CPU time, not wall time")
    args = parser.parse_args(argv)
    global _clock
    if args.cpu:
        _clock = time.process_time
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    rows = [row(n, args.runs, not args.no_before) for n in sizes]
    headers = [
        "messages",
        "tool output",
        "facts (limit 300)",
        "extract_facts",
        "before (pre-issue-15)",
        "speedup",
        "fact_retention (context: last half)",
    ]
    print("# ctxlab insights benchmark\n")
    print(f"times: {'CPU time (--cpu)' if args.cpu else 'wall time'}, median of {args.runs}\n")
    print("| " + " | ".join(headers) + " |")
    print("|" + "|".join("---" for _ in headers) + "|")
    for cells in rows:
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
