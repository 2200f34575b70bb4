"""WindowDrop: drop the earliest whole rounds until the rest fits the budget (window_drop seed)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Self

from ctxlab.counted import CountedChat
from ctxlab.model import Message
from ctxlab.strategies.base import (
    Decision,
    Projection,
    Strategy,
    TrimResult,
    check_params,
    nice_fraction,
    nice_round_up,
    param,
    run_decisions,
    token_default,
    token_share_note,
)
from ctxlab.strategies.projection_columns import ProjectionColumns

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["WindowDrop"]


def _first_fitting_round(
    chat: CountedChat, stop: int, rounds: int, budget: int, floor: int = 0
) -> int:
    """Smallest round k < rounds whose suffix ``[max(starts[k], floor), stop)`` fits, else
    ``rounds - 1``.

    Suffix totals only shrink as k grows, so this is a binary search over the prefix sums.
    ``floor`` is where droppable messages begin (after a pinned system prompt).
    """
    prefix = chat.prefix
    # tokens(starts[k], stop) <= budget  <=>  prefix[starts[k]] >= prefix[stop] + priming - budget
    threshold = prefix[stop] + chat.fixed - budget
    # The key of round k is prefix[max(starts[k], floor)]: every round fits from the floor on
    # when the pinned part alone reaches the threshold, else the floor never decides.
    if prefix[floor] >= threshold:
        return 0
    k = bisect_left(chat.round_start_prefix(), threshold, 0, rounds)
    return min(k, rounds - 1)


def _leading_instructions(chat: CountedChat, stop: int) -> int:
    """How many messages at the start of ``chat.messages[:stop]`` are system/developer ones."""
    count, _ = chat.instruction_prefix()
    n = 0
    while n < stop and count[n + 1] == n + 1:
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class WindowDrop(Strategy):
    """Keeps the longest suffix of whole rounds that fits the budget.

    The most recent round is kept even when it alone exceeds the budget (nothing more can be
    trimmed); a tool result shares its round with the call, so pairs are never split; system
    messages are ordinary messages here and may be dropped. A projection: raising the budget
    restores history. O(log rounds) with cached counts, plus O(n) to list the decisions.

    With ``keep_system`` (off by default, as in the seed) the leading system/developer messages
    are pinned: always sent and counted against the budget, so only what follows them is
    dropped.
    """

    name: ClassVar[str] = "window-drop"
    title: ClassVar[str] = "Window drop"
    summary: ClassVar[str] = "Drop the oldest whole rounds until the context fits a token budget."
    explanation: ClassVar[str] = (
        "A round is a user message and everything that answers it. Window drop removes the "
        "oldest rounds, whole, until what is left fits the budget, so a tool call never loses "
        "its result. It is a projection: nothing is forgotten, and a bigger budget brings the "
        "old rounds back. The newest round is always kept, even when it alone is over budget."
    )
    order: ClassVar[int] = 10
    system_prompt_hint: ClassVar[str] = (
        "Turn on “Keep the system prompt” to pin it: it is then always sent and counted in the "
        "budget."
    )

    budget: int = param(
        8000,
        label="Token budget",
        help="Maximum tokens of the context sent, reply priming included.",
        min=1,
        step=100,
        unit="tokens",
    )
    keep_system: bool = param(
        False,
        label="Keep the system prompt",
        help="Pin the leading system/developer messages: always sent, counted in the budget. "
        "Off (the seed's behaviour): the system prompt is dropped with the oldest round.",
    )

    def __post_init__(self) -> None:
        check_params(self)

    def _cut(self, chat: CountedChat, stop: int) -> tuple[int, int]:
        """``(pinned, cut)``: the first ``pinned`` messages are pinned, ``[cut, stop)`` is kept."""
        pinned = _leading_instructions(chat, stop) if self.keep_system else 0
        rounds = chat.rounds_in_prefix(stop)
        if rounds == 0 or pinned == stop:
            return pinned, stop if rounds == 0 else pinned
        pinned_tokens = chat.prefix[pinned]
        k = _first_fitting_round(chat, stop, rounds, self.budget - pinned_tokens, floor=pinned)
        return pinned, max(chat.starts[k], pinned)

    def _sent_tokens(self, chat: CountedChat, pinned: int, cut: int, stop: int) -> int:
        return chat.prefix[pinned] + chat.tokens(cut, stop)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        chat = counter.counted(messages)
        n = len(chat)
        if n == 0:
            return TrimResult((), {}, chat.total, chat.total, strategy=self.name)
        pinned, cut = self._cut(chat, n)
        after = self._sent_tokens(chat, pinned, cut, n)
        warnings: tuple[str, ...] = ()
        if after > self.budget and cut < n:
            warnings = (
                f"The most recent round alone is {after:,} tokens"
                + (" with the pinned system prompt" if pinned else "")
                + f", over the budget of {self.budget:,}: it is kept anyway, since nothing more "
                "can be trimmed.",
            )
        # runs, not a dict of every id: O(1) per click whatever the chat's length
        decisions = run_decisions(
            chat, ((pinned, Decision.PINNED), (cut, Decision.DROPPED), (n, Decision.KEPT))
        )
        return TrimResult(
            messages=(*chat.messages[:pinned], *chat.messages[cut:]),
            decisions=decisions,
            tokens_before=chat.total,
            tokens_after=after,
            warnings=warnings,
            strategy=self.name,
        )

    def explain_round(self, chat: CountedChat, result: TrimResult, index: int) -> str:
        n = len(chat)
        start = chat.starts[index]
        stop = chat.starts[index + 1] if index + 1 < len(chat.starts) else n
        pinned, cut = self._cut(chat, n)
        if stop <= pinned:
            return "pinned: the leading system prompt, sent whatever the budget (keep_system)"
        if stop <= cut:
            needs = self._sent_tokens(chat, pinned, max(start, pinned), n)
            return (
                f"dropped: keeping it (and every newer round) needs {needs:,} tokens with the "
                f"{self.budget:,}-token budget"
            )
        sent = self._sent_tokens(chat, pinned, cut, n)
        if sent > self.budget and cut == chat.starts[-1]:
            return (
                f"kept: the newest round is always sent, even though it needs {sent:,} tokens "
                f"with the {self.budget:,}-token budget"
            )
        return (
            f"kept: the rounds from here to the newest need {sent:,} of the {self.budget:,} "
            "budget tokens"
        )

    def over_limit_reason(self, chat: CountedChat, result: TrimResult) -> str:
        pinned, _ = self._cut(chat, len(chat))
        last = self._sent_tokens(chat, 0, chat.starts[-1], len(chat)) if chat.starts else 0
        text = f"{self.title} always keeps the newest round, which alone holds {last:,} tokens"
        if pinned:
            text += " (the system prompt is kept too: keep_system)"
        return text + "."

    def project(self, chat: CountedChat, stop: int, counter: TokenCounter) -> Projection:
        if chat.rounds_in_prefix(stop) == 0:
            return Projection(0, chat.fixed, start=stop, end=stop)
        pinned, cut = self._cut(chat, stop)
        return Projection(
            pinned + stop - cut,
            self._sent_tokens(chat, pinned, cut, stop),
            start=cut,
            end=stop,
            pinned=pinned,
        )

    def project_many(
        self, chat: CountedChat, stops: Sequence[int], counter: TokenCounter
    ) -> Iterator[Projection]:
        """:meth:`project` of every stop, in one loop: the chat's tables, the budget and the
        leading system prompt's length looked up once (a replay's 44,000 calls at 100k)."""
        starts, sums, fixed = chat.starts, chat.prefix, chat.fixed
        keys = chat.round_start_prefix()
        budget = self.budget
        leading = _leading_instructions(chat, len(chat)) if self.keep_system else 0
        for stop in stops:
            rounds = bisect_right(starts, stop - 1) if stop > 0 else 0
            if rounds == 0:
                yield Projection(0, fixed, stop, stop)
                continue
            # _cut and _first_fitting_round, inlined
            pinned = leading if leading < stop else stop
            if pinned == stop:
                cut = pinned
            else:
                threshold = sums[stop] + fixed - (budget - sums[pinned])
                if sums[pinned] >= threshold:
                    k = 0
                else:
                    k = bisect_left(keys, threshold, 0, rounds)
                    if k > rounds - 1:
                        k = rounds - 1
                cut = starts[k] if starts[k] > pinned else pinned
            sent = sums[pinned] + (sums[stop] - sums[cut] + fixed)
            yield Projection(pinned + stop - cut, sent, cut, stop, pinned)

    def project_columns(self, chat: CountedChat, stops: Sequence[int]) -> ProjectionColumns:
        """:meth:`project_many` of every stop as integer columns (numpy, one pass per column):
        the same numbers, for a replay of tens of thousands of calls. Edit-free projections."""
        import numpy as np

        sums = np.asarray(chat.prefix, dtype=np.int64)
        starts = np.asarray(chat.starts, dtype=np.int64)
        keys = np.asarray(chat.round_start_prefix(), dtype=np.int64)
        stop = np.asarray(stops, dtype=np.int64)
        fixed, budget = chat.fixed, self.budget
        leading = _leading_instructions(chat, len(chat)) if self.keep_system else 0
        # bisect_right(starts, stop - 1) for stop > 0, else 0
        rounds = np.where(stop > 0, np.searchsorted(starts, stop - 1, side="right"), 0)
        pinned = np.minimum(leading, stop)
        threshold = sums[stop] + fixed - (budget - sums[pinned])
        # bisect_left(keys, threshold, 0, rounds), at most rounds - 1 (keys ascend)
        last = np.maximum(rounds - 1, 0)
        k = np.minimum(np.minimum(np.searchsorted(keys, threshold, side="left"), rounds), last)
        k = np.where(sums[pinned] >= threshold, 0, k)
        at = starts[k] if len(starts) else np.zeros_like(stop)
        cut = np.where(pinned == stop, pinned, np.where(at > pinned, at, pinned))
        sent = sums[pinned] + (sums[stop] - sums[cut] + fixed)
        empty = rounds == 0
        return ProjectionColumns(
            messages_sent=np.where(empty, 0, pinned + stop - cut),
            tokens_sent=np.where(empty, fixed, sent),
            start=np.where(empty, stop, cut),
            end=stop,
            pinned=np.where(empty, 0, pinned),
        )

    @classmethod
    def suggested(cls, chat: CountedChat, window: int | None = None) -> Self:
        budget = token_default(nice_fraction(chat.total, 0.5), window)
        if len(chat.starts) > 1:
            # The newest round is always kept whole: a budget below it would show the chat
            # over budget on first view (an agent's last turn is often most of its tokens).
            newest = chat.tokens(chat.starts[-1])
            if budget < newest < chat.total and (window is None or newest <= window):
                budget = min(nice_round_up(newest), chat.total - 1)
        return cls(budget=budget)

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        if len(chat.starts) <= 1:
            return (
                "this chat is one round (a single user message and everything after it), which "
                "Window drop keeps whole: try Sliding window or Trim last to see a cut"
            )
        note = token_share_note("budget", self.budget, chat, window, "dropped")
        newest = chat.tokens(chat.starts[-1])
        if self.budget >= newest > nice_fraction(chat.total, 0.5):
            note += f" (its newest round, always kept whole, is {newest:,} tokens)"
        return note
