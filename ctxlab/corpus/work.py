"""The function every executor runs: one source in, its conversations' rows out.

:func:`evaluate_source` never raises for bad input: a source that cannot be read comes back with
``error`` set (and no conversations), so the run records an error row and goes on. It is a
module-level function of picklable values, so a process pool, a Ray task and a plain loop run
exactly the same code and produce equal rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.corpus.evaluate import ConfigOutcome, evaluate_conversation
from ctxlab.corpus.grid import Configuration
from ctxlab.corpus.inputs import Source, load_source
from ctxlab.errors import CtxlabError
from ctxlab.pricing import PriceTable
from ctxlab.replay import assistant_turns

__all__ = ["ConversationOutcome", "SourceOutcome", "Task", "evaluate_source"]


@dataclass(frozen=True, slots=True)
class Task:
    """A source and the configurations it still needs."""

    source: Source
    configurations: tuple[Configuration, ...]
    prices: PriceTable | None = None


@dataclass(frozen=True, slots=True)
class ConversationOutcome:
    """One conversation of a source with one outcome per configuration of the task."""

    key: str
    conversation: str
    title: str
    messages: int
    turns: int
    outcomes: tuple[ConfigOutcome, ...]


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
                    outcomes=outcomes,
                )
            )
    except (CtxlabError, OSError, UnicodeDecodeError, RecursionError) as exc:
        reason = " ".join((str(exc) or type(exc).__name__).split())
        return SourceOutcome(source.label, source.key, keys, tuple(done), reason)
    return SourceOutcome(source.label, source.key, keys, tuple(done))
