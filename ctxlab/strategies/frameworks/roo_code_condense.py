# ruff: noqa: E501  (SUMMARY_PROMPT below is Roo Code's prompt verbatim, one line per paragraph)
"""Roo Code's context management: auto-condense, else sliding-window truncation (ported).

Source: RooCodeInc/Roo-Code, ``src/core/context-management/index.ts`` (``manageContext``,
``truncateConversation``) and ``src/core/condense/index.ts`` (``SUMMARY_PROMPT``,
``getMessagesSinceLastSummary``), read at 04fc2a02 / 0cc04f43; research read cb836567.

- ``allowedTokens = contextWindow x (1 - 0.1) - maxTokens`` (reserved output; Anthropic's
  default when unset); ``prevContextTokens`` = the last request's total plus the last message
  (ctxlab's exact count of the chat stands in).
- ``autoCondenseContext`` (default on): condense when ``100 x prev / window >=
  autoCondenseContextPercent`` (default 100) or ``prev > allowedTokens``. Condense sends the
  messages since the last summary (the first message prepended when they do not start on a
  user message) plus "Summarize the conversation so far, as described in the prompt
  instructions." with ``SUMMARY_PROMPT`` as the system prompt; the summary becomes one user
  message and every earlier message is hidden (Roo's "fresh start", cb836567).
- Otherwise, when ``prev > allowedTokens``: ``truncateConversation(messages, 0.5)`` hides
  ``floor((visible - 1) x 0.5)`` rounded down to even messages after the first and inserts a
  user message "[Sliding window truncation: N messages hidden to reduce context]" before the
  first kept one. A failed condense falls back to it too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.errors import CtxlabError, ParameterError
from ctxlab.model import Message, Role
from ctxlab.redaction import redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import (
    FrameworkPolicy,
    FrameworkStrategy,
    TriggerReport,
    fresh_id,
)
from ctxlab.strategies.frameworks._window import MODEL_CHOICES, model_info
from ctxlab.summarizers import SummaryRequest

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "ANTHROPIC_DEFAULT_MAX_TOKENS",
    "FINAL_REQUEST",
    "SUMMARY_PROMPT",
    "RooCodeCondense",
    "truncation_marker",
]

ANTHROPIC_DEFAULT_MAX_TOKENS = 8192
"""``ANTHROPIC_DEFAULT_MAX_TOKENS`` of ``@roo-code/types``: the reserve when maxTokens is unset."""

TOKEN_BUFFER_PERCENTAGE = 0.1

# src/core/condense/index.ts (RooCodeInc/Roo-Code @ 04fc2a02, Apache-2.0): SUMMARY_PROMPT
SUMMARY_PROMPT = """\
Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.
This summary should be thorough in capturing technical details, code patterns, and architectural decisions that would be essential for continuing with the conversation and supporting any continuing tasks.

Your summary should be structured as follows:
Context: The context to continue the conversation with. If applicable based on the current task, this should include:
  1. Previous Conversation: High level details about what was discussed throughout the entire conversation with the user. This should be written to allow someone to be able to follow the general overarching conversation flow.
  2. Current Work: Describe in detail what was being worked on prior to this request to summarize the conversation. Pay special attention to the more recent messages in the conversation.
  3. Key Technical Concepts: List all important technical concepts, technologies, coding conventions, and frameworks discussed, which might be relevant for continuing with this work.
  4. Relevant Files and Code: If applicable, enumerate specific files and code sections examined, modified, or created for the task continuation. Pay special attention to the most recent messages and changes.
  5. Problem Solving: Document problems solved thus far and any ongoing troubleshooting efforts.
  6. Pending Tasks and Next Steps: Outline all pending tasks that you have explicitly been asked to work on, as well as list the next steps you will take for all outstanding work, if applicable. Include code snippets where they add clarity. For any next steps, include direct quotes from the most recent conversation showing exactly what task you were working on and where you left off. This should be verbatim to ensure there's no information loss in context between tasks.

Example summary structure:
1. Previous Conversation:
  [Detailed description]
2. Current Work:
  [Detailed description]
3. Key Technical Concepts:
  - [Concept 1]
  - [Concept 2]
  - [...]
4. Relevant Files and Code:
  - [File Name 1]
    - [Summary of why this file is important]
    - [Summary of the changes made to this file, if any]
    - [Important Code Snippet]
  - [File Name 2]
    - [Important Code Snippet]
  - [...]
5. Problem Solving:
  [Detailed description]
6. Pending Tasks and Next Steps:
  - [Task 1 details & next steps]
  - [Task 2 details & next steps]
  - [...]

Output only the summary of the conversation so far, without any additional commentary or explanation.
"""
FINAL_REQUEST = "Summarize the conversation so far, as described in the prompt instructions."


def truncation_marker(hidden: int) -> str:
    """The marker ``truncateConversation`` inserts."""
    return f"[Sliding window truncation: {hidden} messages hidden to reduce context]"


def truncated_count(visible: int, fraction: float = 0.5) -> int:
    """``truncateConversation``: ``floor((visible - 1) x fraction)`` rounded down to even."""
    raw = int((visible - 1) * fraction) if visible > 0 else 0
    return raw - raw % 2


@dataclass(frozen=True, slots=True)
class RooCodeCondense(FrameworkStrategy):
    """Roo Code's condense (summary as one user message) with its sliding-window fallback."""

    name: ClassVar[str] = "roo-code-condense"
    title: ClassVar[str] = "Roo Code · auto-condense + sliding window"
    summary: ClassVar[str] = (
        "Roo Code condenses the whole task into one summary near the window, else hides half."
    )
    explanation: ClassVar[str] = (
        "Roo Code condenses the context when it reaches autoCondenseContextPercent of the "
        "window (100% by default) or passes 90% of the window minus the reserved output: "
        "everything since the last summary is summarized into one user message and the "
        "earlier messages are hidden. With auto-condense off (or when condensing fails) it "
        "hides half of the messages after the first one and inserts a '[Sliding window "
        "truncation: N messages hidden to reduce context]' marker. Hidden messages stay in "
        "the task and come back on a rewind."
    )
    uses_summarizer: ClassVar[bool] = True
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Roo Code",
        component="manageContext (condense, truncateConversation)",
        version="RooCodeInc/Roo-Code main (2026-04; cb836567, prompt @ 04fc2a02)",
        source="src/core/context-management/index.ts, src/core/condense/index.ts",
        evidence="code",
        counter="the provider's reported usage of the last request plus the provider's "
        "count of the last message (ctxlab's exact count stands in)",
        persists="view",
        unpublished=(
            "The summary message's wrapper in the 'fresh start' condense (cb836567) was not "
            "read verbatim: ctxlab sends the summary text alone as the user message.",
            "Folded file definitions, <command> blocks and environment details Roo adds to the "
            "condensed context are not reproduced (ctxlab chats do not hold them).",
            "The token counts: Roo uses the provider's reported usage plus its count of the "
            "last message; ctxlab uses its exact count of the chat.",
            "A condense that would grow the context is refused by Roo; ctxlab does not check.",
        ),
    )

    auto_condense_context: bool = param(
        True,
        label="autoCondenseContext",
        help="Condense automatically (Roo's default: on). Off: only the sliding-window "
        "truncation runs, past allowedTokens.",
    )
    auto_condense_context_percent: int = param(
        100,
        label="autoCondenseContextPercent",
        help="Condense when the context reaches this % of the window (5-100; default 100).",
        min=5,
        max=100,
        step=1,
    )
    model: str = param(
        "claude-sonnet-4-5",
        label="model",
        help="The model of the task; its context window comes from ctxlab's catalog.",
        choices=MODEL_CHOICES,
    )
    max_tokens: int | None = param(
        None,
        label="maxTokens (reserved output)",
        help="The output reserved by the profile; None: Anthropic's default, 8192.",
        min=0,
        step=1024,
        unit="tokens",
    )
    redact_secrets: bool = param(
        False,
        label="Redact secrets in the summarizer request",
        help="ctxlab's pattern redaction of the request (Roo does not redact; off by default).",
    )

    def __post_init__(self) -> None:
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int)
        ):
            raise ParameterError(
                f"max_tokens must be a whole number or None, got {self.max_tokens!r}"
            )
        check_params(self)
        model_info(self.model)

    @property
    def window(self) -> int:
        return model_info(self.model).context_window

    @property
    def allowed_tokens(self) -> int:
        reserved = self.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS
        return int(self.window * (1 - TOKEN_BUFFER_PERCENTAGE) - reserved)

    def _condenses(self, prev: int) -> bool:
        percent = 100 * prev / self.window
        return self.auto_condense_context and (
            percent >= self.auto_condense_context_percent or prev > self.allowed_tokens
        )

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return counter.count_messages(messages)

    def summary_request(self, messages: Sequence[Message]) -> SummaryRequest:
        """The condense request: ``SUMMARY_PROMPT`` as system, the messages since the last
        summary (the first message prepended when they start on another role), then the
        final user request."""
        pinned = 1 if messages and messages[0].role.is_instruction else 0
        history = list(messages[pinned:])
        last = max((i for i, m in enumerate(history) if m.is_summary), default=None)
        since = history if last is None else history[last:]
        if since and since[0].role is not Role.USER and history and history[0].role is Role.USER:
            since = [history[0], *since]
        body: list[dict[str, str]] = [{"role": "system", "content": SUMMARY_PROMPT}]
        for m in since:
            role = "assistant" if m.role is Role.ASSISTANT else "user"
            content = m.content
            if self.redact_secrets:
                content = redact_patterns(content).text
            body.append({"role": role, "content": content})
        body.append({"role": "user", "content": FINAL_REQUEST})
        return SummaryRequest(tuple(body))

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        total = counter.count_messages(messages)
        pinned = 1 if messages and messages[0].role.is_instruction else 0
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        if pinned:
            decisions[messages[0].id] = Decision.PINNED
        warnings: list[str] = []
        if self._condenses(total) and len(messages) - pinned > 1:
            request = self.summary_request(messages)
            if summarizer is None:
                warnings.append("Roo Code would condense here; choose a summarizer to see it.")
            else:
                try:
                    text = summarizer.summarize(request).text.strip()
                except CtxlabError as exc:
                    text = ""
                    warnings.append(f"The summarizer failed ({exc}); Roo falls back.")
                if text:
                    summary = Message(
                        Role.USER, text, fresh_id(messages, "roo-condense-summary"), is_summary=True
                    )
                    for m in messages[pinned:]:
                        decisions[m.id] = Decision.SUMMARIZED
                    kept = (*messages[:pinned], summary)
                    return TrimResult(
                        kept,
                        decisions,
                        total,
                        counter.count_messages(kept),
                        inserted=(summary,),
                        replace=False,
                        summary_request=request,
                        warnings=tuple(warnings),
                        strategy=self.name,
                    )
        if total <= self.allowed_tokens:
            return TrimResult(
                tuple(messages),
                decisions,
                total,
                total,
                warnings=tuple(warnings),
                strategy=self.name,
            )
        visible = list(range(pinned, len(messages)))
        hidden = truncated_count(len(visible))
        if hidden <= 0:
            return TrimResult(
                tuple(messages),
                decisions,
                total,
                total,
                warnings=tuple(warnings),
                strategy=self.name,
            )
        gone = visible[1 : hidden + 1]
        for i in gone:
            decisions[messages[i].id] = Decision.DROPPED
        marker = Message(
            Role.USER, truncation_marker(hidden), fresh_id(messages, "roo-truncation-marker")
        )
        first_kept = visible[hidden + 1] if hidden + 1 < len(visible) else len(messages)
        out = [m for i, m in enumerate(messages) if i < first_kept and i not in set(gone)]
        out.append(marker)
        out.extend(messages[first_kept:])
        return TrimResult(
            tuple(out),
            decisions,
            total,
            counter.count_messages(out),
            inserted=(marker,),
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        exact = counter.count_messages(messages)
        window = self.window
        allowed = self.allowed_tokens
        at_percent = -(-window * self.auto_condense_context_percent // 100)
        if self.auto_condense_context:
            threshold = min(at_percent, allowed + 1)
            what = "condenses"
            how = (
                f"{self.auto_condense_context_percent}% of the window = {at_percent:,}, or over "
                f"allowedTokens {allowed:,} = 90% of {window:,} − reserved output"
            )
        else:
            threshold = allowed + 1
            what = "hides half of the messages (sliding window)"
            how = f"over allowedTokens {allowed:,} = 90% of {window:,} − reserved output"
        text = (
            f"Fires at {threshold:,} tokens on {self.model} ({how}): {what}; this chat is at "
            f"{exact:,}."
        )
        return TriggerReport(
            exact >= threshold, threshold, "tokens", exact, exact, text, "Roo Code"
        )

    def config_code(self) -> str:
        settings: dict[str, object] = {
            "autoCondenseContext": self.auto_condense_context,
            "autoCondenseContextPercent": self.auto_condense_context_percent,
        }
        code = (
            "// Roo Code: Settings > Context Management (global state)\n"
            + json.dumps(settings, indent=2)
            + "\n"
        )
        if self.max_tokens is not None:
            code += f"// API profile: modelMaxTokens = {self.max_tokens}\n"
        return code
