"""Replay: a strategy applied before every assistant turn of a chat, as a live agent would.

The context of the model call that produced assistant message ``i`` is the history before ``i``.

* A **projection** strategy (its results have ``replace=False``) is recomputed from the full
  history at every call. Replay counts the chat once (``counter.counted``) and asks
  ``strategy.project(chat, i, counter)`` for each call, which window-drop and sliding-window
  answer in O(log n) from prefix sums: the whole replay is linear in the chat and tokenizes
  nothing after the first count.
* A **replacement** strategy (``uses_summarizer``; ``replace=True`` when it fires, e.g.
  summarize) carries its compacted history forward: the live history at a call is the last
  compacted history plus the chat's messages since that compaction; the strategy is applied to it
  and, when it returns ``replace=True``, its messages become the new compacted history.

Cost of one call (prices from :mod:`ctxlab.pricing`, no prompt-cache discount assumed)::

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

import csv
import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import IO, Any

from ctxlab.counted import CountedChat
from ctxlab.errors import SummarizerError
from ctxlab.model import Message, Role
from ctxlab.pricing import DEFAULT_PRICES, ModelPrice, PriceTable
from ctxlab.strategies.base import Strategy, TrimResult
from ctxlab.summarizers import Summarizer, SummaryRequest, SummaryResponse
from ctxlab.tokens import TokenCounter

__all__ = ["Replay", "ReplayRow", "assistant_turns", "replay"]


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

    @property
    def tokens_saved(self) -> int:
        return self.tokens_untrimmed - self.tokens_sent


COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(ReplayRow))


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

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[ReplayRow]:
        return iter(self.rows)

    @property
    def replaces(self) -> bool:
        """True when the strategy carried a compacted history forward."""
        return bool(self._states)

    @property
    def tokens_sent(self) -> int:
        return sum(r.tokens_sent for r in self.rows)

    @property
    def tokens_untrimmed(self) -> int:
        return sum(r.tokens_untrimmed for r in self.rows)

    @property
    def summarizer_calls(self) -> int:
        return sum(r.summarizer_calls for r in self.rows)

    @property
    def summary_input_tokens(self) -> int:
        return sum(r.summary_input_tokens for r in self.rows)

    @property
    def summary_output_tokens(self) -> int:
        return sum(r.summary_output_tokens for r in self.rows)

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
        return [asdict(r) for r in self.rows]

    def to_csv(self, target: str | os.PathLike[str] | IO[str] | None = None) -> str:
        """Write one CSV line per call (columns: :data:`COLUMNS`); returns the CSV text."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in self.rows:
            writer.writerow(["" if v is None else v for v in (getattr(row, c) for c in COLUMNS)])
        text = buffer.getvalue()
        if isinstance(target, str | os.PathLike):
            with open(target, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        elif target is not None:
            target.write(text)
        return text

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
        stop = self.rows[turn - 1].message_index
        if not self._states:
            return strategy.apply(chat.messages[:stop], counter)
        state = self._states[turn - 1]
        if state.result is not None:
            return state.result
        live = (*state.compacted, *chat.messages[state.since : stop])
        return strategy.apply(live, counter, _NoSummarizer())


def assistant_turns(messages: Sequence[Message]) -> list[int]:
    """Indices of the assistant messages a model produced (summaries excluded)."""
    return [i for i, m in enumerate(messages) if m.role is Role.ASSISTANT and not m.is_summary]


class _RecordingSummarizer:
    """Passes requests to ``inner`` and keeps every response, so replay can count and cost them."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.responses: list[SummaryResponse] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        response = self.inner.summarize(request)
        self.responses.append(response)
        return response


class _NoSummarizer:
    """Stands in when rebuilding a call that did not summarize: it must not be called."""

    name = "none"
    model = ""

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        raise SummarizerError("internal: a replayed call that did not summarize asked to")


def replay(
    messages: Sequence[Message],
    strategy: Strategy,
    counter: TokenCounter,
    *,
    summarizer: Summarizer | None = None,
    model: str = "gpt-4o",
    prices: PriceTable | None = None,
    turns: int | None = None,
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
    indices = assistant_turns(chat.messages)
    if turns is not None:
        indices = indices[: max(turns, 0)]
    warnings: list[str] = []
    if price is None:
        warnings.append(f"no price for model {model!r}: costs are not computed")
    costing = _Costing(price, table, warnings)
    states: list[_LiveState] = []
    if strategy.uses_summarizer:
        rows, states = _replay_replacing(chat, indices, strategy, counter, summarizer, costing)
    else:
        rows = _replay_projection(chat, indices, strategy, counter, costing)
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
    )


class _Costing:
    """Running sums of call and summary costs; None once a price is missing."""

    def __init__(self, price: ModelPrice | None, table: PriceTable, warnings: list[str]) -> None:
        self.price = price
        self.table = table
        self.warnings = warnings
        self.cumulative: float | None = 0.0 if price is not None else None
        self.cumulative_untrimmed: float | None = self.cumulative

    def row(
        self,
        *,
        turn: int,
        index: int,
        chat: CountedChat,
        messages_sent: int,
        tokens_sent: int,
        responses: Sequence[SummaryResponse] = (),
    ) -> ReplayRow:
        output = chat.counts[index]
        untrimmed = chat.tokens(0, index)
        price = self.price
        call_cost = call_cost_untrimmed = None
        if price is not None:
            call_cost = price.cost(tokens_sent, output)
            call_cost_untrimmed = price.cost(untrimmed, output)
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
        )


def _replay_projection(
    chat: CountedChat,
    indices: Sequence[int],
    strategy: Strategy,
    counter: TokenCounter,
    costing: _Costing,
) -> list[ReplayRow]:
    rows: list[ReplayRow] = []
    for turn, index in enumerate(indices, start=1):
        projection = strategy.project(chat, index, counter)
        rows.append(
            costing.row(
                turn=turn,
                index=index,
                chat=chat,
                messages_sent=projection.messages_sent,
                tokens_sent=projection.tokens_sent,
            )
        )
    return rows


def _replay_replacing(
    chat: CountedChat,
    indices: Sequence[int],
    strategy: Strategy,
    counter: TokenCounter,
    summarizer: Summarizer | None,
    costing: _Costing,
) -> tuple[list[ReplayRow], list[_LiveState]]:
    recorder = _RecordingSummarizer(summarizer) if summarizer is not None else None
    compacted: tuple[Message, ...] = ()
    since = 0
    rows: list[ReplayRow] = []
    states: list[_LiveState] = []
    for turn, index in enumerate(indices, start=1):
        live = (*compacted, *chat.messages[since:index])
        seen = len(recorder.responses) if recorder is not None else 0
        try:
            result = strategy.apply(live, counter, recorder)
        except SummarizerError as exc:
            raise SummarizerError(f"replay call {turn} (before message {index}): {exc}") from exc
        responses = recorder.responses[seen:] if recorder is not None else []
        states.append(_LiveState(compacted, since, result if result.replace else None))
        rows.append(
            costing.row(
                turn=turn,
                index=index,
                chat=chat,
                messages_sent=len(result.messages),
                tokens_sent=result.tokens_after,
                responses=responses,
            )
        )
        if result.replace:
            compacted, since = result.messages, index
    return rows, states
