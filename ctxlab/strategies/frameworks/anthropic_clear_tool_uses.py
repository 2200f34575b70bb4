"""Anthropic's context editing ``clear_tool_uses_20250919``, as documented (a server feature).

Source: platform.claude.com/docs/en/build-with-claude/context-editing ("Configuration options
for tool result clearing"), beta header ``context-management-2025-06-27``; research section 2a.

* **Trigger** ``{"type": "input_tokens", "value": 100000}`` (the default) or
  ``{"type": "tool_uses", "value": N}``: clearing begins once the prompt *exceeds* it.
* **Keep** ``{"type": "tool_uses", "value": 3}``: the most recent tool uses (call + result)
  stay; older ones are cleared, oldest first, results replaced by a placeholder.
* **clear_at_least** ``{"type": "input_tokens", "value": N}``: if clearing cannot remove that
  many tokens, the edit is **not applied** at all ("skip unless"; LangChain's
  ``ClearToolUsesEdit.clear_at_least`` instead stops clearing once that much is reclaimed).
* **exclude_tools**: tool names never cleared. **clear_tool_inputs**: also clear the calls'
  inputs, for every tool (``true``) or for the tools listed.

The API edits the prompt on the server; the client keeps the full history (``replace=False``,
``persists="server"``). Anthropic's tokenizer runs on the server only, so the trigger and the
savings are counted with the counter ctxlab is given (its count for the chosen model).

ctxlab's own :class:`~ctxlab.strategies.clear_tool_results.ClearToolResults` is an
Anthropic-style strategy with ctxlab's names; this module keeps Anthropic's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.clear_tool_results import stand_in_of
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._anthropic import pretty_json

if TYPE_CHECKING:
    from ctxlab.counted import CountedChat
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "BETA_HEADER",
    "CLEARED_INPUT",
    "PLACEHOLDER",
    "AnthropicClearToolUses",
    "ClearToolUsesEdit",
    "ToolUse",
    "parse_trigger",
    "tool_uses",
]

BETA_HEADER = "context-management-2025-06-27"
PLACEHOLDER = "[tool result cleared by Anthropic context editing]"
"""ctxlab's stand-in text: Anthropic does not publish the placeholder's wording."""
CLEARED_INPUT = "{}"

TriggerKind = Literal["input_tokens", "tool_uses"]


def parse_trigger(text: str) -> tuple[TriggerKind, int]:
    """``"input_tokens=100000"`` or ``"tool_uses=30"`` as ``(type, value)``."""
    kind, sep, raw = text.strip().partition("=")
    kind = kind.strip()
    try:
        value = int(raw.strip().replace("_", "").replace(",", ""))
    except ValueError:
        value = -1
    if not sep or kind not in ("input_tokens", "tool_uses") or value < 1:
        raise ParameterError(
            f"Trigger (trigger) must be input_tokens=N or tool_uses=N with N >= 1, got {text!r}"
        )
    return kind, value  # type: ignore[return-value]


def _names(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call of the chat and the message answering it.

    Attributes:
        caller: index of the assistant message making the call; ``call``: its index there.
        name: the tool's name.
        result: index of the result message, or None (not answered yet).
    """

    caller: int
    call: int
    name: str
    result: int | None


def tool_uses(messages: Sequence[Message]) -> list[ToolUse]:
    """Every tool call of ``messages`` in order, each with its result (a result pairs with the
    nearest earlier assistant message that made calls, by ``tool_call_id``, as the API pairs
    ``tool_result`` blocks with the ``tool_use`` blocks of the turn before)."""
    uses: list[ToolUse] = []
    open_calls: dict[str | None, int] = {}  # call id -> index in uses, for the last caller
    for i, message in enumerate(messages):
        if message.role is Role.ASSISTANT and message.tool_calls:
            open_calls = {}
            for j, call in enumerate(message.tool_calls):
                open_calls.setdefault(call.id, len(uses))
                uses.append(ToolUse(i, j, call.name, None))
        elif message.is_tool_result:
            k = open_calls.pop(message.tool_call_id, None)
            if k is not None:
                use = uses[k]
                uses[k] = ToolUse(use.caller, use.call, use.name, i)
    return uses


@dataclass(frozen=True, slots=True)
class ClearToolUsesEdit:
    """The options of one ``clear_tool_uses_20250919`` edit, with Anthropic's names."""

    trigger: str = param(
        "input_tokens=100000",
        label="Trigger",
        help="input_tokens=N (the prompt exceeds N tokens) or tool_uses=N (more than N tool "
        "uses). Anthropic's default: input_tokens=100000.",
    )
    keep: int = param(
        3,
        label="Keep (tool uses)",
        help="The most recent tool uses whose results stay (keep.type tool_uses).",
        min=0,
        step=1,
        unit="tool_results",
    )
    clear_at_least: int | None = param(
        None,
        label="Clear at least (input tokens)",
        help="Skip the edit entirely unless it clears at least this many tokens (empty: no "
        "minimum).",
        min=1,
        step=100,
        unit="tokens",
    )
    exclude_tools: str = param(
        "",
        label="Exclude tools",
        help="Comma-separated tool names whose uses are never cleared.",
    )
    clear_tool_inputs: str = param(
        "false",
        label="Clear tool inputs",
        help="false, true (every cleared use), or comma-separated tool names whose inputs are "
        "cleared too.",
    )

    def __post_init__(self) -> None:
        check_params(self)
        parse_trigger(self.trigger)
        self.inputs_rule()

    def inputs_rule(self) -> bool | tuple[str, ...]:
        """``clear_tool_inputs`` parsed: True/False, or the tool names whose inputs clear."""
        text = self.clear_tool_inputs.strip()
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        names = _names(text)
        if not names:
            raise ParameterError(
                "Clear tool inputs (clear_tool_inputs) must be true, false or tool names, "
                f"got {self.clear_tool_inputs!r}"
            )
        return names


@dataclass(frozen=True, slots=True)
class AnthropicClearToolUses(FrameworkStrategy):
    """``clear_tool_uses_20250919`` (see the module docstring)."""

    name: ClassVar[str] = "anthropic-clear-tool-uses"
    title: ClassVar[str] = "Anthropic API · clear_tool_uses"
    summary: ClassVar[str] = (
        "Past 100,000 input tokens, the API replaces all but the last 3 tool results with a "
        "placeholder; clear_at_least skips the edit unless that much can be cleared."
    )
    explanation: ClassVar[str] = (
        "Anthropic's context editing runs on the server: once the prompt exceeds the trigger "
        "(100,000 input tokens by default, or a number of tool uses), the oldest tool results "
        "are replaced by placeholder text, keeping the most recent 'keep' tool uses and the "
        "tools in exclude_tools; clear_tool_inputs also empties the calls' inputs. With "
        "clear_at_least, the edit is skipped unless it clears at least that many tokens (worth "
        "the prompt-cache invalidation it causes). The client keeps its full history."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Anthropic API",
        component="context editing clear_tool_uses_20250919",
        version=f"beta {BETA_HEADER}",
        source="platform.claude.com/docs/en/build-with-claude/context-editing",
        evidence="docs",
        counter=(
            "Anthropic's tokenizer, on the server; ctxlab counts with the counter of the chosen "
            "model instead"
        ),
        persists="server",
        unpublished=(
            f"The placeholder's wording: ctxlab writes {PLACEHOLDER!r}.",
            "What a cleared tool input becomes: ctxlab writes {}.",
            "Whether 'keep' counts the uses of excluded tools: here it counts every tool use.",
            "Anthropic's token counts: the server tokenizes, ctxlab's counter only approximates "
            "it (the count_tokens endpoint gives the real figure).",
        ),
    )

    # In an options dataclass so that Anthropic's option name ``trigger`` does not hide the
    # strategy's trigger() method; the parameters' names stay Anthropic's.
    edit: ClearToolUsesEdit = field(default_factory=lambda: ClearToolUsesEdit())

    def _clears_input(self, name: str) -> bool:
        rule = self.edit.inputs_rule()
        return rule if isinstance(rule, bool) else name in rule

    # --- trigger --------------------------------------------------------------------------

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return counter.count_messages(messages)

    def _fires(self, messages: Sequence[Message], counter: TokenCounter) -> tuple[bool, int]:
        kind, value = parse_trigger(self.edit.trigger)
        measure = (
            counter.count_messages(messages) if kind == "input_tokens" else len(tool_uses(messages))
        )
        return measure > value, measure

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        kind, value = parse_trigger(self.edit.trigger)
        fires, measure = self._fires(messages, counter)
        exact = counter.count_messages(messages)
        default = " (Anthropic's default)" if self.edit.trigger == "input_tokens=100000" else ""
        verb = "Fires now" if fires else "Fires"
        if kind == "input_tokens":
            text = (
                f"{verb} above {value:,} input tokens{default}; this chat is at {measure:,} "
                f"(ctxlab's count: Anthropic tokenizes on the server)."
            )
            unit = "tokens"
        else:
            text = f"{verb} above {value:,} tool uses; this chat has {measure:,}."
            unit = "tool uses"
        return TriggerReport(fires, value, unit, measure, exact, text, "Anthropic")

    def config_code(self) -> str:
        kind, value = parse_trigger(self.edit.trigger)
        edit: dict[str, Any] = {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": kind, "value": value},
            "keep": {"type": "tool_uses", "value": self.edit.keep},
        }
        if self.edit.clear_at_least is not None:
            edit["clear_at_least"] = {"type": "input_tokens", "value": self.edit.clear_at_least}
        if _names(self.edit.exclude_tools):
            edit["exclude_tools"] = list(_names(self.edit.exclude_tools))
        rule = self.edit.inputs_rule()
        if rule is not False:
            edit["clear_tool_inputs"] = rule if isinstance(rule, bool) else list(rule)
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "messages": ["..."],
            "tools": ["..."],
            "context_management": {"edits": [edit]},
        }
        return (
            "# POST https://api.anthropic.com/v1/messages\n"
            f"# anthropic-beta: {BETA_HEADER}\n" + pretty_json(body)
        )

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        return (
            f"Anthropic's defaults: trigger {self.edit.trigger}, keep {self.edit.keep} tool "
            f"uses (this chat: {chat.total:,} tokens by ctxlab's count)"
        )

    # --- apply ----------------------------------------------------------------------------

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        before = counter.count_messages(messages)
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        untouched = TrimResult(tuple(messages), decisions, before, before, strategy=self.name)
        fires, _ = self._fires(messages, counter)
        if not fires:
            return untouched
        uses = tool_uses(messages)
        excluded = set(_names(self.edit.exclude_tools))
        old = uses[: max(len(uses) - self.edit.keep, 0)]
        placeholder_tokens = counter.count_text(PLACEHOLDER)
        empty_tokens = counter.count_text(CLEARED_INPUT)
        clear_results: set[int] = set()
        clear_inputs: dict[int, set[int]] = {}
        cleared = 0
        saved = 0
        for use in old:
            if use.name in excluded:
                continue
            did = False
            if use.result is not None and messages[use.result].content != PLACEHOLDER:
                clear_results.add(use.result)
                saved += counter.count_text(messages[use.result].content) - placeholder_tokens
                did = True
            arguments = messages[use.caller].tool_calls[use.call].arguments
            if self._clears_input(use.name) and arguments != CLEARED_INPUT:
                clear_inputs.setdefault(use.caller, set()).add(use.call)
                saved += counter.count_text(arguments) - empty_tokens
                did = True
            cleared += did
        if not cleared:
            return untouched
        if self.edit.clear_at_least is not None and saved < self.edit.clear_at_least:
            return TrimResult(
                tuple(messages),
                decisions,
                before,
                before,
                warnings=(
                    f"Not applied: clearing {cleared:,} tool uses would clear {saved:,} "
                    f"tokens, under clear_at_least ({self.edit.clear_at_least:,}); Anthropic skips "
                    "the edit unless it clears at least that much.",
                ),
                strategy=self.name,
            )
        out: list[Message] = []
        inserted: list[Message] = []
        for i, message in enumerate(messages):
            if i in clear_results:
                new = stand_in_of(message, PLACEHOLDER)
            elif i in clear_inputs:
                calls = tuple(
                    c.__class__(c.id, c.name, CLEARED_INPUT, c.type) if j in clear_inputs[i] else c
                    for j, c in enumerate(message.tool_calls)
                )
                new = message.replace(tool_calls=calls)
            else:
                out.append(message)
                continue
            out.append(new)
            inserted.append(new)
            decisions[message.id] = Decision.CLEARED
        after = counter.count_messages(out)
        return TrimResult(
            tuple(out),
            decisions,
            before,
            after,
            inserted=tuple(inserted),
            warnings=(
                f"Cleared {cleared:,} tool uses, oldest first, keeping the last {self.edit.keep:,} "
                f"(applied_edits: cleared_tool_uses={cleared}, cleared_input_tokens about "
                f"{saved:,} by ctxlab's count). The placeholder's wording is ctxlab's: "
                "Anthropic does not publish it.",
            ),
            strategy=self.name,
        )
