"""LangChain's ``ContextEditingMiddleware`` with ``ClearToolUsesEdit`` (langchain 1.5.2).

``langchain/agents/middleware/context_editing.py``: before every model call the middleware
deep-copies the request's messages (the agent's state; the system prompt is the agent's
``system_prompt`` slot, not one of them) and, when their count is *strictly greater* than
``trigger``, walks the tool results oldest first, all but the last ``keep``: for each it finds
the *nearest preceding* ``AIMessage`` and the call with the result's ``tool_call_id`` in it
(none: skipped), skips the tools of ``exclude_tools`` (by the result's name, else the call's),
and replaces the result's content by ``placeholder``; with ``clear_tool_inputs`` that call's
``args`` become ``{}``. With ``clear_at_least > 0`` it recounts after each clear and *stops*
once that many tokens are gone: LangChain's meaning, the opposite of Anthropic's
``clear_at_least``, which skips the whole edit unless that many tokens can be cleared.

The count is ``token_count_method``: ``"approximate"`` (default: ``count_tokens_approximately``
of the messages, system prompt and tools not counted) or ``"model"`` (the model's
``get_num_tokens_from_messages`` of the system prompt and the messages: here ctxlab's exact
counter). Only the request is edited: a view (``replace=False``), recomputed every call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.base import Decision, TrimResult, check_params, check_whole_numbers, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._langchain import (
    ListCounter,
    approx_counter,
    message_counter,
    parsed_tool_calls,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["ClearToolUsesEdit", "LangChainClearToolUses"]


def _names(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))


@dataclass(frozen=True, slots=True)
class ClearToolUsesEdit:
    """``ClearToolUsesEdit``'s parameters, with LangChain's names and defaults."""

    trigger: int = param(
        100_000,
        label="Trigger (tokens)",
        help="trigger: clear when LangChain's count of the messages is strictly greater.",
        min=0,
        step=1000,
        unit="tokens",
    )
    clear_at_least: int = param(
        0,
        label="Clear at least (tokens)",
        help="clear_at_least: stop clearing once this many tokens are gone (0: clear every "
        "candidate). Not Anthropic's meaning (skip unless this many can be cleared).",
        min=0,
        step=100,
        unit="tokens",
    )
    keep: int = param(
        3,
        label="Keep (tool results)",
        help="keep: the most recent tool results never cleared.",
        min=0,
        step=1,
        unit="tool_results",
    )
    clear_tool_inputs: bool = param(
        False,
        label="Clear tool inputs",
        help="clear_tool_inputs: also set the cleared call's args to {} on the AI message.",
    )
    exclude_tools: str = param(
        "",
        label="Exclude tools",
        help="exclude_tools: comma-separated tool names whose results are never cleared.",
    )
    placeholder: str = param(
        "[cleared]",
        label="Placeholder",
        help="placeholder: the text a cleared tool result's content becomes.",
    )

    def __post_init__(self) -> None:
        check_whole_numbers(self, "trigger", "clear_at_least", "keep")
        check_params(self)

    @property
    def excluded(self) -> frozenset[str]:
        return frozenset(_names(self.exclude_tools))


@dataclass(frozen=True, slots=True)
class LangChainClearToolUses(FrameworkStrategy):
    """``ContextEditingMiddleware(edits=[ClearToolUsesEdit(...)])`` (see the module)."""

    name: ClassVar[str] = "langchain-clear-tool-uses"
    title: ClassVar[str] = "LangChain · ContextEditingMiddleware (ClearToolUsesEdit)"
    summary: ClassVar[str] = (
        "LangChain's context editing: over a token trigger, older tool results become "
        "'[cleared]' in the request."
    )
    explanation: ClassVar[str] = (
        "LangChain's ContextEditingMiddleware with ClearToolUsesEdit, modelled on Anthropic's "
        "clear_tool_uses. Before each model call, when LangChain's count of the messages is "
        "above the trigger (100,000 by default, chars / 4 + 3 per message, system prompt not "
        "counted), every tool result but the last 'keep' is replaced by the placeholder, oldest "
        "first. clear_at_least differs from Anthropic's: LangChain stops clearing once that "
        "many tokens are gone, Anthropic skips clearing unless that many can be. Only the "
        "request is edited, so the stored history stays whole and the edit is redone (and the "
        "prompt cache broken) on every call (langchain-ai/langchain#37815)."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="LangChain",
        component="ContextEditingMiddleware + ClearToolUsesEdit",
        version="langchain 1.5.2",
        source="langchain/agents/middleware/context_editing.py",
        evidence="oracle",
        counter="token_count_method='approximate': count_tokens_approximately of the messages "
        "(system prompt and tools not counted); 'model': the model's own count with the "
        "system prompt",
        persists="view",
        known_issues=(
            "langchain-ai/langchain#37815 (open): the edit is request-only, so it re-fires "
            "every call and rewrites mid-history bytes, invalidating the provider's prompt cache.",
        ),
    )

    edit: ClearToolUsesEdit = field(default_factory=ClearToolUsesEdit)
    token_count_method: str = param(
        "approximate",
        label="Token count method",
        help="token_count_method: 'approximate' (count_tokens_approximately, no system prompt) "
        "or 'model' (the model's own count with the system prompt: ctxlab's exact count).",
        choices=("approximate", "model"),
    )

    def __post_init__(self) -> None:
        check_params(self)

    def _count(self, counter: TokenCounter, system: Message | None) -> ListCounter:
        """The middleware's counter over the state messages (the system prompt added for
        ``"model"``, as ``get_num_tokens_from_messages([system, *messages])``)."""
        if self.token_count_method == "model":
            extra = counter.count_message(system) if system is not None else 0
            return message_counter(counter.count_message, counter.accounting.reply_priming + extra)
        return approx_counter()

    @staticmethod
    def _split(messages: Sequence[Message]) -> tuple[Message | None, list[Message]]:
        """The agent's system prompt slot and its state."""
        if messages and messages[0].role.is_instruction:
            return messages[0], list(messages[1:])
        return None, list(messages)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        system, state = self._split(messages)
        count = self._count(counter, system)
        tokens = count(state)
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        if system is not None:
            decisions[system.id] = Decision.PINNED
        edited = list(state)
        inserted: dict[int, Message] = {}
        if tokens > self.edit.trigger:
            self._clear(edited, tokens, count, inserted)
        for pos in inserted:
            decisions[state[pos].id] = Decision.CLEARED
        sent = ([system] if system is not None else []) + edited
        return TrimResult(
            messages=tuple(sent),
            decisions=decisions,
            tokens_before=counter.count_messages(messages),
            tokens_after=counter.count_messages(sent),
            inserted=tuple(inserted[p] for p in sorted(inserted)),
            strategy=self.name,
        )

    def _clear(
        self, edited: list[Message], tokens: int, count: ListCounter, inserted: dict[int, Message]
    ) -> None:
        """``ClearToolUsesEdit.apply`` on ``edited`` in place; ``inserted`` gets every stand-in
        by position."""
        candidates = [i for i, m in enumerate(edited) if m.role is Role.TOOL]
        if self.edit.keep >= len(candidates):
            candidates = []
        elif self.edit.keep:
            candidates = candidates[: -self.edit.keep]
        excluded = self.edit.excluded
        per = count.per_message
        current = tokens
        for idx in candidates:
            tool_message = edited[idx]
            ai_pos = next(
                (j for j in range(idx - 1, -1, -1) if edited[j].role is Role.ASSISTANT), None
            )
            if ai_pos is None:
                continue
            ai_message = edited[ai_pos]
            call = next(
                (
                    c
                    for c in parsed_tool_calls(ai_message)
                    if c["id"] == (tool_message.tool_call_id or "")
                ),
                None,
            )
            if call is None:
                continue
            if (tool_message.name or call["name"]) in excluded:
                continue
            cleared = tool_message.replace(content=self.edit.placeholder)
            edited[idx] = cleared
            inserted[idx] = cleared
            current += per(cleared) - per(tool_message)
            if self.edit.clear_tool_inputs:
                stand_in = _without_inputs(ai_message, tool_message.tool_call_id or "")
                edited[ai_pos] = stand_in
                inserted[ai_pos] = stand_in
                current += per(stand_in) - per(ai_message)
            if (
                self.edit.clear_at_least > 0
                and max(0, tokens - current) >= self.edit.clear_at_least
            ):
                break

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        system, state = self._split(messages)
        return self._count(counter, system)(state)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        system, state = self._split(messages)
        estimate = self._count(counter, system)(state)
        fires = estimate > self.edit.trigger
        how = (
            "count_tokens_approximately, system prompt not counted"
            if self.token_count_method == "approximate"
            else "the model's count, system prompt included"
        )
        verb = "fires now" if fires else "not yet"
        text = (
            f"Fires above {self.edit.trigger:,} tokens ({how}); this chat is at "
            f"{estimate:,}: {verb}."
        )
        return TriggerReport(
            fires=fires,
            threshold=self.edit.trigger,
            unit="tokens",
            estimate=estimate,
            exact=counter.count_messages(messages),
            text=text,
            framework="LangChain",
        )

    def config_code(self) -> str:
        args = [f"trigger={self.edit.trigger:_}"]
        if self.edit.clear_at_least:
            args.append(f"clear_at_least={self.edit.clear_at_least:_}")
        args.append(f"keep={self.edit.keep}")
        if self.edit.clear_tool_inputs:
            args.append("clear_tool_inputs=True")
        if self.edit.excluded:
            args.append(f"exclude_tools={_names(self.edit.exclude_tools)!r}")
        if self.edit.placeholder != "[cleared]":
            args.append(f"placeholder={self.edit.placeholder!r}")
        edit = ",\n                    ".join(args)
        method = (
            f',\n            token_count_method="{self.token_count_method}"'
            if self.token_count_method != "approximate"
            else ""
        )
        return (
            "from langchain.agents import create_agent\n"
            "from langchain.agents.middleware import ClearToolUsesEdit, "
            "ContextEditingMiddleware\n"
            "\n"
            "agent = create_agent(\n"
            '    model="openai:gpt-4o",  # your model\n'
            "    tools=tools,\n"
            "    system_prompt=system_prompt,\n"
            "    middleware=[\n"
            "        ContextEditingMiddleware(\n"
            "            edits=[\n"
            "                ClearToolUsesEdit(\n"
            f"                    {edit},\n"
            "                )\n"
            f"            ]{method},\n"
            "        )\n"
            "    ],\n"
            ")\n"
        )


def _without_inputs(message: Message, tool_call_id: str) -> Message:
    """``_build_cleared_tool_input_message``: the call with ``tool_call_id`` gets ``{}``."""
    calls = tuple(
        ToolCall(c.id, c.name, "{}", c.type) if c.id == tool_call_id else c
        for c in message.tool_calls
    )
    return message.replace(tool_calls=calls)
