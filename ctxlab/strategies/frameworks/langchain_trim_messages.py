"""LangChain's ``trim_messages`` (langchain-core 1.8.3), every parameter, as a strategy.

``langchain_core.messages.trim_messages(messages, max_tokens=..., token_counter=...,
strategy="last", allow_partial=False, end_on=None, start_on=None, include_system=False)``:
``"last"`` drops trailing messages until one of ``end_on``, sets a leading system message
aside (``include_system``; its tokens come off the budget), keeps the longest run of newest
messages that fits (binary search), optionally part of the next older message (its text split
on newlines, keeping the *end*), then drops from the oldest side until the first kept message
is of a ``start_on`` type. ``"first"`` keeps the oldest messages that fit, part of the next
one (keeping the *start*), then drops from the newest side until one of ``end_on``.

The counter is LangChain's: ``"approximate"`` (``count_tokens_approximately``, chars / 4 + 3 per
message), ``"len"`` (every message counts 1: ``max_tokens`` is then a message count) or
``"model"`` (a chat model's ``get_num_tokens_from_messages``: here ctxlab's exact counter). It
is a function the caller applies to the list it sends: a view (``replace=False``); the whole
list, system message included, is trimmed, as the call does. ``trim-last`` is ctxlab's own
simplified version (ctxlab's counter, start on a user message); this one is LangChain's call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, cast

from ctxlab.errors import ParameterError
from ctxlab.model import Message
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._langchain import (
    ListCounter,
    approx_counter,
    len_counter,
    message_counter,
    parse_type_list,
    trim_messages,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["LangChainTrimMessages"]

_COUNTER_WORDS = {
    "approximate": "count_tokens_approximately (chars / 4 + 3 per message)",
    "len": "len (one per message)",
    "model": "the model's own counter (ctxlab's exact count)",
}


@dataclass(frozen=True, slots=True)
class LangChainTrimMessages(FrameworkStrategy):
    """``trim_messages`` with LangChain's parameters, counter and defaults (see the module)."""

    name: ClassVar[str] = "langchain-trim-messages"
    title: ClassVar[str] = "LangChain · trim_messages"
    summary: ClassVar[str] = (
        "LangChain's trim_messages: the newest (or oldest) messages within max_tokens, "
        "counted LangChain's way."
    )
    explanation: ClassVar[str] = (
        "langchain_core.messages.trim_messages, called on the message list before each model "
        "call. With strategy='last' it keeps the newest messages whose tokens fit max_tokens, "
        "one message at a time, by LangChain's own count (count_tokens_approximately: "
        "characters / 4 + 3 per message, so code and JSON are under-counted). include_system "
        "keeps a leading system message; start_on='human' drops kept messages from the front "
        "until a user message, which is the only repair it does: without it the kept part can "
        "begin with a tool result whose call was dropped (langchain-ai/langchain#33245). "
        "allow_partial keeps the end of the next message's text, cut on newlines."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="LangChain",
        component="trim_messages",
        version="langchain-core 1.8.3",
        source="langchain_core/messages/utils.py (trim_messages, _first_max_tokens, "
        "_last_max_tokens, _default_text_splitter, count_tokens_approximately)",
        evidence="oracle",
        counter="count_tokens_approximately: ceil(characters / 4) + 3 per message; characters "
        "= content + repr(parsed tool calls) + tool_call_id + role + name",
        persists="view",
        known_issues=(
            "langchain-ai/langchain#33245 (open): without start_on='human' the kept messages "
            "can begin with a tool result whose call was dropped.",
        ),
    )

    max_tokens: int = param(
        8000,
        label="Max tokens",
        help="max_tokens: what the kept messages may count, by token_counter (a message count "
        "with token_counter='len'). LangChain has no default: it must be given.",
        min=0,
        step=100,
        unit="tokens",
    )
    token_counter: str = param(
        "approximate",
        label="Token counter",
        help="token_counter: 'approximate' (count_tokens_approximately, chars / 4 + 3 per "
        "message), 'len' (each message counts 1) or 'model' (the chat model's own counter: "
        "ctxlab's exact count). LangChain has no default; ctxlab starts on 'approximate'.",
        choices=("approximate", "len", "model"),
    )
    strategy: str = param(
        "last",
        label="Strategy",
        help="strategy: 'last' keeps the newest messages, 'first' the oldest.",
        choices=("last", "first"),
    )
    include_system: bool = param(
        False,
        label="Include system",
        help="include_system: always keep a leading system (or developer) message; its tokens "
        "come off max_tokens. Only with strategy='last'.",
    )
    start_on: str = param(
        "",
        label="Start on",
        help="start_on: comma-separated types (human, ai, system, tool, function); drop kept "
        "messages from the oldest side until one of them. Empty = None. Only with "
        "strategy='last'.",
    )
    end_on: str = param(
        "",
        label="End on",
        help="end_on: comma-separated types; drop messages from the newest side until one of "
        "them. Empty = None.",
    )
    allow_partial: bool = param(
        False,
        label="Allow partial",
        help="allow_partial: keep part of the message that does not fit, its text split on "
        "newlines (the end for 'last', the start for 'first').",
    )

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise ParameterError(f"max_tokens must be a whole number, got {self.max_tokens!r}")
        check_params(self)
        for name in ("start_on", "end_on"):
            try:
                parse_type_list(getattr(self, name))
            except ValueError as exc:
                raise ParameterError(f"{name}: {exc}") from None
        if self.strategy == "first" and self.start_on_types:
            raise ParameterError("start_on is only valid with strategy='last' (LangChain's rule)")
        if self.strategy == "first" and self.include_system:
            raise ParameterError(
                "include_system is only valid with strategy='last' (LangChain's rule)"
            )

    @property
    def start_on_types(self) -> tuple[str, ...]:
        return parse_type_list(self.start_on)

    @property
    def end_on_types(self) -> tuple[str, ...]:
        return parse_type_list(self.end_on)

    def list_counter(self, counter: TokenCounter) -> ListCounter:
        """The ``token_counter`` LangChain would call, over a list of messages."""
        if self.token_counter == "len":
            return len_counter()
        if self.token_counter == "model":
            return message_counter(counter.count_message, counter.accounting.reply_priming)
        return approx_counter()

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        outcome = trim_messages(
            messages,
            max_tokens=self.max_tokens,
            counter=self.list_counter(counter),
            strategy=cast(Literal["first", "last"], self.strategy),
            allow_partial=self.allow_partial,
            end_on=self.end_on_types,
            start_on=self.start_on_types,
            include_system=self.include_system,
        )
        kept = outcome.messages(messages)
        decisions = dict.fromkeys((m.id for m in messages), Decision.DROPPED)
        for i in outcome.kept:
            decisions[messages[i].id] = Decision.KEPT
        pinned = (
            self.include_system
            and bool(outcome.kept)
            and outcome.kept[0] == 0
            and messages[0].role.is_instruction
        )
        if pinned:
            decisions[messages[0].id] = Decision.PINNED
        warnings: list[str] = []
        for i, part in outcome.partial.items():
            decisions[messages[i].id] = Decision.CLEARED
            side = "end" if self.strategy == "last" else "start"
            warnings.append(
                f"Message {messages[i].id!r} is sent in part (allow_partial): the {side} of its "
                f"text, {len(part.content):,} of {len(messages[i].content):,} characters, cut on "
                "newlines."
            )
        first = 1 if pinned else 0
        if len(kept) > first and kept[first].role.is_tool_result:
            warnings.append(
                f"The kept messages begin with a tool result ({kept[first].id!r}) whose call was "
                "dropped; trim_messages repairs this only with start_on='human' "
                "(langchain-ai/langchain#33245). OpenAI rejects such a request."
            )
        return TrimResult(
            messages=tuple(kept),
            decisions=decisions,
            tokens_before=counter.count_messages(messages),
            tokens_after=counter.count_messages(kept),
            inserted=tuple(outcome.partial.values()),
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return self.list_counter(counter)(messages)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        estimate = self.list_counter(counter)(messages)
        unit = "messages" if self.token_counter == "len" else "tokens"
        fires = estimate > self.max_tokens
        words = _COUNTER_WORDS[self.token_counter]
        where = f"over max_tokens={self.max_tokens:,} {unit} by {words}"
        text = (
            f"Trims on every call: the chat is {estimate:,} {unit}, {where}."
            if fires
            else f"Keeps everything by budget: the chat is {estimate:,} {unit}, within "
            f"max_tokens={self.max_tokens:,} by {words}"
            + (
                " (start_on / end_on may still drop messages)."
                if self.start_on or self.end_on
                else "."
            )
        )
        return TriggerReport(
            fires=fires,
            threshold=self.max_tokens,
            unit=unit,
            estimate=estimate,
            exact=counter.count_messages(messages) if unit == "tokens" else None,
            text=text,
            framework="LangChain",
        )

    def config_code(self) -> str:
        counter = {
            "approximate": '"approximate",',
            "len": "len,",
            "model": "model,  # your chat model: its get_num_tokens_from_messages",
        }[self.token_counter]
        lines = [
            "from langchain_core.messages import trim_messages",
            "",
            "trimmed = trim_messages(",
            "    messages,",
            f"    max_tokens={self.max_tokens},",
            f'    strategy="{self.strategy}",',
        ]
        if self.include_system:
            lines.append("    include_system=True,")
        for name, types in (("start_on", self.start_on_types), ("end_on", self.end_on_types)):
            if types:
                value = f'"{types[0]}"' if len(types) == 1 else repr(list(types))
                lines.append(f"    {name}={value},".replace("'", '"'))
        if self.allow_partial:
            lines.append("    allow_partial=True,")
        lines.append(f"    token_counter={counter}")
        lines.append(")")
        return "\n".join(lines) + "\n"
