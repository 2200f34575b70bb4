"""AutoGen's ``BufferedChatCompletionContext(buffer_size)``: the last ``buffer_size`` messages.

``autogen_core/model_context/_buffered_chat_completion_context.py`` (autogen-core 0.7.5),
``get_messages``: ``messages = self._messages[-self._buffer_size:]``, then, when the first of
them is a ``FunctionExecutionResultMessage``, ``messages = messages[1:]``. A view: the stored
history stays whole. Sizes count AutoGen messages (see :mod:`._autogen`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.strategies.base import TrimResult, check_params, param
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
    from ctxlab.model import Message
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["AutoGenBuffered", "buffered_units"]


def buffered_units(kinds: Sequence[Kind], buffer_size: int) -> list[int]:
    """The AutoGen messages (indexes) ``get_messages`` returns, as AutoGen computes them."""
    kept = list(range(len(kinds)))[-buffer_size:]
    if kept and kinds[kept[0]] is Kind.RESULTS:
        kept = kept[1:]
    return kept


@dataclass(frozen=True, slots=True)
class AutoGenBuffered(FrameworkStrategy):
    """AutoGen's buffered context: the last ``buffer_size`` AutoGen messages, minus a leading
    tool-result message (whose call fell outside the buffer)."""

    name: ClassVar[str] = "autogen-buffered"
    title: ClassVar[str] = "AutoGen · BufferedChatCompletionContext"
    summary: ClassVar[str] = "AutoGen's buffered context: the last buffer_size messages."
    explanation: ClassVar[str] = (
        "AutoGen's BufferedChatCompletionContext sends the last buffer_size messages of the "
        "agent's context on every call (the system message is outside it and always sent). "
        "AutoGen stores the results of one batch of tool calls as one message, so a buffer "
        "counts those as one. When the buffer starts on tool results, that message is dropped "
        "too, so no result arrives without its call. The stored history is never changed."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="AutoGen",
        component="BufferedChatCompletionContext",
        version=AUTOGEN_VERSION,
        source=AUTOGEN_SOURCE + ": _buffered_chat_completion_context.py",
        evidence="oracle",
        counter="AutoGen messages (no tokens)",
        persists="view",
        unpublished=(
            "buffer_size has no default in AutoGen; ctxlab starts at 5, the value of AutoGen's "
            "AgentChat tutorial.",
        ),
    )

    buffer_size: int = param(
        5,
        label="Buffer size (AutoGen messages)",
        help="buffer_size: how many of the newest AutoGen messages are sent (the results of one "
        "tool-call batch are one message; the system message is not counted).",
        min=1,
        step=1,
        unit="messages",
    )

    def __post_init__(self) -> None:
        if isinstance(self.buffer_size, bool) or not isinstance(self.buffer_size, int):
            raise ParameterError(f"buffer_size must be a whole number, got {self.buffer_size!r}")
        check_params(self)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        ctx = autogen_context(messages, counter)
        kept = buffered_units([u.kind for u in ctx.units], self.buffer_size)
        return context_result(ctx, kept, strategy=self.name, counter=counter)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        ctx = autogen_context(messages, counter)
        n = len(ctx.units)
        fires = n > self.buffer_size
        if fires:
            text = (
                f"Sends the last {self.buffer_size:,} of this chat's {units_phrase(ctx)} on "
                "every call; the system message is outside the buffer."
            )
        else:
            text = (
                f"Never cuts this chat: its {units_phrase(ctx)} fit buffer_size="
                f"{self.buffer_size:,}."
            )
        return TriggerReport(fires, self.buffer_size, "messages", n, None, text, "AutoGen")

    def config_code(self) -> str:
        return agent_code(
            "BufferedChatCompletionContext",
            f"BufferedChatCompletionContext(buffer_size={self.buffer_size})",
        )
