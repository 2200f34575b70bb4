"""OpenRouter's ``middle-out`` message transform, as its documentation describes it.

``transforms: ["middle-out"]`` makes OpenRouter remove or truncate messages "from the middle of
the prompt, until the prompt fits within the model's context window" (openrouter.ai/docs,
Message Transforms); it is on by default for endpoints with a context of 8,192 tokens or less,
and ``transforms: []`` turns it off. When a provider caps the number of messages (Anthropic's
Claude: 1,000), "half of the messages are kept from the start and half from the end".

The implementation is closed. ctxlab's approximation: the leading system prompt is kept; whole
messages are removed one at a time, each time the middle one of those still sent (the first
and last conversation messages are never removed), until ctxlab's exact count fits the window;
then tool results whose call was removed and tool calls whose results were all removed go too.
With ``message_cap`` set and exceeded, the first ``cap // 2`` and the last ``cap - cap // 2``
messages are kept first. Every guess is listed in ``unpublished``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.model import Message
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._window import MODEL_CHOICES, model_info

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["DEFAULT_ON_UP_TO", "OpenRouterMiddleOut", "middle_out"]

DEFAULT_ON_UP_TO = 8192
"""Endpoints with at most this context get ``middle-out`` unless ``transforms`` says otherwise."""


def middle_out(
    messages: Sequence[Message], counter: TokenCounter, window: int, cap: int | None
) -> list[int]:
    """The positions of ``messages`` sent, ascending (see the module docstring)."""
    pinned = 1 if messages and messages[0].role.is_instruction else 0
    rest = list(range(pinned, len(messages)))
    if cap is not None and len(messages) > cap:
        head = max(cap // 2 - pinned, 0)
        tail = cap - cap // 2
        rest = rest[:head] + rest[len(rest) - tail :] if len(rest) > head + tail else rest
    chat = counter.counted(messages)
    counts, fixed = chat.counts, chat.fixed
    total = fixed + sum(counts[i] for i in range(pinned)) + sum(counts[i] for i in rest)
    while total > window and len(rest) > 2:
        victim = rest.pop(len(rest) // 2)
        total -= counts[victim]
    sent = set(range(pinned)) | set(rest)
    # tool pairs: an unanswered call or a result without its call is rejected by the APIs
    calls_sent = {c.id for i in sent for c in messages[i].tool_calls if c.id}
    for i in sorted(sent):
        m = messages[i]
        if m.role.is_tool_result and m.tool_call_id and m.tool_call_id not in calls_sent:
            sent.discard(i)
    answered = {messages[i].tool_call_id for i in sent if messages[i].role.is_tool_result}
    for i in sorted(sent):
        m = messages[i]
        ids = [c.id for c in m.tool_calls if c.id]
        if ids and not any(c in answered for c in ids) and i != len(messages) - 1:
            sent.discard(i)
    return sorted(sent)


@dataclass(frozen=True, slots=True)
class OpenRouterMiddleOut(FrameworkStrategy):
    """OpenRouter's ``middle-out``: remove messages from the middle until the prompt fits."""

    name: ClassVar[str] = "openrouter-middle-out"
    title: ClassVar[str] = "OpenRouter · middle-out transform"
    summary: ClassVar[str] = (
        "OpenRouter removes messages from the middle of the prompt until it fits the model."
    )
    explanation: ClassVar[str] = (
        'With transforms: ["middle-out"] OpenRouter removes or truncates messages from the '
        "middle of the prompt until it fits the model's context window, on the idea that the "
        "middle matters least. It is on by default only for endpoints of 8,192 tokens of "
        "context or less. OpenRouter does not publish the exact cut: ctxlab removes whole "
        "messages, middle first, and keeps the system prompt, the first and the last message."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="OpenRouter",
        component="middle-out transform",
        version="OpenRouter docs (2026)",
        source="openrouter.ai/docs/transforms, openrouter.ai/docs/features/message-transforms",
        evidence="docs",
        counter="the model's tokenizer on OpenRouter's side (ctxlab's exact count stands in)",
        persists="server",
        unpublished=(
            "Which messages go first: ctxlab removes the middle one of those still sent, one "
            "at a time; OpenRouter only says 'from the middle'.",
            "Truncating inside a message: OpenRouter says it may 'truncate' messages; ctxlab "
            "removes whole messages only.",
            "What is protected: ctxlab keeps a leading system prompt and the first and last "
            "conversation messages; OpenRouter does not say.",
            "Tool pairs: ctxlab also removes a tool result whose call was removed and a tool "
            "call none of whose results is sent; OpenRouter does not say.",
            "The budget: ctxlab removes until the prompt alone fits the context window; "
            "whether room for the completion is reserved is not published (model selection "
            "prefers models whose context is at least half of input + completion).",
            "The message cap: the provider's cap (Claude: 1,000) is a parameter here; the "
            "split of an odd cap (ctxlab: the extra message from the end) is not published.",
            "An older page said the transform applied only up to twice the context size; "
            "ctxlab applies it at any size.",
        ),
    )

    transforms: str = param(
        "default",
        label="transforms",
        help='"default": OpenRouter\'s default (middle-out only for a context of 8,192 '
        'tokens or less); "middle-out": transforms: ["middle-out"]; "none": transforms: [].',
        choices=("default", "middle-out", "none"),
    )
    model: str = param(
        "gpt-4o",
        label="model",
        help="The model routed to; its context window comes from ctxlab's catalog.",
        choices=MODEL_CHOICES,
    )
    message_cap: int | None = param(
        None,
        label="message cap",
        help="The provider's maximum number of messages (Anthropic's Claude: 1000); over it, "
        "half are kept from the start and half from the end. None: no cap.",
        min=2,
        step=1,
        unit="messages",
    )

    def __post_init__(self) -> None:
        if self.message_cap is not None and (
            isinstance(self.message_cap, bool) or not isinstance(self.message_cap, int)
        ):
            raise ParameterError(
                f"message_cap must be a whole number or None, got {self.message_cap!r}"
            )
        check_params(self)
        model_info(self.model)

    @property
    def window(self) -> int:
        return model_info(self.model).context_window

    @property
    def enabled(self) -> bool:
        """Whether middle-out runs for this request."""
        if self.transforms == "default":
            return self.window <= DEFAULT_ON_UP_TO
        return self.transforms == "middle-out"

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        total = counter.count_messages(messages)
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        over = total > self.window or (
            self.message_cap is not None and len(messages) > self.message_cap
        )
        if not self.enabled or not over:
            warnings: tuple[str, ...] = ()
            if over:
                warnings = (
                    f"This prompt ({total:,} tokens, {len(messages):,} messages) is over "
                    f"{self.model}'s limits and middle-out is off: the request fails.",
                )
            return TrimResult(
                tuple(messages), decisions, total, total, warnings=warnings, strategy=self.name
            )
        sent = middle_out(messages, counter, self.window, self.message_cap)
        kept_set = set(sent)
        for i, m in enumerate(messages):
            if i not in kept_set:
                decisions[m.id] = Decision.DROPPED
            elif i == 0 and m.role.is_instruction:
                decisions[m.id] = Decision.PINNED
        kept = tuple(messages[i] for i in sent)
        after = counter.count_messages(kept)
        warnings = ()
        if after > self.window:
            warnings = (
                f"Even with only the system prompt, the first and the last message the prompt "
                f"is {after:,} tokens, over the {self.window:,}-token window; OpenRouter may "
                "truncate inside a message here (not published).",
            )
        return TrimResult(kept, decisions, total, after, warnings=warnings, strategy=self.name)

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return counter.count_messages(messages)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        exact = counter.count_messages(messages)
        window = self.window
        where = f"{self.model} (window {window:,})"
        if not self.enabled:
            why = (
                "transforms is []"
                if self.transforms == "none"
                else f"the default applies middle-out only to a context of {DEFAULT_ON_UP_TO:,} "
                'tokens or less; set transforms: ["middle-out"]'
            )
            text = f"Never fires on {where}: {why}; this chat is at {exact:,}."
            return TriggerReport(False, None, "tokens", exact, exact, text, "OpenRouter")
        text = (
            f"Removes messages from the middle once the prompt exceeds {window:,} tokens on "
            f"{where}; this chat is at {exact:,}."
        )
        return TriggerReport(exact > window, window, "tokens", exact, exact, text, "OpenRouter")

    def config_code(self) -> str:
        slug = f"{model_info(self.model).provider}/{self.model}"
        body: dict[str, object] = {"model": slug, "messages": ["..."]}
        if self.transforms == "middle-out":
            body["transforms"] = ["middle-out"]
        elif self.transforms == "none":
            body["transforms"] = []
        return (
            "POST https://openrouter.ai/api/v1/chat/completions\n"
            + json.dumps(body, indent=2)
            + "\n"
        )
