"""CPU to count a never-seen 100k-message chat, and a 16 MB word against 16 MB of prose.

Run ``PYTHONPATH=$PWD python bench/bench_counters.py`` from the repository root (about a minute;
``--messages 10000`` for less). The chat is the project's generated agent chat
(:func:`ctxlab.samples.ensure_large_chat`, seeded: byte-identical everywhere), written once to
``--folder``. The persistent count store is off (``CTXLAB_CACHE_DIR=``): every figure is a
first count.

Table 1, issue 26's "first count of a never-seen 100k chat <= 0.5x the raw single-thread
tiktoken ``encode_ordinary`` loop": the chat's distinct texts counted one by one in a plain loop
on one thread with tiktoken's ``encode_ordinary`` (the reference), bpe-openai's linear BPE
(``count``), ``rs_bpe`` when it is importable (evaluated, not a dependency: see
ctxlab/tokens.py), and ctxlab's first ``counted()`` of the whole chat with a fresh counter and
the store off (fields, digests, caches and rounds included). CPU seconds
(``time.process_time``), best of ``--runs`` taken in turns, the ratio to tiktoken, and whether
the counts equal tiktoken's.

Table 2, issue 26's "a 16 MB single word costs at most 3x 16 MB of prose": ctxlab's counter on
16 MiB of the repository's Markdown, on one word of random letters and on one letter repeated,
best of ``--runs``.

Makes no assertions: tests/test_linear_counter.py and tests/test_long_runs.py check the counts.
"""

from __future__ import annotations

import argparse
import os
import random
import string
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["CTXLAB_CACHE_DIR"] = ""  # first counts only: no persistent store

from ctxlab.encodings import load_encoding  # noqa: E402
from ctxlab.formats import load_chat  # noqa: E402
from ctxlab.long_runs import _linear_tokenizer  # noqa: E402
from ctxlab.samples import ensure_large_chat  # noqa: E402
from ctxlab.tokens import _CachingCounter, new_counter  # noqa: E402

MIB = 1 << 20


def _cpu(work: Callable[[], int]) -> tuple[float, int]:
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def _optional_rs_bpe() -> Callable[[str], int] | None:
    try:
        from rs_bpe.bpe import openai  # type: ignore[import-not-found]
    except ImportError:
        return None
    count: Callable[[str], int] = openai.o200k_base().count
    return count


def chat_table(path: Path, runs: int) -> None:
    messages = load_chat(path)
    texts = list(dict.fromkeys(t for m in messages for t in _CachingCounter._fields(m)))
    encoding = load_encoding("o200k_base")
    linear = _linear_tokenizer("o200k_base")
    linear.count("warm up")
    encode = encoding.encode_ordinary
    rows: list[tuple[str, Callable[[], int]]] = [
        ("tiktoken encode_ordinary loop (reference)", lambda: sum(len(encode(t)) for t in texts)),
        ("bpe-openai count loop", lambda: sum(linear.count(t) for t in texts)),
    ]
    rs_bpe = _optional_rs_bpe()
    if rs_bpe is not None:
        rows.append(("rs_bpe count loop (not a dependency)", lambda: sum(rs_bpe(t) for t in texts)))

    def ctxlab_first_count() -> int:
        os.environ["CTXLAB_CACHE_DIR"] = ""  # the store off: a never-seen chat
        return new_counter("gpt-4o").counted(messages).total

    rows.append(("ctxlab first counted(), store off (goal <= 0.5x)", ctxlab_first_count))
    print(
        f"{len(messages):,} messages, {len(texts):,} distinct texts, "
        f"{sum(map(len, texts)) / MIB:.0f} MiB of text; best of {runs} runs, taken in turns\n"
    )
    best = [float("inf")] * len(rows)
    totals = [0] * len(rows)
    for _ in range(runs):  # in turns, so that a burst of load on the machine hits every row
        for k, (_, work) in enumerate(rows):
            seconds, totals[k] = _cpu(work)
            best[k] = min(best[k], seconds)
    print("| counter | CPU s | x tiktoken | same total |")
    print("|---|---:|---:|---|")
    reference, expected = best[0], totals[0]
    for (label, _), seconds, total in zip(rows, best, totals, strict=True):
        # ctxlab's total is the chat's (accounting included): compared message by message.
        same = _same_as_reference(messages, encoding) if "ctxlab" in label else total == expected
        print(f"| {label} | {seconds:.2f} | {seconds / reference:.2f}x | {same} |", flush=True)


def _same_as_reference(messages: tuple, encoding: object) -> bool:  # type: ignore[type-arg]
    """Whether a fresh counter's per-message counts equal tiktoken's, field by field."""
    counter = new_counter("gpt-4o")
    encode = encoding.encode_ordinary  # type: ignore[attr-defined]
    got = counter.counts(messages)
    want = [
        counter._overhead(m) + sum(len(encode(t)) for t in counter._fields(m)) for m in messages
    ]
    return got == want


def word_table(runs: int) -> None:
    prose_source = "\n\n".join(
        (ROOT / name).read_text(encoding="utf-8") for name in ("README.md", "ARCHITECTURE.md")
    )
    size = 16 * MIB
    rng = random.Random(16)
    cases = {
        "16 MiB of prose": (prose_source * (size // len(prose_source) + 1))[:size],
        "one 16 MiB word of random letters (goal <= 3x)": "".join(
            rng.choices(string.ascii_lowercase, k=size)
        ),
        "one 16 MiB word of 'a' (goal <= 3x)": "a" * size,
    }
    print(f"\n| text | ctxlab count, CPU s (best of {runs}) | x prose |")
    print("|---|---:|---:|")
    prose = 0.0
    for label, text in cases.items():
        best = min(
            _cpu(lambda t=text: new_counter("gpt-4o").count_text(t))[0]  # type: ignore[misc]
            for _ in range(runs)
        )
        prose = prose or best
        print(f"| {label} | {best:.2f} | {best / prose:.2f}x |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "ctxlab-bench-counters"
    )
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    path = ensure_large_chat(args.folder / f"agent_{args.messages}.json", args.messages)
    chat_table(path, args.runs)
    word_table(args.runs)


if __name__ == "__main__":
    main()
