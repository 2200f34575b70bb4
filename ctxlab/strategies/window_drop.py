"""WindowDrop: drop the earliest whole rounds until the rest fits the budget (window_drop seed)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
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
    param,
    suffix_decisions,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["WindowDrop"]


def _first_fitting_round(chat: CountedChat, stop: int, rounds: int, budget: int) -> int:
    """Smallest round k < rounds whose suffix ``[starts[k], stop)`` fits, else ``rounds - 1``.

    Suffix totals only shrink as k grows, so this is a binary search over the prefix sums.
    """
    prefix = chat.prefix
    # tokens(starts[k], stop) <= budget  <=>  prefix[starts[k]] >= prefix[stop] + priming - budget
    threshold = prefix[stop] + chat.reply_priming - budget
    k = bisect_left(chat.starts, threshold, 0, rounds, key=lambda s: prefix[s])
    return min(k, rounds - 1)


@dataclass(frozen=True, slots=True)
class WindowDrop(Strategy):
    """Keeps the longest suffix of whole rounds that fits the budget.

    The most recent round is kept even when it alone exceeds the budget (nothing more can be
    trimmed); a tool result shares its round with the call, so pairs are never split; system
    messages are ordinary messages here and may be dropped. A projection: raising the budget
    restores history. O(log rounds) with cached counts, plus O(n) to list the decisions.
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

    budget: int = param(
        8000,
        label="Token budget",
        help="Maximum tokens of the context sent, reply priming included.",
        min=1,
        step=100,
        unit="tokens",
    )

    def __post_init__(self) -> None:
        check_params(self)

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
        rounds = len(chat.starts)
        k = _first_fitting_round(chat, n, rounds, self.budget)
        cut = chat.starts[k]
        after = chat.tokens(cut, n)
        warnings: tuple[str, ...] = ()
        if after > self.budget:
            warnings = (
                f"The most recent round alone is {after:,} tokens, over the budget of "
                f"{self.budget:,}: it is kept anyway, since nothing more can be trimmed.",
            )
        return TrimResult(
            messages=chat.messages[cut:],
            decisions=suffix_decisions(chat.ids, cut, before=Decision.DROPPED),
            tokens_before=chat.total,
            tokens_after=after,
            warnings=warnings,
            strategy=self.name,
        )

    def project(self, chat: CountedChat, stop: int, counter: TokenCounter) -> Projection:
        rounds = chat.rounds_in_prefix(stop)
        if rounds == 0:
            return Projection(0, chat.reply_priming, start=stop, end=stop)
        cut = chat.starts[_first_fitting_round(chat, stop, rounds, self.budget)]
        return Projection(stop - cut, chat.tokens(cut, stop), start=cut, end=stop)

    @classmethod
    def suggested(cls, chat: CountedChat) -> Self:
        return cls(budget=nice_fraction(chat.total, 0.5))
