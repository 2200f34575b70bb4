"""The selected message: one value per session, set by a click on the round map, a click on a
row of the message table, or the typed number, and read by the message inspector.

A click on the map selects the first message of the block clicked. A block is one round on a
short chat; on a long chat (more rounds than the map draws blocks, or the binned map) it spans
several rounds, and the selection remembers that span so the inspector can name it and the
message table can open the page that holds it. Which messages a block covers is read from the
clicked point itself (its ``id``, ``"start:stop"``, set by the figure builders; or the
``messages A–B`` line of its hover text), never from trace or point numbers, which change when
a figure gains or reorders traces.

A table row is mapped through the row's integer position in the frame the table was given:
Streamlit reports that position whatever order the user sorted the displayed table into.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from ctxlab.counted import CountedChat

__all__ = [
    "SELECTED",
    "Selection",
    "current",
    "index_of",
    "map_selection",
    "on_map_select",
    "on_number_change",
    "on_table_select",
    "point_span",
    "select",
    "table_selection",
]

SELECTED = "ctx.selected-message"
"""Session-state key of the selected :class:`Selection` (a plain value, not a widget's, so it
lives on while the inspector is not drawn: another tab open, another page visited)."""

_RANGE_ID = re.compile(r"^(\d+):(\d+)$")
_RANGE_HOVER = re.compile(r"messages ([\d,]+)\s*[–-]\s*([\d,]+)")


@dataclass(frozen=True, slots=True)
class Selection:
    """The selected message (by id, so it holds across strategies and budgets) and, when it
    came from a map block spanning several messages, that block's ``span`` ``(start, stop)``."""

    message_id: str
    source: str  # "map", "table" or "number"
    span: tuple[int, int] | None = None


def point_span(point: Mapping[str, Any], n: int) -> tuple[int, int] | None:
    """Messages ``(start, stop)`` of the map block behind one selected point, or None (a point
    that is no block of messages, e.g. the tool definitions' block, or out of the chat's ``n``).

    >>> point_span({"id": "4:9", "curve_number": 3, "point_number": 0}, 20)
    (4, 9)
    >>> point_span({"customdata": "<b>round 2</b> · kept<br>messages 4–8 · 310 tokens"}, 20)
    (4, 9)
    >>> point_span({"id": "4:9"}, 5) is None
    True
    """
    span: tuple[int, int] | None = None
    ident = point.get("id")
    if isinstance(ident, str) and (found := _RANGE_ID.match(ident)):
        span = int(found[1]), int(found[2])
    else:
        hover = point.get("customdata")
        if isinstance(hover, list | tuple) and hover:
            hover = hover[0]
        if isinstance(hover, str) and (found := _RANGE_HOVER.search(hover)):
            first, last = (int(g.replace(",", "")) for g in found.groups())
            span = first, last + 1
    if span is None or not 0 <= span[0] < span[1] <= n:
        return None
    return span


def map_selection(state: Any, n: int) -> tuple[int, tuple[int, int]] | None:
    """The message a round map selection event selects, and the span of its block.

    ``state`` is what ``st.plotly_chart(..., on_select=...)`` keeps under its key: a mapping
    with ``selection.points``. The first point that is a block of messages wins (a click
    selects one point); None when no point is.
    """
    points = _get(_get(state, "selection"), "points") or ()
    for point in points:
        if isinstance(point, Mapping) and (span := point_span(point, n)) is not None:
            return span[0], span
    return None


def table_selection(state: Any, shown: Sequence[int] | np.ndarray) -> int | None:
    """The message a message-table selection event selects: the selected row's integer
    position in the frame given to ``st.dataframe``, looked up in ``shown`` (the chat index
    of each of that frame's rows). None when no row (or a row past the frame) is selected.

    >>> table_selection({"selection": {"rows": [2], "columns": []}}, [10, 11, 15])
    15
    """
    rows = _get(_get(state, "selection"), "rows") or ()
    for row in rows:
        if isinstance(row, int) and 0 <= row < len(shown):
            return int(shown[row])
    return None


def _get(value: Any, name: str) -> Any:
    """``value[name]`` for a mapping (Streamlit's selection states are dict-like), else None."""
    if isinstance(value, Mapping):
        return value.get(name)
    return None


def index_of(selection: Selection | None, counted: CountedChat) -> int:
    """The chat index of the selected message; 0 when nothing (or a message not in this chat)
    is selected."""
    if selection is None:
        return 0
    return counted.positions.get(selection.message_id, 0)


def current(counted: CountedChat) -> tuple[int, Selection | None]:
    """The selected message's index in ``counted`` and the selection (None: none in it)."""
    held = st.session_state.get(SELECTED)
    selection = held if isinstance(held, Selection) else None
    if selection is not None and selection.message_id not in counted.positions:
        selection = None
    return index_of(selection, counted), selection


def select(
    counted: CountedChat, index: int, source: str, span: tuple[int, int] | None = None
) -> None:
    """Make message ``index`` of ``counted`` the selected one."""
    if 0 <= index < len(counted):
        st.session_state[SELECTED] = Selection(counted.messages[index].id, source, span)


def on_map_select(key: str, counted: CountedChat, reveal: Callable[[], None]) -> None:
    """``on_select`` callback of the round map under ``key``: select the clicked block's first
    message, then ``reveal`` the inspector (e.g. open its tab)."""
    picked = map_selection(st.session_state.get(key), len(counted))
    if picked is not None:
        index, span = picked
        select(counted, index, "map", span if span[1] - span[0] > 1 else None)
        reveal()


def on_table_select(key: str, counted: CountedChat, shown: Sequence[int] | np.ndarray) -> None:
    """``on_select`` callback of the message table under ``key``, whose rows are the chat's
    messages ``shown``: select the clicked row's message."""
    index = table_selection(st.session_state.get(key), shown)
    if index is not None:
        select(counted, index, "table")


def on_number_change(key: str, counted: CountedChat) -> None:
    """``on_change`` callback of the typed message number under ``key``."""
    value = st.session_state.get(key)
    if isinstance(value, int | float):
        select(counted, int(value), "number")
