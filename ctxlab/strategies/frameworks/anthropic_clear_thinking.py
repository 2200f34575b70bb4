"""Anthropic's context editing ``clear_thinking_20251015``, as documented (a server feature).

Source: platform.claude.com/docs/en/build-with-claude/context-editing ("Thinking block
clearing"), beta header ``context-management-2025-06-27``; research section 2b.

``keep`` is ``{"type": "thinking_turns", "value": N}`` (N > 0) or ``"all"``; left out, the
default depends on the model: Opus 4.5 and later, Sonnet 4.6 and later (and later families)
keep all thinking; earlier Opus and Sonnet models and every Haiku keep the last assistant turn's
only. An assistant turn runs from one user message to the next (the docs: a turn "may include
multiple content blocks (e.g. when using tools) and multiple thinking blocks"), so the
assistant messages of one tool-use loop are one turn.

Thinking lives in a message's ``extra`` (``thinking``: the blocks as read,
:mod:`ctxlab.formats._messages`); ctxlab counts no thinking of earlier turns, since the API
strips it from the context on models that do not keep it. So clearing changes no ctxlab
count: the saving is the thinking's own size, shown apart (chars/4 of its text), and it is a
real saving only on a model that would otherwise keep that thinking in context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._anthropic import (
    CLAUDE_MODELS,
    DEFAULT_CLAUDE_MODEL,
    pretty_json,
    rough_tokens,
)

if TYPE_CHECKING:
    from ctxlab.counted import CountedChat
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "BETA_HEADER",
    "AnthropicClearThinking",
    "default_keep",
    "parse_keep",
    "thinking_tokens",
    "thinking_turns",
]

BETA_HEADER = "context-management-2025-06-27"
THINKING_KEY = "thinking"

_MODEL = re.compile(
    r"claude-(?:(?P<family>opus|sonnet|haiku|fable)-(?P<major>\d+)(?:-(?P<minor>\d{1,2})(?!\d))?"
    r"|(?P<old_major>\d+)-(?P<old_minor>\d+)-(?P<old_family>opus|sonnet|haiku))"
)


def default_keep(model: str) -> int | None:
    """The thinking turns ``model`` keeps by default: None for all (Opus 4.5+, Sonnet 4.6+,
    later families), else 1 (earlier Opus and Sonnet, every Haiku, unknown models).

    >>> default_keep("claude-opus-4-5"), default_keep("claude-sonnet-4-5")
    (None, 1)
    """
    found = _MODEL.search(model)
    if found is None:
        return 1
    family = found.group("family") or found.group("old_family")
    major = int(found.group("major") or found.group("old_major"))
    minor = int(found.group("minor") or found.group("old_minor") or 0)
    if family == "haiku":
        return 1
    if family == "fable":  # a family later than Opus 4.5 (Fable 5 onwards)
        return None
    first_keeping_all = (4, 5) if family == "opus" else (4, 6)
    return None if (major, minor) >= first_keeping_all else 1


def parse_keep(text: str) -> int | str | None:
    """``"default"`` (left out: the model's default), ``"all"`` (None) or
    ``"thinking_turns=N"`` (N >= 1; a bare N is accepted too)."""
    value = text.strip()
    if value in ("default", ""):
        return "default"
    if value == "all":
        return None
    raw = value.removeprefix("thinking_turns=").strip()
    if raw.isdigit() and int(raw) >= 1:
        return int(raw)
    raise ParameterError(
        f"Keep (keep) must be default, all or thinking_turns=N with N >= 1, got {text!r}"
    )


def _thinking(message: Message) -> list[Any]:
    for key, value in message.extra:
        if key == THINKING_KEY and isinstance(value, list) and value:
            return value
    return []


def thinking_turns(messages: Sequence[Message]) -> list[list[int]]:
    """The assistant turns that hold thinking, oldest first, each as the indexes of its
    assistant messages that hold thinking."""
    turns: list[list[int]] = []
    current: list[int] = []
    for i, message in enumerate(messages):
        if message.role is Role.USER:
            if current:
                turns.append(current)
            current = []
        elif message.role is Role.ASSISTANT and _thinking(message):
            current.append(i)
    if current:
        turns.append(current)
    return turns


def thinking_tokens(message: Message) -> int:
    """chars/4 of the thinking text of ``message`` (a redacted block: of its opaque data)."""
    total = 0
    for block in _thinking(message):
        if isinstance(block, dict):
            text = block.get("thinking") or block.get("data") or block.get("value") or ""
            total += rough_tokens(text if isinstance(text, str) else "")
    return total


@dataclass(frozen=True, slots=True)
class AnthropicClearThinking(FrameworkStrategy):
    """``clear_thinking_20251015`` (see the module docstring)."""

    name: ClassVar[str] = "anthropic-clear-thinking"
    title: ClassVar[str] = "Anthropic API · clear_thinking"
    summary: ClassVar[str] = (
        "The API drops the thinking blocks of all but the last N assistant turns; the default "
        "depends on the model (Opus 4.5+ and Sonnet 4.6+ keep all)."
    )
    explanation: ClassVar[str] = (
        "With extended thinking on, Anthropic's clear_thinking edit removes thinking blocks "
        "from earlier assistant turns on the server, keeping the last N turns' thinking (or "
        "all). Kept thinking preserves the prompt cache; clearing invalidates it from the first "
        "cleared block. ctxlab never counts the thinking of earlier turns, so the saving is "
        "shown apart as the thinking's own size."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Anthropic API",
        component="context editing clear_thinking_20251015",
        version=f"beta {BETA_HEADER}",
        source="platform.claude.com/docs/en/build-with-claude/context-editing",
        evidence="docs",
        counter="none: it acts on every request with thinking (turns are counted, not tokens)",
        persists="server",
        unpublished=(
            "What marks a cleared turn in the prompt: ctxlab drops the thinking blocks and "
            "shows the message without them.",
            "A 'thinking turn' is read as the assistant messages from one user message to the "
            "next (one tool-use loop) that hold thinking.",
            "Model defaults for models outside ctxlab's catalog follow the documented rule by "
            "name (Opus 4.5+, Sonnet 4.6+ and later families keep all).",
        ),
    )

    model: str = param(
        DEFAULT_CLAUDE_MODEL,
        label="Model",
        help="The Claude model: it sets the default of keep.",
        choices=CLAUDE_MODELS,
    )
    keep: str = param(
        "default",
        label="Keep",
        help="default (the model's: all on Opus 4.5+ / Sonnet 4.6+, else 1), all, or "
        "thinking_turns=N.",
    )

    def __post_init__(self) -> None:
        check_params(self)
        parse_keep(self.keep)

    def kept_turns(self) -> int | None:
        """The thinking turns kept (None: all), the model's default when ``keep`` is left out."""
        keep = parse_keep(self.keep)
        return default_keep(self.model) if keep == "default" else keep  # type: ignore[return-value]

    def _keep_words(self) -> str:
        kept = self.kept_turns()
        what = (
            "all thinking"
            if kept is None
            else f"the last {kept:,} thinking turn" + ("s" if kept != 1 else "")
        )
        if parse_keep(self.keep) == "default":
            return f"{what} ({self.model}'s default)"
        return what

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return None

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        turns = len(thinking_turns(messages))
        kept = self.kept_turns()
        exact = counter.count_messages(messages)
        if kept is None:
            text = (
                f"Never clears: keeps {self._keep_words()}; this chat has {turns:,} thinking turns."
            )
            return TriggerReport(False, None, "thinking turns", turns, exact, text, "Anthropic")
        fires = turns > kept
        verb = "Clears now" if fires else "Clears"
        text = (
            f"{verb} when more than {kept:,} assistant turns hold thinking: keeps "
            f"{self._keep_words()}; this chat has {turns:,}."
        )
        return TriggerReport(fires, kept, "thinking turns", turns, exact, text, "Anthropic")

    def config_code(self) -> str:
        edit: dict[str, Any] = {"type": "clear_thinking_20251015"}
        keep = parse_keep(self.keep)
        if keep is None:
            edit["keep"] = "all"
        elif keep != "default":
            edit["keep"] = {"type": "thinking_turns", "value": keep}
        body = {
            "model": self.model,
            "max_tokens": 16000,
            "thinking": {"type": "enabled", "budget_tokens": 10000},
            "messages": ["..."],
            "context_management": {"edits": [edit]},
        }
        note = "" if keep != "default" else "# keep left out: the model's default applies\n"
        return (
            "# POST https://api.anthropic.com/v1/messages\n"
            f"# anthropic-beta: {BETA_HEADER}\n" + note + pretty_json(body)
        )

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        turns = len(thinking_turns(chat.messages))
        return (
            f"Anthropic's default for {self.model}: keeps {self._keep_words()}; this chat has "
            f"{turns:,} thinking turns"
        )

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        before = counter.count_messages(messages)
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        turns = thinking_turns(messages)
        kept = self.kept_turns()
        if kept is None or len(turns) <= kept:
            return TrimResult(tuple(messages), decisions, before, before, strategy=self.name)
        cleared = {i for turn in turns[: len(turns) - kept] for i in turn}
        out: list[Message] = []
        inserted: list[Message] = []
        thinking = 0
        for i, message in enumerate(messages):
            if i not in cleared:
                out.append(message)
                continue
            thinking += thinking_tokens(message)
            new = message.replace(
                extra=tuple((k, v) for k, v in message.extra if k != THINKING_KEY)
            )
            out.append(new)
            inserted.append(new)
            decisions[message.id] = Decision.CLEARED
        after = counter.count_messages(out)
        n = len(turns) - kept
        warning = (
            f"Cleared the thinking of {n:,} earlier assistant turn{'s' if n != 1 else ''} "
            f"({len(cleared):,} messages, about {thinking:,} tokens of thinking by chars/4), "
            f"keeping {self._keep_words()}. ctxlab counts no thinking of earlier turns, so its "
            "token counts do not move: the request is smaller by about that much only on a "
            "model that keeps earlier thinking in context (Opus 4.5+, Sonnet 4.6+); on others "
            "the API drops it anyway. Clearing invalidates the prompt cache from the first "
            "cleared block."
        )
        return TrimResult(
            tuple(out),
            decisions,
            before,
            after,
            inserted=tuple(inserted),
            warnings=(warning,),
            strategy=self.name,
        )
