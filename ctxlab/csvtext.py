"""CSV text for tables the engine and the app export (price tables, replays, decisions, reports).

Every cell that is a string starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
is written with a leading ``'``, as OWASP's "CSV injection" advice says: a spreadsheet would
otherwise run it as a formula (``=HYPERLINK(...)`` from a message id becomes a live link). Numbers
stay numbers: an ``int`` or ``float`` cell, or a string that is just a number such as ``-2``,
is written as it is.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Sequence
from typing import IO

__all__ = ["FORMULA_TRIGGERS", "csv_text", "spreadsheet_cell"]

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
"""The first characters that make a spreadsheet read a cell as a formula (OWASP)."""

_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value: object) -> object:
    """``value`` as a CSV cell no spreadsheet runs: a string starting with one of
    :data:`FORMULA_TRIGGERS` gets a leading ``'`` unless it is a plain number.

    >>> spreadsheet_cell('=HYPERLINK("http://x","y")')
    '\\'=HYPERLINK("http://x","y")'
    >>> [spreadsheet_cell(v) for v in ("-2+3", "-2", -2, "a")]
    ["'-2+3", '-2', -2, 'a']
    """
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_TRIGGERS)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def csv_text(
    header: Sequence[str],
    rows: Iterable[Sequence[object]],
    target: str | os.PathLike[str] | IO[str] | None = None,
) -> str:
    """The CSV of ``header`` and ``rows`` (``\\n`` line ends), also written to ``target``; every
    cell passes through :func:`spreadsheet_cell`.

    ``target`` is a path (written as UTF-8), an open text stream, or None (only returned).
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # The csv module quotes only the line terminator's characters, so a lone carriage return in
    # a cell would end the row for every reader: such a row is written with every cell quoted.
    quoted = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in (header, *rows):
        cells = [spreadsheet_cell(cell) for cell in row]
        if any(isinstance(cell, str) and "\r" in cell for cell in cells):
            quoted.writerow(cells)
        else:
            writer.writerow(cells)
    text = buffer.getvalue()
    if isinstance(target, str | os.PathLike):
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    elif target is not None:
        target.write(text)
    return text
