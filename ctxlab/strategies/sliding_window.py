"""SlidingWindow: keep the last N non-system messages once a trigger count is reached.

The sliding_window_summarizer seed: no token counting and no API call.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Self

from ctxlab.counted import CountedChat
from ctxlab.errors import ParameterError
from ctxlab.model import Message
from ctxlab.plural import plural, share
from ctxlab.strategies.base import (
    Decision,
    Projection,
    Strategy,
    SweepRange,
    TrimResult,
    check_params,
    param,
    reasons_for,
    run_decisions,
    sweep_range_from_counts,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["SlidingWindow"]


def _non_system_prefix(chat: CountedChat) -> tuple[int, ...]:
    """``i - count[i]``: how many non-system messages come before position ``i`` (ascending;
    built once per chat, so finding a window's start is one plain binary search)."""
    return chat.derived(
        "sliding-window-non-system",
        lambda c: tuple(i - n for i, n in enumerate(c.instruction_prefix()[0])),
    )


@dataclass(frozen=True, slots=True)
class SlidingWindow(Strategy):
    """Keeps only the last ``window`` non-system messages once their count reaches the trigger.

    The trigger is ``trigger_at`` when it is greater than ``window``; otherwise (unset, or a
    value <= window) it is silently clamped to ``window + 1``, as in the seed. System messages
    (and developer messages, their successor role) are always kept. It knows nothing of tool
    pairs: the window can start on a tool result whose call it dropped, which the validator
    flags; that is the behaviour being reproduced.
    """

    name: ClassVar[str] = "sliding-window"
    title: ClassVar[str] = "Sliding window"
    summary: ClassVar[str] = "Keep the last N non-system messages once a message count is reached."
    explanation: ClassVar[str] = (
        "The simplest policy: once the chat has more than a set number of messages, only the "
        "most recent N are sent, plus the system prompt. It costs nothing and needs no tokenizer, "
        "but it counts messages, not tokens, and it can cut between a tool call and its result."
    )
    order: ClassVar[int] = 20

    window: int = param(
        20,
        label="Window (messages)",
        help="How many of the most recent non-system messages are kept.",
        min=0,
        step=1,
        unit="messages",
    )
    trigger_at: int | None = param(
        None,
        label="Trigger at (messages)",
        help="Non-system message count that starts trimming; values <= window mean window + 1.",
        min=0,
        step=1,
        unit="messages",
    )

    def __post_init__(self) -> None:
        check_params(self)
        if isinstance(self.window, bool) or not isinstance(self.window, int):
            raise ParameterError(f"window must be a whole number, got {self.window!r}")

    @property
    def trigger(self) -> int:
        """The effective trigger after the seed's clamp."""
        if self.trigger_at is not None and self.trigger_at > self.window:
            return self.trigger_at
        return self.window + 1

    def _window_start(self, chat: CountedChat, stop: int) -> int:
        """First position of ``chat.messages[:stop]`` whose non-system messages are kept."""
        count, _ = chat.instruction_prefix()
        non_system = stop - count[stop]
        if non_system < self.trigger:
            return 0
        # the first position with exactly `window` non-system messages in [position, stop)
        return bisect_left(_non_system_prefix(chat), non_system - self.window, 0, stop + 1)

    def sweep_range(
        self, name: str, chat: CountedChat, window: int | None = None
    ) -> SweepRange | None:
        """Both parameters count non-system messages: from 1 to the chat's count of them (a
        window at or above it keeps everything)."""
        from ctxlab.strategies.registry import parameters

        info = next((i for i in parameters(type(self)) if i.name == name), None)
        if info is None or name not in ("window", "trigger_at"):
            return Strategy.sweep_range(self, name, chat, window)
        count = _non_system_prefix(chat)[-1] if len(chat) else 0
        return sweep_range_from_counts(
            info.spec,
            integer=True,
            top=count,
            basis=f"the chat's {count:,} non-system messages",
            log=count > 24,
        )

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        chat = counter.counted(messages)
        n = len(chat)
        start = self._window_start(chat, n)
        pinned = chat.instruction_positions()
        # runs, not a dict of every id: O(system messages) per click whatever the chat's length
        decisions = run_decisions(chat, _window_runs(n, start, pinned))
        early_pinned = [chat.messages[i] for i in pinned if i < start]
        return TrimResult(
            messages=(*early_pinned, *chat.messages[start:]),
            decisions=decisions,
            tokens_before=chat.total,
            tokens_after=self.project(chat, n, counter).tokens_sent,
            strategy=self.name,
        )

    def explain_round(self, chat: CountedChat, result: TrimResult, index: int) -> str:
        count, _ = chat.instruction_prefix()
        non_system = len(chat) - count[len(chat)]
        under = non_system < self.trigger
        phrases = {
            Decision.PINNED: "pinned: system messages are always sent",
            Decision.DROPPED: f"dropped: older than the last {self.window:,} non-system messages "
            f"(the chat has {non_system:,}, reaching the trigger of {self.trigger:,})",
            Decision.KEPT: f"kept: the chat has {non_system:,} non-system messages, under the "
            f"trigger of {self.trigger:,}"
            if under
            else f"kept: among the last {self.window:,} non-system messages",
        }
        return reasons_for(chat, result, index, phrases, self.title)

    def project(self, chat: CountedChat, stop: int, counter: TokenCounter) -> Projection:
        count, tokens = chat.instruction_prefix()
        start = self._window_start(chat, stop)
        sent = chat.prefix[stop] - chat.prefix[start] + tokens[start] + chat.fixed
        return Projection(
            count[start] + (stop - start), sent, start=start, end=stop, pinned=count[start]
        )

    def project_many(
        self, chat: CountedChat, stops: Sequence[int], counter: TokenCounter
    ) -> Iterator[Projection]:
        """:meth:`project` of every stop, in one loop (tables and parameters looked up once)."""
        count, tokens = chat.instruction_prefix()
        non_system = _non_system_prefix(chat)
        sums, fixed = chat.prefix, chat.fixed
        trigger, window = self.trigger, self.window
        for stop in stops:
            seen = non_system[stop]
            start = 0 if seen < trigger else bisect_left(non_system, seen - window, 0, stop + 1)
            sent = sums[stop] - sums[start] + tokens[start] + fixed
            yield Projection(count[start] + (stop - start), sent, start, stop, count[start])

    @classmethod
    def suggested(cls, chat: CountedChat, window: int | None = None) -> Self:
        # Counts messages, not tokens: the model's window does not change the suggestion.
        non_system = len(chat) - chat.instruction_prefix()[0][len(chat)]
        return cls(window=max(min(20, non_system // 2), 1))

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        non_system = len(chat) - chat.instruction_prefix()[0][len(chat)]
        if non_system <= self.window:
            return ""
        part = "half" if self.window == non_system // 2 else share(self.window, non_system)
        return (
            f"window {plural(self.window, 'message')}: {part} of this chat's {non_system:,} "
            "messages "
            "after the system prompt, so you see what is dropped"
        )


def _window_runs(n: int, start: int, pinned: Sequence[int]) -> list[tuple[int, Decision]]:
    """``(stop, decision)`` runs of :meth:`SlidingWindow.apply`: the messages at ``pinned``
    positions are pinned, the others before ``start`` dropped and from ``start`` on kept."""
    marks = {p for p in pinned if 0 <= p < n}
    bounds = sorted({start, n, *marks, *(p + 1 for p in marks)} - {0})
    runs: list[tuple[int, Decision]] = []
    low = 0
    for stop in bounds:
        if stop > n:
            break
        if low in marks:
            decision = Decision.PINNED
        else:
            decision = Decision.DROPPED if low < start else Decision.KEPT
        runs.append((stop, decision))
        low = stop
    return runs
