"""Claude Code's auto-compact, with microcompact first (Claude Code 2.1.197, closed binary).

Read by the research from the strings of the native binary in npm
``@anthropic-ai/claude-code-linux-x64@2.1.197`` and code.claude.com/docs/en/context-window
(``/work/shared/research/policies.md`` section 2d); nothing here runs Claude Code.

* **Threshold.** ``effective_window = window - min(max_output, 20,000)`` (window and maximum
  output of the model, from ctxlab's catalog); ``threshold = effective_window - 13,000``;
  ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=p`` gives ``min(floor(effective_window * p / 100),
  threshold)``: it can only lower the threshold (anthropics/claude-code#31806). Auto-compact
  fires when the count is at or over the threshold; ``DISABLE_AUTO_COMPACT`` turns it off.
* **Count.** The last API response recorded in the chat (its input, cache-read,
  cache-creation and output tokens: that response is in the next request and is not
  estimated again) plus Claude Code's rough estimate of the messages after it: text at
  chars/4, tool inputs (JSON) at chars/2, an image or document at 2,000. Without recorded
  usage (a chat that is not a Claude Code transcript), the rough estimate of every message.
  The usage comes from the loader (:attr:`ctxlab.formats.LoadedChat.usage`), given to the
  strategy as its ``usage`` field.
* **Microcompact.** At the threshold, the results of the compactable tools (Read, Bash, Grep,
  Glob, WebFetch) except the last 5 become ``[Old tool result content cleared]``, but only
  when that saves at least 20,000 tokens (rough estimate). When the count minus what was
  cleared is under the threshold, that is all (Decision.CLEARED, a view Claude Code
  recomputes on every request).
* **Compaction.** Still at or over the threshold: the whole conversation (microcompacted) is
  sent with the 9-section compaction prompt; the ``<analysis>`` of the reply is dropped and
  the history is replaced (``replace=True``) by one user message, "This session is being
  continued from a previous conversation that ran out of context. ..." with the summary and
  the automatic-continuation sentence. Leading system messages stay (Claude Code's system
  prompt is not part of the transcript).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Self

from ctxlab.errors import SummarizerError
from ctxlab.formats import CallUsage
from ctxlab.model import Message, Role
from ctxlab.redaction import redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.clear_tool_results import stand_in_of
from ctxlab.strategies.frameworks import (
    FrameworkPolicy,
    FrameworkStrategy,
    TriggerReport,
    fresh_id,
)
from ctxlab.strategies.frameworks._anthropic import (
    CLAUDE_MODELS,
    DEFAULT_CLAUDE_MODEL,
    claude_model,
    conversation_for_summarizer,
    pretty_json,
    rough_message_tokens,
)
from ctxlab.summarizers import OfflineSummarizer, SummaryRequest

if TYPE_CHECKING:
    from ctxlab.counted import CountedChat
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "AUTOCOMPACT_BUFFER_TOKENS",
    "COMPACTABLE_TOOLS",
    "COMPACT_PROMPT",
    "CONTINUATION_SENTENCE",
    "MAX_OUTPUT_RESERVE",
    "MICROCOMPACT_KEEP_RECENT",
    "MICROCOMPACT_MIN_SAVING",
    "MICROCOMPACT_PLACEHOLDER",
    "SUMMARY_PREAMBLE",
    "ClaudeCodeAutoCompact",
    "ClaudeCodeCount",
    "autocompact_threshold",
    "claude_code_count",
    "format_compact_summary",
]

MAX_OUTPUT_RESERVE = 20_000
"""At most this much of the model's maximum output is taken off the window."""
AUTOCOMPACT_BUFFER_TOKENS = 13_000
"""Auto-compact fires this far below the effective window."""
MICROCOMPACT_KEEP_RECENT = 5
MICROCOMPACT_MIN_SAVING = 20_000
MICROCOMPACT_PLACEHOLDER = "[Old tool result content cleared]"
COMPACTABLE_TOOLS: frozenset[str] = frozenset({"Read", "Bash", "Grep", "Glob", "WebFetch"})
"""The compactable tools the research names; the binary's list goes on (see ``unpublished``)."""

SUMMARY_PREAMBLE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation."
)
CONTINUATION_SENTENCE = (
    "Continue the conversation from where it left off without asking the user any further "
    "questions."
)

# The compaction prompt, as the research describes it: a text-only turn, an <analysis> then a
# <summary> with nine sections. The section names and the opening "CRITICAL: Respond with TEXT
# ONLY" are Claude Code's; the instruction under each section is ctxlab's paraphrase (the
# research gives the sections, not their full wording): see ``unpublished``.
COMPACT_PROMPT = """CRITICAL: Respond with TEXT ONLY. Do not call any tools.

Your task is to write a detailed summary of the conversation so far, paying close attention to \
the user's explicit requests and your previous actions, so that the work can continue from the \
summary alone.

First, wrap your analysis in <analysis> tags: go through the conversation in order and note the \
user's requests, your approach, the decisions taken, file names, code, errors and the user's \
feedback. Then write the summary in <summary> tags with these sections:

1. Primary Request and Intent: every explicit request and intent of the user, in detail.
2. Key Technical Concepts: the technologies, concepts and frameworks discussed.
3. Files and Code Sections: the files and code examined, modified or created, why each \
matters, with code snippets where they are needed (most of all for the recent messages).
4. Errors and fixes: every error met and how it was fixed, with the user's feedback on it.
5. Problem Solving: the problems solved and any troubleshooting still going on.
6. All user messages: every user message that is not a tool result, with any security \
constraint the user stated quoted verbatim.
7. Pending Tasks: the tasks you were explicitly asked to do that are not done.
8. Current Work: precisely what was being worked on immediately before this summary, with \
file names and code.
9. Optional Next Step: the next step, only if it is directly in line with the user's most \
recent explicit request, with direct quotes from the most recent messages showing where the \
work left off."""

_SUMMARIZER_SYSTEM = "You are a helpful AI assistant tasked with summarizing conversations."


def autocompact_threshold(
    window: int, max_output: int, pct_override: int | None = None
) -> tuple[int, int]:
    """``(effective_window, threshold)`` of Claude Code's auto-compact.

    >>> autocompact_threshold(200_000, 64_000)
    (180000, 167000)
    >>> autocompact_threshold(200_000, 64_000, 50)
    (180000, 90000)
    """
    effective = window - min(max_output, MAX_OUTPUT_RESERVE)
    threshold = effective - AUTOCOMPACT_BUFFER_TOKENS
    if pct_override is not None:
        threshold = min(math.floor(effective * pct_override / 100), threshold)
    return effective, threshold


@dataclass(frozen=True, slots=True)
class ClaudeCodeCount:
    """Claude Code's token count of a chat.

    Attributes:
        total: the count its trigger compares.
        billed: the last recorded response's input + cache + output tokens (0 without one).
        estimated: the rough estimate of the messages after that response (or of all).
        anchor: the index of the message whose usage was used, or None.
    """

    total: int
    billed: int
    estimated: int
    anchor: int | None


def claude_code_count(
    messages: Sequence[Message], usage: Sequence[CallUsage] = ()
) -> ClaudeCodeCount:
    """The count of the module docstring: last recorded usage + rough estimate after it."""
    by_id = {u.message_id: u for u in usage}
    anchor = None
    billed = 0
    if by_id:
        for i in range(len(messages) - 1, -1, -1):
            found = by_id.get(messages[i].id)
            if found is not None:
                anchor = i
                billed = found.prompt_tokens + found.output_tokens
                break
    rest = messages[anchor + 1 :] if anchor is not None else messages
    estimated = sum(rough_message_tokens(m) for m in rest)
    return ClaudeCodeCount(billed + estimated, billed, estimated, anchor)


def _tool_names(messages: Sequence[Message]) -> list[str]:
    """The tool name of each message's result ("" for messages that are not tool results):
    its call's name (pairing by id with the nearest caller), else the message's ``name``."""
    names: list[str] = []
    calls: dict[str | None, str] = {}
    for message in messages:
        if message.role is Role.ASSISTANT and message.tool_calls:
            calls = {c.id: c.name for c in message.tool_calls}
        if message.is_tool_result:
            names.append(calls.get(message.tool_call_id) or message.name or "")
        else:
            names.append("")
    return names


@dataclass(frozen=True, slots=True)
class Microcompact:
    """Which tool results microcompact would clear, and the rough tokens that saves."""

    positions: tuple[int, ...]
    saving: int
    compactable: int

    @property
    def applies(self) -> bool:
        return bool(self.positions) and self.saving >= MICROCOMPACT_MIN_SAVING


def plan_microcompact(messages: Sequence[Message]) -> Microcompact:
    """The compactable results except the last 5 (already-cleared ones are skipped) and the
    rough tokens clearing them saves."""
    names = _tool_names(messages)
    compactable = [
        i
        for i, (m, name) in enumerate(zip(messages, names, strict=True))
        if name in COMPACTABLE_TOOLS and m.content != MICROCOMPACT_PLACEHOLDER
    ]
    old = compactable[: max(len(compactable) - MICROCOMPACT_KEEP_RECENT, 0)]
    placeholder = rough_message_tokens(Message(Role.TOOL, MICROCOMPACT_PLACEHOLDER, "placeholder"))
    saving = sum(rough_message_tokens(messages[i]) - placeholder for i in old)
    return Microcompact(tuple(old), saving, len(compactable))


_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.DOTALL)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)


def format_compact_summary(reply: str) -> str:
    """The summarizer's reply as Claude Code keeps it: ``<analysis>`` dropped, the
    ``<summary>`` body under ``Summary:``; a reply without tags is kept as it is."""
    text = _ANALYSIS.sub("", reply)
    found = _SUMMARY.search(text)
    if found is not None:
        text = _SUMMARY.sub(f"Summary:\n{found.group(1).strip()}", text, count=1)
    else:
        text = f"Summary:\n{text.strip()}"
    return re.sub(r"\n\n+", "\n\n", text).strip()


def _preamble_end(messages: Sequence[Message]) -> int:
    end = 0
    while end < len(messages) and messages[end].role.is_instruction:
        end += 1
    return end


@dataclass(frozen=True, slots=True)
class ClaudeCodeAutoCompact(FrameworkStrategy):
    """Claude Code's auto-compact (see the module docstring)."""

    name: ClassVar[str] = "claude-code-auto-compact"
    title: ClassVar[str] = "Claude Code · auto-compact"
    summary: ClassVar[str] = (
        "At the model window − min(max output, 20,000) − 13,000 tokens, clear old file and "
        "shell results, then summarize the whole conversation into one user message."
    )
    explanation: ClassVar[str] = (
        "Claude Code counts the last API response's usage plus a chars/4 estimate of newer "
        "messages. At its threshold (167,000 tokens for a 200,000-token model with at least "
        "20,000 output tokens) it first clears old results of Read, Bash, Grep, Glob and "
        "WebFetch (keeping the last five) when that saves 20,000 tokens or more; if the chat is "
        "still over, the whole conversation is summarized with a nine-section prompt and "
        "replaced by one user message that begins 'This session is being continued from a "
        "previous conversation that ran out of context.'"
    )
    uses_summarizer: ClassVar[bool] = True
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Claude Code",
        component="auto-compact + microcompact",
        version="Claude Code 2.1.197",
        source=(
            "strings of the native binary (npm @anthropic-ai/claude-code-linux-x64@2.1.197); "
            "code.claude.com/docs/en/context-window"
        ),
        evidence="code",
        counter=(
            "the last API response's usage (input + cache read + cache creation + output) plus "
            "chars/4 of newer messages (tool inputs chars/2, images 2,000); chars/4 of every "
            "message when the chat records no usage"
        ),
        persists="state",
        unpublished=(
            "The compaction prompt: the nine section names, the 'CRITICAL: Respond with TEXT "
            "ONLY' opening and the <analysis>/<summary> layout are Claude Code's; the "
            "instructions under each section are ctxlab's paraphrase.",
            "The summarizer's system prompt ('You are a helpful AI assistant tasked with "
            "summarizing conversations.') is not in the research read of 2.1.197.",
            "The automatic-continuation text: only its first sentence is reproduced; the "
            "transcript-path sentence is left out (ctxlab has no transcript path).",
            "Compactable tools: the research names Read, Bash, Grep, Glob and WebFetch and its "
            "list goes on ('…'); others (WebSearch, Edit, Write, MCP tools, see "
            "anthropics/claude-code#57788) may be cleared too and are not here.",
            "When microcompact runs: here at the auto-compact threshold, before the summary; "
            "text results that Claude Code persists to a file (<persisted-output>) are "
            "cleared here instead.",
            "The last response's output tokens are added to its input tokens (that reply is "
            "in the next request); the research lists input and cache tokens only.",
            "Not reproduced: re-attached files (up to 5 recently read, 5,000 tokens each, "
            "50,000 in all), invoked skills, the plan, task status, CLAUDE.md and memory, "
            "which Claude Code re-reads from disk after compacting (ctxlab sees no files), "
            "and the compact_boundary marker (a transcript record, not sent to the model).",
            "The summarizer receives the conversation as text messages (tool calls and "
            "results written out); Claude Code sends its Anthropic content blocks.",
        ),
        known_issues=(
            "anthropics/claude-code#31806: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE can only lower the "
            "threshold, never raise it.",
            "anthropics/claude-code#57788: microcompact clears MCP tool results silently.",
            "anthropics/claude-code#28728: the context can overshoot the threshold before "
            "compacting, then the compaction request itself is too long.",
        ),
    )

    model: str = param(
        DEFAULT_CLAUDE_MODEL,
        label="Model",
        help="The Claude model; its window and maximum output (ctxlab's catalog) set the "
        "threshold.",
        choices=CLAUDE_MODELS,
    )
    autocompact_pct_override: int | None = param(
        None,
        label="CLAUDE_AUTOCOMPACT_PCT_OVERRIDE (%)",
        help="Compact at this percentage of the effective window; it can only lower the "
        "threshold (empty: not set).",
        min=1,
        max=100,
        step=1,
    )
    disable_auto_compact: bool = param(
        False,
        label="DISABLE_AUTO_COMPACT",
        help="Turn auto-compact (and its microcompact) off.",
    )
    redact_tool_content: bool = param(
        False,
        label="Redact tool content",
        help="ctxlab's redaction, off by default: Claude Code sends tool results as they are.",
    )
    redact_secrets: bool = param(
        False,
        label="Mask secrets",
        help="ctxlab's redaction of credential-looking text, off by default: Claude Code "
        "does not mask anything.",
    )
    # The usage the transcript recorded (LoadedChat.usage): Claude Code's count starts from
    # the last response's billed tokens. Not a parameter: it belongs to the chat.
    usage: tuple[CallUsage, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        check_params(self)
        claude_model(self.model)
        object.__setattr__(self, "usage", tuple(self.usage))

    def with_recorded_usage(self, usage: Sequence[CallUsage]) -> Self:
        return dataclasses.replace(self, usage=tuple(usage))

    # --- the framework's numbers ----------------------------------------------------------

    def thresholds(self) -> tuple[int, int, int]:
        """``(window, effective_window, threshold)`` for :attr:`model`."""
        info = claude_model(self.model)
        effective, threshold = autocompact_threshold(
            info.context_window, info.max_output, self.autocompact_pct_override
        )
        return info.context_window, effective, threshold

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return claude_code_count(messages, self.usage).total

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        info = claude_model(self.model)
        window, effective, threshold = self.thresholds()
        count = claude_code_count(messages, self.usage)
        exact = counter.count_messages(messages)
        reserve = min(info.max_output, MAX_OUTPUT_RESERVE)
        how = f"window {window:,} − {reserve:,} output − {AUTOCOMPACT_BUFFER_TOKENS:,}"
        if self.autocompact_pct_override is not None:
            how += (
                f", lowered by CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={self.autocompact_pct_override}"
                if threshold < effective - AUTOCOMPACT_BUFFER_TOKENS
                else f"; CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={self.autocompact_pct_override} "
                "cannot raise it"
            )
        basis = " (chars/4: the chat records no usage)"
        if count.anchor is not None:
            # The recorded usage covers Claude Code's own system prompt and tools, which the
            # transcript does not hold: not an estimate to hold against ctxlab's count.
            basis = ""
            exact_shown: int | None = None
            usage_note = (
                " That is the last API response's usage, which includes Claude Code's own "
                f"system prompt and tools; the transcript itself is {exact:,} by ctxlab's count."
            )
        else:
            exact_shown, usage_note = exact, ""
        if self.disable_auto_compact:
            return TriggerReport(
                fires=False,
                threshold=None,
                unit="tokens",
                estimate=count.total,
                exact=exact_shown,
                text=f"Never fires: DISABLE_AUTO_COMPACT is set; this chat is at "
                f"{count.total:,} tokens{basis}.{usage_note}",
                framework="Claude Code",
            )
        fires = count.total >= threshold
        verb = "Fires now" if fires else "Fires"
        return TriggerReport(
            fires=fires,
            threshold=threshold,
            unit="tokens",
            estimate=count.total,
            exact=exact_shown,
            text=f"{verb} at {threshold:,} tokens on {self.model} ({how}); this chat is at "
            f"{count.total:,}{basis}.{usage_note}",
            framework="Claude Code",
        )

    def config_code(self) -> str:
        env: dict[str, str] = {}
        if self.autocompact_pct_override is not None:
            env["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] = str(self.autocompact_pct_override)
        if self.disable_auto_compact:
            env["DISABLE_AUTO_COMPACT"] = "1"
        settings: dict[str, object] = {"model": self.model}
        if env:
            settings["env"] = env
        lines = [
            "// ~/.claude/settings.json (or .claude/settings.json in the project)",
            pretty_json(settings),
        ]
        if env:
            lines += ["", "# or in the shell, before starting claude:"]
            lines += [f"export {k}={v}" for k, v in env.items()]
        else:
            lines += ["", "# auto-compact is on by default (the autoCompactEnabled setting)"]
        return "\n".join(lines)

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        threshold = self.thresholds()[2]
        return (
            f"Claude Code's own settings on {self.model}: auto-compact at {threshold:,} "
            f"tokens (this chat: {chat.total:,} by ctxlab's count)"
        )

    # --- apply ----------------------------------------------------------------------------

    def summary_request(self, messages: Sequence[Message], model: str = "") -> SummaryRequest:
        """The request Claude Code sends to compact ``messages`` (after microcompact): the
        conversation, then the compaction prompt as the last user message."""
        start = _preamble_end(messages)
        conversation, counts = conversation_for_summarizer(
            messages[start:],
            redact_tool_content=self.redact_tool_content,
            redact_secrets=self.redact_secrets,
        )
        system = _SUMMARIZER_SYSTEM
        prompt = COMPACT_PROMPT
        if self.redact_secrets:
            prompt = redact_patterns(prompt).text
        return SummaryRequest(
            messages=(
                {"role": "system", "content": system},
                *conversation,
                {"role": "user", "content": prompt},
            ),
            model=model,
            redactions=counts,
        )

    def request_preview(
        self, messages: Sequence[Message], counter: TokenCounter, model: str | None = None
    ) -> SummaryRequest | None:
        """The request :meth:`apply` would send, or None when it would not summarize."""
        plan = self._plan(messages)
        if plan is None or not plan[1]:
            return None
        return self.summary_request(plan[0], model or "")

    def _plan(
        self, messages: Sequence[Message]
    ) -> tuple[tuple[Message, ...], bool, Microcompact] | None:
        """None under the threshold; else the microcompacted messages, whether a summary is
        still needed, and the microcompact plan."""
        if self.disable_auto_compact or _preamble_end(messages) == len(messages):
            return None
        _, _, threshold = self.thresholds()
        count = claude_code_count(messages, self.usage)
        if count.total < threshold:
            return None
        micro = plan_microcompact(messages)
        working = tuple(messages)
        after = count.total
        if micro.applies:
            cleared = set(micro.positions)
            working = tuple(
                stand_in_of(m, MICROCOMPACT_PLACEHOLDER) if i in cleared else m
                for i, m in enumerate(messages)
            )
            after -= micro.saving
        return working, after >= threshold, micro

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        before = counter.count_messages(messages)
        plan = self._plan(messages)
        if plan is None:
            return TrimResult(
                messages=tuple(messages),
                decisions=dict.fromkeys((m.id for m in messages), Decision.KEPT),
                tokens_before=before,
                tokens_after=before,
                strategy=self.name,
            )
        working, summarize, micro = plan
        _, _, threshold = self.thresholds()
        cleared_ids = {messages[i].id for i in micro.positions} if micro.applies else set()
        notes: list[str] = []
        if micro.applies:
            notes.append(
                f"Microcompact cleared {len(micro.positions):,} old tool results (about "
                f"{micro.saving:,} tokens by Claude Code's estimate), keeping the last "
                f"{MICROCOMPACT_KEEP_RECENT}."
            )
        elif micro.positions:
            notes.append(
                f"Microcompact skipped: clearing {len(micro.positions):,} old tool results "
                f"would save about {micro.saving:,} tokens, under its "
                f"{MICROCOMPACT_MIN_SAVING:,}-token minimum."
            )
        if not summarize:
            stand_ins = tuple(m for m in working if m.id in cleared_ids)
            decisions = {
                m.id: Decision.CLEARED if m.id in cleared_ids else Decision.KEPT for m in messages
            }
            return TrimResult(
                messages=working,
                decisions=decisions,
                tokens_before=before,
                tokens_after=counter.count_messages(working),
                inserted=stand_ins,
                warnings=(
                    *notes,
                    f"Microcompact brought the chat under the {threshold:,}-token threshold: "
                    "no summary.",
                ),
                strategy=self.name,
            )
        if summarizer is None:
            summarizer = OfflineSummarizer()
            notes.insert(
                0,
                "No summarizer was configured: the offline extractive summarizer (no LLM) "
                "wrote the summary.",
            )
        request = self.summary_request(working, summarizer.model)
        try:
            reply = summarizer.summarize(request).text
        except SummarizerError as exc:
            return self._untouched(messages, before, request, (*notes, f"{exc}"))
        except Exception as exc:  # a summarizer that broke the protocol
            detail = redact_patterns(str(exc)).text[:200]
            return self._untouched(
                messages,
                before,
                request,
                (
                    *notes,
                    f"The summarizer failed ({type(exc).__name__}: {detail}); nothing was changed.",
                ),
            )
        if not reply.strip():
            return self._untouched(
                messages,
                before,
                request,
                (*notes, "The summarizer returned an empty summary; nothing was changed."),
            )
        start = _preamble_end(messages)
        content = f"{SUMMARY_PREAMBLE}\n{format_compact_summary(reply)}\n\n{CONTINUATION_SENTENCE}"
        summary = Message(
            Role.USER,
            content,
            _summary_id(messages),
            is_summary=True,
            extra=(("claude_code_compact_summary", True),),
        )
        out = (*messages[:start], summary)
        decisions = dict.fromkeys((m.id for m in messages[:start]), Decision.PINNED)
        decisions.update(dict.fromkeys((m.id for m in messages[start:]), Decision.SUMMARIZED))
        return TrimResult(
            messages=out,
            decisions=decisions,
            tokens_before=before,
            tokens_after=counter.count_messages(out),
            inserted=(summary,),
            replace=True,
            summary_request=request,
            warnings=(
                *notes,
                "Claude Code would also re-attach up to 5 recently read files (5,000 tokens "
                "each, 50,000 in all), skills, the plan, tasks and CLAUDE.md, read again from "
                "disk: not reproduced here.",
            ),
            strategy=self.name,
        )

    def _untouched(
        self,
        messages: Sequence[Message],
        before: int,
        request: SummaryRequest,
        warnings: Sequence[str],
    ) -> TrimResult:
        return TrimResult(
            messages=tuple(messages),
            decisions=dict.fromkeys((m.id for m in messages), Decision.KEPT),
            tokens_before=before,
            tokens_after=before,
            summary_request=request,
            warnings=tuple(warnings),
            strategy=self.name,
        )


def _summary_id(messages: Sequence[Message]) -> str:
    return fresh_id(messages, f"claude-code-summary-{len(messages)}")
