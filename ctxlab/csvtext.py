"""CSV text for tables the engine exports (price tables, replays), optionally written out."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from typing import IO

__all__ = ["csv_text"]


def csv_text(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    target: str | os.PathLike[str] | IO[str] | None = None,
) -> str:
    """The CSV of ``header`` and ``rows`` (``\\n`` line ends), also written to ``target``.

    ``target`` is a path (written as UTF-8), an open text stream, or None (only returned).
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    text = buffer.getvalue()
    if isinstance(target, str | os.PathLike):
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    elif target is not None:
        target.write(text)
    return text
