"""Compare's set-up (URL, comparable defaults) and its two tables (metrics, disagreements)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chatgen import chats
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load_chat
from ctxlab.counted import CountedChat
from ctxlab.pricing import format_usd
from ctxlab.strategies import Decision, build_strategy, parameters, strategy_names
from ctxlab.strategies import get_strategy_class as cls_of
from ctxlab.tokens import TokenCounter
from ctxlab.ui import compare_setup, render

CODING = Path(__file__).resolve().parent.parent / "sample_chats" / "coding_agent_session.json"


def test_url_round_trip_keeps_strategies_and_parameters() -> None:
    configs = [
        ("window-drop", {"budget": 16_000}),
        ("sliding-window", {"window": 40, "trigger_at": None}),
        ("summarize", {"trigger_token_budget": 9000, "redact_tool_content": False}),
    ]
    query = compare_setup.compare_query(configs)
    assert query["cmp"] == "3" and query["cmp1"] == "window-drop"
    assert query["cmp1.budget"] == "16000" and "cmp2.trigger_at" not in query
    parsed = compare_setup.parse_compare_query(query, strategy_names())
    assert [p.strategy for p in parsed] == [name for name, _ in configs]
    assert parsed[0].values == {"budget": 16_000}
    assert parsed[1].values == {"window": 40}
    assert parsed[2].values == {"trigger_token_budget": 9000, "redact_tool_content": False}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, []),
        ({"cmp": "many"}, []),
        ({"cmp": "9", "cmp1": "window-drop"}, ["window-drop", "", "", ""]),
        ({"cmp": "1", "cmp2": "trim-last"}, ["", "trim-last"]),
        ({"cmp": "2", "cmp1": "../etc", "cmp2": "sliding-window"}, ["", "sliding-window"]),
    ],
)
def test_url_count_is_clamped_and_unknown_strategies_ignored(
    query: dict[str, str], expected: list[str]
) -> None:
    parsed = compare_setup.parse_compare_query(query, strategy_names())
    assert [p.strategy for p in parsed] == expected


def test_url_parameters_that_do_not_parse_or_exist_are_ignored() -> None:
    query = {"cmp": "2", "cmp1": "window-drop", "cmp1.budget": "lots", "cmp1.nope": "1"}
    parsed = compare_setup.parse_compare_query(query, strategy_names())
    assert parsed[0].values == {}


def _fit_brute_force(counted: CountedChat, budget: int) -> int:
    n = len(counted.messages)
    best = 0
    for k in range(1, n + 1):
        if sum(counted.counts[n - k :]) + counted.reply_priming <= budget:
            best = k
    return max(best, 1)


@given(chat=chats(), share=st.floats(0.0, 1.2))
def test_messages_within_is_the_longest_suffix_that_fits(
    counter: TokenCounter, chat: tuple[object, ...], share: float
) -> None:
    counted = counter.counted(chat)  # type: ignore[arg-type]
    budget = int(counted.total * share)
    assert compare_setup.messages_within(counted, budget) == _fit_brute_force(counted, budget)


@pytest.mark.parametrize("name", strategy_names())
def test_comparable_defaults_use_the_budget_and_what_it_keeps(
    counter: TokenCounter, name: str
) -> None:
    counted = counter.counted(load_chat(CODING))
    budget = counted.total // 3
    cls = cls_of(name)
    defaults = compare_setup.comparable_defaults(cls, counted, budget)
    if cls.framework_policy is not None:  # the framework's own defaults, untouched
        assert defaults == {}
        return
    required = [i for i in parameters(cls) if i.kind == "int"]
    tokens = [i for i in required if i.spec.unit == "tokens"]
    if tokens:
        assert defaults[tokens[0].name] == budget
        assert all(defaults.get(i.name) != budget for i in tokens[1:])
    fit = _fit_brute_force(counted, budget)
    for info in required:
        if info.spec.unit == "messages":
            assert defaults[info.name] == fit
    build_strategy(name, defaults)  # in range: builds without a ParameterError
    assert compare_setup.comparable_defaults(cls, counted, None) == {}


def test_compare_frame_formats_money_and_counts_decisions(counter: TokenCounter) -> None:
    messages = load_chat(CODING)
    raw = json.loads(CODING.read_text(encoding="utf-8"))["messages"]
    result = build_strategy("window-drop", {"budget": 9000}).apply(messages, counter)
    row = render.CompareRow(
        "1: Window drop",
        result,
        {"openai": ()},
        retention=41.26,
        cost_per_call=0.04537,
        session_cost=1327818.6957,
        session_cost_cached=None,
        stand_in=True,
        summaries_by="offline stand-in",
    )
    frame = render.compare_frame([row])
    record = frame.iloc[0]
    assert record["configuration"] == "1: Window drop"
    assert record["cost per call"] == "$0.0454" == format_usd(0.04537)
    assert record["cost per session"] == "$1,327,818.70"
    assert record["cost per session, prompt cache"] == "n/a"
    assert record["fact retention %"] == 41.3
    assert record["summaries by"] == "offline stand-in"
    kept = sum(1 for m in raw if result.decisions[m["id"]] is Decision.KEPT)
    assert record["kept"] == kept and record["kept"] + record["dropped"] == len(raw)
    before = result.tokens_before
    assert record["saved %"] == round((before - result.tokens_after) / before * 100, 1)
    assert record["openai problems"] == 0


def test_disagreement_frame_lists_exactly_the_messages_that_differ(counter: TokenCounter) -> None:
    messages = load_chat(CODING)
    raw = json.loads(CODING.read_text(encoding="utf-8"))["messages"]
    counted = counter.counted(messages)
    a = build_strategy("window-drop", {"budget": 9000}).apply(messages, counter)
    b = build_strategy("sliding-window", {"window": 20}).apply(messages, counter)
    frame = render.disagreement_frame(counted, [("A", a), ("B", b)])
    expected = [i for i, m in enumerate(raw) if a.decisions[m["id"]] is not b.decisions[m["id"]]]
    assert list(frame["index"]) == expected and expected
    assert list(frame["role"]) == [raw[i]["role"] for i in expected]
    assert list(frame["A"]) == [a.decisions[raw[i]["id"]].value for i in expected]
    user_starts = [i for i, m in enumerate(raw) if m["role"] == "user"]
    lead = 1 if raw[0]["role"] == "user" else 0  # no preamble: round 0 is the first user's
    for index, round_ in zip(frame["index"], frame["round"], strict=True):
        assert round_ == sum(1 for s in user_starts if s <= index) - lead
