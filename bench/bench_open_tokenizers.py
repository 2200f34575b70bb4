"""Open-model counters against tiktoken o200k on the same ~1 MB of real chat text.

    python bench/bench_open_tokenizers.py              # every family whose extra is installed
    python bench/bench_open_tokenizers.py --mb 0.25    # a smaller mix
    python bench/bench_open_tokenizers.py --repeat 5

The mix is the text of the repository's fixture chats (tests/fixtures/real_chats,
tests/fixtures/formats, ctxlab/sample_chats): user and assistant prose, code, tool call
arguments, tool outputs and logs, in file order, cycled until it reaches the size asked for.
Each family of :data:`ctxlab.tokenizer_families.FAMILIES` whose extra is installed counts every
text with a fresh counter (``count_text``, so no per-text cache helps); tiktoken's o200k_base
counts the same texts with ``encode_ordinary``. The table gives each family's tokens, how far
the approximate counter (characters / 4) is from them, the median time of ``--repeat`` runs and
that time divided by o200k's in the same run (the machine is shared: only the ratio means
much). Building a counter (reading its vocabulary) is timed apart. The persistent count store
is switched off (``CTXLAB_CACHE_DIR=``), so every run tokenizes. No timing is asserted.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Counters share counts through a persistent store across processes: off, so each run tokenizes.
os.environ["CTXLAB_CACHE_DIR"] = ""

from ctxlab.encodings import load_encoding  # noqa: E402
from ctxlab.errors import CtxlabError  # noqa: E402
from ctxlab.formats import load_chat_file  # noqa: E402
from ctxlab.tokenizer_families import FAMILIES  # noqa: E402

PATTERNS = (
    "tests/fixtures/real_chats/*.json",
    "tests/fixtures/formats/**/*.json",
    "tests/fixtures/formats/**/*.jsonl",
    "ctxlab/sample_chats/*.json",
)


def chat_texts() -> list[str]:
    """Every non-empty text of the fixture chats: contents and tool call arguments."""
    paths = sorted(
        {p for pattern in PATTERNS for p in glob.glob(str(ROOT / pattern), recursive=True)}
    )
    texts: list[str] = []
    for path in paths:
        try:
            chat = load_chat_file(path)
        except CtxlabError:
            continue  # a file of a task folder that is no chat
        for message in chat.messages:
            if message.content:
                texts.append(message.content)
            texts.extend(call.arguments for call in message.tool_calls if call.arguments)
    return texts


def mix(megabytes: float) -> list[str]:
    """The fixture texts in order, cycled until their UTF-8 size reaches ``megabytes``."""
    source = chat_texts()
    goal = int(megabytes * 1_000_000)
    out: list[str] = []
    size = 0
    while size < goal:
        for text in source:
            out.append(text)
            size += len(text.encode("utf-8"))
            if size >= goal:
                break
    return out


def timed(run: Callable[[], int], repeat: int) -> tuple[int, float]:
    """(result, median seconds) of ``repeat`` calls of ``run``."""
    times: list[float] = []
    result = 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=1.0, help="size of the mix (default 1 MB)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per counter (median)")
    args = parser.parse_args(argv)
    texts = mix(args.mb)
    chars = sum(len(t) for t in texts)
    nbytes = sum(len(t.encode("utf-8")) for t in texts)
    approx = sum(math.ceil(len(t) / 4) for t in texts)
    print(f"mix: {len(texts):,} texts, {nbytes:,} bytes, {chars:,} characters; approx {approx:,}")

    o200k = load_encoding("o200k_base")
    base_tokens, base_s = timed(
        lambda: sum(len(o200k.encode_ordinary(t)) for t in texts), args.repeat
    )
    rows = [("tiktoken o200k_base", base_tokens, base_s, 0.0)]
    skipped: list[str] = []
    for family in FAMILIES.values():
        if not family.available():
            skipped.append(f"{family.name} ({family.install_hint()})")
            continue
        start = time.perf_counter()
        family.make_counter(family.name)  # the first build reads the vocabulary
        setup = time.perf_counter() - start
        # a fresh counter (empty caches) for every run, built before the clock starts
        fresh = iter([family.make_counter(family.name) for _ in range(args.repeat)])

        def run(fresh=fresh) -> int:  # type: ignore[no-untyped-def]
            counter = next(fresh)
            return sum(counter.count_text(t) for t in texts)

        tokens, seconds = timed(run, args.repeat)
        rows.append((family.name, tokens, seconds, setup))

    print()
    print("| counter | tokens | approx vs tokens | seconds | time / o200k | first build s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, tokens, seconds, setup in rows:
        gap = (approx - tokens) / tokens * 100
        print(
            f"| {name} | {tokens:,} | {gap:+.1f}% | {seconds:.3f} | {seconds / base_s:.2f}x "
            f"| {setup:.2f} |"
        )
    if skipped:
        print("\nnot installed: " + "; ".join(skipped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
