"""The function every executor runs: one source in, its conversations' rows out.

:func:`evaluate_source` never raises for bad input: a source that cannot be read comes back with
``error`` set (and no conversations), so the run records an error row and goes on. It is a
module-level function of picklable values, so a process pool, a Ray task and a plain loop run
exactly the same code and produce equal rows.

The rows travel as plain tuples (:class:`ConfigRows`): a process pool pickles every outcome,
and tuples of numbers and strings pickle in C, where a frozen dataclass per call is pickled and
rebuilt field by field in Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from ctxlab.corpus.evaluate import (
    CALL_COLUMNS,
    TOTAL_COLUMNS,
    ConfigOutcome,
    evaluate_conversation,
)
from ctxlab.corpus.grid import Configuration
from ctxlab.corpus.inputs import Source, load_source
from ctxlab.errors import CtxlabError
from ctxlab.pricing import PriceTable
from ctxlab.replay import assistant_turns

__all__ = ["ConfigRows", "ConversationOutcome", "SourceOutcome", "Task", "evaluate_source"]


@dataclass(frozen=True, slots=True)
class Task:
    """A source and the configurations it still needs."""

    source: Source
    configurations: tuple[Configuration, ...]
    prices: PriceTable | None = None


@dataclass(frozen=True, slots=True)
class ConfigRows:
    """A :class:`~ctxlab.corpus.evaluate.ConfigOutcome` as the store's rows.

    ``totals`` holds the :class:`~ctxlab.corpus.evaluate.Totals` fields in ``TOTAL_COLUMNS``
    order and each of ``calls`` the :class:`~ctxlab.corpus.evaluate.CallRow` fields in
    ``CALL_COLUMNS`` order; ``error`` set means no rows (``totals`` None).
    """

    config_key: str
    calls: tuple[tuple[Any, ...], ...] = ()
    totals: tuple[Any, ...] | None = None
    error: str | None = None


_TOTALS_OF = attrgetter(*TOTAL_COLUMNS)
_CALL_OF = attrgetter(*CALL_COLUMNS)


def config_rows(outcome: ConfigOutcome) -> ConfigRows:
    """``outcome`` as tuples (the same values, in the store's column order)."""
    if outcome.error is not None or outcome.totals is None:
        return ConfigRows(outcome.config_key, error=outcome.error)
    calls = tuple(map(_CALL_OF, outcome.calls))
    return ConfigRows(outcome.config_key, calls, _TOTALS_OF(outcome.totals))


@dataclass(frozen=True, slots=True)
class ConversationOutcome:
    """One conversation of a source with one outcome per configuration of the task."""

    key: str
    conversation: str
    title: str
    messages: int
    turns: int
    outcomes: tuple[ConfigRows, ...]


@dataclass(frozen=True, slots=True)
class SourceOutcome:
    """What a worker returns: the task's source, its conversations, or why it could not be read.

    When ``error`` is set, ``conversations`` holds those read before the failure (none for a
    file that does not parse, nor for a worker that died).
    """

    label: str
    key: str
    configurations: tuple[str, ...]
    conversations: tuple[ConversationOutcome, ...] = ()
    error: str | None = None
    stage: str = "read"  # where ``error`` happened: "read", or "worker" (the process died)


def evaluate_source(task: Task) -> SourceOutcome:
    """Read ``task.source`` and evaluate each of its conversations under every configuration."""
    source = task.source
    keys = tuple(c.key for c in task.configurations)
    done: list[ConversationOutcome] = []
    try:
        for conv in load_source(source):
            outcomes = evaluate_conversation(conv.messages, task.configurations, prices=task.prices)
            done.append(
                ConversationOutcome(
                    key=conv.key,
                    conversation=conv.conversation,
                    title=conv.title[:200],
                    messages=len(conv.messages),
                    turns=len(assistant_turns(conv.messages)),
                    outcomes=tuple(map(config_rows, outcomes)),
                )
            )
    except (CtxlabError, OSError, UnicodeDecodeError, RecursionError) as exc:
        reason = " ".join((str(exc) or type(exc).__name__).split())
        return SourceOutcome(source.label, source.key, keys, tuple(done), reason)
    return SourceOutcome(source.label, source.key, keys, tuple(done))
