"""AutoGen's ``HeadAndTailChatCompletionContext(head_size, tail_size)``.

``autogen_core/model_context/_head_and_tail_chat_completion_context.py`` (autogen-core 0.7.5),
``get_messages``:

* ``head = messages[:head_size]``, minus its last message when that is an ``AssistantMessage``
  whose content is a list of ``FunctionCall`` only (its results would be cut off);
* ``tail = messages[-tail_size:]``, minus its first message when that is a
  ``FunctionExecutionResultMessage``;
* ``num_skipped = len(messages) - head_size - tail_size``, computed from the sizes, BEFORE
  those two removals: when ``<= 0`` every message is returned unchanged; otherwise
  ``head + [UserMessage(content=f"Skipped {num_skipped} messages.", source="System")] + tail``.

So the count in the placeholder can be smaller than what was left out ("Skipped 8 messages."
while 9 were): reproduced as AutoGen writes it. A view.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.model import Message, Role
from ctxlab.strategies.base import TrimResult, check_params, check_whole_numbers, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._autogen import (
    AUTOGEN_SOURCE,
    AUTOGEN_VERSION,
    Kind,
    agent_code,
    autogen_context,
    context_result,
    units_phrase,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["AutoGenHeadAndTail", "head_and_tail_units"]


def head_and_tail_units(
    kinds: Sequence[Kind], head_size: int, tail_size: int
) -> tuple[list[int], int, int] | None:
    """``(kept units, position of the placeholder in them, num_skipped)`` as AutoGen computes
    them, or None when every message is returned (``num_skipped <= 0``)."""
    n = len(kinds)
    num_skipped = n - head_size - tail_size
    if num_skipped <= 0:
        return None
    head = list(range(n))[:head_size]
    if head and kinds[head[-1]] is Kind.CALLS:
        head = head[:-1]
    tail = list(range(n))[-tail_size:]
    if tail and kinds[tail[0]] is Kind.RESULTS:
        tail = tail[1:]
    return head + tail, len(head), num_skipped


def skipped_message(num_skipped: int, after: str) -> Message:
    """AutoGen's placeholder ``UserMessage(content="Skipped N messages.", source="System")``;
    its id derives from the message it follows, so it is stable and unique."""
    digest = hashlib.sha256(f"{after}\x1f{num_skipped}".encode()).hexdigest()[:12]
    return Message(
        role=Role.USER,
        content=f"Skipped {num_skipped} messages.",
        id=f"autogen-skipped-{digest}",
        name="System",
    )


@dataclass(frozen=True, slots=True)
class AutoGenHeadAndTail(FrameworkStrategy):
    """AutoGen's head-and-tail context: the first ``head_size`` and last ``tail_size`` AutoGen
    messages with a "Skipped N messages." user message between them."""

    name: ClassVar[str] = "autogen-head-and-tail"
    title: ClassVar[str] = "AutoGen · HeadAndTailChatCompletionContext"
    summary: ClassVar[str] = (
        "AutoGen's head-and-tail context: first and last messages, 'Skipped N messages.' between."
    )
    explanation: ClassVar[str] = (
        "AutoGen's HeadAndTailChatCompletionContext sends the first head_size and the last "
        "tail_size messages of the agent's context, with a user message 'Skipped N messages.' "
        "(source 'System') in between. A head ending on tool calls loses that message and a "
        "tail starting on tool results loses that one, so no call or result is orphaned — but "
        "N is computed before those removals, so it can undercount what was left out. The "
        "system message is outside the context and always sent; nothing stored is changed."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="AutoGen",
        component="HeadAndTailChatCompletionContext",
        version=AUTOGEN_VERSION,
        source=AUTOGEN_SOURCE + ": _head_and_tail_chat_completion_context.py",
        evidence="oracle",
        counter="AutoGen messages (no tokens)",
        persists="view",
        unpublished=(
            "head_size and tail_size have no defaults in AutoGen; ctxlab starts at 2 and 4.",
        ),
        known_issues=(
            "'Skipped N messages.' counts len - head_size - tail_size before a trailing "
            "tool-call message of the head and a leading result message of the tail are "
            "removed, so it can say fewer than were left out.",
        ),
    )

    head_size: int = param(
        2,
        label="Head size (AutoGen messages)",
        help="head_size: how many of the first AutoGen messages are sent (the system message "
        "is not counted).",
        min=1,
        step=1,
        unit="messages",
    )
    tail_size: int = param(
        4,
        label="Tail size (AutoGen messages)",
        help="tail_size: how many of the newest AutoGen messages are sent (the results of one "
        "tool-call batch are one message).",
        min=1,
        step=1,
        unit="messages",
    )

    def __post_init__(self) -> None:
        check_whole_numbers(self, "head_size", "tail_size")
        check_params(self)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        ctx = autogen_context(messages, counter)
        plan = head_and_tail_units([u.kind for u in ctx.units], self.head_size, self.tail_size)
        if plan is None:
            return context_result(ctx, range(len(ctx.units)), strategy=self.name, counter=counter)
        kept, at, num_skipped = plan
        before = ctx.units[kept[at - 1]] if at else None
        after = ctx.chat.ids[before.stop - 1] if before is not None else ""
        placeholder = skipped_message(num_skipped, after)
        warnings: list[str] = []
        left_out = sum(u.stop - u.start for i, u in enumerate(ctx.units) if i not in set(kept))
        units_left_out = len(ctx.units) - len(kept)
        if units_left_out != num_skipped:
            warnings.append(
                f"AutoGen says 'Skipped {num_skipped} messages.' but leaves out "
                f"{units_left_out} AutoGen messages ({left_out} chat messages): it counts "
                "before dropping the head's trailing tool-call message and the tail's leading "
                "result message."
            )
        return context_result(
            ctx,
            kept,
            strategy=self.name,
            inserted=((at, placeholder),),
            warnings=warnings,
            counter=counter,
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        ctx = autogen_context(messages, counter)
        n = len(ctx.units)
        threshold = self.head_size + self.tail_size
        fires = n > threshold
        if fires:
            text = (
                f"Sends the first {self.head_size:,} and last {self.tail_size:,} of this "
                f"chat's {units_phrase(ctx)}, with 'Skipped {n - threshold:,} messages.' "
                "between them."
            )
        else:
            text = (
                f"Never cuts this chat: its {units_phrase(ctx)} fit head_size + tail_size = "
                f"{threshold:,}."
            )
        return TriggerReport(fires, threshold, "messages", n, None, text, "AutoGen")

    def config_code(self) -> str:
        return agent_code(
            "HeadAndTailChatCompletionContext",
            f"HeadAndTailChatCompletionContext(head_size={self.head_size}, "
            f"tail_size={self.tail_size})",
        )
