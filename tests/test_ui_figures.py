"""Figure builders and safe text, called directly as plain functions."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.model import Message, Role
from ctxlab.redaction import MARKER_PATTERN
from ctxlab.strategies import Decision, build_strategy
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.examples import example_chat
from ctxlab.ui.text import highlighted_html, hover_safe, visible


def _chat(rounds: int) -> tuple[Message, ...]:
    out: list[Message] = []
    for k in range(rounds):
        out.append(Message(Role.USER, f"question {k}", f"u{k}"))
        out.append(Message(Role.ASSISTANT, f"answer {k}", f"a{k}"))
    return tuple(out)


def _hovers(fig: object) -> list[str]:
    return [text for trace in fig.data for text in (trace.customdata or ())]  # type: ignore[attr-defined]


def test_round_map_has_one_block_per_round_below_the_limit(counter: TokenCounter) -> None:
    counted = counter.counted(_chat(30))
    result = build_strategy("window-drop", {"budget": counted.total // 2}).apply(
        counted.messages, counter
    )
    blocks = figures.round_blocks(counted, result.decisions)
    assert len(blocks) == 30
    assert sum(b.tokens for b in blocks) == sum(counted.counts)
    assert {b.decision for b in blocks} == {"kept", "dropped"}


def test_round_map_aggregates_thousands_of_rounds(counter: TokenCounter) -> None:
    counted = counter.counted(_chat(3000))
    decisions = {
        m.id: (Decision.KEPT if i % 7 else Decision.DROPPED) for i, m in enumerate(counted.messages)
    }
    fig = figures.round_map_figure(counted, decisions)
    bars = sum(len(trace.x) for trace in fig.data)
    assert bars <= figures.MAX_BLOCKS
    blocks = figures.round_blocks(counted, decisions)
    assert blocks[0].first == 0 and blocks[-1].last == 2999
    assert sum(b.tokens for b in blocks) == sum(counted.counts)
    assert any(b.label.startswith("rounds ") for b in blocks)


def test_adjacent_rounds_with_one_decision_merge_before_binning(counter: TokenCounter) -> None:
    counted = counter.counted(_chat(1000))
    decisions = {
        m.id: (Decision.DROPPED if i < 1000 else Decision.KEPT)
        for i, m in enumerate(counted.messages)
    }
    blocks = figures.round_blocks(counted, decisions, max_blocks=10)
    assert [b.decision for b in blocks] == ["dropped", "kept"]
    assert blocks[0].label == "rounds 0–499"


def test_hover_text_escapes_script_tags(counter: TokenCounter) -> None:
    chat = (Message(Role.USER, "<script>alert(1)</script> & <img src=x>", "u"),)
    counted = counter.counted(chat)
    fig = figures.round_map_figure(counted, {"u": Decision.KEPT})
    hover = " ".join(_hovers(fig))
    assert "<script>" not in hover and "<img" not in hover
    assert "&lt;script&gt;" in hover


def test_each_decision_gets_its_own_colour(counter: TokenCounter) -> None:
    chat = example_chat()
    counted = counter.counted(chat)
    result = build_strategy("sliding-window", {"window": 4}).apply(chat, counter)
    fig = figures.round_map_figure(counted, result.decisions)
    colours = {trace.legendgroup: trace.marker.color for trace in fig.data}
    assert colours["pinned"] == figures.DECISION_COLOURS["pinned"]
    assert colours["dropped"] == figures.DECISION_COLOURS["dropped"]
    assert len(set(figures.DECISION_COLOURS.values())) == len(figures.DECISION_COLOURS)


def test_figures_use_projector_sized_fonts(counter: TokenCounter) -> None:
    counted = counter.counted(example_chat())
    fig = figures.context_tokens_figure(counted.counts, counted.counts[5:], 3, budget=100)
    assert fig.layout.font.size >= 14
    assert fig.data[0].y[-1] == sum(counted.counts) + 3


def test_line_figures_sample_long_series() -> None:
    points = figures.sample_points(100_000)
    assert len(points) <= figures.MAX_POINTS and points[-1] == 99_999 and points[0] == 0
    assert figures.sample_points(5) == [0, 1, 2, 3, 4]


def test_replay_figure_marks_summarizer_calls() -> None:
    rows = [
        {
            "turn": t,
            "tokens_sent": 10 * t,
            "tokens_untrimmed": 20 * t,
            "summarizer_calls": int(t == 3),
        }
        for t in range(1, 6)
    ]
    fig = figures.replay_tokens_figure(rows, budget=40, turn=2)
    marks = [trace for trace in fig.data if trace.name == "summarizer call"]
    assert len(marks) == 1 and list(marks[0].x) == [3]


def test_visible_shows_invisible_and_bidi_characters() -> None:
    text = "safe\u202etxt.exe\u200b\u2066\ufeff"
    shown = visible(text)
    for ch in ("\u202e", "\u200b", "\u2066", "\ufeff"):
        assert ch not in shown
    assert "\\u202e" in shown and shown.startswith("safe")
    assert visible("line\n\ttab") == "line\n\ttab"
    assert hover_safe("a < b & c") == "a &lt; b &amp; c"


def test_cache_figure_stacks_prefix_and_rest_and_marks_breaks() -> None:
    from ctxlab.ui.figures import cache_figure

    fig = cache_figure([1, 2, 3], [100, 150, 80], [0, 100, 0], [3])
    prefix, rest, marks = fig.data
    assert list(prefix.y) == [0, 100, 0] and list(rest.y) == [100, 50, 80]
    assert list(marks.x) == [3] and list(marks.y) == [80]


def test_word_diff_lines_are_plain_text_with_plus_minus_prefixes() -> None:
    from ctxlab.ui.insights_view import diff_lines

    text = diff_lines("order 4417 ships <b>Monday</b>", "order 4417 ships Tuesday")
    assert text.splitlines() == ["  order 4417 ships", "- <b>Monday</b>", "+ Tuesday"]


@given(st.text(), st.lists(st.sampled_from(["[REDACTED]", "[REDACTED:jwt]"]), max_size=3))
def test_highlighted_html_lets_no_chat_markup_through(text: str, markers: list[str]) -> None:
    hostile = text + "<script>alert(1)</script><img src=x onerror=y>\u202e" + "".join(markers)
    out = highlighted_html(hostile, MARKER_PATTERN)
    body = out.removeprefix('<pre style="white-space: pre-wrap; margin: 0">').removesuffix("</pre>")
    # the only tags left are the ones highlighted_html adds itself
    tags = re.findall(r"<[^>]*>", body)
    assert set(tags) <= {"<span>", "</span>", "<mark>", "</mark>"}
    assert out.count("<mark>") == len(MARKER_PATTERN.findall(hostile))
    assert "\u202e" not in out  # direction overrides are shown as escapes


def test_the_legend_explains_every_colour_and_the_hover_says_why(counter: TokenCounter) -> None:
    chat = example_chat()
    counted = counter.counted(chat)
    strategy = build_strategy("sliding-window", {"window": 3})
    result = strategy.apply(chat, counter)
    fig = figures.round_map_figure(
        counted,
        result.decisions,
        explain=lambda k: strategy.explain_round(counted, result, k),
    )
    names = {trace.legendgroup: trace.name for trace in fig.data}
    assert set(names) <= set(figures.DECISION_LEGEND)
    assert all(names[k] == figures.DECISION_LEGEND[k] for k in names)
    assert "hover" in figures.DECISION_LEGEND["mixed"]
    hovers = [h for trace in fig.data for h in trace.customdata]
    assert any("dropped: older than the last 3 non-system messages" in h for h in hovers)
    mixed = [h for trace in fig.data if trace.legendgroup == "mixed" for h in trace.customdata]
    assert all("mixed: " in h and " kept" in h for h in mixed)
