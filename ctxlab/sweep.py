"""Parameter sweeps (the Tune page's engine): one strategy over a grid of one parameter.

A sweep applies one strategy at evenly spaced values of one numeric parameter; counts are cached
by the counter, so each point costs one trim. :func:`knee` picks the value after which raising
the parameter barely changes the tokens sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.model import Message
from ctxlab.pricing import DEFAULT_PRICES
from ctxlab.strategies import ParamInfo, Strategy, with_params
from ctxlab.summarizers import Summarizer
from ctxlab.tokens import TokenCounter

__all__ = ["KNEE_SHARE", "SweepPoint", "grid", "knee", "sweep"]

KNEE_SHARE = 0.02
"""A step that adds less than this share of the largest tokens-sent value counts as flat."""


@dataclass(frozen=True, slots=True)
class SweepPoint:
    value: float
    tokens_sent: int
    messages_kept: int
    cost_per_call: float | None


def grid(lo: float, hi: float, steps: int, integer: bool) -> list[float]:
    """``steps`` values from ``lo`` to ``hi`` inclusive (distinct integers when ``integer``)."""
    steps = max(steps, 2)
    raw = [lo + (hi - lo) * i / (steps - 1) for i in range(steps)]
    if integer:
        return [float(v) for v in sorted({round(v) for v in raw})]
    return raw


def sweep(
    strategy: Strategy,
    info: ParamInfo,
    values: Sequence[float],
    messages: Sequence[Message],
    counter: TokenCounter,
    model: str,
    summarizer: Summarizer | None = None,
) -> list[SweepPoint]:
    """Apply ``strategy`` with ``info`` set to each of ``values``."""
    integer = info.kind in ("int", "optional_int")
    out: list[SweepPoint] = []
    for value in values:
        v: float | int = int(value) if integer else value
        result = with_params(strategy, {info.name: v}).apply(messages, counter, summarizer)
        kept = sum(1 for d in result.decisions.values() if d.is_sent)
        cost = DEFAULT_PRICES.cost(model, result.tokens_after, 0)
        out.append(SweepPoint(float(v), result.tokens_after, kept, cost))
    return out


def knee(points: Sequence[SweepPoint], share: float = KNEE_SHARE) -> float | None:
    """The smallest value after which every further step adds < ``share`` x max tokens sent.

    None when the curve never flattens over the swept range (or has fewer than 3 points).

    >>> pts = [SweepPoint(float(v), t, 0, None) for v, t in [(1, 10), (2, 50), (3, 99), (4, 100)]]
    >>> knee(pts)
    3.0
    """
    if len(points) < 3:
        return None
    top = max(p.tokens_sent for p in points) or 1
    flat_from: int | None = None
    for i in range(len(points) - 1, 0, -1):
        if abs(points[i].tokens_sent - points[i - 1].tokens_sent) < share * top:
            flat_from = i - 1
        else:
            break
    if flat_from is None or flat_from == 0:
        return None if flat_from is None else points[0].value
    return points[flat_from].value
