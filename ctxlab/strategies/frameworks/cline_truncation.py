"""Cline's legacy context truncation (``ContextManager``), ported from its source.

Source: cline/cline, ``src/core/context/context-management/ContextManager.ts`` and
``context-window-utils.ts`` (the legacy manager, before its removal on 2026-06-24), and
``src/core/prompts/responses.ts`` (the notice text).

- ``maxAllowedSize`` by window: 64,000 -> window - 27,000; 128,000 -> - 30,000; 200,000 ->
  - 40,000; any other -> max(window - 40,000, 0.8 x window); unknown window = 128,000.
- Trigger: the previous request's tokensIn + tokensOut + cacheWrites + cacheReads >=
  maxAllowedSize. ctxlab has no Cline task file, so the previous request's total is ctxlab's
  exact count of the chat (or ``previous_request_tokens`` when given).
- ``getNextTruncationRange``: Cline's history is Anthropic messages (a user message carries the
  tool results): messages 0 and 1 are always kept; from index 2, ``floor(rest / 4) x 2``
  messages are removed (``half``), or ``floor(rest x 3 / 4 / 2) x 2`` (``quarter``, when
  total / 2 > maxAllowedSize); the removed range ends one earlier when its last message is not
  an assistant message. The text of the first assistant message is replaced by the notice.

A ctxlab chat maps onto Cline's history as: a leading system prompt is Cline's system prompt
(not in the history, never removed); consecutive tool results form one user message (as
Anthropic's tool_result blocks do); every other message is one message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._window import MODEL_CHOICES, model_info

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "CONTEXT_TRUNCATION_NOTICE",
    "ClineTruncation",
    "api_messages",
    "max_allowed_size",
    "next_truncation_range",
]

# src/core/prompts/responses.ts, formatResponse.contextTruncationNotice (cline/cline, legacy
# ContextManager era; Apache-2.0)
CONTEXT_TRUNCATION_NOTICE = (
    "[NOTE] Some previous conversation history with the user has been removed to maintain "
    "optimal context window length. The initial user task has been retained for continuity, "
    "while intermediate conversation history has been removed. Keep this in mind as you "
    "continue assisting the user. Pay special attention to the user's latest messages."
)


def max_allowed_size(window: int) -> int:
    """``getContextWindowInfo(api).maxAllowedSize`` for a context window."""
    if window == 64_000:
        return window - 27_000
    if window == 128_000:
        return window - 30_000
    if window == 200_000:
        return window - 40_000
    return int(max(window - 40_000, window * 0.8))


def api_messages(messages: Sequence[Message]) -> tuple[int, list[list[int]]]:
    """``(pinned, groups)``: 1 when the chat's first message is Cline's system prompt, and
    the positions of the ctxlab messages forming each of Cline's history messages."""
    pinned = 1 if messages and messages[0].role.is_instruction else 0
    groups: list[list[int]] = []
    for i in range(pinned, len(messages)):
        if (
            messages[i].role.is_tool_result
            and groups
            and messages[groups[-1][-1]].role.is_tool_result
        ):
            groups[-1].append(i)
        else:
            groups.append([i])
    return pinned, groups


def _role(messages: Sequence[Message], group: list[int]) -> str:
    role = messages[group[0]].role
    return "assistant" if role is Role.ASSISTANT else "user"


def next_truncation_range(roles: Sequence[str], keep: str) -> tuple[int, int]:
    """``getNextTruncationRange(apiMessages, undefined, keep)``: the inclusive range removed."""
    start = 2
    rest = len(roles) - start
    # "half" removes half of the rest, "quarter" three quarters, always an even number
    remove = (rest // 4) * 2 if keep == "half" else int(rest * 3 / 4 / 2) * 2
    end = start + remove - 1
    if 0 <= end < len(roles) and roles[end] != "assistant":
        end -= 1
    return start, end


@dataclass(frozen=True, slots=True)
class ClineTruncation(FrameworkStrategy):
    """Cline's legacy truncation: keep the first exchange, remove half of the rest."""

    name: ClassVar[str] = "cline-truncation"
    title: ClassVar[str] = "Cline · context truncation (legacy ContextManager)"
    summary: ClassVar[str] = (
        "Cline keeps the first exchange and removes half (or 3/4) of the rest near the window."
    )
    explanation: ClassVar[str] = (
        "When the previous request used at least maxAllowedSize tokens (the window minus "
        "27,000-40,000), Cline keeps the task (the first user message and the first reply) "
        "and removes the older half of everything after it, or three quarters when the chat "
        "is more than twice over, always ending the removed part on an assistant message. The "
        "first assistant message is replaced by a note that history was removed. The stored "
        "history stays; only the request omits the range."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Cline",
        component="ContextManager (legacy truncation)",
        version="cline/cline @ 6eeee7c4 (legacy ContextManager, 2026-06)",
        source=(
            "src/core/context/context-management/ContextManager.ts, context-window-utils.ts, "
            "src/core/prompts/responses.ts"
        ),
        evidence="code",
        counter="the provider's reported usage of the previous request (ctxlab's exact count "
        "stands in)",
        persists="view",
        unpublished=(
            "Not reproduced: the duplicate file-read replacement ('[[NOTE] This file read has "
            "been removed to save space…]', applied first; truncation skipped when it saves "
            "30% of characters) needs Cline's own tool-result text ('[read_file for 'path'] "
            "Result:'), which other chats do not have.",
            "The previous request's usage: Cline reads it from its task file; ctxlab uses its "
            "exact count of the chat unless previous_request_tokens is set.",
            "Repeated truncations: Cline removes from after its previous deleted range; ctxlab "
            "shows the first truncation of the chat as loaded.",
        ),
    )

    model: str = param(
        "claude-sonnet-4-5",
        label="model",
        help="The model of the task; its context window (from ctxlab's catalog) sets "
        "maxAllowedSize.",
        choices=MODEL_CHOICES,
    )
    previous_request_tokens: int | None = param(
        None,
        label="previous request tokens",
        help="The previous request's tokensIn + tokensOut + cacheWrites + cacheReads. None: "
        "ctxlab's exact count of the chat.",
        min=0,
        step=1000,
        unit="tokens",
    )

    def __post_init__(self) -> None:
        value = self.previous_request_tokens
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ParameterError(
                f"previous_request_tokens must be a whole number or None, got {value!r}"
            )
        check_params(self)
        model_info(self.model)

    @property
    def max_allowed(self) -> int:
        return max_allowed_size(model_info(self.model).context_window)

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        if self.previous_request_tokens is not None:
            return self.previous_request_tokens
        return counter.count_messages(messages)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        total = counter.count_messages(messages)
        used = self.estimate(messages, counter) or 0
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        pinned, groups = api_messages(messages)
        if pinned:
            decisions[messages[0].id] = Decision.PINNED
        if used < self.max_allowed or len(groups) <= 2:
            return TrimResult(tuple(messages), decisions, total, total, strategy=self.name)
        keep = "quarter" if used / 2 > self.max_allowed else "half"
        roles = [_role(messages, g) for g in groups]
        start, end = next_truncation_range(roles, keep)
        removed = {i for g in groups[start : end + 1] for i in g}
        out: list[Message] = []
        inserted: list[Message] = []
        for i, m in enumerate(messages):
            if i in removed:
                decisions[m.id] = Decision.DROPPED
                continue
            if end >= start and pinned <= i and groups[1][0] == i and m.role is Role.ASSISTANT:
                note = m.replace(content=CONTEXT_TRUNCATION_NOTICE)
                decisions[m.id] = Decision.CLEARED
                inserted.append(note)
                out.append(note)
                continue
            out.append(m)
        warnings: tuple[str, ...] = ()
        if end < start:
            warnings = ("Cline's range is empty for this chat: nothing is removed.",)
        return TrimResult(
            tuple(out),
            decisions,
            total,
            counter.count_messages(out),
            inserted=tuple(inserted),
            warnings=warnings,
            strategy=self.name,
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        exact = counter.count_messages(messages)
        used = self.estimate(messages, counter) or 0
        info = model_info(self.model)
        window = info.context_window
        limit = self.max_allowed
        how = "reported" if self.previous_request_tokens is not None else "counted"
        text = (
            f"Fires at {limit:,} tokens on {self.model} (window {window:,}, maxAllowedSize "
            f"{limit:,}); the previous request is {used:,} ({how})"
            + (
                f": removes {'three quarters' if used / 2 > limit else 'half'} of the history "
                "after the first exchange."
                if used >= limit
                else "."
            )
        )
        return TriggerReport(used >= limit, limit, "tokens", used, exact, text, "Cline")

    def config_code(self) -> str:
        window = model_info(self.model).context_window
        return (
            "// Cline: Settings > Features > auto-condense off (the extension state\n"
            "// useAutoCondense = false) selects this legacy truncation; the model, chosen\n"
            "// in Cline's API configuration, sets the window.\n"
            f"// model: {self.model} (window {window:,}, maxAllowedSize {self.max_allowed:,})\n"
            '{ "useAutoCondense": false }\n'
        )
