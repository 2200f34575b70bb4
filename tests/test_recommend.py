"""Recommendations: sweeps agree with replay and fact_retention, and the recommended value
satisfies its question while the next smaller swept value does not."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.formats import load_chat
from ctxlab.insights import extract_facts, fact_retention
from ctxlab.model import Message
from ctxlab.recommend import (
    Question,
    Recommendation,
    SessionPoint,
    candidate_values,
    recommend,
    recommendation_sentence,
    refine_values,
    session_sweep,
)
from ctxlab.replay import replay
from ctxlab.samples import sample_path
from ctxlab.strategies import get_strategy_class, with_params
from ctxlab.tokens import TokenCounter

CHAT: tuple[Message, ...] = tuple(load_chat(sample_path("coding_agent_session")))
FACTS = extract_facts(CHAT)


@given(
    lo=st.integers(0, 1_000),
    span=st.integers(1, 5_000_000),
    steps=st.integers(2, 40),
    log=st.booleans(),
)
def test_candidate_values_are_ascending_distinct_and_span_the_range(
    lo: int, span: int, steps: int, log: bool
) -> None:
    values = candidate_values(lo, lo + span, steps, integer=True, log=log)
    assert values == sorted(set(values))
    assert values[0] == lo and values[-1] == lo + span
    assert len(values) <= steps + 1


points_strategy = st.lists(
    st.builds(
        SessionPoint,
        value=st.integers(1, 1_000_000).map(float),
        calls=st.just(10),
        largest_call=st.integers(0, 300_000),
        last_call=st.integers(0, 300_000),
        facts_kept=st.one_of(st.none(), st.floats(0, 1)),
        cost_with_cache=st.one_of(st.none(), st.floats(0, 100)),
    ),
    max_size=25,
    unique_by=lambda p: p.value,
)


@given(
    points=points_strategy,
    window=st.one_of(st.none(), st.integers(1, 300_000)),
    share=st.floats(0, 1),
)
def test_the_smallest_qualifying_value_qualifies_and_the_next_smaller_does_not(
    points: list[SessionPoint], window: int | None, share: float
) -> None:
    rec = recommend(points, Question.FITS_AND_KEEPS_FACTS, window=window, min_facts=share)
    ordered = sorted(points, key=lambda p: p.value)
    if rec.point is None:
        assert rec.reason
        assert not any(p.fits(window) and p.keeps(share) for p in points)
        return
    assert rec.point.fits(window) and rec.point.keeps(share)
    position = ordered.index(rec.point)
    if position:
        smaller = ordered[position - 1]
        assert not (smaller.fits(window) and smaller.keeps(share))


@given(
    points=points_strategy,
    window=st.one_of(st.none(), st.integers(1, 300_000)),
    share=st.floats(0, 1),
)
def test_the_cheapest_qualifying_session_is_no_dearer_than_any_other(
    points: list[SessionPoint], window: int | None, share: float
) -> None:
    rec = recommend(points, Question.CHEAPEST, window=window, min_facts=share)
    rivals = [
        p for p in points if p.fits(window) and p.keeps(share) and p.cost_with_cache is not None
    ]
    if rec.point is None:
        assert not rivals and rec.reason
        return
    assert rec.point in rivals
    assert all((rec.point.cost_with_cache or 0) <= (p.cost_with_cache or 0) for p in rivals)


def test_a_sweep_agrees_with_replay_and_fact_retention(counter: TokenCounter) -> None:
    strategy = get_strategy_class("window-drop")(budget=10_000)
    values = [2_000.0, 20_000.0]
    points = session_sweep(CHAT, strategy, "budget", values, counter, model="gpt-4o", facts=FACTS)
    for value, point in zip(values, points, strict=True):
        session = replay(CHAT, with_params(strategy, {"budget": int(value)}), counter)
        assert point.value == value and point.calls == len(session)
        assert point.largest_call == max(r.tokens_sent for r in session.rows)
        assert point.cost_with_cache == session.total_cost_with_cache
        whole = with_params(strategy, {"budget": int(value)}).apply(CHAT, counter)
        kept = fact_retention(CHAT, whole.messages, FACTS)
        assert point.facts_kept == pytest.approx(kept.retained / kept.total)
        assert point.trims == (whole.tokens_after < whole.tokens_before)
    assert points[0].facts_kept is not None and points[1].facts_kept is not None
    assert points[0].facts_kept <= points[1].facts_kept


def test_facts_are_not_measured_where_the_session_does_not_fit(counter: TokenCounter) -> None:
    strategy = get_strategy_class("window-drop")(budget=10_000)
    small, large = session_sweep(
        CHAT,
        strategy,
        "budget",
        [2_000.0, 50_000.0],
        counter,
        model="gpt-4o",
        facts=FACTS,
        window=10_000,
    )
    assert small.fits(10_000) and small.facts_kept is not None
    assert not large.fits(10_000) and large.facts_kept is None


def test_sentences_say_which_value_which_question_and_why() -> None:
    point = SessionPoint(24_000, 10, 30_000, 24_000, 0.82, 1.234)
    fits = Recommendation(Question.FITS_AND_KEEPS_FACTS, point, 128_000, 0.8)
    text = recommendation_sentence(fits, parameter="Budget (tokens)", unit="tokens", model="gpt-4o")
    assert text == (
        "Smallest budget that keeps every call under gpt-4o's 128,000-token window and at least "
        "80% of the chat's facts: 24,000 tokens (82% of facts kept, $1.23 per session with the "
        "prompt cache)."
    )
    cheap = Recommendation(Question.CHEAPEST, point, 128_000, 0.8)
    text = recommendation_sentence(cheap, parameter="Budget", unit="tokens", model="gpt-4o")
    assert text.startswith("Cheapest session with the prompt cache among the values that keep")
    assert "budget 24,000 tokens ($1.23 per session, 82% of facts kept)" in text
    none = recommend(
        [replace(point, largest_call=200_000)],
        Question.FITS_AND_KEEPS_FACTS,
        window=128_000,
        min_facts=0.8,
    )
    text = recommendation_sentence(none, parameter="Budget", unit="tokens", model="gpt-4o")
    assert text == (
        "No budget in the swept range keeps every call under gpt-4o's 128,000-token window and "
        "at least 80% of the chat's facts: even at its smallest the largest call is 200,000 "
        "tokens, over the window; pick a model with a larger window, or a strategy that clears "
        "tool results or summarizes."
    )


@pytest.mark.parametrize(
    ("kept", "change"),
    [
        (0.62, "lower the facts to keep to 60% or pick a model with a larger window"),
        (0.04, "pick a model with a larger window, or another strategy or setting"),
    ],
)
def test_no_qualifying_value_says_what_to_change(kept: float, change: str) -> None:
    points = [SessionPoint(v, 3, 900, 900, kept, 0.01) for v in (100.0, 500.0)]
    rec = recommend(points, Question.FITS_AND_KEEPS_FACTS, window=128_000, chat_tokens=1_000)
    assert rec.point is None
    assert (
        rec.reason == f"the values that fit keep at most {kept:.0%} of the facts (at 100); {change}"
    )


def test_a_chat_that_fits_and_loses_facts_when_trimmed_needs_no_trimming() -> None:
    trimmed = SessionPoint(300.0, 3, 300, 300, 0.5, 0.01)
    whole = SessionPoint(1_230.0, 3, 1_230, 1_230, 1.0, 0.02, trims=False)
    rec = recommend(
        [trimmed, whole], Question.FITS_AND_KEEPS_FACTS, window=1_047_576, chat_tokens=1_230
    )
    assert rec.needs_no_trimming and rec.spare == 1_046_346
    text = recommendation_sentence(rec, parameter="Token budget", unit="tokens", model="gpt-4.1")
    assert text == (
        "This chat needs no trimming on gpt-4.1 — it fits with 1,046,346 tokens to spare (the "
        "whole chat is 1,230 of the 1,047,576-token window). Every smaller token budget that "
        "trims keeps under 80% of the facts. Token budget 1,230 tokens sends it all."
    )
    over = recommend(
        [trimmed, whole], Question.FITS_AND_KEEPS_FACTS, window=1_000, chat_tokens=1_230
    )
    assert not over.needs_no_trimming


@given(points_strategy, st.sampled_from(list(Question)))
def test_refined_values_lie_strictly_between_swept_neighbours(
    points: list[SessionPoint], question: Question
) -> None:
    rec = recommend(points, question, window=200_000, min_facts=0.5)
    finer = refine_values(points, rec, 4, integer=True)
    swept = sorted(p.value for p in points)
    assert not set(finer) & set(swept)
    if finer:
        assert rec.point is not None
        assert swept[0] < min(finer) and max(finer) < swept[-1]
