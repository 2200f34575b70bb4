"""AutoGen's ``TokenLimitedChatCompletionContext``: pop the middle message until the count fits.

``TokenLimitedChatCompletionContext(model_client, *, token_limit=None, tool_schema=None)``,

``autogen_core/model_context/_token_limited_chat_completion_context.py`` (autogen-core 0.7.5),
``get_messages``::

    messages = list(self._messages)
    if self._token_limit is None:
        remaining_tokens = self._model_client.remaining_tokens(messages, tools=...)
        while remaining_tokens < 0 and len(messages) > 0:
            messages.pop(len(messages) // 2)
            remaining_tokens = self._model_client.remaining_tokens(messages, tools=...)
    else:
        token_count = self._model_client.count_tokens(messages, tools=...)
        while token_count > self._token_limit and len(messages) > 0:
            messages.pop(len(messages) // 2)
            token_count = self._model_client.count_tokens(messages, tools=...)
    if messages and isinstance(messages[0], FunctionExecutionResultMessage):
        messages = messages[1:]

It removes from the MIDDLE, and repairs only a leading result message: a tool call in the first
half whose result was popped stays without it (microsoft/autogen#7955, open), reproduced and
flagged. Popping the middle index again and again removes one contiguous block: after ``r``
pops of ``L`` messages the list is the first ``ceil((L - r) / 2)`` and the last
``floor((L - r) / 2)`` of them, so the loop is a scan over ``L - r`` with prefix sums.

The count is the model client's ``count_tokens``, which for an OpenAI model is the real
tokenizer: ctxlab's counter (the one given to the strategy) stands for it. With
``token_limit=None`` the client's ``remaining_tokens`` is its model's token limit minus that
count; ctxlab takes the limit from its catalog for ``model``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.catalog import CATALOG, get_model
from ctxlab.errors import ParameterError
from ctxlab.strategies.base import TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._autogen import (
    AUTOGEN_SOURCE,
    AUTOGEN_VERSION,
    AutoGenContext,
    Kind,
    agent_code,
    autogen_context,
    context_result,
    orphan_warnings,
)

if TYPE_CHECKING:
    from ctxlab.model import Message
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["ISSUE_7955", "AutoGenTokenLimited", "token_limited_units"]

ISSUE_7955 = "microsoft/autogen#7955"


def token_limited_units(ctx: AutoGenContext, limit: int) -> list[int]:
    """The AutoGen messages (indexes) ``get_messages`` returns for ``count > limit`` popping."""
    units = ctx.units
    total = len(units)
    prefix = [0]
    for unit in units:
        prefix.append(prefix[-1] + unit.tokens)
    fixed = ctx.chat.fixed
    size = total
    while size > 0:
        front = (size + 1) // 2
        back = size // 2
        count = prefix[front] + prefix[total] - prefix[total - back] + fixed
        if count <= limit:
            break
        size -= 1
    front, back = (size + 1) // 2, size // 2
    kept = [*range(front), *range(total - back, total)]
    if kept and units[kept[0]].kind is Kind.RESULTS:
        kept = kept[1:]
    return kept


@dataclass(frozen=True, slots=True)
class AutoGenTokenLimited(FrameworkStrategy):
    """AutoGen's token-limited context: pops the middle message until the model client's count
    is at most ``token_limit`` (or the model's limit), then drops a leading result message."""

    name: ClassVar[str] = "autogen-token-limited"
    title: ClassVar[str] = "AutoGen · TokenLimitedChatCompletionContext"
    summary: ClassVar[str] = (
        "AutoGen's token-limited context: removes middle messages until the count fits."
    )
    explanation: ClassVar[str] = (
        "AutoGen's TokenLimitedChatCompletionContext counts the agent's context with the model "
        "client and, while it is over token_limit, removes the message in the MIDDLE — so the "
        "start and the end of the conversation survive and the middle goes. Only a tool result "
        "left at the very start is repaired: a tool call whose result was removed from the "
        "middle is sent without it, which APIs reject (microsoft/autogen#7955, open). The "
        "system message is outside the context and not counted; nothing stored is changed."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="AutoGen",
        component="TokenLimitedChatCompletionContext",
        version=AUTOGEN_VERSION,
        source=AUTOGEN_SOURCE + ": _token_limited_chat_completion_context.py",
        evidence="oracle",
        counter="the model client's count_tokens (ctxlab's exact count of the context, "
        "system message excluded)",
        persists="view",
        unpublished=(
            "With token_limit=None AutoGen asks the client's remaining_tokens (its model's "
            "token limit minus the count); ctxlab takes that limit from its catalog for model.",
            "tool_schema (tools counted with the messages) is not modelled: the count is the "
            "messages' only.",
        ),
        known_issues=(
            f"{ISSUE_7955}: pops middle messages and repairs only a leading result, so it can "
            "return a tool call without its result.",
        ),
    )

    token_limit: int | None = param(
        None,
        label="Token limit (tokens)",
        help="token_limit: the most tokens the context may count (system message excluded). "
        "None (AutoGen's default): the model client's own limit, remaining_tokens < 0.",
        min=1,
        step=100,
        unit="tokens",
    )
    model: str = param(
        "gpt-4o",
        label="Model (for token_limit=None)",
        help="The model client's model: with token_limit=None its token limit is the bound.",
        choices=tuple(CATALOG.names()),
    )

    def __post_init__(self) -> None:
        if self.token_limit is not None and (
            isinstance(self.token_limit, bool) or not isinstance(self.token_limit, int)
        ):
            raise ParameterError(f"token_limit must be a whole number, got {self.token_limit!r}")
        check_params(self)

    @property
    def limit(self) -> int:
        """The bound the loop compares with: ``token_limit`` or the model's token limit."""
        if self.token_limit is not None:
            return self.token_limit
        return get_model(self.model).context_window

    def _limit_words(self) -> str:
        if self.token_limit is not None:
            return f"{self.token_limit:,} tokens (token_limit)"
        return (
            f"{self.limit:,} tokens ({self.model}'s token limit: token_limit=None uses the "
            "client's remaining_tokens)"
        )

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return autogen_context(messages, counter).context_tokens

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        ctx = autogen_context(messages, counter)
        kept = token_limited_units(ctx, self.limit)
        warnings = orphan_warnings(ctx, kept, ISSUE_7955)
        return context_result(ctx, kept, strategy=self.name, warnings=warnings, counter=counter)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        ctx = autogen_context(messages, counter)
        count = ctx.context_tokens
        limit = self.limit
        fires = count > limit
        system = " (system message excluded)" if ctx.pinned else ""
        if fires:
            text = (
                f"Removes middle messages while the model client counts more than "
                f"{self._limit_words()}; this chat's context is at {count:,}{system}."
            )
        else:
            text = (
                f"Does not cut this chat: its context counts {count:,} tokens{system}, within "
                f"{self._limit_words()}."
            )
        exact = counter.count_messages(messages)
        return TriggerReport(fires, limit, "tokens", count, exact, text, "AutoGen")

    def config_code(self) -> str:
        limit = "" if self.token_limit is None else f", token_limit={self.token_limit}"
        return agent_code(
            "TokenLimitedChatCompletionContext",
            f"TokenLimitedChatCompletionContext(model_client{limit})",
            model=self.model,
        )
