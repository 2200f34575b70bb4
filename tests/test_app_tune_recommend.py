"""AppTest: Tune answers a question in one sentence, draws titled curves and applies the value."""

from __future__ import annotations

import re

from app_support import page, param_widget

from ctxlab.catalog import get_model
from ctxlab.formats import load_chat
from ctxlab.insights import extract_facts
from ctxlab.recommend import (
    Question,
    candidate_values,
    recommend,
    refine_values,
    session_sweep,
)
from ctxlab.samples import sample_path
from ctxlab.strategies import get_strategy_class
from ctxlab.tokens import get_counter

TUNE = "pages/3_Tune.py"


def _sentence(at: object) -> str:
    shown = [*at.success, *at.warning]  # type: ignore[attr-defined]
    assert len(shown) == 1
    return str(shown[0].value)


def test_the_recommendation_is_one_sentence_with_the_value_and_the_question() -> None:
    at = page(TUNE, chat="coding_agent_session", strategy="window-drop", model="gpt-4o")
    at.run()
    assert not at.exception
    text = _sentence(at)
    head = (
        "Smallest token budget that keeps every call under gpt-4o's 128,000-token window and at "
        "least 80% of the chat's facts: "
    )
    assert text.startswith(head), text
    match = re.match(
        r"([\d,]+) tokens \((\d+)% of facts kept, \$[\d.,]+ per session", text[len(head) :]
    )
    assert match, text
    value, kept = int(match.group(1).replace(",", "")), int(match.group(2))
    assert kept >= 80
    # The same answer, computed from the engine directly with the page's grid.
    messages = load_chat(sample_path("coding_agent_session"))
    counter = get_counter("gpt-4o")
    slider = at.slider(key=next(s.key for s in at.slider if s.key.startswith("tune-range")))
    lo, hi = slider.value
    values = candidate_values(lo, hi, 12, integer=True, log=True)
    cls = get_strategy_class("window-drop")
    strategy = cls.suggested(counter.counted(messages), window=get_model("gpt-4o").input_room)
    points = session_sweep(
        messages,
        strategy,
        "budget",
        values,
        counter,
        model="gpt-4o",
        facts=extract_facts(messages),
        window=128_000,
    )
    rec = recommend(points, Question.FITS_AND_KEEPS_FACTS, window=128_000, min_facts=0.8)
    finer = refine_values(points, rec, 4, integer=True)
    assert finer, "the page refines the grid around the answer"
    extra = session_sweep(
        messages,
        strategy,
        "budget",
        finer,
        counter,
        model="gpt-4o",
        facts=extract_facts(messages),
        window=128_000,
    )
    rec = recommend([*points, *extra], Question.FITS_AND_KEEPS_FACTS, window=128_000, min_facts=0.8)
    assert rec.point is not None and rec.point.value == value
    assert value < counter.counted(messages).total


def test_the_curves_have_axis_titles_and_the_recommendation_line() -> None:
    at = page(TUNE, chat="coding_agent_session", strategy="window-drop", model="gpt-4o")
    at.run()
    chart = at.get("plotly_chart")[0]
    spec = chart.proto.spec
    for title in ("largest call (tokens)", "facts kept (%)", "session cost (USD)"):
        assert title in spec
    assert "recommended" in spec and "gpt-4o window 128,000" in spec


def test_the_cheapest_question_and_an_impossible_share_say_so() -> None:
    at = page(TUNE, chat="coding_agent_session", strategy="window-drop", model="gpt-4o")
    at.run()
    at.radio(key="tune-question").set_value("cheapest").run()
    assert not at.exception
    assert _sentence(at).startswith(
        "Cheapest session with the prompt cache among the values that keep every call under "
        "gpt-4o's 128,000-token window and at least 80% of the chat's facts: token budget "
    )
    at.radio(key="tune-question").set_value("fits-and-keeps-facts").run()
    at.slider(key="tune-facts").set_value(100).run()
    assert not at.exception
    text = _sentence(at)
    assert text.startswith(("Smallest token budget", "No token budget", "This chat needs no"))


def test_applying_the_recommendation_sets_the_playground_budget() -> None:
    at = page(TUNE, chat="coding_agent_session", strategy="window-drop", model="gpt-4o")
    at.run()
    value = int(re.search(r": ([\d,]+) tokens", _sentence(at)).group(1).replace(",", ""))  # type: ignore[union-attr]
    at.button[0].click().run()
    assert not at.exception
    assert param_widget(at, "budget").value == value
