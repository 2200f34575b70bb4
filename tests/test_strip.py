"""The HTML strip that draws a round map without Plotly (the Replay's map at a turn): the same
blocks, tokens, hover text, lines and legend as the figure it is drawn from."""

from __future__ import annotations

import re
from collections import Counter

import plotly.graph_objects as go
import pytest
from app_support import _StripReader
from chatgen import chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.catalog import get_model
from ctxlab.model import Message, Role
from ctxlab.strategies import Decision
from ctxlab.tokens import TokenCounter
from ctxlab.ui.binned_map import bin_edges, binned_map_figure, decision_bins, decision_codes
from ctxlab.ui.figures import DECISION_LEGEND, OVERHEAD_LABEL, round_map_figure
from ctxlab.ui.strip import plain_text, strip_html


def read(body: str) -> _StripReader:
    reader = _StripReader()
    reader.feed(body)
    return reader


def titles(body: str) -> list[str]:
    return read(body).tooltips


def expected_totals(
    chat: tuple[Message, ...], counts: tuple[int, ...], picked: list[Decision]
) -> dict[str, int]:
    out: Counter[str] = Counter()
    for d, n in zip(picked, counts, strict=True):
        out[DECISION_LEGEND[d.value]] += n
    return {k: v for k, v in out.items() if v}


@settings(max_examples=40)
@given(chat=chats(min_turns=1, max_turns=8), data=st.data())
def test_a_round_map_strip_draws_every_block_with_its_tokens_and_hover(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    picked = data.draw(
        st.lists(st.sampled_from(list(Decision)), min_size=len(chat), max_size=len(chat))
    )
    fig = round_map_figure(
        counted, {m.id: d for m, d in zip(chat, picked, strict=True)}, title="Round map at turn 7"
    )
    body = strip_html(fig)
    reader = read(body)
    assert reader.caption == "Round map at turn 7"
    # the figure's blocks (a round of mixed decisions is one "mixed" block), width for width
    assert reader.tokens == {t.name: sum(t.x) for t in fig.data}
    assert titles(body) == [plain_text(str(c)) for t in fig.data for c in t.customdata]
    assert body.count("data-tokens=") == sum(len(t.x) for t in fig.data)


@settings(max_examples=30)
@given(chat=chats(min_turns=1, max_turns=8), data=st.data())
def test_a_binned_map_strip_keeps_each_decisions_tokens(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    picked = data.draw(
        st.lists(st.sampled_from(list(Decision)), min_size=len(chat), max_size=len(chat))
    )
    decisions = {m.id: d for m, d in zip(chat, picked, strict=True)}
    bins = decision_bins(counted, decision_codes(counted, decisions), bin_edges(counted, bins=5))
    reader = read(strip_html(binned_map_figure(bins, title="binned")))
    assert reader.tokens == expected_totals(chat, counted.counts, picked)


def test_lines_labels_overhead_and_legend_come_from_the_figure(
    counter: TokenCounter,
) -> None:
    chat = (
        Message(Role.USER, "What is the weather in Bremen? " * 40, "u"),
        Message(Role.ASSISTANT, "Rainy, 11 degrees. " * 40, "a"),
        Message(Role.USER, "And tomorrow?", "u2"),
        Message(Role.ASSISTANT, "Sunny.", "a2"),
    )
    counted = counter.counted(chat)
    decisions = {"u": Decision.DROPPED, "a": Decision.DROPPED, "u2": Decision.KEPT}
    decisions["a2"] = Decision.KEPT
    window = get_model("gpt-4o")
    total = counted.prefix[-1]
    fig = round_map_figure(
        counted, decisions, budget=total // 2 + 40, window=window, overhead=40, title="t"
    )
    body = strip_html(fig)
    reader = read(body)
    assert reader.tokens[OVERHEAD_LABEL] == 40
    assert f"budget {total // 2 + 40:,}" in body
    # the window holds the whole chat: a label with an arrow at the left end, and no line
    assert "data-strip-label title=" in body and f"← {window.window_label()}" in body
    assert reader.markers == [f"budget {total // 2 + 40:,}"]
    # the overhead block starts the strip; the budget line stands where the newest
    # budget - overhead tokens begin, on a scale from -overhead to the chat's end
    assert re.search(r'data-name="tool definitions[^"]*"[^>]*><div [^>]*left:0.0000%', body)
    lines = [float(x) for x in re.findall(r'data-marker="[^"]*" style="[^"]*left:([0-9.]+)%', body)]
    assert lines[0] == pytest.approx((total - total // 2 + 40) * 100 / (total + 40), abs=1e-3)
    for name in (DECISION_LEGEND["kept"], DECISION_LEGEND["dropped"], OVERHEAD_LABEL):
        assert f"</span>{name}</span>" in body.replace("&amp;", "&")
    assert f"{total:,} tokens" in body


def test_hover_text_is_escaped_and_the_figure_must_be_a_strip() -> None:
    # the figures' hover text is markup with the chat's own text escaped in it
    hostile = "<b>round 1</b><br>&quot;&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    fig = go.Figure(
        go.Bar(orientation="h", x=[5], base=[0], y=["rounds"], customdata=[hostile], name="k<i>")
    )
    body = strip_html(fig)
    assert "<script>" not in body and "<b>" not in body
    assert titles(body) == ['round 1\n"</title><script>alert(1)</script>']
    assert 'data-name="k&lt;i&gt;"' in body
    with pytest.raises(ValueError, match="horizontal bars"):
        strip_html(go.Figure(go.Scatter(x=[1], y=[2])))
