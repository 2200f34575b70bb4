"""Semantic Kernel's ``ChatHistoryTruncationReducer`` (semantic-kernel 1.45.0), message by message.

``await reducer.reduce()`` does nothing while the history holds at most ``target_count +
threshold_count`` messages; past that it keeps the last ``target_count`` messages, moved back
so that a function call is not cut from its results, or to a user message within the threshold
window, and puts the first system/developer message back in front (then counting it in the
target). It rewrites the ``ChatHistory`` in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.model import Message
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._semantic_kernel import (
    SK_SOURCE,
    SK_VERSION,
    locate_safe_reduction_index,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["SemanticKernelTruncation", "reduction_trigger", "truncation_cut"]

TARGET_HELP_NOTE = (
    " Semantic Kernel has no default (target_count is required); 10 is the value of its "
    "agent samples."
)


@dataclass(frozen=True, slots=True)
class Cut:
    """Where SK cuts: the tail starts at ``index``; ``system`` is the first system/developer
    message's position (-1: none), put back in front when it lies before ``index``."""

    index: int
    system: int


def truncation_cut(
    messages: Sequence[Message], target_count: int, threshold_count: int
) -> Cut | None:
    """``ChatHistoryTruncationReducer.reduce``'s cut, or None when it changes nothing."""
    if len(messages) <= target_count + (threshold_count or 0):
        return None
    system = next((i for i, m in enumerate(messages) if m.role.is_instruction), -1)
    would_be_truncated = system >= 0 and system < len(messages) - target_count
    index = locate_safe_reduction_index(
        messages, target_count, threshold_count, has_system_message=would_be_truncated
    )
    return None if index is None else Cut(index, system)


def reduction_trigger(
    framework: str, messages: Sequence[Message], target_count: int, threshold_count: int
) -> TriggerReport:
    """When an SK reducer acts: past ``target_count + threshold_count`` messages."""
    n = len(messages)
    at = target_count + threshold_count + 1
    fires = n >= at
    text = (
        f"Reduces at {at:,} messages (target {target_count:,} + threshold "
        f"{threshold_count:,}; Semantic Kernel counts messages, not tokens); this chat has "
        f"{n:,}{', so it reduces now' if fires else ''}."
    )
    return TriggerReport(fires, at, "messages", n, None, text, framework)


@dataclass(frozen=True, slots=True)
class SemanticKernelTruncation(FrameworkStrategy):
    """Semantic Kernel ``ChatHistoryTruncationReducer``: keep the last ``target_count``."""

    name: ClassVar[str] = "semantic-kernel-truncation"
    title: ClassVar[str] = "Semantic Kernel · ChatHistoryTruncationReducer"
    summary: ClassVar[str] = (
        "Past target + threshold messages, keep the last target_count and the system message."
    )
    explanation: ClassVar[str] = (
        "Semantic Kernel's truncation reducer counts messages, not tokens. When the history "
        "holds more than target_count + threshold_count messages, it keeps the last "
        "target_count, moving the cut back so a function call keeps its results, or back to "
        "a user message within the threshold window. The first system or developer message is "
        "always put back in front, and then takes one of the target_count places. Older "
        "messages are deleted from the ChatHistory for good."
    )
    system_prompt_hint: ClassVar[str] = ""
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Semantic Kernel",
        component="ChatHistoryTruncationReducer",
        version=SK_VERSION,
        source=SK_SOURCE,
        evidence="oracle",
        counter="message count (no tokens)",
        persists="state",
        unpublished=(
            "target_count has no default in Semantic Kernel; ctxlab starts at 10, the value of "
            "SK's agent samples.",
        ),
        known_issues=(
            "microsoft/semantic-kernel#12708 (orphaned tool messages) is fixed in 1.45.0.",
        ),
    )

    target_count: int = param(
        10,
        label="target_count (messages)",
        help="Messages kept after a reduction, the system message included when it is put "
        "back." + TARGET_HELP_NOTE,
        min=1,
        step=1,
        unit="messages",
    )
    threshold_count: int = param(
        0,
        label="threshold_count (messages)",
        help="Messages allowed over target_count before reducing (SK's default 0); the cut may "
        "also move back by up to this many messages to start on a user message.",
        min=0,
        step=1,
        unit="messages",
    )

    def __post_init__(self) -> None:
        check_params(self)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        total = counter.count_messages(messages)
        cut = truncation_cut(messages, self.target_count, self.threshold_count)
        if cut is None:
            return TrimResult(
                messages=tuple(messages),
                decisions=dict.fromkeys((m.id for m in messages), Decision.KEPT),
                tokens_before=total,
                tokens_after=total,
                strategy=self.name,
            )
        kept = list(messages[cut.index :])
        decisions = dict.fromkeys((m.id for m in messages[: cut.index]), Decision.DROPPED)
        if 0 <= cut.system < cut.index:
            kept.insert(0, messages[cut.system])
            decisions[messages[cut.system].id] = Decision.PINNED
        decisions.update(dict.fromkeys((m.id for m in messages[cut.index :]), Decision.KEPT))
        out = tuple(kept)
        return TrimResult(
            messages=out,
            decisions=decisions,
            tokens_before=total,
            tokens_after=counter.count_messages(out),
            replace=True,
            strategy=self.name,
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        return reduction_trigger(
            self.framework_policy.framework, messages, self.target_count, self.threshold_count
        )

    def config_code(self) -> str:
        return (
            "from semantic_kernel.contents import ChatHistoryTruncationReducer\n\n"
            "reducer = ChatHistoryTruncationReducer(\n"
            f"    target_count={self.target_count}, threshold_count={self.threshold_count}\n"
            ")\n"
            "# add the chat's messages to reducer (it is a ChatHistory), then before each call:\n"
            "await reducer.reduce()  # rewrites reducer.messages in place\n"
        )
