"""The Responses API's ``truncation`` request parameter, as OpenAI documents it.

``"disabled"`` (the default): an input over the model's context window is refused with a 400
error. ``"auto"``: "the model will truncate the response to fit the context window by dropping
items from the beginning of the conversation" (API reference, ``truncation``; an older text
and Azure's copy said "in the middle"). The service is closed: ctxlab drops whole messages from
the beginning, oldest first, until ctxlab's exact count fits the window, keeps the leading
system prompt (the request's ``instructions``) and never starts the kept part on a tool result
whose call was dropped. Each of these choices is listed in ``unpublished``.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.model import Message
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._window import MODEL_CHOICES, model_info

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["OpenAIResponsesTruncation", "drop_from_beginning"]


def drop_from_beginning(
    messages: Sequence[Message], counter: TokenCounter, window: int
) -> tuple[int, int]:
    """``(pinned, start)``: the leading system prompt is kept (``pinned`` = 1) and messages
    ``[pinned, start)`` are dropped, the fewest from the beginning for the rest to fit
    ``window`` tokens (ctxlab's count), then past any tool result left without its call."""
    chat = counter.counted(messages)
    pinned = 1 if messages and messages[0].role.is_instruction else 0
    room = window - chat.fixed - (chat.counts[0] if pinned else 0)
    n = len(chat)
    # the smallest start with prefix[n] - prefix[start] <= room (prefix sums ascend)
    start = min(bisect_left(chat.prefix, chat.prefix[n] - room, pinned, n + 1), n)
    while start < n and messages[start].role.is_tool_result:
        start += 1
    return pinned, start


@dataclass(frozen=True, slots=True)
class OpenAIResponsesTruncation(FrameworkStrategy):
    """``truncation: "auto"`` drops the oldest items when the input exceeds the window."""

    name: ClassVar[str] = "openai-responses-truncation"
    title: ClassVar[str] = 'OpenAI Responses API · truncation: "auto"'
    summary: ClassVar[str] = (
        "OpenAI's server drops the oldest items when the input is over the model's window."
    )
    explanation: ClassVar[str] = (
        'With truncation: "auto" the Responses API drops items from the beginning of the '
        "conversation when the input exceeds the model's context window; with the default "
        '"disabled" it refuses the request with a 400 error. The exact cut is not published: '
        "ctxlab drops whole messages, oldest first, keeps the system prompt (instructions) and "
        "does not start on a tool result whose call was dropped."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="OpenAI Responses API",
        component='truncation: "auto"',
        version="API reference (2026)",
        source="platform.openai.com/docs/api-reference/responses/create (truncation)",
        evidence="docs",
        counter="the model's tokenizer on OpenAI's side (ctxlab's exact count stands in)",
        persists="server",
        unpublished=(
            "The unit cut: ctxlab drops whole messages; OpenAI says 'items' and does not say "
            "whether a message's parts or a tool call and its output go together.",
            "Whether instructions / a system message are protected: ctxlab keeps a leading "
            "system prompt (it is the request's instructions).",
            "Where the cut falls: the current reference says 'from the beginning of the "
            "conversation'; an older text (and Azure's copy) said 'in the middle'.",
            "The budget: ctxlab drops until the input alone fits the context window; whether "
            "room for max_output_tokens is reserved is not published.",
            "Tool pairs: ctxlab does not start the kept part on a tool result whose call was "
            "dropped (the API would reject it); OpenAI does not say what it does.",
        ),
    )

    truncation: str = param(
        "disabled",
        label="truncation",
        help='"disabled" (the API default): an input over the window fails with a 400 error. '
        '"auto": the oldest items are dropped until it fits.',
        choices=("disabled", "auto"),
    )
    model: str = param(
        "gpt-4o",
        label="model",
        help="The model of the request; its context window comes from ctxlab's catalog.",
        choices=MODEL_CHOICES,
    )

    def __post_init__(self) -> None:
        check_params(self)
        model_info(self.model)

    @property
    def window(self) -> int:
        return model_info(self.model).context_window

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        total = counter.count_messages(messages)
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        over = total > self.window
        if self.truncation == "disabled" or not over:
            warnings: tuple[str, ...] = ()
            if over:
                warnings = (
                    f"This input is {total:,} tokens, over {self.model}'s {self.window:,}-token "
                    'window: with truncation "disabled" the API answers 400 (context length '
                    'exceeded) and nothing is sent. Set truncation: "auto" to let it drop the '
                    "oldest items.",
                )
            return TrimResult(
                tuple(messages), decisions, total, total, warnings=warnings, strategy=self.name
            )
        pinned, start = drop_from_beginning(messages, counter, self.window)
        if pinned:
            decisions[messages[0].id] = Decision.PINNED
        for m in messages[pinned:start]:
            decisions[m.id] = Decision.DROPPED
        kept = (*messages[:pinned], *messages[start:])
        return TrimResult(
            tuple(kept),
            decisions,
            total,
            counter.count_messages(kept),
            strategy=self.name,
        )

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return counter.count_messages(messages)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        exact = counter.count_messages(messages)
        window = self.window
        where = f"{self.model} (window {window:,})"
        if self.truncation == "disabled":
            what = "the API answers 400" if exact > window else "an input over it gets a 400 error"
            text = (
                f'Never truncates: truncation is "disabled" (the API default) on {where}; '
                f"{what}; this chat is at {exact:,}."
            )
            return TriggerReport(
                False, window, "tokens", exact, exact, text, "OpenAI Responses API"
            )
        text = (
            f"Drops the oldest items once the input exceeds {window:,} tokens on {where}; this "
            f"chat is at {exact:,}."
        )
        return TriggerReport(
            exact > window, window, "tokens", exact, exact, text, "OpenAI Responses API"
        )

    def config_code(self) -> str:
        body = {"model": self.model, "input": "...", "truncation": self.truncation}
        return "POST https://api.openai.com/v1/responses\n" + json.dumps(body, indent=2) + "\n"
