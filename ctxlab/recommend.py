"""Recommendations: which value of one strategy parameter answers the question a user asks.

A sweep replays the whole session (:func:`ctxlab.replay.replay`: the strategy before every
assistant turn) at each candidate value and records, per value, the largest call, the share of
the chat's facts still in the last call's context and the session's cost with the prompt cache.
:func:`recommend` then answers one :class:`Question`:

* ``FITS_AND_KEEPS_FACTS`` — the smallest value whose every call fits the model's context window
  and whose last call keeps at least ``min_facts`` of the chat's facts;
* ``CHEAPEST`` — the value whose session costs least with the prompt cache, among the values that
  meet the same two constraints (a call over the window would be refused, so its cost means
  nothing; and the least context is always cheapest, so without the facts floor the answer would
  be the smallest value). With the prompt cache a larger value can cost less: trimming that
  moves the front of the context breaks the cache at every call.

Invariants: a recommended point satisfies its question's constraints; for
``FITS_AND_KEEPS_FACTS`` no smaller swept value does. When no swept value qualifies, the
:class:`Recommendation` has no point and a reason that says why.

Facts are :func:`ctxlab.insights.extract_facts` of the whole chat (pass them in: extracting
them reads every message), restricted to those first seen before the last call (a fact the chat
states after it cannot be in any context); :func:`ctxlab.insights.fact_retention` decides which
the last call's context keeps. It is measured only for values whose every call fits the window:
a session the provider refuses keeps nothing, and skipping those keeps a sweep of a long chat
fast (their contexts are the largest).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ctxlab.insights import Fact, fact_retention
from ctxlab.model import Message
from ctxlab.replay import replay
from ctxlab.strategies import Strategy, with_params
from ctxlab.summarizers import Summarizer
from ctxlab.tokens import TokenCounter

__all__ = [
    "Question",
    "Recommendation",
    "SessionPoint",
    "candidate_values",
    "recommend",
    "recommendation_sentence",
    "session_sweep",
]


class Question(StrEnum):
    """What the user asks of a parameter."""

    FITS_AND_KEEPS_FACTS = "fits-and-keeps-facts"
    CHEAPEST = "cheapest"


@dataclass(frozen=True, slots=True)
class SessionPoint:
    """The replayed session at one parameter value.

    ``facts_kept`` is the share (0..1) of the chat's facts in the last call's context, None when
    the chat has no facts or the session does not fit the window (not measured);
    ``cost_with_cache`` is USD, None when the model has no price.
    """

    value: float
    calls: int
    largest_call: int
    last_call: int
    facts_kept: float | None
    cost_with_cache: float | None

    def fits(self, window: int | None) -> bool:
        """Every call of the session is within ``window`` tokens (always, without a window)."""
        return window is None or self.largest_call <= window

    def keeps(self, min_facts: float) -> bool:
        """At least ``min_facts`` of the facts are kept (a chat without facts keeps them all)."""
        return self.facts_kept is None or self.facts_kept >= min_facts - 1e-12


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The answer to one question: the chosen point, or None and the reason none qualifies."""

    question: Question
    point: SessionPoint | None
    window: int | None
    min_facts: float
    reason: str = ""


def candidate_values(
    lo: float, hi: float, steps: int, *, integer: bool, log: bool = False
) -> list[float]:
    """About ``steps`` values from ``lo`` to ``hi`` inclusive, ascending and distinct.

    ``log`` spaces them geometrically (token budgets: as many values between 1k and 10k as
    between 100k and 1M), rounded to two significant digits; integers are rounded.

    >>> candidate_values(1_000, 1_000_000, 4, integer=True, log=True)
    [1000.0, 10000.0, 100000.0, 1000000.0]
    >>> candidate_values(0, 10, 3, integer=True)
    [0.0, 5.0, 10.0]
    """
    steps = max(steps, 2)
    if hi <= lo:
        return [float(lo)]
    if log:
        start = max(lo, 1)
        ratio = (hi / start) ** (1 / (steps - 1))
        raw = [start * ratio**i for i in range(steps)]
        raw = [_two_digits(v) for v in raw]
        if lo < start:
            raw.insert(0, lo)
    else:
        raw = [lo + (hi - lo) * i / (steps - 1) for i in range(steps)]
    raw[0], raw[-1] = lo, hi
    values = (round(v) for v in raw) if integer else iter(raw)
    return sorted({float(v) for v in values if lo <= v <= hi})


def _two_digits(x: float) -> float:
    if x <= 0:
        return x
    scale = 10 ** (math.floor(math.log10(x)) - 1)
    return float(round(x / scale) * scale)


def session_sweep(
    messages: Sequence[Message],
    strategy: Strategy,
    name: str,
    values: Sequence[float],
    counter: TokenCounter,
    *,
    model: str,
    facts: Sequence[Fact],
    window: int | None = None,
    summarizer: Summarizer | None = None,
    integer: bool = True,
) -> tuple[SessionPoint, ...]:
    """Replay the session with parameter ``name`` of ``strategy`` at each of ``values``.

    Args:
        messages: the whole chat.
        strategy: the configuration to vary (its other parameters stay as they are).
        name: the parameter's leaf name (``budget``).
        values: the values to try, ascending.
        counter: the model's counter (its cached counts keep every replay linear).
        model: prices the calls (the prompt cache included).
        facts: the chat's facts (``extract_facts(messages)``; cache them per chat).
        window: the model's context window; facts are measured only where every call fits.
        summarizer: for strategies that summarize (a stand-in keeps a sweep offline and fast).
        integer: the parameter takes integers.
    """
    chat = counter.counted(messages)
    position = {m.id: i for i, m in enumerate(chat.messages)}
    out: list[SessionPoint] = []
    for value in values:
        v: float | int = int(value) if integer else value
        configured = with_params(strategy, {name: v})
        session = replay(chat.messages, configured, counter, summarizer=summarizer, model=model)
        if len(session):
            last = session.rows[-1]
            stop = last.message_index
            context = session.context_at(len(session)).messages
            largest, last_tokens = max(r.tokens_sent for r in session.rows), last.tokens_sent
        else:  # no assistant turn: the one call is the whole chat
            stop = len(chat.messages)
            result = configured.apply(chat.messages, counter, summarizer)
            context, largest, last_tokens = (
                result.messages,
                result.tokens_after,
                result.tokens_after,
            )
        wanted = [f for f in facts if f.message_id is None or position.get(f.message_id, 0) < stop]
        share: float | None = None
        if wanted and (window is None or largest <= window):
            share = fact_retention(chat.messages, context, wanted).retained / len(wanted)
        out.append(
            SessionPoint(
                float(v),
                len(session),
                largest,
                last_tokens,
                share,
                session.total_cost_with_cache if len(session) else None,
            )
        )
    return tuple(out)


def recommend(
    points: Sequence[SessionPoint],
    question: Question,
    *,
    window: int | None,
    min_facts: float = 0.8,
) -> Recommendation:
    """The point of ``points`` (ascending values) that answers ``question``; see the module
    docstring. Without a point, ``reason`` says why none qualifies."""
    ordered = sorted(points, key=lambda p: p.value)
    fitting = [p for p in ordered if p.fits(window)]
    if question is Question.FITS_AND_KEEPS_FACTS:
        chosen = next((p for p in fitting if p.keeps(min_facts)), None)
        if chosen is not None:
            return Recommendation(question, chosen, window, min_facts)
        if not ordered:
            reason = "nothing was swept"
        elif not fitting:
            smallest = min(ordered, key=lambda p: p.largest_call)
            reason = (
                f"even at its smallest the largest call is {smallest.largest_call:,} tokens, "
                "over the window"
            )
        else:
            best = max(fitting, key=lambda p: (p.facts_kept or 0.0, -p.value))
            reason = (
                f"the values that fit keep at most {best.facts_kept or 0.0:.0%} of the facts "
                f"(at {_number(best.value)})"
            )
        return Recommendation(question, None, window, min_facts, reason)
    qualified = [p for p in fitting if p.keeps(min_facts)]
    priced = [p for p in qualified if p.cost_with_cache is not None]
    if priced:
        chosen = min(priced, key=lambda p: (p.cost_with_cache or 0.0, p.value))
        return Recommendation(question, chosen, window, min_facts)
    if not ordered:
        reason = "nothing was swept"
    elif all(p.cost_with_cache is None for p in ordered):
        reason = "the model has no price, so no session has a cost"
    elif not fitting:
        reason = "no swept value keeps every call under the window"
    else:
        reason = f"no value that fits keeps {min_facts:.0%} of the facts"
    return Recommendation(question, None, window, min_facts, reason)


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.3g}"


def _amount(value: float, unit: str | None) -> str:
    """``24,000 tokens``, ``1 token``, ``0.5``: a value with its unit."""
    if not unit:
        return _number(value)
    words = unit.replace("_", " ")
    if value == 1 and words.endswith("s"):
        words = words[:-1]
    return f"{_number(value)} {words}"


def _noun(label: str) -> str:
    """``Budget (tokens)`` -> ``budget``: a parameter's label as a noun in a sentence."""
    return re.sub(r"\s*\(.*?\)\s*", " ", label).strip().lower() or "value"


def recommendation_sentence(
    rec: Recommendation,
    *,
    parameter: str,
    unit: str | None,
    model: str,
) -> str:
    """One sentence for people: which value, which question, and why (or why none qualifies).

    >>> p = SessionPoint(24_000, 10, 30_000, 24_000, 0.82, 1.234)
    >>> rec = Recommendation(Question.FITS_AND_KEEPS_FACTS, p, 128_000, 0.8)
    >>> text = recommendation_sentence(rec, parameter="Budget", unit="tokens", model="gpt-4o")
    >>> print(text)  # doctest: +NORMALIZE_WHITESPACE
    Smallest budget that keeps every call under gpt-4o's 128,000-token window and at least 80%
    of the chat's facts: 24,000 tokens (82% of facts kept, $1.23 per session with the prompt
    cache).
    """
    from ctxlab.pricing import format_usd

    noun = _noun(parameter)
    known = rec.window is not None
    window = f"every call under {model}'s {rec.window or 0:,}-token window"
    facts_ask = f"at least {rec.min_facts:.0%} of the chat's facts"
    if rec.question is Question.FITS_AND_KEEPS_FACTS:
        ask = (
            f"keeps {window} and {facts_ask}"
            if known
            else f"keeps {facts_ask} ({model} has no known window)"
        )
        if rec.point is None:
            return f"No {noun} in the swept range {ask}: {rec.reason}."
        p = rec.point
        facts = "no facts to keep" if p.facts_kept is None else f"{p.facts_kept:.0%} of facts kept"
        cost = format_usd(p.cost_with_cache)
        return (
            f"Smallest {noun} that {ask}: {_amount(p.value, unit)} ({facts}, {cost} per "
            "session with the prompt cache)."
        )
    ask = (
        f"that keep {window} and {facts_ask}"
        if known
        else f"that keep {facts_ask} ({model} has no known window)"
    )
    if rec.point is None:
        return f"No cheapest {noun}: {rec.reason}."
    p = rec.point
    facts = "no facts to keep" if p.facts_kept is None else f"{p.facts_kept:.0%} of facts kept"
    return (
        f"Cheapest session with the prompt cache among the values {ask}: {noun} "
        f"{_amount(p.value, unit)} ({format_usd(p.cost_with_cache)} per session, {facts})."
    )
