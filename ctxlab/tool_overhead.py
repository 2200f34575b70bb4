"""The fixed part of every request: the tokens of its tool definitions.

A request sends its ``tools`` with every call, so they cost the same on every call and belong in
every budget. :func:`tool_overhead` counts them; :func:`with_tools` wraps a counter so that
every whole-request count (``count_messages``, ``counted(...).tokens()``) includes them. The
strategies count through the counter they are given, so passing the wrapped counter makes each
strategy's budget comparison include the tool definitions; without tools :func:`with_tools`
returns the counter itself and nothing changes.

Accounting: OpenAI's cookbook rule for function definitions ("How to count tokens with
tiktoken", section 7; :meth:`ctxlab.tokens.TokenCounter.count_tools`): per function
``func_init`` + the tokens of ``name:description``; when it has properties ``prop_init``, and
per property ``prop_key`` + the tokens of ``key:type:description`` (+ ``enum_init`` and
``enum_item`` + tokens per enum value); ``func_end`` once per request. For the cookbook's
weather example it reproduces the prompt tokens the API billed exactly (101 with gpt-4o, 105
with gpt-4/gpt-3.5-turbo; see ``tests/test_tool_overhead.py``). Nested schemas (objects in
objects, ``items``, ``anyOf``) are not modelled by that rule, so schemas that use them are
undercounted; tool definitions of other providers are counted with the same rule, an estimate.

A counter that renders the whole request with its model's chat template (the open-model
families of :mod:`ctxlab.tokenizer_families`) offers ``count_request(messages, tools)``
(:class:`RequestCounter`): there the tool definitions can share a turn with the system prompt,
and can change how the other turns render (DeepSeek V4 keeps every turn's thinking tokens when
tools are given), so their cost depends on the chat. Given the chat, :func:`tool_overhead` then
measures the overhead as the request with tools minus the request without, and
:class:`WithOverhead` counts every whole request with ``count_request``; counters without it
(OpenAI's, ``approx``) keep the rule above, unchanged.

Example:
    >>> from ctxlab.formats import ToolDefinition
    >>> from ctxlab.tokens import get_counter
    >>> counter = get_counter("gpt-4o")
    >>> tools = (ToolDefinition("ping", "Check the server."),)
    >>> tool_overhead(counter, tools).tokens == counter.count_tools([tools[0].to_openai()])
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ctxlab.counted import CountedChat
from ctxlab.formats import ToolDefinition
from ctxlab.model import Message
from ctxlab.tokens import ChatAccounting, ProgressCallback, TokenCounter

__all__ = ["RequestCounter", "ToolOverhead", "WithOverhead", "tool_overhead", "with_tools"]


@runtime_checkable
class RequestCounter(Protocol):
    """A counter that counts a whole request, tool definitions included, exactly."""

    def count_request(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> int: ...


@dataclasses.dataclass(frozen=True, slots=True)
class ToolOverhead:
    """The tokens the tool definitions add to every request.

    Attributes:
        tokens: the whole overhead: ``sum(per_tool tokens) + framing``.
        per_tool: ``(name, tokens)`` of each definition, in request order.
        framing: tokens paid once per request when there is at least one tool.
    """

    tokens: int
    per_tool: tuple[tuple[str, int], ...] = ()
    framing: int = 0


def tool_overhead(
    counter: TokenCounter,
    tools: Sequence[ToolDefinition],
    messages: Sequence[Message] | None = None,
) -> ToolOverhead:
    """Count ``tools`` with the counter's tool rule (see the module docstring); with the chat's
    ``messages`` and a :class:`RequestCounter`, what they add to that chat's request exactly."""
    if not tools:
        return ToolOverhead(0)
    framing = counter.accounting.func_end
    shapes = [t.to_openai() for t in tools]
    per_tool = tuple(
        (t.name, counter.count_tools([shape]) - framing)
        for t, shape in zip(tools, shapes, strict=True)
    )
    if messages is not None and isinstance(counter, RequestCounter):
        total = counter.count_request(messages, shapes) - counter.count_messages(messages)
    else:
        total = counter.count_tools(shapes)
    return ToolOverhead(total, per_tool, total - sum(n for _, n in per_tool))


class WithOverhead:
    """A :class:`~ctxlab.tokens.TokenCounter` whose whole-request counts add ``overhead``.

    Per-message and per-text counts are the wrapped counter's (and share its caches);
    ``count_messages`` and ``counted`` add the overhead, so every budget comparison does. Given
    the ``tools`` and a :class:`RequestCounter`, ``count_messages`` counts each request whole
    with them (exact for any subset of the chat); ``counted`` adds the overhead measured on the
    whole chat.
    """

    def __init__(
        self,
        counter: TokenCounter,
        overhead: int,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        self.inner = counter
        self.overhead = overhead
        self._request: RequestCounter | None = (
            counter if tools and isinstance(counter, RequestCounter) else None
        )
        self._tools = list(tools or ())
        self.name: str = counter.name
        self.label: str = f"{counter.label} + {overhead:,} tokens of tool definitions"
        self.is_exact: bool = counter.is_exact
        self.accounting: ChatAccounting = counter.accounting
        # The last chat wrapped, keyed by the inner counter's (cached) chat: O(1) re-counts.
        self._last: tuple[CountedChat, CountedChat] | None = None

    def count_text(self, text: str) -> int:
        return self.inner.count_text(text)

    def count_message(self, message: Message) -> int:
        return self.inner.count_message(message)

    def count_messages(self, messages: Sequence[Message]) -> int:
        if self._request is not None:
            return self._request.count_request(messages, self._tools)
        return self.inner.count_messages(messages) + self.overhead

    def counts(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> list[int]:
        return self.inner.counts(messages, progress)

    def counted(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> CountedChat:
        chat = self.inner.counted(messages, progress)
        last = self._last
        if last is not None and last[0] is chat:
            return last[1]
        wrapped = chat.with_overhead(self.overhead)
        self._last = (chat, wrapped)
        return wrapped

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        return self.inner.count_tools(tools)


def with_tools(
    counter: TokenCounter,
    tools: Sequence[ToolDefinition],
    messages: Sequence[Message] | None = None,
) -> TokenCounter:
    """``counter`` itself without tools, else a counter whose requests include them (measured
    on ``messages``, the chat, where the counter counts whole requests)."""
    overhead = tool_overhead(counter, tools, messages).tokens
    if not overhead:
        return counter
    return WithOverhead(counter, overhead, [t.to_openai() for t in tools])
