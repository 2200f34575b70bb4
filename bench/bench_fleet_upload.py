"""Fleet page uploads at their caps: how long the largest accepted zip and grid take.

Run ``python bench/bench_fleet_upload.py`` (a minute or two on a shared 2-core machine). Prints
a markdown table; no timing assertions. Rows:

* **300k non-chat entries**: a stored zip of one chat and 300,000 empty entries, refused by
  :func:`ctxlab.corpus.zip_upload.extract_chats` (the caps are read from the end record).
* **largest zip**: :data:`MAX_ZIP_ENTRIES` entries, :data:`MAX_ZIP_FILES` of them chats that
  add up to just under :data:`MAX_ZIP_BYTES`, the rest empty non-chat entries; extracted.
* **zip bomb**: one deflated member of 1 GB of zeros, refused at the byte cap.
* **largest grid**: :data:`MAX_CONFIGURATIONS` configurations in :data:`MAX_GRID_CHARS`
  characters at most, parsed by :func:`ctxlab.ui.fleet_view.page_grid`.
* **8,000-value grid text**: refused on its length before parsing.
* **evaluation**: ``run_corpus`` inline (as the page runs it) over the extracted largest zip
  under the largest grid, when ``--evaluate`` is given (minutes).
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from ctxlab.corpus import run_corpus
from ctxlab.corpus.zip_upload import MAX_ZIP_BYTES, MAX_ZIP_ENTRIES, MAX_ZIP_FILES, extract_chats
from ctxlab.errors import CtxlabError
from ctxlab.ui.fleet_view import MAX_CONFIGURATIONS, MAX_GRID_CHARS, page_grid


def _timed(action: Callable[[], object]) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        result = action()
        outcome = f"accepted ({len(result)})" if isinstance(result, list) else "accepted"
    except CtxlabError as exc:
        outcome = f"refused: {exc}"
    return time.perf_counter() - start, outcome


def _chat(size: int, seed: int) -> bytes:
    messages, total = [], 0
    i = 0
    while total < size:
        text = f"message {seed}-{i}: " + "lorem ipsum dolor sit amet " * 40
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": text})
        total += len(text) + 40
        i += 1
    return json.dumps(messages).encode()


def largest_zip() -> bytes:
    per_chat = (MAX_ZIP_BYTES - 200_000) // MAX_ZIP_FILES
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(MAX_ZIP_FILES):
            archive.writestr(f"team/chat_{n:03}.json", _chat(per_chat, n))
        for n in range(MAX_ZIP_ENTRIES - MAX_ZIP_FILES):
            archive.writestr(f"assets/{n}.png", b"")
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluate", action="store_true", help="also evaluate the largest zip")
    args = parser.parse_args()
    rows: list[tuple[str, str, float, str]] = []
    work = Path(tempfile.mkdtemp(prefix="bench-fleet-upload-"))

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("chat.json", b"[]")
        for n in range(300_000):
            archive.writestr(f"img/{n}.png", b"")
    many = buffer.getvalue()
    seconds, outcome = _timed(lambda: extract_chats(many, work / "many"))
    rows.append(("300k non-chat entries", f"{len(many):,} B", seconds, outcome))

    big = largest_zip()
    seconds, outcome = _timed(lambda: extract_chats(big, work / "big"))
    chats = sum(p.stat().st_size for p in (work / "big").iterdir())
    size = f"{MAX_ZIP_ENTRIES:,} entries, {len(big):,} B zipped, {chats:,} B of chats"
    rows.append(("largest zip", size, seconds, outcome))

    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("bomb.json", "w", force_zip64=True) as member,
    ):
        for _ in range(1_000):
            member.write(b"\0" * 1_000_000)
    bomb = buffer.getvalue()
    seconds, outcome = _timed(lambda: extract_chats(bomb, work / "bomb"))
    rows.append(("zip bomb (1 GB of zeros)", f"{len(bomb):,} B zipped", seconds, outcome))

    budgets = ",".join(str(1000 + 500 * n) for n in range(MAX_CONFIGURATIONS))
    grid_text = f"window-drop:budget={budgets}"
    assert len(grid_text) <= MAX_GRID_CHARS
    seconds, outcome = _timed(lambda: page_grid(grid_text, "gpt-4o"))
    rows.append(("largest grid", f"{len(grid_text):,} chars", seconds, outcome))

    huge = "window-drop:budget=" + ",".join(str(1000 + n) for n in range(8_000))
    seconds, outcome = _timed(lambda: page_grid(huge, "gpt-4o"))
    rows.append(("8,000-value grid text", f"{len(huge):,} chars", seconds, outcome))

    if args.evaluate:
        grid = page_grid(grid_text, "gpt-4o")
        start = time.perf_counter()
        summary = run_corpus(work / "big", grid, work / "r.duckdb", backend="inline")
        rows.append(
            (
                "evaluate largest zip x largest grid",
                f"{summary.conversations} conversations x {len(grid)} configurations",
                time.perf_counter() - start,
                "inline, as the page runs it",
            )
        )

    print("| case | size | seconds | outcome |")
    print("|---|---|---:|---|")
    for case, size_text, secs, result in rows:
        print(f"| {case} | {size_text} | {secs:.4f} | {result[:110]} |")


if __name__ == "__main__":
    main()
