"""Seconds to count pathological text against prose of the same size: tiktoken vs ctxlab.

Run ``PYTHONPATH=$PWD python bench/bench_pathological.py`` from the repository root (about two
minutes; ``--sizes 1,4`` for less, ``--encoding cl100k_base`` for the other encoding).

For each size (MiB of characters) it counts prose (the repository's own Markdown, repeated), one
unbroken word of one letter, one word of random lowercase letters, one run of punctuation and one
run of spaces, with ``tiktoken``'s ``encode_ordinary`` alone and with ctxlab's counter (a fresh
counter per text, so no cache helps). Each cell is the best of ``--runs`` runs in seconds, with
the ratio to prose of the same size in parentheses. ``panic`` marks a text tiktoken cannot count
at all (its pattern engine overflows its stack). The one-off load of the linear-time tokenizer
(:mod:`ctxlab.long_runs`) is timed on its own, before the table.

Makes no assertions: tests/test_long_runs.py checks the counts.
"""

from __future__ import annotations

import argparse
import os
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# First counts only: never the persistent count store (ctxlab.count_store).
os.environ["CTXLAB_CACHE_DIR"] = ""

from ctxlab.encodings import load_encoding  # noqa: E402
from ctxlab.long_runs import _linear_tokenizer  # noqa: E402
from ctxlab.tokens import new_counter  # noqa: E402

MIB = 1 << 20


def _prose(size: int) -> str:
    text = "\n\n".join(
        (ROOT / name).read_text(encoding="utf-8")
        for name in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md")
    )
    return (text * (size // len(text) + 1))[:size]


def _cases(size: int) -> dict[str, str]:
    rng = random.Random(22)
    return {
        "prose": _prose(size),
        "one word 'a'": "a" * size,
        "one random word": "".join(rng.choices(string.ascii_lowercase, k=size)),
        "punctuation run": "".join(rng.choices("!#$%&*+-.:;<=>?@^_|~", k=size)),
        "spaces": " " * size,
    }


def _best(count: Callable[[str], int], text: str, runs: int) -> float | None:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        try:
            count(text)
        except BaseException as exc:  # pyo3's PanicException derives from BaseException
            if type(exc).__name__ == "PanicException":
                return None
            raise
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,4,16", help="MiB, comma separated")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--encoding", default="o200k_base")
    args = parser.parse_args()

    encoding = load_encoding(args.encoding)
    start = time.perf_counter()
    _linear_tokenizer(args.encoding).count("warm up")
    print(f"linear tokenizer load ({args.encoding}): {time.perf_counter() - start:.2f} s\n")

    def tiktoken_count(text: str) -> int:
        return len(encoding.encode_ordinary(text))

    def ctxlab_count(text: str) -> int:
        return new_counter(args.encoding).count_text(text)

    print("| size | text | tiktoken s (x prose) | ctxlab s (x prose) |")
    print("|---:|---|---:|---:|")
    for mib in (int(s) for s in args.sizes.split(",")):
        prose_times: dict[str, float] = {}
        for label, text in _cases(mib * MIB).items():
            cells = []
            for name, count in (("tiktoken", tiktoken_count), ("ctxlab", ctxlab_count)):
                seconds = _best(count, text, args.runs)
                if seconds is None:
                    cells.append("panic")
                    continue
                if label == "prose":
                    prose_times[name] = seconds
                cells.append(f"{seconds:.3f} ({seconds / prose_times[name]:.1f}x)")
            print(f"| {mib} MiB | {label} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main()
