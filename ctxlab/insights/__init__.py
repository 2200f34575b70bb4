"""Insights no context library shows: what a trimmed context lost, costs and silently breaks.

One module per concept, pure functions over messages and counts:

* :mod:`~ctxlab.insights.facts` — which facts (numbers, identifiers, names, URLs, paths) picked
  from the chat, or typed by a user, are still in a context, verbatim or inside a summary;
* :mod:`~ctxlab.insights.prompt_cache` — how many leading tokens of a call equal the previous
  call's (the part a provider's prompt cache can serve) and what OpenAI bills as cached;
* :mod:`~ctxlab.insights.token_disagreement` — the real tokenizer against the chars/4
  heuristic, per message;
* :mod:`~ctxlab.insights.lineage` — what each summary of a compaction chain covers and how it
  changed.

Whether a summarizing configuration fires again right after it compacts is the strategy's own
answer (:meth:`ctxlab.strategies.Strategy.resummarization_guard`); :func:`resummarization_guard`
asks it. The names below are re-exported so ``from ctxlab.insights import ...`` keeps working.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxlab.insights.facts import Fact, FactCheck, FactRetention, extract_facts, fact_retention
from ctxlab.insights.lineage import LineageEntry, summary_lineage, word_diff
from ctxlab.insights.prompt_cache import (
    CacheStep,
    cache_series,
    cacheable_prefix,
    cached_input_tokens,
    sent_form,
)
from ctxlab.insights.token_disagreement import TokenDisagreement, token_disagreement
from ctxlab.model import Message
from ctxlab.strategies.base import ResummarizationGuard, ResummarizationRisk
from ctxlab.strategies.summarize import resummarization_risk

if TYPE_CHECKING:
    from ctxlab.strategies.base import Strategy
    from ctxlab.tokens import TokenCounter

__all__ = [
    "CacheStep",
    "Fact",
    "FactCheck",
    "FactRetention",
    "LineageEntry",
    "ResummarizationGuard",
    "ResummarizationRisk",
    "TokenDisagreement",
    "cache_series",
    "cacheable_prefix",
    "cached_input_tokens",
    "extract_facts",
    "fact_retention",
    "resummarization_guard",
    "resummarization_risk",
    "sent_form",
    "summary_lineage",
    "token_disagreement",
    "word_diff",
]


def resummarization_guard(
    strategy: Strategy, messages: Sequence[Message], counter: TokenCounter
) -> ResummarizationGuard | None:
    """``strategy.resummarization_guard(messages, counter)``: None for a non-summarizing one."""
    return strategy.resummarization_guard(messages, counter)
