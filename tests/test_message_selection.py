"""Selection events mapped to a message: a round map point (plain, zoomed or binned map) to the
first message of its block, a message table row to the message at that position of the frame
the table was given.

Streamlit cannot be made to send a Plotly selection in AppTest, so the payloads here are built
the way Streamlit's frontend builds them (checked in its PlotlyChart bundle, 1.67): Plotly's
event point with its array attributes appended (``ids`` as ``id``, ``customdata``) and its
keys in snake case. The browser test (tests/browser/test_message_selection.py) sends real ones.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go
from chatgen import chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.counted import CountedChat
from ctxlab.model import Message
from ctxlab.strategies import Decision
from ctxlab.tokens import TokenCounter
from ctxlab.ui import binned_map, figures, render
from ctxlab.ui.message_selection import map_selection, point_span, table_selection
from ctxlab.visible import visible


def event_points(fig: go.Figure) -> Iterator[dict[str, Any]]:
    """Every point of ``fig`` as Streamlit reports a click on it."""
    for c, trace in enumerate(fig.data):
        for i in range(len(trace.x)):
            point: dict[str, Any] = {
                "curve_number": c,
                "point_number": i,
                "point_index": i,
                "x": trace.x[i],
                "y": trace.y[i],
                "legendgroup": trace.legendgroup,
            }
            if trace.customdata is not None:
                point["customdata"] = trace.customdata[i]
            if trace.ids is not None:
                point["id"] = trace.ids[i]
            yield point


def clicked(point: Mapping[str, Any]) -> dict[str, Any]:
    """The selection state of a click on ``point``."""
    return {"selection": {"points": [dict(point)], "point_indices": [0], "box": [], "lasso": []}}


def drawn_decisions(chat: tuple[Message, ...], data: st.DataObject) -> dict[str, Decision]:
    picks = data.draw(st.lists(st.sampled_from(list(Decision)), min_size=len(chat)))
    return {m.id: d for m, d in zip(chat, picks, strict=False)}


def is_overhead(point: Mapping[str, Any]) -> bool:
    return point["legendgroup"] == "overhead"


@settings(max_examples=40)  # each example builds a Plotly figure (validated: slow)
@given(chat=chats(max_turns=12), data=st.data(), max_blocks=st.integers(1, 6))
def test_a_click_on_any_round_map_block_selects_the_first_message_of_that_block(
    counter: TokenCounter, chat: tuple[Message, ...], data: st.DataObject, max_blocks: int
) -> None:
    counted = counter.counted(chat)
    decisions = drawn_decisions(chat, data)
    overhead = data.draw(st.sampled_from([0, 25]))
    fig = figures.round_map_figure(counted, decisions, max_blocks=max_blocks, overhead=overhead)
    blocks = {(b.start, b.stop): b for b in figures.round_blocks(counted, decisions, max_blocks)}
    seen = set()
    for point in event_points(fig):
        picked = map_selection(clicked(point), len(counted))
        if is_overhead(point):
            assert picked is None  # the tool definitions are no message
            continue
        assert picked is not None
        index, span = picked
        block = blocks[span]
        assert index == block.start == counted.starts[block.first]
        seen.add(span)
    assert seen == set(blocks)  # every block is clickable


@settings(max_examples=40)  # each example builds a Plotly figure (validated: slow)
@given(chat=chats(min_turns=3, max_turns=12), data=st.data())
def test_the_zoomed_strip_maps_its_blocks_like_the_upper_strip(
    counter: TokenCounter, chat: tuple[Message, ...], data: st.DataObject
) -> None:
    counted = counter.counted(chat)
    decisions = drawn_decisions(chat, data)
    n = len(counted.starts)
    lo = data.draw(st.integers(0, n - 1))
    fig = figures.round_map_zoom_figure(counted, decisions, (lo, n))
    zoom = {(b.start, b.stop) for b in figures.round_blocks(counted, decisions, rounds=(lo, n))}
    lower = [p for p in event_points(fig) if fig.data[p["curve_number"]].xaxis == "x2"]
    assert {map_selection(clicked(p), len(counted))[1] for p in lower} == zoom  # type: ignore[index]


@settings(max_examples=40)  # each example builds a Plotly figure (validated: slow)
@given(chat=chats(max_turns=12), data=st.data())
def test_the_hover_text_alone_selects_the_same_message(
    counter: TokenCounter, chat: tuple[Message, ...], data: st.DataObject
) -> None:
    """A figure whose points lost their ``ids`` still maps through its hover's message range."""
    counted = counter.counted(chat)
    fig = figures.round_map_figure(counted, drawn_decisions(chat, data), max_blocks=3)
    for point in event_points(fig):
        bare = {k: v for k, v in point.items() if k != "id"}
        assert map_selection(clicked(bare), len(counted)) == map_selection(
            clicked(point), len(counted)
        )


@settings(max_examples=40)  # each example builds a Plotly figure (validated: slow)
@given(chat=chats(min_turns=2, max_turns=12), data=st.data())
def test_a_click_on_any_segment_of_a_binned_range_selects_the_first_message_of_the_range(
    counter: TokenCounter, chat: tuple[Message, ...], data: st.DataObject
) -> None:
    counted = counter.counted(chat)
    decisions = drawn_decisions(chat, data)
    bins = binned_map.decision_bins(
        counted,
        binned_map.decision_codes(counted, decisions),
        binned_map.bin_edges(counted, bins=data.draw(st.integers(1, 5))),
    )
    fig = binned_map.binned_map_figure(bins, overhead=data.draw(st.sampled_from([0, 9])))
    ranges = {(b.start, b.stop) for b in bins if b.tokens}
    seen = set()
    for point in event_points(fig):
        picked = map_selection(clicked(point), len(counted))
        if is_overhead(point):
            assert picked is None
            continue
        assert picked is not None and picked[1] in ranges and picked[0] == picked[1][0]
        seen.add(picked[1])
    assert seen == ranges


def test_the_map_selection_of_a_chat_that_has_since_shrunk_selects_nothing() -> None:
    assert point_span({"id": "40:48"}, 45) is None
    assert point_span({"customdata": "messages 40–47 · 9 tokens"}, 45) is None
    assert map_selection(clicked({"id": "40:48"}), 48) == (40, (40, 48))


def test_hover_ranges_with_thousands_separators_are_read() -> None:
    hover = "<b>rounds 3,000–3,999</b> · mixed<br>messages 12,000–15,999 · 80,000 tokens"
    assert point_span({"customdata": hover}, 20_000) == (12_000, 16_000)


payloads = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@given(state=payloads, n=st.integers(0, 50))
def test_any_payload_maps_to_a_message_of_the_chat_or_to_nothing(state: object, n: int) -> None:
    picked = map_selection(state, n)
    assert picked is None or 0 <= picked[0] < n
    row = table_selection(state, list(range(100, 100 + n)))
    assert row is None or 100 <= row < 100 + n


@given(
    point=st.fixed_dictionaries(
        {},
        optional={
            "id": st.text(alphabet="0123456789:-, ", max_size=9),
            "customdata": payloads,
            "point_number": st.integers(-3, 9),
        },
    ),
    n=st.integers(0, 50),
)
def test_a_selected_point_never_names_a_span_outside_the_chat(
    point: dict[str, Any], n: int
) -> None:
    span = point_span(point, n)
    assert span is None or 0 <= span[0] < span[1] <= n


@given(chat=chats(min_turns=1, max_turns=10), data=st.data())
def test_a_table_row_selects_the_message_at_that_position_of_the_frame_shown(
    counter: TokenCounter, chat: tuple[Message, ...], data: st.DataObject
) -> None:
    """Rows are positions in the frame given to st.dataframe (as the table shows one filtered
    page of the chat); Streamlit reports them unchanged when the user sorts the table."""
    counted: CountedChat = counter.counted(chat)
    shown = np.asarray(
        sorted(data.draw(st.sets(st.integers(0, len(counted) - 1), min_size=1))), dtype=np.int64
    )
    view = render.message_rows(counted, shown)
    row = data.draw(st.integers(0, len(shown) - 1))
    index = table_selection({"selection": {"rows": [row], "columns": [], "cells": []}}, shown)
    assert index == view["index"].iloc[row]
    assert view["id"].iloc[row] == counted.messages[index].id
    assert table_selection({"selection": {"rows": [], "columns": []}}, shown) is None
    assert table_selection({"selection": {"rows": [len(shown)]}}, shown) is None


@given(
    rows=st.sets(st.integers(0, 5_000), min_size=1, max_size=300),
    size=st.integers(1, 120),
    data=st.data(),
)
def test_the_page_of_a_selected_message_is_the_page_that_shows_it(
    rows: set[int], size: int, data: st.DataObject
) -> None:
    ordered = np.asarray(sorted(rows), dtype=np.int64)
    index = data.draw(st.sampled_from(sorted(rows)))
    page = render.page_of(ordered, index, size)
    assert page is not None
    start, stop = render.page_bounds(len(ordered), page, size)
    assert index in ordered[start:stop]
    hidden = data.draw(st.integers(0, 5_001).filter(lambda k: k not in rows))
    assert render.page_of(ordered, hidden, size) is None


@given(chat=chats(min_turns=1, max_turns=10), data=st.data())
def test_the_rows_of_one_page_equal_those_rows_of_the_whole_chat(
    counter: TokenCounter, chat: tuple[Message, ...], data: st.DataObject
) -> None:
    """The table builds only the page it shows; each row must be what a frame of the whole
    chat (built row by row from the messages, rounds and counts) holds at that position."""
    counted: CountedChat = counter.counted(chat)
    shown = np.asarray(
        sorted(data.draw(st.sets(st.integers(0, len(counted) - 1), min_size=1))), dtype=np.int64
    )
    page = render.message_rows(counted, shown)
    rounds = counted.rounds()
    for row, i in enumerate(shown.tolist()):
        message = counted.messages[i]
        assert page["index"].iloc[row] == i
        assert page["id"].iloc[row] == visible(message.id)
        assert page["role"].iloc[row] == message.role.value
        assert page["tokens"].iloc[row] == counted.counts[i]
        assert page["preview"].iloc[row] == visible(message.preview(120))
        found = rounds[page["round"].iloc[row]]
        assert found.start <= i < found.stop
