"""ctxlab engine benchmark: counting, re-trimming, replay and loading, side by side.

Run ``python bench/bench_engine.py`` (sizes 1k, 10k, 100k messages) or ``--quick`` (1k only, a
few repetitions: the CI smoke profile). Prints markdown tables; every figure that matters is a
ratio measured in the same run, because these machines are noisy. See ``bench/README.md``.

Needs only ctxlab; ``langchain-core`` (the ``bench`` extra) adds the LangChain column.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec
import orjson

# Every count here is a first count: never the persistent count store (ctxlab.count_store),
# which would answer from what an earlier run, or the user, counted.
os.environ["CTXLAB_CACHE_DIR"] = ""

from ctxlab import formats
from ctxlab.encodings import load_encoding
from ctxlab.formats import load_chat, messages_to_openai
from ctxlab.model import Message, Role, ToolCall
from ctxlab.replay import replay
from ctxlab.strategies import Strategy, build_strategy
from ctxlab.tokens import ACCOUNTING_O200K, TiktokenCounter

ENCODING = "o200k_base"

# -- synthetic agent chats -------------------------------------------------------------------

_VOCAB_TEXT = (
    "the a to of and in is for that with on it this be as are from by not or at we you can "
    "function class return import def self None True False value error result file path test "
    "config user order service request response status payload json list dict string int "
    "update create delete fetch retry timeout cache token budget context window message "
    "assistant tool call output input stream batch index query database table column row "
    "Traceback (most recent call last): File line raise ValueError KeyError AssertionError "
    "orders_service/api.py orders_service/models.py tests/test_api.py 200 404 500 0.25 1.5 "
    '42 1024 2024-05-15 {"ok": true} [1, 2, 3] => -> == != <= >= += :: // # TODO FIXME '
    "über naïve café 東京 数据 😀 ✓ λ"
)
_VOCAB = tuple(_VOCAB_TEXT.split())
_TOOLS = ("read_file", "search", "run_tests", "edit_file", "list_dir", "shell")
_REPEATED_OUTPUTS = (
    "OK",
    "File written.",
    "No matches found.",
    "============ 42 passed in 3.21s ============",
    "Permission denied",
)
_REPEATED_USER = ("continue", "yes, go ahead", "thanks!", "run the tests again")


class _Corpus:
    """Deterministic text: word slices of one long seeded word stream (fast to cut)."""

    def __init__(self, rng: random.Random, words: int = 200_000) -> None:
        self.words = rng.choices(_VOCAB, k=words)
        self.rng = rng

    def text(self, n_words: int) -> str:
        n_words = max(1, min(n_words, len(self.words) - 1))
        start = self.rng.randrange(0, len(self.words) - n_words)
        return " ".join(self.words[start : start + n_words])


def synthetic_chat(n: int, *, seed: int = 7, distinct: bool = False) -> list[Message]:
    """An agent chat of exactly ``n`` messages with tool calls, seeded and deterministic.

    A long system prompt, user turns, assistant text, assistant tool calls with JSON arguments
    answered by tool outputs of varying size (about 1 in 50 is large: a file or a log of
    thousands of tokens) and, unless ``distinct``, some identical texts as real agents produce
    (re-read files, "OK", "continue"). With ``distinct`` every text is made unique.
    """
    rng = random.Random(seed)
    corpus = _Corpus(rng)
    out: list[Message] = []
    seen_files: list[str] = []
    uniq = 0

    def unique(text: str) -> str:
        nonlocal uniq
        if not distinct:
            return text
        uniq += 1
        return f"{text} #{uniq}"

    def add(role: Role, content: str, **kw: Any) -> None:
        out.append(Message(role, content, f"m{len(out)}", **kw))

    add(Role.SYSTEM, corpus.text(900))
    call_no = 0
    while len(out) < n:
        if rng.random() < 0.08:
            add(Role.USER, unique(rng.choice(_REPEATED_USER)))
        else:
            add(Role.USER, corpus.text(int(rng.lognormvariate(3.2, 0.8))))
        for _ in range(rng.choice((0, 1, 1, 2, 3, 4))):
            if len(out) >= n - 2:
                break
            calls = []
            for _ in range(1 if rng.random() < 0.8 else 2):
                tool = rng.choice(_TOOLS)
                args = {
                    "path": f"orders_service/mod_{rng.randrange(300)}.py",
                    "query": corpus.text(4),
                }
                calls.append(ToolCall(f"call_{call_no}", tool, json.dumps(args)))
                call_no += 1
            thought = "" if rng.random() < 0.6 else corpus.text(rng.randrange(5, 40))
            add(Role.ASSISTANT, thought, tool_calls=tuple(calls))
            for c in calls:
                r = rng.random()
                if r < 0.12:
                    output = unique(rng.choice(_REPEATED_OUTPUTS))
                elif r < 0.20 and seen_files:
                    output = unique(rng.choice(seen_files))  # the agent re-reads a file
                elif r < 0.22:
                    output = corpus.text(rng.randrange(1500, 6000))  # a big file or log
                else:
                    output = corpus.text(int(rng.lognormvariate(4.3, 0.9)))
                    if len(seen_files) < 200 and rng.random() < 0.1:
                        seen_files.append(output)
                add(Role.TOOL, output, tool_call_id=c.id)
        if len(out) < n:
            add(Role.ASSISTANT, corpus.text(int(rng.lognormvariate(3.6, 0.7))))
    return out[:n]


# -- timing helpers --------------------------------------------------------------------------


# What the timings read: wall time, or with --cpu this process's CPU time (user + system), which
# other jobs on a shared machine stretch far less (every figure here runs in this one process).
_clock: Callable[[], float] = time.perf_counter


def _time(fn: Callable[[], object]) -> float:
    gc.collect()
    start = _clock()
    fn()
    return _clock() - start


def median_time(fn: Callable[[], object], runs: int) -> float:
    return statistics.median(_time(fn) for _ in range(max(runs, 1)))


def median_times(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """The median time of each function, timed in turns (a, b, c, a, b, c...).

    Turns spread a burst of load from other jobs over every function alike, so ratios between
    them hold up better than with one block of runs per function.
    """
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(max(runs, 1)):
        for name, fn in fns.items():
            times[name].append(_time(fn))
    return {name: statistics.median(ts) for name, ts in times.items()}


def fmt_s(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds:,.2f} s"


def fmt_x(ratio: float) -> str:
    return f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:,.2f}x"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass(frozen=True)
class Profile:
    sizes: tuple[int, ...]
    runs: int  # repetitions of fast measurements
    count_runs: int  # repetitions of a first count (each needs a fresh counter)


def fresh_counter() -> TiktokenCounter:
    """A gpt-4o counter with empty caches (the shared ``get_counter`` one remembers texts)."""
    return TiktokenCounter("gpt-4o", load_encoding(ENCODING), ACCOUNTING_O200K)


def counted_texts(messages: Sequence[Message]) -> list[str]:
    """Every string a first count tokenizes, in order, duplicates included (the raw baseline)."""
    out: list[str] = []
    for m in messages:
        out.append(m.role.value)
        out.append(m.content)
        if m.name is not None:
            out.append(m.name)
        if m.tool_call_id is not None:
            out.append(m.tool_call_id)
        for c in m.tool_calls:
            out.append(c.name)
            out.append(c.arguments)
    return out


# -- 1. first count --------------------------------------------------------------------------


def bench_count(chats: dict[str, list[Message]], profile: Profile, n: int) -> list[list[str]]:
    return [_count_row(label, messages, profile, n) for label, messages in chats.items()]


def _count_row(label: str, messages: list[Message], profile: Profile, n: int) -> list[str]:
    enc = load_encoding(ENCODING)
    texts = counted_texts(messages)
    tokens = 0

    def ctx() -> None:
        nonlocal tokens
        tokens = fresh_counter().counted(messages).total

    def loop() -> None:
        encode = enc.encode_ordinary
        for t in texts:
            len(encode(t))

    def batch() -> None:
        for ids in enc.encode_ordinary_batch(texts):
            len(ids)

    t_ctx, t_loop = [], []
    for _ in range(profile.count_runs):  # interleaved, so drift hits both alike
        t_ctx.append(_time(ctx))
        t_loop.append(_time(loop))
    t_batch = median_time(batch, 1 if n >= 50_000 else profile.count_runs)
    ctx_s, loop_s = statistics.median(t_ctx), statistics.median(t_loop)
    raw = min(loop_s, t_batch)
    return [
        f"{n:,}",
        label,
        f"{len(texts):,} / {len(set(texts)):,}",
        f"{tokens:,}",
        fmt_s(ctx_s),
        fmt_s(loop_s),
        fmt_s(t_batch),
        fmt_x(ctx_s / raw),
    ]


# -- 2. re-trim with cached counts, against LangChain ----------------------------------------


def langchain_setup(
    messages: Sequence[Message],
) -> tuple[list[Any], Callable[[list[Any]], int]] | None:
    """The chat as LangChain messages and a tiktoken list counter with ctxlab's accounting."""
    try:
        from langchain_core.messages import (
            AIMessage,
            BaseMessage,
            HumanMessage,
            SystemMessage,
            ToolMessage,
        )
    except ImportError:
        return None
    out: list[Any] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            out.append(SystemMessage(m.content))
        elif m.role is Role.USER:
            out.append(HumanMessage(m.content))
        elif m.role is Role.TOOL:
            out.append(ToolMessage(m.content, tool_call_id=m.tool_call_id or ""))
        else:
            calls = [
                {"name": c.name, "args": json.loads(c.arguments or "{}"), "id": c.id}
                for c in m.tool_calls
            ]
            out.append(AIMessage(m.content, tool_calls=calls))
    encode = load_encoding(ENCODING).encode_ordinary
    roles = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}

    def tiktoken_counter(msgs: list[BaseMessage]) -> int:
        """OpenAI cookbook accounting over tiktoken, as LangChain's docs suggest writing it."""
        total = 3  # reply priming
        for msg in msgs:
            total += 3 + len(encode(roles[msg.type])) + len(encode(str(msg.content)))
            if isinstance(msg, ToolMessage):
                total += len(encode(msg.tool_call_id))
            if isinstance(msg, AIMessage):
                for c in msg.tool_calls:
                    args = json.dumps(c["args"])
                    total += 3 + len(encode(c["name"])) + len(encode(args))
        return total

    return out, tiktoken_counter


def bench_trim(messages: list[Message], profile: Profile, n: int) -> tuple[list[list[str]], float]:
    """Rows per strategy; returns also the WindowDrop trim time (replay's reference)."""
    counter = fresh_counter()
    chat = counter.counted(messages)
    budget = chat.total // 2
    lc = langchain_setup(messages)
    lc_time: float | None = None
    lc_kept: int | None = None
    if lc is not None:
        from langchain_core.messages import trim_messages

        lc_messages, lc_counter = lc
        kept: list[Any] = []

        def run_lc() -> None:
            nonlocal kept
            kept = trim_messages(
                lc_messages,
                strategy="last",
                max_tokens=budget,
                token_counter=lc_counter,
                start_on="human",
                include_system=True,
            )

        lc_runs = 1 if n >= 50_000 else (2 if n >= 5_000 else profile.runs)
        lc_time = median_time(run_lc, lc_runs)
        lc_kept = len(kept)
    strategies: list[tuple[str, Strategy]] = [
        ("window-drop", build_strategy("window-drop", {"budget": budget})),
        ("sliding-window", build_strategy("sliding-window", {"window": max(n // 2, 1)})),
        ("trim-last", build_strategy("trim-last", {"max_tokens": budget})),
        ("clear-tool-results", build_strategy("clear-tool-results", {"trigger_tokens": budget})),
    ]
    rows = []
    window_drop_time = 0.0
    for name, strategy in strategies:
        strategy.apply(messages, counter)  # warm per-chat indexes, as the app's first view does
        result = strategy.apply(messages, counter)
        assert len(result.decisions) == len(messages)
        t = median_time(lambda s=strategy: s.apply(messages, counter), profile.runs)  # type: ignore[misc]
        if name == "window-drop":
            window_drop_time = t
        same = ""
        if name == "trim-last" and lc_kept is not None:
            same = "same cut" if lc_kept == len(result.messages) else f"LC kept {lc_kept}"
        rows.append(
            [
                f"{n:,}",
                name,
                f"{len(result.messages):,}",
                fmt_s(t),
                "-" if lc_time is None else fmt_s(lc_time),
                "-" if lc_time is None else fmt_x(lc_time / t),
                same,
            ]
        )
    return rows, window_drop_time


# -- 3. replay -------------------------------------------------------------------------------


def bench_replay(messages: list[Message], profile: Profile, n: int) -> list[list[str]]:
    counter = fresh_counter()
    chat = counter.counted(messages)
    budget = chat.total // 2
    rows = []
    for name, params in (
        ("window-drop", {"budget": budget}),
        # the Replay page's first open at a 100k-token budget (issue 15)
        ("window-drop", {"budget": 100_000}),
        ("sliding-window", {"window": max(n // 2, 1)}),
        ("trim-last", {"max_tokens": budget}),
        ("clear-tool-results", {"trigger_tokens": budget}),
    ):
        strategy = build_strategy(name, params)
        strategy.apply(messages, counter)
        t_trim = median_time(lambda s=strategy: s.apply(messages, counter), profile.runs)  # type: ignore[misc]
        tokenized = counter.texts_tokenized
        calls = 0

        def run(s: Strategy = strategy) -> None:
            nonlocal calls
            calls = len(replay(messages, s, counter))

        t_replay = median_time(run, max(profile.runs // 2, 1))
        retokenized = counter.texts_tokenized - tokenized
        rows.append(
            [
                f"{n:,}",
                f"{name} ({', '.join(f'{k}={v:_}' for k, v in params.items())})",
                f"{calls:,}",
                fmt_s(t_replay),
                fmt_s(t_replay / max(calls, 1)),
                fmt_s(t_trim),
                fmt_x(t_replay / t_trim),
                f"{retokenized:,}",
            ]
        )
    return rows


# -- 4. loading ------------------------------------------------------------------------------


def _peak_bytes(fn: Callable[[], object]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _gc_paused(fn: Callable[[], object]) -> Callable[[], None]:
    """``fn`` run with the cyclic GC paused, as ``load_chat`` runs: a like-for-like baseline."""

    def run() -> None:
        gc.disable()
        try:
            fn()
        finally:
            gc.enable()

    return run


def load_files(messages: list[Message]) -> dict[str, bytes]:
    """The chat as OpenAI JSON, four ways, each named after the reader that takes it.

    As people have it; as API responses give assistant messages (``"refusal": null,
    "annotations": []``), which the fast path keeps in ``extra``; with a key of the user's own
    on every message (a timestamp), which the fast path also keeps in ``extra`` (until issue 15
    it sent the file to the general reader); and with every text as a list of content parts
    (``[{"type": "text", "text": ...}]``), which the general reader takes.
    """
    plain = messages_to_openai(messages)
    api = [dict(m, refusal=None, annotations=[]) if m["role"] == "assistant" else m for m in plain]
    stamped = [
        dict(m, timestamp=f"2026-11-29T12:{k // 60 % 60:02}:{k % 60:02}Z")
        for k, m in enumerate(plain)
    ]
    parts = [
        dict(m, content=[{"type": "text", "text": m["content"]}]) if m.get("content") else m
        for m in plain
    ]
    return {
        "fast path": orjson.dumps({"messages": plain}),
        "fast path, API-response keys": orjson.dumps({"messages": api}),
        "fast path, own key on every message": orjson.dumps({"messages": stamped}),
        "general reader (content parts)": orjson.dumps({"messages": parts}),
    }


def bench_load(messages: list[Message], profile: Profile, n: int) -> list[list[str]]:
    return [_load_row(reader, data, profile, n) for reader, data in load_files(messages).items()]


def _load_row(reader: str, data: bytes, profile: Profile, n: int) -> list[str]:
    takes_fast_path = formats._load_openai_fast(data) is not None
    assert takes_fast_path == reader.startswith("fast path"), reader
    decode = msgspec.json.Decoder().decode
    runs = profile.runs  # a load is cheap next to a count, and noisy at 10k: use more runs
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chat.json"
        path.write_bytes(data)
        assert len(load_chat(path)) == n
        t = median_times(
            {
                "path": lambda: load_chat(path),
                "bytes": lambda: load_chat(data),
                "orjson": _gc_paused(lambda: orjson.loads(data)),
                "msgspec": _gc_paused(lambda: decode(data)),
                "json": _gc_paused(lambda: json.loads(data)),
            },
            runs,
        )
    t_load, t_load_path, t_orjson, t_msgspec, t_json = (
        t["bytes"],
        t["path"],
        t["orjson"],
        t["msgspec"],
        t["json"],
    )
    fastest, parse = min((t_orjson, orjson.loads), (t_msgspec, decode), key=lambda p: p[0])
    peak_load = _peak_bytes(lambda: load_chat(data))
    peak_parse = _peak_bytes(lambda: parse(data))
    mb = 1024 * 1024
    return [
        f"{n:,}",
        reader,
        f"{len(data) / mb:,.1f} MB",
        fmt_s(t_load_path),
        fmt_s(t_load),
        fmt_s(t_orjson),
        fmt_s(t_msgspec),
        fmt_s(t_json),
        fmt_x(t_load / fastest),
        f"{peak_load / mb:,.1f} MB",
        f"{peak_parse / mb:,.1f} MB",
    ]


# -- main ------------------------------------------------------------------------------------


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment() -> str:
    rows = [
        ["python", platform.python_version()],
        ["platform", platform.platform()],
        ["cpu count", str(os.cpu_count())],
        ["ctxlab", _version("ctxlab")],
        ["tiktoken", _version("tiktoken")],
        ["orjson", _version("orjson")],
        ["msgspec", _version("msgspec")],
        ["langchain-core", _version("langchain-core")],
    ]
    return table(["", "version"], rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument(
        "--quick", action="store_true", help="1k messages, few repetitions (CI smoke test)"
    )
    parser.add_argument(
        "--only",
        default="count,trim,replay,load",
        help="comma-separated sections to run (count, trim, replay, load)",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time with this process's CPU time instead of wall time (for a busy machine)",
    )
    args = parser.parse_args(argv)
    global _clock
    if args.cpu:
        _clock = time.process_time
    if args.quick:
        profile = Profile(sizes=(1000,), runs=3, count_runs=1)
    else:
        sizes = tuple(int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip())
        profile = Profile(sizes=sizes, runs=7, count_runs=3)
    sections = {s.strip() for s in args.only.split(",")}
    started = time.perf_counter()
    print("# ctxlab engine benchmark\n")
    print(f"times: {'CPU time (--cpu)' if args.cpu else 'wall time'}\n")
    print(environment())
    print()

    count_rows: list[list[str]] = []
    trim_rows: list[list[str]] = []
    replay_rows: list[list[str]] = []
    load_rows: list[list[str]] = []
    for n in profile.sizes:
        messages = synthetic_chat(n)
        runs = Profile(profile.sizes, profile.runs, 2 if n >= 50_000 else profile.count_runs)
        if "count" in sections:
            chats = {"with repeats": messages, "distinct texts": synthetic_chat(n, distinct=True)}
            count_rows += bench_count(chats, runs, n)
        if "trim" in sections:
            trim_rows += bench_trim(messages, runs, n)[0]
        if "replay" in sections:
            replay_rows += bench_replay(messages, runs, n)
        if "load" in sections:
            load_rows += bench_load(messages, runs, n)
        print(f"<!-- {n:,} messages done at {time.perf_counter() - started:,.1f} s -->", flush=True)

    if count_rows:
        print("\n## 1. First count (fresh counter) vs the fastest raw tiktoken call\n")
        print(
            table(
                [
                    "messages",
                    "chat",
                    "texts / distinct",
                    "tokens",
                    "ctxlab counted()",
                    "raw encode_ordinary loop",
                    "raw encode_ordinary_batch",
                    "ctxlab / fastest raw",
                ],
                count_rows,
            )
        )
    if trim_rows:
        print("\n## 2. Re-trim with cached counts (full TrimResult) vs LangChain trim_messages\n")
        print(
            table(
                [
                    "messages",
                    "strategy",
                    "sent",
                    "ctxlab apply",
                    "langchain trim_messages(last)",
                    "speedup",
                    "check",
                ],
                trim_rows,
            )
        )
    if replay_rows:
        print("\n## 3. Replay over every assistant turn (projection, cached counts)\n")
        print(
            table(
                [
                    "messages",
                    "strategy",
                    "calls",
                    "replay",
                    "per call",
                    "single trim",
                    "replay / trim",
                    "texts re-tokenized",
                ],
                replay_rows,
            )
        )
    if load_rows:
        print("\n## 4. Loading an OpenAI JSON chat\n")
        print(
            table(
                [
                    "messages",
                    "reader",
                    "file",
                    "load_chat(path)",
                    "load_chat(bytes)",
                    "orjson.loads",
                    "msgspec decode",
                    "json.loads",
                    "load / fastest parser",
                    "peak load_chat",
                    "peak fastest parser",
                ],
                load_rows,
            )
        )
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\nprocess peak RSS: {max_rss:,.0f} MB; total time {time.perf_counter() - started:,.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
