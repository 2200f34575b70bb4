"""What the app says about a context before it is sent, computed once for every page.

Three separate verdicts, so that none passes for another:

- ``providers``: what each provider's API would reject (:mod:`ctxlab.validate`'s shape rules,
  and the model's context window for the provider that serves the model). Only these are
  provider problems.
- ``over_limit``: the context is over the user's own token limit (a strategy's budget or
  trigger). No API rejects that; it is the user's setting, reported as a neutral line with the
  reason the strategy went over it (:meth:`Strategy.budget_note`).
- ``sends_nothing``: the context holds no message of the conversation (nothing, or only the
  system prompt), naming the setting that causes it and fixes that send something
  (:meth:`Strategy.sends_nothing`).

Playground, Compare and Replay all call :func:`check_context`, so two pages showing one
configuration give one verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxlab.catalog import ModelInfo
from ctxlab.model import Message
from ctxlab.strategies.base import BudgetNote, SendsNothing, Strategy, TrimResult
from ctxlab.tokens import TokenCounter
from ctxlab.validate import PROVIDERS, Problem, validate

__all__ = ["ContextCheck", "check_context", "provider_problems"]


@dataclass(frozen=True, slots=True)
class ContextCheck:
    """The verdicts on one strategy's context (see the module docstring)."""

    providers: Mapping[str, tuple[Problem, ...]]
    over_limit: BudgetNote | None
    sends_nothing: SendsNothing | None


def provider_problems(
    messages: Sequence[Message],
    *,
    counter: TokenCounter | None = None,
    model: ModelInfo | None = None,
    tokens: int | None = None,
) -> dict[str, tuple[Problem, ...]]:
    """What every provider would reject in ``messages`` sent as one request.

    ``model``'s context window is checked for the provider that serves it only (gpt-4o's window
    says nothing about what Anthropic accepts). No budget: a user's own limit is not a provider
    rule (see :func:`check_context`). ``tokens``: ``counter.count_messages(messages)`` when
    known (see :func:`ctxlab.validate.validate`).
    """
    return {
        p: validate(
            messages,
            counter=counter,
            provider=p,
            window=model.context_window
            if model is not None and model.validator_provider == p
            else None,
            tokens=tokens,
        )
        for p in PROVIDERS
    }


def check_context(
    messages: Sequence[Message],
    result: TrimResult,
    strategy: Strategy,
    counter: TokenCounter,
    *,
    model: ModelInfo | None = None,
    tokens: int | None = None,
) -> ContextCheck:
    """The verdicts on ``result``, which is ``strategy`` applied to ``messages``.

    Args:
        messages: the chat the strategy was applied to.
        result: what it sends.
        strategy: the configured strategy (its limit, its reasons, its fixes).
        counter: the counter ``result`` was counted with.
        model: the model the context is for (its window, its input room for fixes).
        tokens: ``counter.count_messages(result.messages)`` when known; None counts again
            (a summarized preview's count is the validator's to make).
    """
    return ContextCheck(
        providers=provider_problems(result.messages, counter=counter, model=model, tokens=tokens),
        over_limit=strategy.budget_note(messages, counter, result),
        sends_nothing=strategy.sends_nothing(
            messages, counter, result, window=model.input_room if model is not None else None
        ),
    )
