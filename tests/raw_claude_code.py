"""Reading a Claude Code session's raw lines for expected values, without ctxlab's loader."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path


def raw_billed(path: Path) -> list[int]:
    """Each main-thread API message's billed prompt (input + cache read + cache write), read from
    the raw lines: Claude Code repeats a message's usage on every line of it, so the first wins.

    A rewind leaves two typed prompts with one parent: the lines from the first prompt up to the
    second are an abandoned branch the model no longer saw (ctxlab leaves it out), so they are
    skipped here too.
    """
    seen: dict[str, int] = {}
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    prompts: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        if r.get("type") == "user" and isinstance(r["message"]["content"], str):
            prompts.setdefault(r.get("parentUuid") or "", []).append(i)
    gone = {i for kids in prompts.values() for a, b in pairwise(kids) for i in range(a, b)}
    for k, record in enumerate(records):
        message = record.get("message")
        if k in gone or record.get("isSidechain") or not isinstance(message, dict):
            continue
        usage = message.get("usage")
        if not usage or message.get("id") in seen:
            continue
        seen[message["id"]] = (
            usage["input_tokens"]
            + usage.get("cache_read_input_tokens", 0)
            + usage.get("cache_creation_input_tokens", 0)
        )
    return list(seen.values())
