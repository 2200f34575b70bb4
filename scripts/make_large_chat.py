#!/usr/bin/env python
"""Write the generated large agent chat (deterministic, seeded).

    python scripts/make_large_chat.py --messages 10000 \\
        --out sample_chats/generated/large_agent_10k.json

The app and the tests do not need this script: ``ctxlab.samples.ensure_generated`` builds the
same file on first use. Use it for other sizes (e.g. 100,000 messages for benchmarks).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ctxlab.samples import ensure_large_chat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a generated agent chat.")
    parser.add_argument("--messages", type=int, default=10_000, help="minimum message count")
    parser.add_argument("--seed", type=int, default=10_000)
    parser.add_argument(
        "--out", type=Path, default=Path("sample_chats/generated/large_agent_10k.json")
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    path = ensure_large_chat(args.out, args.messages, seed=args.seed)
    size = path.stat().st_size
    print(f"{path}: {size / 1e6:.1f} MB in {time.perf_counter() - start:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
