"""Recommendations: which value of one strategy parameter answers the question a user asks.

A sweep replays the whole session (:func:`ctxlab.replay.replay`: the strategy before every
assistant turn) at each candidate value and records, per value, the largest call, the share of
the chat's facts still in the context the strategy sends for the whole chat (what Compare and the
Playground show for the same setting) and the session's cost with the prompt cache. The values
come from the chat and the model (:meth:`ctxlab.strategies.Strategy.sweep_range`), so every one
of them can change what is sent.
:func:`recommend` then answers one :class:`Question`:

* ``FITS_AND_KEEPS_FACTS`` — the smallest value whose every call fits the model's context window
  and whose last call keeps at least ``min_facts`` of the chat's facts;
* ``CHEAPEST`` — the value whose session costs least with the prompt cache, among the values that
  meet the same two constraints (a call over the window would be refused, so its cost means
  nothing; and the least context is always cheapest, so without the facts floor the answer would
  be the smallest value). With the prompt cache a larger value can cost less: trimming that
  moves the front of the context breaks the cache at every call.

Invariants: a recommended point satisfies its question's constraints; for
``FITS_AND_KEEPS_FACTS`` no smaller swept value does. When the recommended point trims nothing
and the chat fits the window, the answer is that the chat needs no trimming, with the tokens to
spare. When no swept value qualifies, the :class:`Recommendation` has no point and a reason that
says why and what to change.

Facts are :func:`ctxlab.insights.extract_facts` of the whole chat (pass them in: extracting
them reads every message); :func:`ctxlab.insights.fact_retention` decides which the strategy's
context for the whole chat keeps. A summarizing strategy runs with the summarizer it is given
(the offline one by default on the Tune page), never a placeholder, so its facts are the ones
its summaries keep. Facts are measured only for values whose every call fits the window: a
session the provider refuses keeps nothing, and skipping those keeps a sweep of a long chat
fast (their contexts are the largest).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from ctxlab.errors import ParameterError
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
    "accepted_values",
    "candidate_values",
    "recommend",
    "recommendation_sentence",
    "refine_values",
    "session_sweep",
]


class Question(StrEnum):
    """What the user asks of a parameter."""

    FITS_AND_KEEPS_FACTS = "fits-and-keeps-facts"
    CHEAPEST = "cheapest"


@dataclass(frozen=True, slots=True)
class SessionPoint:
    """The replayed session at one parameter value.

    ``facts_kept`` is the share (0..1) of the chat's facts in the context sent for the whole
    chat, None when the chat has no facts or the session does not fit the window (not measured);
    ``cost_with_cache`` is USD, None when the model has no price; ``trims`` is False when no
    call of the session and not the whole chat lose anything (the value changes nothing).
    """

    value: float
    calls: int
    largest_call: int
    last_call: int
    facts_kept: float | None
    cost_with_cache: float | None
    trims: bool = True

    def fits(self, window: int | None) -> bool:
        """Every call of the session is within ``window`` tokens (always, without a window)."""
        return window is None or self.largest_call <= window

    def keeps(self, min_facts: float) -> bool:
        """At least ``min_facts`` of the facts are kept (a chat without facts keeps them all)."""
        return self.facts_kept is None or self.facts_kept >= min_facts - 1e-12


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The answer to one question: the chosen point, or None and the reason none qualifies.

    ``chat_tokens`` is the whole chat's size when the caller gave it; ``needs_no_trimming`` is
    True when the chosen point trims nothing and the chat fits the window (``spare`` tokens
    left), so the honest answer is to send it whole.
    """

    question: Question
    point: SessionPoint | None
    window: int | None
    min_facts: float
    reason: str = ""
    chat_tokens: int | None = None
    trimming_changes_nothing: bool = False

    @property
    def spare(self) -> int | None:
        """Tokens of the window left over by the whole chat (None without both numbers)."""
        if self.window is None or self.chat_tokens is None:
            return None
        return self.window - self.chat_tokens

    @property
    def needs_no_trimming(self) -> bool:
        """The chosen value trims nothing and the whole chat fits the model's window."""
        spare = self.spare
        return self.point is not None and not self.point.trims and (spare is None or spare >= 0)


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


def accepted_values(
    strategy: Strategy, name: str, values: Sequence[float], *, integer: bool
) -> tuple[list[float], str]:
    """The ``values`` of parameter ``name`` that ``strategy`` accepts with its other settings,
    and why the first refused one was refused ("" when none was).

    A framework's parameters can bound each other (OpenHands' ``keep_first`` below half of
    ``max_size``, LlamaIndex's ``initial_token_count`` below its ``token_limit``): a sweep tries
    only the values the framework itself would accept.
    """
    kept: list[float] = []
    reason = ""
    for value in values:
        try:
            with_params(strategy, {name: int(value) if integer else value})
        except ParameterError as exc:
            reason = reason or str(exc)
            continue
        kept.append(value)
    return kept, reason


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
        summarizer: for strategies that summarize: a real one (the offline summarizer, or a
            backend's cached answers), so that the facts kept are those its summaries keep.
        integer: the parameter takes integers.
    """
    chat = counter.counted(messages)
    out: list[SessionPoint] = []
    for value in values:
        v: float | int = int(value) if integer else value
        configured = with_params(strategy, {name: v})
        session = replay(chat.messages, configured, counter, summarizer=summarizer, model=model)
        whole = configured.apply(chat.messages, counter, summarizer)
        trims = whole.tokens_after != whole.tokens_before or any(
            r.tokens_sent != r.tokens_untrimmed or r.messages_sent != r.messages_untrimmed
            for r in session.rows
        )
        if len(session):
            largest = max(r.tokens_sent for r in session.rows)
            last_tokens = session.rows[-1].tokens_sent
        else:  # no assistant turn: the one call is the whole chat
            largest = last_tokens = whole.tokens_after
        share: float | None = None
        if facts and (window is None or largest <= window):
            share = fact_retention(chat.messages, whole.messages, facts).retained / len(facts)
        out.append(
            SessionPoint(
                float(v),
                len(session),
                largest,
                last_tokens,
                share,
                session.total_cost_with_cache if len(session) else None,
                trims,
            )
        )
    return tuple(out)


def recommend(
    points: Sequence[SessionPoint],
    question: Question,
    *,
    window: int | None,
    min_facts: float = 0.8,
    chat_tokens: int | None = None,
) -> Recommendation:
    """The point of ``points`` (ascending values) that answers ``question``; see the module
    docstring. ``chat_tokens`` (the whole chat's size) lets the answer say that the chat needs
    no trimming and how much room it leaves. Without a point, ``reason`` says why none
    qualifies and what to change."""
    ordered = sorted(points, key=lambda p: p.value)
    fitting = [p for p in ordered if p.fits(window)]
    qualified = [p for p in fitting if p.keeps(min_facts)]
    changes_nothing = bool(ordered) and not any(p.trims for p in ordered)

    def answer(point: SessionPoint | None, reason: str = "") -> Recommendation:
        return Recommendation(
            question, point, window, min_facts, reason, chat_tokens, changes_nothing
        )

    if not ordered:
        return answer(None, "nothing was swept")
    if question is Question.FITS_AND_KEEPS_FACTS:
        if qualified:
            return answer(qualified[0])
        if not fitting:
            smallest = min(ordered, key=lambda p: p.largest_call)
            return answer(
                None,
                f"even at its smallest the largest call is {smallest.largest_call:,} tokens, "
                "over the window; pick a model with a larger window, or a strategy that clears "
                "tool results or summarizes",
            )
        best = max(fitting, key=lambda p: (p.facts_kept or 0.0, -p.value))
        kept = best.facts_kept or 0.0
        floor = math.floor(kept * 20) * 5  # the facts slider moves in steps of 5%
        change = (
            f"lower the facts to keep to {floor}% or pick a model with a larger window"
            if floor > 0
            else "pick a model with a larger window, or another strategy or setting"
        )
        return answer(
            None,
            f"the values that fit keep at most {kept:.0%} of the facts (at "
            f"{_number(best.value)}); {change}",
        )
    priced = [p for p in qualified if p.cost_with_cache is not None]
    if priced:
        return answer(min(priced, key=lambda p: (p.cost_with_cache or 0.0, p.value)))
    if all(p.cost_with_cache is None for p in ordered):
        reason = (
            "the model has no price, so no session has a cost; ask for the smallest value "
            "that fits and keeps the facts instead"
        )
    elif not fitting:
        reason = (
            "no swept value keeps every call under the window; pick a model with a larger "
            "window, or a strategy that clears tool results or summarizes"
        )
    else:
        reason = (
            f"no value that fits keeps {min_facts:.0%} of the facts; lower the facts to keep "
            "or pick a model with a larger window"
        )
    return answer(None, reason)


def refine_values(
    points: Sequence[SessionPoint], rec: Recommendation, count: int, *, integer: bool
) -> list[float]:
    """Up to ``count`` new values between the recommended point and its swept neighbours (the
    smaller one; for ``CHEAPEST`` the larger one too): a second sweep there resolves the knee
    that a coarse grid only brackets. Empty without a point or when no value fits between.

    >>> pts = [SessionPoint(v, 1, 1, 1, None, None) for v in (100, 200, 400)]
    >>> rec = Recommendation(Question.FITS_AND_KEEPS_FACTS, pts[1], None, 0.8)
    >>> refine_values(pts, rec, 3, integer=True)
    [125.0, 150.0, 175.0]
    """
    if rec.point is None or count < 1:
        return []
    values = sorted({p.value for p in points})
    at = values.index(rec.point.value)
    gaps = [(values[at - 1], values[at])] if at > 0 else []
    if rec.question is Question.CHEAPEST and at + 1 < len(values):
        gaps.append((values[at], values[at + 1]))
    each = max(count // max(len(gaps), 1), 1)
    out: set[float] = set()
    for lo, hi in gaps:
        for i in range(1, each + 1):
            v = lo + (hi - lo) * i / (each + 1)
            v = float(round(v)) if integer else v
            if lo < v < hi:
                out.add(v)
    return sorted(out - set(values))


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
    if rec.point is not None and rec.needs_no_trimming:
        return _no_trimming_sentence(rec, noun=noun, unit=unit, model=model)
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


def _no_trimming_sentence(rec: Recommendation, *, noun: str, unit: str | None, model: str) -> str:
    """The answer when the chosen value trims nothing and the chat fits: send it whole."""
    from ctxlab.pricing import format_usd

    assert rec.point is not None
    spare = rec.spare
    if spare is None:
        fits = f"it fits ({model} has no known window)" if rec.window is None else "it fits"
    else:
        fits = (
            f"it fits with {spare:,} tokens to spare (the whole chat is "
            f"{rec.chat_tokens or 0:,} of the {rec.window or 0:,}-token window)"
        )
    head = f"This chat needs no trimming on {model} — {fits}."
    if rec.trimming_changes_nothing:
        why = (
            f" No {noun} in the swept range changes what is sent with the strategy's other "
            "settings."
        )
    elif rec.question is Question.FITS_AND_KEEPS_FACTS:
        why = f" Every smaller {noun} that trims keeps under {rec.min_facts:.0%} of the facts."
    else:
        why = (
            f" Of the values that keep {rec.min_facts:.0%} of the facts, sending it whole is the "
            f"cheapest session with the prompt cache ({format_usd(rec.point.cost_with_cache)})."
        )
    return f"{head}{why} {noun.capitalize()} {_amount(rec.point.value, unit)} sends it all."
