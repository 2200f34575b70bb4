"""How a ctxlab chat becomes AutoGen's model context, shared by the three AutoGen policies.

AutoGen (``autogen-core`` 0.7.5) keeps an agent's history in a ``ChatCompletionContext`` of
``LLMMessage`` objects; ``AssistantAgent`` prepends its system message to what
``get_messages()`` returns, so the system prompt is never in the context and never trimmed.
The mapping (mirrored by ``tests/oracles/autogen.py``, which builds the real objects):

* a leading system/developer message: the agent's system message, PINNED, outside the context;
* a later system/developer message: ``SystemMessage``;
* a user message: ``UserMessage(content, source=name or "user")``;
* an assistant message with text only: ``AssistantMessage(content=str)``;
* an assistant message with tool calls: ``AssistantMessage(content=[FunctionCall, ...])``, its
  text (if any) in ``thought`` — what AutoGen's OpenAI client produces when a reply carries
  both text and calls;
* a run of consecutive tool (or legacy function) results: ONE
  ``FunctionExecutionResultMessage`` holding every result, as ``AssistantAgent`` records the
  results of one call batch. Buffer sizes and head/tail sizes count these AutoGen messages,
  not ctxlab's.

Every decision is taken on AutoGen messages and given to each ctxlab message it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from ctxlab.counted import CountedChat
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision, TrimResult

if TYPE_CHECKING:
    from ctxlab.tokens import TokenCounter

__all__ = [
    "AUTOGEN_SOURCE",
    "AUTOGEN_VERSION",
    "AutoGenContext",
    "Kind",
    "Unit",
    "agent_code",
    "autogen_context",
    "context_result",
    "orphan_warnings",
    "units_phrase",
]

AUTOGEN_VERSION = "autogen-core 0.7.5"
AUTOGEN_SOURCE = "autogen_core/model_context/ (PyPI autogen-core 0.7.5)"


class Kind(StrEnum):
    """The AutoGen message type a unit becomes."""

    SYSTEM = "SystemMessage"
    USER = "UserMessage"
    ASSISTANT = "AssistantMessage"  # content=str
    CALLS = "AssistantMessage(FunctionCall)"  # content=[FunctionCall, ...]
    RESULTS = "FunctionExecutionResultMessage"


@dataclass(frozen=True, slots=True)
class Unit:
    """One AutoGen message: ctxlab messages ``[start, stop)`` of the chat, and its tokens
    (the sum of theirs: the model client counts a result message as its results)."""

    kind: Kind
    start: int
    stop: int
    tokens: int


@dataclass(frozen=True, slots=True)
class AutoGenContext:
    """A chat as AutoGen holds it: the pinned system prompt (0 or 1 message) and the units."""

    chat: CountedChat
    pinned: int
    units: tuple[Unit, ...]

    def tokens(self, kept: Sequence[int]) -> int:
        """The model client's count of the context made of units ``kept`` (ctxlab's exact
        count: the units' messages plus reply priming and the request's fixed overhead)."""
        return sum(self.units[u].tokens for u in kept) + self.chat.fixed

    @property
    def context_tokens(self) -> int:
        """The model client's count of the whole context (the system prompt is outside it)."""
        return self.tokens(range(len(self.units)))


def _kind(message: Message) -> Kind:
    if message.role.is_tool_result:
        return Kind.RESULTS
    if message.role.is_instruction:
        return Kind.SYSTEM
    if message.role is Role.USER:
        return Kind.USER
    return Kind.CALLS if message.tool_calls else Kind.ASSISTANT


def autogen_context(messages: Sequence[Message], counter: TokenCounter) -> AutoGenContext:
    """``messages`` mapped onto AutoGen's context (see the module docstring)."""
    chat = counter.counted(tuple(messages))
    n = len(chat)
    pinned = 1 if n and chat.messages[0].role.is_instruction else 0
    units: list[Unit] = []
    i = pinned
    prefix = chat.prefix
    while i < n:
        kind = _kind(chat.messages[i])
        stop = i + 1
        if kind is Kind.RESULTS:
            while stop < n and chat.messages[stop].role.is_tool_result:
                stop += 1
        units.append(Unit(kind, i, stop, prefix[stop] - prefix[i]))
        i = stop
    return AutoGenContext(chat, pinned, tuple(units))


def orphan_warnings(ctx: AutoGenContext, kept: Sequence[int], issue: str) -> list[str]:
    """Sentences for every kept tool call whose results are not kept, and every kept result
    whose call is not (the shapes an API rejects), naming the upstream ``issue``."""
    chosen = set(kept)
    units = ctx.units
    out: list[str] = []
    for u in sorted(chosen):
        unit = units[u]
        if unit.kind is Kind.CALLS:
            nxt = u + 1
            if nxt < len(units) and units[nxt].kind is Kind.RESULTS and nxt not in chosen:
                msg = ctx.chat.messages[unit.start]
                out.append(
                    f"AutoGen returns the tool call of message {msg.id!r} without its result "
                    f"({issue}); OpenAI rejects such a request."
                )
        elif unit.kind is Kind.RESULTS:
            prev = u - 1
            if prev >= 0 and units[prev].kind is Kind.CALLS and prev not in chosen:
                msg = ctx.chat.messages[unit.start]
                out.append(
                    f"AutoGen returns the tool result {msg.id!r} without its call "
                    f"({issue}); OpenAI rejects such a request."
                )
    return out


def context_result(
    ctx: AutoGenContext,
    kept: Sequence[int],
    *,
    strategy: str,
    inserted: tuple[tuple[int, Message], ...] = (),
    warnings: Sequence[str] = (),
    counter: TokenCounter,
) -> TrimResult:
    """The :class:`TrimResult` of AutoGen returning units ``kept`` (in order), with
    ``inserted`` messages placed before the kept unit at each given position of ``kept``."""
    chat = ctx.chat
    decisions = dict.fromkeys(chat.ids, Decision.DROPPED)
    out: list[Message] = []
    if ctx.pinned:
        decisions[chat.ids[0]] = Decision.PINNED
        out.append(chat.messages[0])
    extra = dict(inserted)
    for position, u in enumerate(kept):
        if position in extra:
            out.append(extra.pop(position))
        unit = ctx.units[u]
        decisions.update(dict.fromkeys(chat.ids[unit.start : unit.stop], Decision.KEPT))
        out.extend(chat.messages[unit.start : unit.stop])
    out.extend(extra.values())
    sent = tuple(out)
    return TrimResult(
        messages=sent,
        decisions=decisions,
        tokens_before=chat.total,
        tokens_after=counter.count_messages(sent),
        inserted=tuple(m for _, m in inserted),
        replace=False,
        warnings=tuple(warnings),
        strategy=strategy,
    )


def agent_code(context_import: str, context_expr: str, model: str = "gpt-4o") -> str:
    """An ``AssistantAgent`` using ``context_expr`` as its model context (AutoGen AgentChat)."""
    return (
        "from autogen_agentchat.agents import AssistantAgent\n"
        f"from autogen_core.model_context import {context_import}\n"
        "from autogen_ext.models.openai import OpenAIChatCompletionClient\n"
        "\n"
        f'model_client = OpenAIChatCompletionClient(model="{model}")\n'
        "agent = AssistantAgent(\n"
        '    "assistant",\n'
        "    model_client=model_client,\n"
        '    system_message="...",  # your system prompt: outside the model context\n'
        f"    model_context={context_expr},\n"
        ")\n"
    )


def units_phrase(ctx: AutoGenContext) -> str:
    """``42 AutoGen messages (57 chat messages after the system prompt)``."""
    n = len(ctx.units)
    chat_n = len(ctx.chat) - ctx.pinned
    head = f"{n:,} AutoGen message{'s' if n != 1 else ''}"
    if chat_n == n:
        return head
    return (
        f"{head} ({chat_n:,} chat messages; the results of one call batch are one "
        "FunctionExecutionResultMessage)"
    )
