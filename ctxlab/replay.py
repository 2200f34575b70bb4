"""Replay: a strategy applied before every assistant turn of a chat, as a live agent would.

The context of the model call that produced assistant message ``i`` is the history before ``i``.

* A **projection** strategy (its results have ``replace=False``) is recomputed from the full
  history at every call. Replay counts the chat once (``counter.counted``) and asks
  ``strategy.project_many(chat, turns, counter)`` for the projection of every call, which the
  projection strategies answer in O(log n) each from prefix sums: the whole replay is linear in
  the chat and tokenizes nothing after the first count. Each call's cache prefix and row follow
  its projection in one pipeline (``_replay_projection``), equal bit for bit to the plain
  per-call path (``_replay_projection_per_turn``, also used when the model has no price).
* A **replacement** strategy (``uses_summarizer``, or a framework policy that rewrites its stored
  history: :func:`carries_history`; ``replace=True`` when it fires, e.g. summarize) carries its
  compacted history forward: the live history at a call is the last
  compacted history plus the chat's messages since that compaction; the strategy is applied to it
  and, when it returns ``replace=True``, its messages become the new compacted history.

Prompt cache. For each call, ``cacheable_prefix_tokens`` is the number of leading tokens of
the context identical to the previous call's context (whole messages in their sent form, as
:func:`ctxlab.insights.cacheable_prefix`; reply priming excluded; 0 on the first call), and
``cached_tokens`` the part OpenAI bills as cached (:func:`ctxlab.insights.cached_input_tokens`:
at least 1,024 tokens, in steps of 128). ``call_cost_with_cache`` bills the cached tokens at
``ModelPrice.cached_input_per_mtok`` (the input price when the model has none) and the rest of
the prompt at ``ModelPrice.write_price``: the input price where cache writes are free (Gemini,
DeepSeek, OpenAI up to GPT-5.5), the (5-minute) write price where the provider charges writes
(Anthropic, OpenAI GPT-5.6 and later: 1.25x input): a cached conversation writes, at every call,
what the cache did not serve.

How the context of each call is known without materializing it:

* replacement strategies: the replay holds every call's context already (``result.messages``);
* projections describe their context in the :class:`~ctxlab.strategies.base.Projection` they
  return: the first ``pinned`` instruction messages, then ``messages[start:end]``, with the first
  ``edited`` of a per-chat list of edit sites replaced (cleared tool results). Two such
  descriptions give the common prefix exactly, in O(pinned + log n): the whole previous call
  when both runs are aligned and no new edit site appeared, else up to the first difference.
  A projection that does not describe itself is materialized with ``apply()`` when the chat has
  at most :data:`EXACT_CONTEXT_LIMIT` messages, and for at most :data:`FALLBACK_APPLIES` calls
  on a longer chat; past that its cache columns are None.

Cost of one call (prices from :mod:`ctxlab.pricing`; ``call_cost`` assumes no prompt cache)::

    call_cost    = tokens_sent * input_price + output_tokens * output_price      (per token)
    summary_cost = summary_input_tokens * summarizer input price
                   + summary_output_tokens * summarizer output price

where ``output_tokens`` is ``counter.count_message`` of the assistant message the call produced
(its content and tool calls with the per-message chat overhead, a close upper estimate of the
billed completion tokens). The untrimmed comparison sends the whole history every call with the
same output. Summarizer calls are costed at the summarizer model's price (None when unknown).
Assistant messages marked ``is_summary`` were written by a summarizer, not by the model, and are
not turns.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, make_dataclass
from itertools import repeat
from operator import attrgetter
from typing import IO, TYPE_CHECKING, Any

from ctxlab.counted import CountedChat
from ctxlab.csvtext import csv_text
from ctxlab.errors import SummarizerError
from ctxlab.extras import installed
from ctxlab.insights.lineage import LineageEntry, summary_lineage
from ctxlab.insights.prompt_cache import (
    Context,
    cacheable_prefix,
    cached_input_tokens,
    prefix_between,
    sent_form,
)
from ctxlab.model import Message, Role
from ctxlab.pricing import DEFAULT_PRICES, ModelPrice, PriceTable
from ctxlab.strategies.base import Decision, Projection, Strategy, TrimResult
from ctxlab.strategies.projection_columns import ProjectionColumns
from ctxlab.summarizers import (
    NoSummarizer,
    RecordingSummarizer,
    Summarizer,
    SummaryResponse,
)
from ctxlab.tokens import ProgressCallback, TokenCounter

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "EXACT_CONTEXT_LIMIT",
    "FALLBACK_APPLIES",
    "Compaction",
    "Replay",
    "ReplayRow",
    "assistant_turns",
    "carries_history",
    "replay",
]

EXACT_CONTEXT_LIMIT = 2_000
"""Longest chat on which a projection of unrecognised shape is materialized for cache columns."""
FALLBACK_APPLIES = 64
CONTEXTS_KEPT = 3
"""Contexts :meth:`Replay.context_at` keeps (the scrubber's last few turns cost nothing again;
on a 100,000-message chat each holds a decision per message, megabytes)."""
"""Calls of unrecognised shape materialized on a chat longer than :data:`EXACT_CONTEXT_LIMIT`."""


@dataclass(frozen=True, slots=True)
class ReplayRow:
    """One model call of the replay.

    Costs are USD, or None when the model (or, for ``summary_cost``, the summarizer model) has no
    price. ``cumulative_cost`` includes the summary costs known so far.
    """

    turn: int  # 1-based call number
    message_index: int  # index in the chat of the assistant message this call produced
    messages_untrimmed: int
    tokens_untrimmed: int
    messages_sent: int
    tokens_sent: int
    output_tokens: int
    summarizer_calls: int
    summary_input_tokens: int
    summary_output_tokens: int
    call_cost: float | None
    summary_cost: float | None
    cumulative_cost: float | None
    call_cost_untrimmed: float | None
    cumulative_cost_untrimmed: float | None
    # Prompt cache (see the module docstring); None when the context of the call could not be
    # derived cheaply (an unrecognised projection on a chat over EXACT_CONTEXT_LIMIT messages).
    cacheable_prefix_tokens: int | None = None
    cached_tokens: int | None = None
    call_cost_with_cache: float | None = None
    cumulative_cost_with_cache: float | None = None
    # The fair baseline: the untrimmed chat also gets the cache. Each untrimmed call repeats
    # the whole previous call, so its cached part is every message the previous call sent.
    call_cost_untrimmed_with_cache: float | None = None
    cumulative_cost_untrimmed_with_cache: float | None = None

    @property
    def tokens_saved(self) -> int:
        return self.tokens_untrimmed - self.tokens_sent


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(ReplayRow))

# A mutable twin of ReplayRow with the same slots in the same order: the replay of a projection
# fills one with plain attribute stores (positional, no keyword parsing, no frozen
# ``object.__setattr__`` per field) and then turns it into a ReplayRow by assigning its class,
# which CPython allows between classes of identical layout. The object is then an ordinary
# ReplayRow (same fields, equality, repr, hash, immutability): 5x cheaper to build, which on a
# 100,000-message chat is a fifth of the whole replay.
_RowBuilder = make_dataclass(
    "_RowBuilder", [(f.name, f.type) for f in fields(ReplayRow)], slots=True, eq=False
)
if _RowBuilder.__slots__ != ReplayRow.__slots__:  # type: ignore[attr-defined]
    raise RuntimeError("_RowBuilder must have ReplayRow's slots in ReplayRow's order")


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction a replay performed: before which call, what it folded, what it wrote.

    ``folded_ids`` are the ids of the chat's own messages folded by this compaction (earlier
    compaction pairs it replaced are not listed); ``compaction`` is the inserted user message
    (``is_compaction``) and ``summary`` the assistant summary message, when the strategy made one.
    """

    turn: int
    message_index: int
    compaction: Message
    summary: Message | None
    folded_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _LiveState:
    """Where a replacement replay stood at one call: enough to rebuild its TrimResult."""

    compacted: tuple[Message, ...]
    since: int  # chat index of the first message after the compacted history
    result: TrimResult | None  # stored only when the call compacted (the summarizer ran)


@dataclass(frozen=True, slots=True, eq=False)
class Replay:
    """All calls of one replay, with totals, CSV export and the context at any call.

    Invariants: ``rows[k].turn == k + 1``; ``message_index`` ascends; cumulative costs are the
    running sums of the per-call costs.
    """

    rows: tuple[ReplayRow, ...]
    strategy: str
    model: str
    price: ModelPrice | None
    warnings: tuple[str, ...] = ()
    _strategy: Strategy | None = field(default=None, repr=False)
    _counter: TokenCounter | None = field(default=None, repr=False)
    _chat: CountedChat | None = field(default=None, repr=False)
    _states: tuple[_LiveState, ...] = field(default=(), repr=False)
    compactions: tuple[Compaction, ...] = ()
    # Values derived from the rows (totals, break turns) and the last few contexts, built on
    # first use: a page that shows one replay across many reruns (the scrubber) derives them once.
    _memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def lineage(self) -> list[LineageEntry]:
        """The replay's compaction chain, oldest first, each with the chat ids it folded."""
        history: list[Message] = []
        for c in self.compactions:
            history.append(c.compaction)
            if c.summary is not None:
                history.append(c.summary)
        covers = {c.compaction.id: c.folded_ids for c in self.compactions}
        return summary_lineage(history, covers)

    @property
    def cache_known(self) -> bool:
        """True when every call's cache columns were computed."""
        return all(r.cacheable_prefix_tokens is not None for r in self.rows)

    @property
    def total_cost_with_cache(self) -> float | None:
        return self.rows[-1].cumulative_cost_with_cache if self.rows else 0.0

    @property
    def total_cost_untrimmed_with_cache(self) -> float | None:
        """The untrimmed chat's cost when every call is cached up to the previous call."""
        return self.rows[-1].cumulative_cost_untrimmed_with_cache if self.rows else 0.0

    def cache_break_turns(self) -> list[int]:
        """Calls whose cacheable prefix is shorter than the previous call's messages.

        At such a call the strategy changed something the previous call sent (dropped its
        front, replaced it by a summary, cleared a result), so the provider's cache of the
        previous call serves only the part before that change. Unknown columns never count.
        """
        memo: list[int] | None = self._memo.get("breaks")
        if memo is None:
            priming = self._chat.fixed if self._chat is not None else 0
            memo = []
            for before, row in zip(self.rows, self.rows[1:], strict=False):
                prefix = row.cacheable_prefix_tokens
                if prefix is not None and prefix < before.tokens_sent - priming:
                    memo.append(row.turn)
            self._memo["breaks"] = memo
        return list(memo)

    def __len__(self) -> int:
        return len(self.rows)

    def _total(self, column: str) -> int:
        """Sum of an int column over the calls (computed once per replay: rows never change)."""
        key = "sum." + column
        total: int | None = self._memo.get(key)
        if total is None:
            total = self._memo[key] = sum(map(attrgetter(column), self.rows))
        return total

    def __iter__(self) -> Iterator[ReplayRow]:
        return iter(self.rows)

    @property
    def replaces(self) -> bool:
        """True when the strategy carried a compacted history forward."""
        return bool(self._states)

    @property
    def tokens_sent(self) -> int:
        return self._total("tokens_sent")

    @property
    def tokens_untrimmed(self) -> int:
        return self._total("tokens_untrimmed")

    @property
    def summarizer_calls(self) -> int:
        return self._total("summarizer_calls")

    @property
    def summary_input_tokens(self) -> int:
        return self._total("summary_input_tokens")

    @property
    def summary_output_tokens(self) -> int:
        return self._total("summary_output_tokens")

    @property
    def total_cost(self) -> float | None:
        return self.rows[-1].cumulative_cost if self.rows else 0.0

    @property
    def total_cost_untrimmed(self) -> float | None:
        return self.rows[-1].cumulative_cost_untrimmed if self.rows else 0.0

    @property
    def saved_fraction(self) -> float:
        """Share of input tokens saved over all calls (0 when nothing was sent)."""
        before = self.tokens_untrimmed
        return (before - self.tokens_sent) / before if before else 0.0

    def rows_as_dicts(self) -> list[dict[str, Any]]:
        """One dict per row, ``{column: value}`` for every column of :data:`COLUMNS` (equal to
        ``dataclasses.asdict`` of the row; the values are plain scalars, so no deep copy)."""
        get = getattr
        return [{c: get(r, c) for c in COLUMNS} for r in self.rows]

    def to_csv(self, target: str | os.PathLike[str] | IO[str] | None = None) -> str:
        """Write one CSV line per call (columns: :data:`COLUMNS`); returns the CSV text."""
        return csv_text(
            COLUMNS,
            (["" if v is None else v for v in (getattr(r, c) for c in COLUMNS)] for r in self.rows),
            target,
        )

    def context_at(self, turn: int) -> TrimResult:
        """The full :class:`TrimResult` of call ``turn`` (1-based): what was sent and why.

        For a projection it is recomputed from cached counts; for a replacement strategy it is
        rebuilt from the stored live history (the stored result when that call compacted), so the
        summarizer is never called again.

        Raises:
            IndexError: ``turn`` is not a call of this replay.
        """
        if not 1 <= turn <= len(self.rows):
            raise IndexError(f"turn {turn} is not in this replay (1..{len(self.rows)})")
        strategy, counter, chat = self._strategy, self._counter, self._chat
        if strategy is None or counter is None or chat is None:
            raise ValueError("this Replay was built without its strategy and chat")
        contexts: dict[int, TrimResult] = self._memo.setdefault("contexts", {})
        hit = contexts.get(turn)
        if hit is not None:
            return hit
        stop = self.rows[turn - 1].message_index
        if not self._states:
            head = chat.head(stop)
            result = strategy.apply(head.messages, _KnownPrefix(counter, head))
        elif self._states[turn - 1].result is not None:
            return self._states[turn - 1].result  # type: ignore[return-value]
        else:
            state = self._states[turn - 1]
            live = (*state.compacted, *chat.messages[state.since : stop])
            result = strategy.apply(
                live, counter, NoSummarizer("a replayed call that did not summarize asked to")
            )
        if len(contexts) >= CONTEXTS_KEPT:
            contexts.pop(next(iter(contexts), turn), None)  # the oldest (threads may race)
        contexts[turn] = result
        return result


class _KnownPrefix:
    """``counter``, except that the counted form of one prefix of a counted chat is known.

    The replay's chat is counted already: the prefix of a call gets its counts by slicing
    (:meth:`CountedChat.head`), not by looking each message up again (what made the context at a
    late turn of a 100,000-message chat cost a recount). Everything else is ``counter``'s.
    """

    def __init__(self, counter: TokenCounter, prefix: CountedChat) -> None:
        self._counter = counter
        self._prefix = prefix
        self.name = counter.name
        self.label = counter.label
        self.is_exact = counter.is_exact
        self.accounting = counter.accounting

    def count_text(self, text: str) -> int:
        return self._counter.count_text(text)

    def count_message(self, message: Message) -> int:
        return self._counter.count_message(message)

    def count_messages(self, messages: Sequence[Message]) -> int:
        if messages is self._prefix.messages:
            return self._prefix.total
        return self._counter.count_messages(messages)

    def counts(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> list[int]:
        if messages is self._prefix.messages:
            return list(self._prefix.counts)
        return self._counter.counts(messages, progress)

    def counted(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> CountedChat:
        if messages is self._prefix.messages:
            return self._prefix
        return self._counter.counted(messages, progress)

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        return self._counter.count_tools(tools)


def assistant_turns(messages: Sequence[Message]) -> list[int]:
    """Indices of the assistant messages a model produced (summaries excluded)."""
    return [i for i, m in enumerate(messages) if m.role is Role.ASSISTANT and not m.is_summary]


def replay(
    messages: Sequence[Message],
    strategy: Strategy,
    counter: TokenCounter,
    *,
    summarizer: Summarizer | None = None,
    model: str = "gpt-4o",
    prices: PriceTable | None = None,
    turns: int | None = None,
    exact_limit: int = EXACT_CONTEXT_LIMIT,
) -> Replay:
    """Apply ``strategy`` before every assistant turn of ``messages`` as the chat grows.

    Args:
        messages: the whole chat; never mutated.
        strategy: any registered strategy.
        counter: the token counter (its caches make the replay linear for projections).
        summarizer: for strategies that summarize; its responses are counted and costed.
        model: the model whose price costs each call (see the module docstring for the formula).
        prices: the price table; :data:`ctxlab.pricing.DEFAULT_PRICES` when None.
        turns: replay only the first ``turns`` calls (None: all of them).
        exact_limit: chats up to this many messages get the cache columns of a projection of
            unrecognised shape by materializing its contexts (see the module docstring).

    Returns:
        A :class:`Replay` with one row per model call; empty when the chat has no assistant
        message.

    Raises:
        SummarizerError: the summarizer failed; the message names the call. Nothing is returned
            and nothing was changed.
    """
    table = prices if prices is not None else DEFAULT_PRICES
    price = table.get(model)
    chat = counter.counted(messages)
    # a tuple, found once per chat: every configuration replayed on it has the same turns
    indices: Sequence[int] = chat.derived(
        "replay.assistant_turns", lambda c: tuple(assistant_turns(c.messages))
    )
    if turns is not None:
        indices = indices[: max(turns, 0)]
    warnings: list[str] = []
    if price is None:
        warnings.append(f"no price for model {model!r}: costs are not computed")
    costing = _Costing(price, table, warnings)
    states: list[_LiveState] = []
    compactions: list[Compaction] = []
    if carries_history(strategy):
        rows, states, compactions = _replay_replacing(
            chat, indices, strategy, counter, summarizer, costing
        )
    else:
        rows = _replay_projection(chat, indices, strategy, counter, costing, exact_limit)
    return Replay(
        rows=tuple(rows),
        strategy=strategy.name,
        model=model,
        price=price,
        warnings=tuple(dict.fromkeys(warnings)),
        _strategy=strategy,
        _counter=counter,
        _chat=chat,
        _states=tuple(states),
        compactions=tuple(compactions),
    )


class _Costing:
    """Running sums of call and summary costs; None once a price is missing."""

    def __init__(self, price: ModelPrice | None, table: PriceTable, warnings: list[str]) -> None:
        self.price = price
        self.table = table
        self.warnings = warnings
        self.cumulative: float | None = 0.0 if price is not None else None
        self.cumulative_untrimmed: float | None = self.cumulative
        self.cumulative_cached: float | None = self.cumulative
        self.cumulative_untrimmed_cached: float | None = self.cumulative
        self.previous_index = 0  # the message count the previous untrimmed call sent
        # ModelPrice.cost's formula without its argument checks (replay's counts are valid by
        # construction and cached <= input): the same floats, 44,000 calls faster.
        self.cost = _unchecked_cost(price) if price is not None else None
        self.cost_cached = _unchecked_cost(price, writes=True) if price is not None else None

    def row(
        self,
        *,
        turn: int,
        index: int,
        chat: CountedChat,
        messages_sent: int,
        tokens_sent: int,
        prefix_tokens: int | None,
        responses: Sequence[SummaryResponse] = (),
    ) -> ReplayRow:
        output = chat.counts[index]
        untrimmed = chat.tokens(0, index)
        cost = self.cost
        call_cost = call_cost_untrimmed = None
        if cost is not None:
            call_cost = cost(tokens_sent, output, 0)
            call_cost_untrimmed = cost(untrimmed, output, 0)
        summary_in = sum(r.input_tokens for r in responses)
        summary_out = sum(r.output_tokens for r in responses)
        summary_cost: float | None = 0.0 if not responses else None
        if responses:
            costs = [self.table.cost(r.model, r.input_tokens, r.output_tokens) for r in responses]
            known = [c for c in costs if c is not None]
            if len(known) == len(costs):
                summary_cost = sum(known)
            else:
                missing = next(r.model for r, c in zip(responses, costs, strict=True) if c is None)
                self.warnings.append(
                    f"no price for summarizer model {missing!r}: summarizer calls are not in the "
                    "cost"
                )
        if self.cumulative is not None and call_cost is not None:
            self.cumulative += call_cost + (summary_cost or 0.0)
        if self.cumulative_untrimmed is not None and call_cost_untrimmed is not None:
            self.cumulative_untrimmed += call_cost_untrimmed
        cached = None if prefix_tokens is None else cached_input_tokens(prefix_tokens)
        cost_cached = None
        with_cache = self.cost_cached
        if with_cache is not None and cached is not None:
            cost_cached = with_cache(tokens_sent, output, min(cached, tokens_sent))
        if cost_cached is None:
            self.cumulative_cached = None
        elif self.cumulative_cached is not None:
            self.cumulative_cached += cost_cached + (summary_cost or 0.0)
        untrimmed_cached = cached_input_tokens(chat.prefix[self.previous_index])
        self.previous_index = index
        cost_untrimmed_cached = None
        if with_cache is not None:
            cost_untrimmed_cached = with_cache(untrimmed, output, min(untrimmed_cached, untrimmed))
            if self.cumulative_untrimmed_cached is not None:
                self.cumulative_untrimmed_cached += cost_untrimmed_cached
        return ReplayRow(
            turn=turn,
            message_index=index,
            messages_untrimmed=index,
            tokens_untrimmed=untrimmed,
            messages_sent=messages_sent,
            tokens_sent=tokens_sent,
            output_tokens=output,
            summarizer_calls=len(responses),
            summary_input_tokens=summary_in,
            summary_output_tokens=summary_out,
            call_cost=call_cost,
            summary_cost=summary_cost,
            cumulative_cost=self.cumulative,
            call_cost_untrimmed=call_cost_untrimmed,
            cumulative_cost_untrimmed=self.cumulative_untrimmed,
            cacheable_prefix_tokens=prefix_tokens,
            cached_tokens=cached,
            call_cost_with_cache=cost_cached,
            cumulative_cost_with_cache=self.cumulative_cached,
            call_cost_untrimmed_with_cache=cost_untrimmed_cached,
            cumulative_cost_untrimmed_with_cache=self.cumulative_untrimmed_cached,
        )

    def projection_rows(
        self,
        chat: CountedChat,
        indices: Sequence[int],
        calls: Iterable[tuple[Projection, int | None]],
    ) -> list[ReplayRow]:
        """:meth:`row` for every call of a projection replay (no summarizer), in one pass;
        ``calls`` holds each call's projection and cacheable prefix.

        The same arithmetic as :meth:`row` in the same order (so the same floats), with the
        price and the chat's tables held in locals and each row built through
        :data:`_RowBuilder`. Needs a known price; the running sums continue from this costing's.
        """
        price = self.price
        if price is None:
            raise ValueError("projection_rows needs a price")
        ip, op = price.input_per_mtok, price.output_per_mtok
        cp = ip if price.cached_input_per_mtok is None else price.cached_input_per_mtok
        wp = price.write_price  # the uncached part of a cached call is written to the cache
        counts, sums, fixed = chat.counts, chat.prefix, chat.fixed
        cumulative = self.cumulative
        cumulative_untrimmed = self.cumulative_untrimmed
        cumulative_cached = self.cumulative_cached
        cumulative_untrimmed_cached = self.cumulative_untrimmed_cached
        if (
            cumulative is None
            or cumulative_untrimmed is None
            or cumulative_untrimmed_cached is None
        ):
            raise ValueError("projection_rows needs running sums")
        no_summary = 0.0  # a projection call's summary cost (row() adds it to the sums too)
        previous_tokens = sums[self.previous_index]
        build, row_class = _RowBuilder, ReplayRow
        rows: list[ReplayRow] = []
        append = rows.append
        for turn, index, (projection, prefix) in zip(
            range(1, len(indices) + 1), indices, calls, strict=True
        ):
            output = counts[index]
            untrimmed = sums[index] + fixed
            sent = projection.tokens_sent
            # cost(input, output, cached) of _unchecked_cost, written out
            call_cost = ((sent - 0) * ip + 0 * cp + output * op) / 1_000_000
            call_cost_untrimmed = ((untrimmed - 0) * ip + 0 * cp + output * op) / 1_000_000
            cumulative += call_cost + no_summary
            cumulative_untrimmed += call_cost_untrimmed
            cached: int | None
            cost_cached: float | None
            if prefix is None:
                cached = cost_cached = cumulative_cached = None
            else:
                cached = 0 if prefix < 1024 else prefix - (prefix - 1024) % 128
                part = cached if cached < sent else sent
                cost_cached = ((sent - part) * wp + part * cp + output * op) / 1_000_000
                if cumulative_cached is not None:
                    cumulative_cached += cost_cached + no_summary
            # cached_input_tokens of what the previous untrimmed call sent
            part = 0 if previous_tokens < 1024 else previous_tokens - (previous_tokens - 1024) % 128
            if part > untrimmed:
                part = untrimmed
            previous_tokens = sums[index]
            cost_untrimmed_cached = ((untrimmed - part) * wp + part * cp + output * op) / 1_000_000
            cumulative_untrimmed_cached += cost_untrimmed_cached
            row = build(
                turn,
                index,
                index,
                untrimmed,
                projection.messages_sent,
                sent,
                output,
                0,
                0,
                0,
                call_cost,
                no_summary,
                cumulative,
                call_cost_untrimmed,
                cumulative_untrimmed,
                prefix,
                cached,
                cost_cached,
                cumulative_cached,
                cost_untrimmed_cached,
                cumulative_untrimmed_cached,
            )
            row.__class__ = row_class
            append(row)
        self.cumulative, self.cumulative_untrimmed = cumulative, cumulative_untrimmed
        self.cumulative_cached = cumulative_cached
        self.cumulative_untrimmed_cached = cumulative_untrimmed_cached
        if indices:
            self.previous_index = indices[-1]
        return rows

    def column_rows(
        self,
        chat: CountedChat,
        indices: Sequence[int],
        columns: ProjectionColumns,
        prefixes: np.ndarray,
    ) -> list[ReplayRow]:
        """:meth:`projection_rows` of projections given as columns, every cacheable prefix
        known: each column computed with array arithmetic in the same order of operations
        (so the same floats; running sums are sequential additions, as ``np.cumsum`` does),
        then one row per call."""
        import numpy as np

        price = self.price
        cumulative = self.cumulative
        cumulative_untrimmed = self.cumulative_untrimmed
        cumulative_cached = self.cumulative_cached
        cumulative_untrimmed_cached = self.cumulative_untrimmed_cached
        if (
            price is None
            or cumulative is None
            or cumulative_untrimmed is None
            or cumulative_cached is None
            or cumulative_untrimmed_cached is None
        ):
            raise ValueError("column_rows needs a price and running sums")
        ip, op = price.input_per_mtok, price.output_per_mtok
        cp = ip if price.cached_input_per_mtok is None else price.cached_input_per_mtok
        wp = price.write_price
        index = np.asarray(indices, dtype=np.int64)
        counts = _int_array(chat, "replay.counts", chat.counts)
        sums = _int_array(chat, "replay.prefix", chat.prefix)
        output = counts[index]
        untrimmed = sums[index] + chat.fixed
        sent = columns.tokens_sent
        call_cost = ((sent - 0) * ip + 0 * cp + output * op) / 1_000_000
        call_cost_untrimmed = ((untrimmed - 0) * ip + 0 * cp + output * op) / 1_000_000
        prefix = prefixes
        cached = np.where(prefix < 1024, 0, prefix - (prefix - 1024) % 128)
        part = np.where(cached < sent, cached, sent)
        cost_cached = ((sent - part) * wp + part * cp + output * op) / 1_000_000
        # what the previous untrimmed call sent, cached
        previous = np.concatenate(([sums[self.previous_index]], sums[index[:-1]]))
        part = np.where(previous < 1024, 0, previous - (previous - 1024) % 128)
        part = np.where(part > untrimmed, untrimmed, part)
        cost_untrimmed_cached = ((untrimmed - part) * wp + part * cp + output * op) / 1_000_000

        def running(first: float, values: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.cumsum(np.concatenate(([first], values + 0.0)))[1:]
            return out

        sum_cost = running(cumulative, call_cost)
        sum_untrimmed = running(cumulative_untrimmed, call_cost_untrimmed)
        sum_cached = running(cumulative_cached, cost_cached)
        sum_untrimmed_cached = running(cumulative_untrimmed_cached, cost_untrimmed_cached)
        n = len(index)
        turns = range(1, n + 1)
        where = index.tolist()
        zero = repeat(0, n)
        rows: list[ReplayRow] = list(
            map(
                _RowBuilder,
                turns,
                where,
                where,
                untrimmed.tolist(),
                columns.messages_sent.tolist(),
                sent.tolist(),
                output.tolist(),
                zero,
                repeat(0, n),
                repeat(0, n),
                call_cost.tolist(),
                repeat(0.0, n),
                sum_cost.tolist(),
                call_cost_untrimmed.tolist(),
                sum_untrimmed.tolist(),
                prefix.tolist(),
                cached.tolist(),
                cost_cached.tolist(),
                sum_cached.tolist(),
                cost_untrimmed_cached.tolist(),
                sum_untrimmed_cached.tolist(),
            )
        )
        row_class = ReplayRow
        for row in rows:
            row.__class__ = row_class
        if n:
            self.cumulative, self.cumulative_untrimmed = (
                sum_cost[-1].item(),
                sum_untrimmed[-1].item(),
            )
            self.cumulative_cached = sum_cached[-1].item()
            self.cumulative_untrimmed_cached = sum_untrimmed_cached[-1].item()
            self.previous_index = where[-1]
        return rows


def _unchecked_cost(price: ModelPrice, *, writes: bool = False) -> Callable[[int, int, int], float]:
    """``price.cost`` for arguments known to be valid (the same expression, so the same floats).

    ``writes``: the call caches its prompt, so the uncached part is billed as a cache write
    (``price.write_price``: the input price where writes are free).
    """
    ip, op = price.input_per_mtok, price.output_per_mtok
    cp = ip if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    up = price.write_price if writes else ip

    def cost(input_tokens: int, output_tokens: int, cached_input_tokens: int) -> float:
        return (
            (input_tokens - cached_input_tokens) * up
            + cached_input_tokens * cp
            + output_tokens * op
        ) / 1_000_000

    return cost


def _replay_projection(
    chat: CountedChat,
    indices: Sequence[int],
    strategy: Strategy,
    counter: TokenCounter,
    costing: _Costing,
    exact_limit: int = EXACT_CONTEXT_LIMIT,
) -> list[ReplayRow]:
    """The rows of a projection replay, equal field for field (floats bit for bit) to
    :func:`_replay_projection_per_turn`, in one pipeline over the calls: each projection
    (:meth:`Strategy.project_many`), its cacheable prefix, its row.

    One projection is alive at a time: on a 100,000-message chat, 44,000 of them kept until
    the rows are built would double the objects the garbage collector's full passes (which
    scan the whole chat) are triggered by. A strategy with a ``project_columns(chat, stops)``
    method (:class:`~ctxlab.strategies.projection_columns.ProjectionColumns`) skips the
    per-call objects altogether: its calls are costed as arrays (:meth:`_Costing.column_rows`).
    """
    if costing.price is None:
        return _replay_projection_per_turn(chat, indices, strategy, counter, costing, exact_limit)
    project_columns = _columns_hook(strategy)
    if project_columns is not None and indices and costing.cumulative_cached is not None:
        columns: ProjectionColumns = project_columns(chat, indices)
        prefixes = _column_prefixes(chat, counter, columns)
        return costing.column_rows(chat, indices, columns, prefixes)
    projections = strategy.project_many(chat, indices, counter)
    calls = _with_cache_prefixes(chat, indices, projections, strategy, counter, exact_limit)
    return costing.projection_rows(chat, indices, calls)


def _columns_hook(strategy: Strategy) -> Callable[..., ProjectionColumns] | None:
    """``strategy.project_columns`` when the class that defines it also defines the
    ``project_many`` in force (a subclass that changes ``project_many`` is not answered by
    columns it inherited), else None. None without numpy too: the columns are numpy arrays,
    and a core install (``pip install ctxlab``) has no numpy; the rows are the same either
    way, only slower for tens of thousands of calls (the app and fleet extras bring numpy)."""
    if not installed("numpy"):
        return None
    for klass in type(strategy).__mro__:
        if "project_columns" in vars(klass):
            if "project_many" not in vars(klass):
                return None
            hook: Callable[..., ProjectionColumns] = strategy.project_columns  # type: ignore[attr-defined]
            return hook
        if "project_many" in vars(klass):
            return None
    return None


def _column_prefixes(
    chat: CountedChat, counter: TokenCounter, columns: ProjectionColumns
) -> np.ndarray:
    """:func:`_with_cache_prefixes`' prefix of every call of described, edit-free projections
    given as columns, as :func:`ctxlab.insights.prompt_cache.prefix_between` computes it: 0
    for the first call; the common step (same pinned head, same front: the run up to the
    shorter end) in array arithmetic; a front moved onto a message that reads differently (the
    prefix ends after the pinned head) with one comparison per such step; any other step
    through ``prefix_between`` itself."""
    import numpy as np

    start, end, pinned = columns.start, columns.end, columns.pinned
    out = np.zeros(len(start), dtype=np.int64)
    if len(start) < 2:
        return out
    sums = _int_array(chat, "replay.prefix", chat.prefix)
    before, after = slice(0, -1), slice(1, None)
    heads = pinned[after]
    head_tokens = np.zeros(len(heads), dtype=np.int64)
    if heads.any():
        # the tokens of the pinned instructions: instruction_prefix()[1][position of the last + 1]
        positions = _int_array(chat, "replay.instructions", chat.instruction_positions())
        instruction_tokens = _int_array(
            chat, "replay.instruction_tokens", chat.instruction_prefix()[1]
        )
        last = positions[np.maximum(heads - 1, 0)] + 1
        head_tokens = np.where(heads > 0, instruction_tokens[last], 0)
    same_head = pinned[before] == heads
    common = same_head & (start[before] == start[after])
    run_end = np.minimum(end[before], end[after])
    out[1:] = np.where(common, sums[run_end] - sums[start[after]] + head_tokens, 0)
    shorter = np.minimum(end[before] - start[before], end[after] - start[after])
    moved = same_head & ~common & (shorter > 0)  # pinned < the shorter context's length
    messages = chat.messages
    done = common.copy()
    for i in np.flatnonzero(moved).tolist():
        was, now = messages[int(start[i])], messages[int(start[i + 1])]
        if was is not now and sent_form(was) != sent_form(now):
            out[i + 1] = head_tokens[i]
            done[i] = True
    sent, tokens_sent = columns.messages_sent, columns.tokens_sent

    def projection(i: int) -> Projection:
        return Projection(
            int(sent[i]), int(tokens_sent[i]), int(start[i]), int(end[i]), int(pinned[i])
        )

    for i in np.flatnonzero(~done).tolist():
        found = prefix_between(chat, counter, projection(i), projection(i + 1))
        assert found is not None  # both are described
        out[i + 1] = found
    return out


def _int_array(chat: CountedChat, key: str, values: Sequence[int]) -> np.ndarray:
    """``values`` (a table of ``chat``) as an int64 array, converted once per chat."""
    import numpy as np

    return chat.derived(key, lambda _: np.asarray(values, dtype=np.int64))


def _with_cache_prefixes(
    chat: CountedChat,
    indices: Sequence[int],
    projections: Iterable[Projection],
    strategy: Strategy,
    counter: TokenCounter,
    exact_limit: int,
) -> Iterator[tuple[Projection, int | None]]:
    """Each call's projection with its ``cacheable_prefix_tokens`` (see the module docstring):
    0 for the first call, None from a call whose context is unknown on."""
    previous: Context | None = None
    allowed = len(indices) if len(chat) <= exact_limit else FALLBACK_APPLIES
    between = prefix_between
    for turn, (index, projection) in enumerate(zip(indices, projections, strict=True), start=1):
        context: Context | None = projection if projection.start is not None else None
        if context is None and allowed > 0:
            allowed -= 1
            context = strategy.apply(chat.messages[:index], counter).messages
        if context is None or (previous is None and turn > 1):
            yield projection, None
        elif previous is None:
            yield projection, 0
        else:
            yield projection, between(chat, counter, previous, context)
        previous = context


def _replay_projection_per_turn(
    chat: CountedChat,
    indices: Sequence[int],
    strategy: Strategy,
    counter: TokenCounter,
    costing: _Costing,
    exact_limit: int = EXACT_CONTEXT_LIMIT,
) -> list[ReplayRow]:
    """The replay of a projection one call at a time with :meth:`_Costing.row`: the reference
    :func:`_replay_projection` is tested against, and its path when the model has no price."""
    # One Strategy.project per call and one _Costing.row per call; the cache prefixes come from
    # the same pipeline step as the fast path's (tested against fully built contexts).
    projections = (strategy.project(chat, index, counter) for index in indices)
    calls = _with_cache_prefixes(chat, indices, projections, strategy, counter, exact_limit)
    return [
        costing.row(
            turn=turn,
            index=index,
            chat=chat,
            messages_sent=projection.messages_sent,
            tokens_sent=projection.tokens_sent,
            prefix_tokens=prefix,
        )
        for turn, (index, (projection, prefix)) in enumerate(zip(indices, calls, strict=True), 1)
    ]


def carries_history(strategy: Strategy) -> bool:
    """Whether a replay carries ``strategy``'s rewritten history from call to call: a
    summarizing strategy, and a framework policy that rewrites its stored history
    (Semantic Kernel's reducers, LlamaIndex ``Memory``), whose next call starts from what the
    last one left, not from the full chat."""
    if strategy.uses_summarizer:
        return True
    policy = strategy.framework_policy
    return policy is not None and policy.persists == "state"


def _replay_replacing(
    chat: CountedChat,
    indices: Sequence[int],
    strategy: Strategy,
    counter: TokenCounter,
    summarizer: Summarizer | None,
    costing: _Costing,
) -> tuple[list[ReplayRow], list[_LiveState], list[Compaction]]:
    recorder = RecordingSummarizer(summarizer) if summarizer is not None else None
    compacted: tuple[Message, ...] = ()
    since = 0
    rows: list[ReplayRow] = []
    states: list[_LiveState] = []
    compactions: list[Compaction] = []
    previous: tuple[Message, ...] | None = None
    for turn, index in enumerate(indices, start=1):
        live = (*compacted, *chat.messages[since:index])
        seen = len(recorder.responses) if recorder is not None else 0
        try:
            result = strategy.apply(live, counter, recorder)
        except SummarizerError as exc:
            raise SummarizerError(f"replay call {turn} (before message {index}): {exc}") from exc
        responses = recorder.responses[seen:] if recorder is not None else []
        states.append(_LiveState(compacted, since, result if result.replace else None))
        prefix = 0 if previous is None else cacheable_prefix(previous, result.messages, counter)
        previous = result.messages
        if result.replace:
            record = _compaction_record(turn, index, live, result)
            if record is not None:
                compactions.append(record)
        rows.append(
            costing.row(
                turn=turn,
                index=index,
                chat=chat,
                messages_sent=len(result.messages),
                tokens_sent=result.tokens_after,
                prefix_tokens=prefix,
                responses=responses,
            )
        )
        if result.replace:
            compacted, since = result.messages, index
    return rows, states, compactions


def _compaction_record(
    turn: int, index: int, live: Sequence[Message], result: TrimResult
) -> Compaction | None:
    """The compaction ``result`` made (None when it inserted no compaction message)."""
    marker = next((m for m in result.inserted if m.is_compaction), None)
    if marker is None:
        return None
    summary = next((m for m in result.inserted if m.is_summary), None)
    decisions = result.decisions
    folded = tuple(
        m.id
        for m in live
        if decisions.get(m.id) is Decision.SUMMARIZED and not (m.is_compaction or m.is_summary)
    )
    return Compaction(turn, index, marker, summary, folded)
