"""Figure builders for issue 12: the tool definitions' block on the round map, and the billed vs
counted chart of the Replay page (with the sentence that says what the gap is made of)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from raw_claude_code import raw_billed

from ctxlab.formats import load_chat
from ctxlab.model import Message, Role
from ctxlab.provider_usage import CallComparison, UsageComparison, compare_usage
from ctxlab.strategies import build_strategy
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.timeline import usage_explanation, usage_frame

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "tests" / "fixtures" / "formats" / "claude_code" / "thinking_session.jsonl"


def _chat(rounds: int) -> tuple[Message, ...]:
    out: list[Message] = []
    for k in range(rounds):
        out.append(Message(Role.USER, f"question {k}", f"u{k}"))
        out.append(Message(Role.ASSISTANT, f"answer {k}", f"a{k}"))
    return tuple(out)


def _map(counter: TokenCounter, **kwargs: object) -> object:
    counted = counter.counted(_chat(6))
    result = build_strategy("window-drop", {"budget": 10_000}).apply(counted.messages, counter)
    return figures.round_map_figure(counted, result.decisions, **kwargs)  # type: ignore[arg-type]


def _overhead(fig: object) -> list[object]:
    return [t for t in fig.data if t.name == figures.OVERHEAD_LABEL]  # type: ignore[attr-defined]


def test_the_overhead_is_one_block_just_before_round_0(counter: TokenCounter) -> None:
    fig = _map(counter, overhead=120, overhead_parts=(("get_weather", 70), ("search", 38)))
    (block,) = _overhead(fig)
    assert list(block.x) == [120] and list(block.base) == [-120]  # type: ignore[attr-defined]
    assert block.marker.color == figures.OVERHEAD_COLOUR  # type: ignore[attr-defined]
    hover = block.customdata[0]  # type: ignore[attr-defined]
    assert "get_weather: 70 tokens" in hover and "search: 38 tokens" in hover
    rounds = [t for t in fig.data if t.name != figures.OVERHEAD_LABEL]  # type: ignore[attr-defined]
    assert min(b for t in rounds for b in t.base) == 0  # the rounds keep their positions


def test_without_overhead_the_round_map_is_unchanged(counter: TokenCounter) -> None:
    plain = _map(counter, budget=40)
    zero = _map(counter, budget=40, overhead=0, overhead_parts=(("x", 1),))
    assert plain.to_plotly_json() == zero.to_plotly_json()  # type: ignore[attr-defined]
    assert _overhead(plain) == []


def test_the_budget_line_leaves_room_for_the_overhead(counter: TokenCounter) -> None:
    counted = counter.counted(_chat(6))
    end = counted.prefix[-1]
    fig = _map(counter, budget=50, overhead=20)
    (line,) = [s for s in fig.layout.shapes]  # type: ignore[attr-defined]
    assert line.x0 == max(end - (50 - 20), 0)


def test_the_zoom_strip_draws_no_overhead_block(counter: TokenCounter) -> None:
    fig = _map(counter, overhead=120, rounds=(3, 6))
    assert _overhead(fig) == []


def test_a_fixed_x_range_is_widened_to_show_the_overhead(counter: TokenCounter) -> None:
    fig = _map(counter, overhead=30, x_range=(0.0, 500.0))
    assert list(fig.layout.xaxis.range) == [-30.0, 500.0]  # type: ignore[attr-defined]


def test_tool_names_in_the_hover_are_escaped(counter: TokenCounter) -> None:
    fig = _map(counter, overhead=10, overhead_parts=(("<script>x</script>", 10),))
    (block,) = _overhead(fig)
    assert "<script>" not in block.customdata[0]  # type: ignore[attr-defined]


def test_a_long_tool_list_is_cut_in_the_hover(counter: TokenCounter) -> None:
    parts = tuple((f"tool{k}", 5) for k in range(figures.MAX_HOVER_PARTS + 7))
    fig = _map(counter, overhead=5 * len(parts), overhead_parts=parts)
    (block,) = _overhead(fig)
    assert "… and 7 more" in block.customdata[0]  # type: ignore[attr-defined]


def test_the_usage_figure_stacks_to_the_billed_prompt_and_draws_the_count(
    counter: TokenCounter,
) -> None:
    from ctxlab.formats import load_chat_file

    loaded = load_chat_file(SESSION)
    comparison = compare_usage(loaded.messages, loaded.usage, counter)
    fig = figures.usage_comparison_figure(comparison)
    bars = [t for t in fig.data if t.type == "bar"]  # type: ignore[attr-defined]
    totals = [sum(values) for values in zip(*(t.y for t in bars), strict=True)]
    assert totals == raw_billed(SESSION)
    (line,) = [t for t in fig.data if t.type == "scatter"]  # type: ignore[attr-defined]
    assert list(line.y) == [c.counted_prompt for c in comparison.calls]
    assert fig.layout.title.text == figures.USAGE_TITLE  # type: ignore[attr-defined]


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=3000))
def test_the_usage_figure_draws_at_most_max_points(billed: list[int]) -> None:
    calls = tuple(CallComparison(f"a{k}", k, b, b // 2, 1) for k, b in enumerate(billed))
    fig = figures.usage_comparison_figure(UsageComparison(calls, None, None))
    (line,) = [t for t in fig.data if t.type == "scatter"]  # type: ignore[attr-defined]
    assert len(line.x) == min(len(billed), figures.MAX_POINTS)
    assert line.x[-1] == len(billed)


def _comparison(rows: list[tuple[int, int]]) -> UsageComparison:
    """A comparison of calls given as (billed, counted), its two numbers computed as the module
    docstring of :mod:`ctxlab.provider_usage` defines them."""
    calls = tuple(
        CallComparison(f"a{k}", 2 * k + 1, billed, counted, 1)
        for k, (billed, counted) in enumerate(rows)
    )
    first = calls[0]
    counted_growth = calls[-1].counted_prompt - first.counted_prompt
    ratio = (
        (calls[-1].billed_prompt - first.billed_prompt) / counted_growth
        if len(calls) > 1 and counted_growth > 0
        else None
    )
    return UsageComparison(calls, first.difference, ratio)


def test_the_explanation_names_the_hidden_fixed_part_when_it_dominates() -> None:
    text = usage_explanation(_comparison([(5_100, 100), (5_200, 200)]))
    assert "**+5,000** tokens per call" in text
    assert "**1.00**" in text and "the hidden fixed part explains most" in text


def test_the_explanation_names_the_tokenizer_when_it_dominates() -> None:
    text = usage_explanation(_comparison([(110, 100), (13_110, 10_100)]))
    assert "**+10** tokens per call" in text and "**1.30**" in text
    assert "**+3,000** tokens by the last call" in text
    assert "the tokenizer mismatch explains most" in text


def test_one_call_cannot_separate_the_two() -> None:
    text = usage_explanation(_comparison([(900, 100)]))
    assert "**+800**" in text and "cannot be told apart" in text


def test_the_usage_table_has_one_row_per_call(counter: TokenCounter) -> None:
    from ctxlab.formats import load_chat_file

    loaded = load_chat_file(SESSION)
    frame = usage_frame(compare_usage(loaded.messages, loaded.usage, counter))
    assert list(frame["billed prompt"]) == raw_billed(SESSION)
    assert list(frame["difference"]) == list(frame["billed prompt"] - frame["counted by ctxlab"])
    assert len(load_chat(SESSION)) > len(frame)


def test_the_report_round_map_starts_with_the_chats_tool_block(counter: TokenCounter) -> None:
    from ctxlab.ui.report import playground_report

    counted = counter.counted(_chat(4)).with_overhead(45)
    strategy = build_strategy("window-drop", {"budget": 10_000})
    result = strategy.apply(counted.messages, counter)
    report = playground_report("chat", "gpt-4o", counted, strategy, result)
    (block,) = _overhead(report.sections[0].figures[0])
    assert list(block.x) == [45]  # type: ignore[attr-defined]
    plain = playground_report("chat", "gpt-4o", counter.counted(_chat(4)), strategy, result)
    assert _overhead(plain.sections[0].figures[0]) == []
