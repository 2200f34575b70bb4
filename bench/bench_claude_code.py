"""Loading a large Claude Code session against parsing its lines with orjson, side by side.

Run ``python bench/bench_claude_code.py`` (a 50 MB session) or ``--mb 5`` for a smaller one.
The session is built deterministically from the real session in
``tests/fixtures/formats/claude_code/project/`` (its sub-agent file: many tool calls, one
response written over several lines): its records are repeated with fresh ``uuid`` /
``message.id`` values until the file reaches the size. Prints a markdown table; the figure
that matters is ``load / orjson``, measured in the same run (target: at most 3x).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

from ctxlab.formats import load_chat, load_chat_file

ROOT = Path(__file__).resolve().parent.parent
SOURCE = (
    ROOT
    / "tests/fixtures/formats/claude_code/project/29ccd257-68b1-427f-ae5f-6524b7cb6f20"
    / "subagents/agent-a2271d1.jsonl"
)


def build_session(target_bytes: int) -> bytes:
    """A main-thread session of about ``target_bytes``: the source records repeated, renamed."""
    records = [orjson.loads(line) for line in SOURCE.read_bytes().splitlines() if line.strip()]
    out: list[bytes] = []
    size = 0
    copy = 0
    while size < target_bytes:
        for record in records:
            r = dict(record)
            r["isSidechain"] = False
            r.pop("agentId", None)
            for key in ("uuid", "parentUuid"):
                if isinstance(r.get(key), str):
                    r[key] = f"{r[key]}-{copy}"
            message = dict(r["message"])
            if isinstance(message.get("id"), str):
                message["id"] = f"{message['id']}-{copy}"
            content = message.get("content")
            if isinstance(content, list):
                blocks = []
                for b in content:
                    b = dict(b)
                    for key in ("id", "tool_use_id"):
                        if isinstance(b.get(key), str):
                            b[key] = f"{b[key]}-{copy}"
                    blocks.append(b)
                message["content"] = blocks
            r["message"] = message
            line = orjson.dumps(r)
            out.append(line)
            size += len(line) + 1
        copy += 1
    return b"\n".join(out) + b"\n"


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mb", type=float, default=50.0, help="session size in MB (default 50)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = parser.parse_args(argv)
    data = build_session(int(args.mb * 1_000_000))
    lines = data.splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_bytes(data)
        loaded = load_chat_file(path)
        assert not loaded.warnings
        t_orjson = best_of(lambda: [orjson.loads(line) for line in lines], args.repeat)
        t_bytes = best_of(lambda: load_chat(data, name="session.jsonl"), args.repeat)
        t_path = best_of(lambda: load_chat(path), args.repeat)
    calls = sum(len(m.tool_calls) for m in loaded.messages)
    print(
        f"Claude Code session: {len(data) / 1e6:.1f} MB, {len(lines):,} lines, "
        f"{len(loaded.messages):,} messages, {calls:,} tool calls, {len(loaded.usage):,} "
        f"billed calls (Python {sys.version.split()[0]})"
    )
    print()
    print("| reader | time | / orjson.loads per line |")
    print("|---|---|---|")
    print(f"| orjson.loads of every line | {t_orjson * 1e3:,.0f} ms | 1.00x |")
    print(f"| load_chat(bytes) | {t_bytes * 1e3:,.0f} ms | {t_bytes / t_orjson:.2f}x |")
    print(f"| load_chat(path) | {t_path * 1e3:,.0f} ms | {t_path / t_orjson:.2f}x |")
    print()
    ratio = statistics.mean([t_bytes / t_orjson, t_path / t_orjson])
    print(f"target <= 3.00x: {'met' if ratio <= 3 else 'NOT met'} ({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
