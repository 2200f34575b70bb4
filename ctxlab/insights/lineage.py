"""Summary lineage: what each summary of a compaction chain covers, and how it changed."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.model import Message

__all__ = ["LineageEntry", "summary_lineage", "word_diff"]


@dataclass(frozen=True, slots=True)
class LineageEntry:
    """One compaction of a chain: what it summarizes and which compaction it updated."""

    compaction_id: str
    summary_id: str | None
    previous_compaction_id: str | None
    tail_start_id: str | None
    summary_text: str
    covers: tuple[str, ...]  # ids of original messages folded into it, where known


def summary_lineage(
    history: Sequence[Message], covers: dict[str, tuple[str, ...]] | None = None
) -> list[LineageEntry]:
    """The compaction chain held in ``history``, oldest first.

    Args:
        history: a chat holding compaction pairs (user ``is_compaction`` + assistant
            ``is_summary``).
        covers: compaction id -> ids of the original messages it folded, when known (a replay
            records them); a loaded chat only tells where each tail starts.
    """
    entries: list[LineageEntry] = []
    for i, message in enumerate(history):
        if not message.is_compaction:
            continue
        meta = message.compaction_meta
        summary = history[i + 1] if i + 1 < len(history) and history[i + 1].is_summary else None
        text = (meta.summary_text if meta and meta.summary_text else None) or (
            summary.content if summary else ""
        )
        entries.append(
            LineageEntry(
                compaction_id=message.id,
                summary_id=summary.id if summary else None,
                previous_compaction_id=meta.previous_compaction_id if meta else None,
                tail_start_id=meta.tail_start_id if meta else None,
                summary_text=text,
                covers=(covers or {}).get(message.id, ()),
            )
        )
    return entries


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """A word-level diff: ``(op, text)`` pairs with op in ``=``, ``-``, ``+``."""
    a, b = old.split(), new.split()
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", " ".join(a[i1:i2])))
            continue
        if tag in ("delete", "replace"):
            out.append(("-", " ".join(a[i1:i2])))
        if tag in ("insert", "replace"):
            out.append(("+", " ".join(b[j1:j2])))
    return out
