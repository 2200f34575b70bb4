"""One conversation against a grid of configurations: the replay, measured call by call.

:func:`evaluate_conversation` is the unit of work of a fleet run, and it is pure: the same
messages and configurations give the same rows in any process (a pool worker, a Ray task, a
plain loop). For each configuration it runs :func:`ctxlab.replay.replay` (every assistant turn),
then rebuilds each call's context with :meth:`~ctxlab.replay.Replay.context_at` to count the
decisions and to run :func:`ctxlab.validate.validate`, and, when the configuration asks for it,
measures :func:`ctxlab.insights.fact_retention` at the last call. Nothing here is re-implemented:
the rows are the replay's numbers, the validator's codes and the insight's percentages.

Invariants: a :class:`ConfigOutcome` holds either rows (``error`` None; one :class:`CallRow`
per assistant turn, ``totals`` their sums) or an error (no rows); cost columns are None when
the model has no price; ``cost`` includes the summarizer's calls, ``cost_untrimmed`` has none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

from ctxlab.corpus.grid import Configuration
from ctxlab.errors import CtxlabError
from ctxlab.insights import Fact, extract_facts, fact_retention
from ctxlab.model import Message
from ctxlab.pricing import PriceTable
from ctxlab.replay import replay
from ctxlab.strategies import Decision
from ctxlab.summarizers import OfflineSummarizer, Summarizer
from ctxlab.tokens import TokenCounter, new_counter
from ctxlab.validate import validate

__all__ = [
    "CALL_COLUMNS",
    "TOTAL_COLUMNS",
    "CallRow",
    "ConfigOutcome",
    "Totals",
    "evaluate_conversation",
]


@dataclass(frozen=True, slots=True)
class CallRow:
    """One model call of one conversation under one configuration.

    ``over_budget``: ``tokens_sent`` exceeds the configuration's budget (False without one).
    Decision counts are over the messages the strategy saw at that call. ``problem_codes`` lists
    the validator's code of every problem (repeats kept); ``problems`` counts the errors among
    them (what a provider would reject).
    """

    turn: int
    message_index: int
    messages_untrimmed: int
    tokens_untrimmed: int
    messages_sent: int
    tokens_sent: int
    output_tokens: int
    over_budget: bool
    kept: int
    dropped: int
    summarized: int
    cleared: int
    pinned: int
    inserted: int
    summarizer_calls: int
    summary_input_tokens: int
    summary_output_tokens: int
    cached_tokens: int | None
    cost: float | None
    cost_with_cache: float | None
    cost_untrimmed: float | None
    problems: int
    problem_codes: tuple[str, ...]


CALL_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CallRow))


@dataclass(frozen=True, slots=True)
class Totals:
    """One conversation under one configuration: sums over its calls, and fact retention.

    ``retention`` is the percent of the chat's facts still present in the last call's context
    (None when not asked for or the chat has no call); ``facts`` how many were checked.
    """

    calls: int
    tokens_untrimmed: int
    tokens_sent: int
    max_tokens_sent: int
    calls_over_budget: int
    invalid_calls: int
    problems: int
    summarizer_calls: int
    cost: float | None
    cost_with_cache: float | None
    cost_untrimmed: float | None
    facts: int
    retention: float | None


TOTAL_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Totals))


@dataclass(frozen=True, slots=True)
class ConfigOutcome:
    """The rows of one configuration on one conversation, or why there are none."""

    config_key: str
    calls: tuple[CallRow, ...] = ()
    totals: Totals | None = None
    error: str | None = None


def _sum_known(values: Sequence[float | None]) -> float | None:
    """The sum, or None when any value is unknown."""
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _evaluate_one(
    chat: Sequence[Message],
    config: Configuration,
    counter: TokenCounter,
    prices: PriceTable | None,
    facts_before: Callable[[int], tuple[Fact, ...]],
) -> ConfigOutcome:
    strategy = config.build()
    summarizer: Summarizer | None = (
        OfflineSummarizer(counter=counter) if strategy.uses_summarizer else None
    )
    run = replay(chat, strategy, counter, summarizer=summarizer, model=config.model, prices=prices)
    budget = config.budget
    rows: list[CallRow] = []
    last_context: tuple[Message, ...] = ()
    for r in run.rows:
        result = run.context_at(r.turn)
        counts = result.decision_counts()
        found = validate(result.messages, provider="openai")
        last_context = result.messages
        rows.append(
            CallRow(
                turn=r.turn,
                message_index=r.message_index,
                messages_untrimmed=r.messages_untrimmed,
                tokens_untrimmed=r.tokens_untrimmed,
                messages_sent=r.messages_sent,
                tokens_sent=r.tokens_sent,
                output_tokens=r.output_tokens,
                over_budget=budget is not None and r.tokens_sent > budget,
                kept=counts[Decision.KEPT],
                dropped=counts[Decision.DROPPED],
                summarized=counts[Decision.SUMMARIZED],
                cleared=counts[Decision.CLEARED],
                pinned=counts[Decision.PINNED],
                inserted=len(result.inserted),
                summarizer_calls=r.summarizer_calls,
                summary_input_tokens=r.summary_input_tokens,
                summary_output_tokens=r.summary_output_tokens,
                cached_tokens=r.cached_tokens,
                cost=_plus(r.call_cost, r.summary_cost),
                cost_with_cache=_plus(r.call_cost_with_cache, r.summary_cost),
                cost_untrimmed=r.call_cost_untrimmed,
                problems=sum(p.severity == "error" for p in found),
                problem_codes=tuple(p.code for p in found),
            )
        )
    facts = 0
    retention: float | None = None
    if config.retention and rows:
        stop = rows[-1].message_index
        checked = fact_retention(chat[:stop], last_context, facts_before(stop))
        facts, retention = checked.total, checked.percent
    totals = Totals(
        calls=len(rows),
        tokens_untrimmed=sum(r.tokens_untrimmed for r in rows),
        tokens_sent=sum(r.tokens_sent for r in rows),
        max_tokens_sent=max((r.tokens_sent for r in rows), default=0),
        calls_over_budget=sum(r.over_budget for r in rows),
        invalid_calls=sum(r.problems > 0 for r in rows),
        problems=sum(r.problems for r in rows),
        summarizer_calls=sum(r.summarizer_calls for r in rows),
        cost=_sum_known([r.cost for r in rows]),
        cost_with_cache=_sum_known([r.cost_with_cache for r in rows]),
        cost_untrimmed=_sum_known([r.cost_untrimmed for r in rows]),
        facts=facts,
        retention=retention,
    )
    return ConfigOutcome(config.key, tuple(rows), totals)


def evaluate_conversation(
    messages: Sequence[Message],
    configurations: Sequence[Configuration],
    *,
    prices: PriceTable | None = None,
    counter_for: Callable[[str], TokenCounter] = new_counter,
) -> tuple[ConfigOutcome, ...]:
    """Replay ``messages`` under every configuration; one outcome per configuration, in order.

    A configuration that fails on this chat (its summarizer raised, a parameter it cannot use)
    gives an outcome with ``error`` set and no rows; the others are unaffected. Counters come
    from ``counter_for`` (one per model, fresh by default so a long run's memory stays flat).
    """
    counters: dict[str, TokenCounter] = {}
    out: list[ConfigOutcome] = []
    facts: dict[int, tuple[Fact, ...]] = {}

    def facts_before(stop: int) -> tuple[Fact, ...]:
        """The facts of ``messages[:stop]``, extracted once for all configurations."""
        if stop not in facts:
            facts[stop] = extract_facts(messages[:stop])
        return facts[stop]

    for config in configurations:
        counter = counters.get(config.model)
        try:
            if counter is None:
                counter = counters[config.model] = counter_for(config.model)
            out.append(_evaluate_one(messages, config, counter, prices, facts_before))
        except CtxlabError as exc:
            out.append(ConfigOutcome(config.key, error=f"{type(exc).__name__}: {exc}"))
    return tuple(out)
