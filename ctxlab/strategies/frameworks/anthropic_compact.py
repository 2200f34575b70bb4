"""Anthropic's server-side compaction ``compact_20260112``, as documented (a server feature).

Source: platform.claude.com/docs/en/build-with-claude/compaction, beta header
``compact-2026-01-12``; research section 2c.

* **Trigger** ``{"type": "input_tokens", "value": 150000}`` (the default; the minimum is
  50,000): when the prompt reaches it, the API summarizes the conversation first.
* **instructions**: replace the default summarization prompt (which Anthropic does not
  publish: ctxlab sends a stand-in of its own, named as such).
* **pause_after_compaction**: the response stops after the compaction block (stop reason
  ``compaction``) so the client can add messages before continuing.
* The response starts with a ``compaction`` block holding the summary; the client appends it
  to its history, and on later requests the API ignores everything before that block. Here the
  block is an assistant message marked ``is_summary`` (extra ``anthropic_compaction``) that
  replaces everything before it (``replace=True``); a later compaction summarizes from it.
  Leading system messages stay: they are the request's ``system``, not its messages.

The SDK's client-side ``compaction_control`` (``tool_runner``; threshold 100,000 total tokens,
summary in ``<summary></summary>``) is not reproduced here: its count is the last response's
usage, and its prompt lives in the SDKs, not in the research.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ctxlab.errors import SummarizerError
from ctxlab.model import CompactionMeta, Message, Role
from ctxlab.redaction import redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import (
    FrameworkPolicy,
    FrameworkStrategy,
    TriggerReport,
    fresh_id,
)
from ctxlab.strategies.frameworks._anthropic import conversation_for_summarizer, pretty_json
from ctxlab.summarizers import OfflineSummarizer, SummaryRequest

if TYPE_CHECKING:
    from ctxlab.counted import CountedChat
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "BETA_HEADER",
    "COMPACTION_KEY",
    "MINIMUM_TRIGGER",
    "STAND_IN_PROMPT",
    "AnthropicCompact",
    "CompactEdit",
    "latest_compaction",
]

BETA_HEADER = "compact-2026-01-12"
MINIMUM_TRIGGER = 50_000
COMPACTION_KEY = "anthropic_compaction"

STAND_IN_PROMPT = (
    "[ctxlab's stand-in: Anthropic does not publish its default compaction prompt.] "
    "Summarize the conversation above so that it can continue from your summary alone: the "
    "user's requests and constraints, what was done and decided, the state of the work, and "
    "what remains to do."
)


def latest_compaction(messages: Sequence[Message]) -> int | None:
    """The index of the last compaction block of ``messages`` (the API ignores what comes
    before it), or None."""
    for i in range(len(messages) - 1, -1, -1):
        if any(k == COMPACTION_KEY and v for k, v in messages[i].extra):
            return i
    return None


def _preamble_end(messages: Sequence[Message]) -> int:
    end = 0
    while end < len(messages) and messages[end].role.is_instruction:
        end += 1
    return end


@dataclass(frozen=True, slots=True)
class CompactEdit:
    """The options of the ``compact_20260112`` edit, with Anthropic's names."""

    trigger: int = param(
        150_000,
        label="Trigger (input tokens)",
        help="Compact when the prompt reaches this many input tokens (Anthropic's default "
        "150,000; the minimum is 50,000).",
        min=MINIMUM_TRIGGER,
        step=1000,
        unit="tokens",
    )
    instructions: str = param(
        "",
        label="Instructions",
        help="Replace the default summarization prompt (empty: the default, which Anthropic "
        "does not publish).",
        multiline=True,
    )
    pause_after_compaction: bool = param(
        False,
        label="Pause after compaction",
        help="Stop the response after the compaction block, so you can add messages first.",
    )

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True, slots=True)
class AnthropicCompact(FrameworkStrategy):
    """``compact_20260112`` (see the module docstring)."""

    name: ClassVar[str] = "anthropic-compact"
    title: ClassVar[str] = "Anthropic API · compaction"
    summary: ClassVar[str] = (
        "At 150,000 input tokens the API summarizes the conversation into a compaction block; "
        "later requests ignore everything before it."
    )
    explanation: ClassVar[str] = (
        "Anthropic's server-side compaction: when the prompt reaches the trigger, the API "
        "writes a summary of the conversation, returns it as a compaction block at the start "
        "of its response, and ignores everything before that block on the following requests. "
        "instructions replace the default prompt; pause_after_compaction stops the response "
        "after the block."
    )
    uses_summarizer: ClassVar[bool] = True
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Anthropic API",
        component="compaction compact_20260112",
        version=f"beta {BETA_HEADER}",
        source="platform.claude.com/docs/en/build-with-claude/compaction",
        evidence="docs",
        counter=(
            "Anthropic's tokenizer, on the server; ctxlab counts with the counter of the chosen "
            "model instead"
        ),
        persists="server",
        unpublished=(
            "The default compaction prompt: with instructions empty, ctxlab sends a stand-in "
            "prompt of its own, which says so.",
            "How the server lays out the conversation for its summarizer: ctxlab sends the "
            "messages as text, then the prompt as a user message.",
            "The SDK's client-side compaction_control is not reproduced.",
        ),
    )

    # Nested so that Anthropic's option name ``trigger`` does not hide trigger().
    edit: CompactEdit = field(default_factory=lambda: CompactEdit())
    redact_tool_content: bool = param(
        False,
        label="Redact tool content",
        help="ctxlab's redaction, off by default: the API sends tool results as they are.",
    )
    redact_secrets: bool = param(
        False,
        label="Mask secrets",
        help="ctxlab's redaction of credential-looking text, off by default.",
    )

    def _visible(self, messages: Sequence[Message]) -> int:
        """Where the prompt the API reads starts: the latest compaction block, else 0."""
        found = latest_compaction(messages)
        return found if found is not None else 0

    def _prompt(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        """What the API reads: leading system messages, then from the latest compaction."""
        start = self._visible(messages)
        pinned = _preamble_end(messages)
        return (*messages[:pinned], *messages[max(start, pinned) :])

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return counter.count_messages(self._prompt(messages))

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        count = counter.count_messages(self._prompt(messages))
        fires = count >= self.edit.trigger
        default = " (Anthropic's default)" if self.edit.trigger == 150_000 else ""
        verb = "Fires now" if fires else "Fires"
        text = (
            f"{verb} at {self.edit.trigger:,} input tokens{default}; this chat is at "
            f"{count:,} (ctxlab's count: Anthropic tokenizes on the server)."
        )
        return TriggerReport(fires, self.edit.trigger, "tokens", count, count, text, "Anthropic")

    def config_code(self) -> str:
        edit: dict[str, Any] = {
            "type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": self.edit.trigger},
        }
        if self.edit.instructions:
            edit["instructions"] = self.edit.instructions
        if self.edit.pause_after_compaction:
            edit["pause_after_compaction"] = True
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "messages": ["..."],
            "context_management": {"edits": [edit]},
        }
        return (
            "# POST https://api.anthropic.com/v1/messages\n"
            f"# anthropic-beta: {BETA_HEADER}\n" + pretty_json(body)
        )

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        return (
            f"Anthropic's default: compact at {self.edit.trigger:,} input tokens (this chat: "
            f"{chat.total:,} by ctxlab's count)"
        )

    def summary_request(self, messages: Sequence[Message], model: str = "") -> SummaryRequest:
        """The conversation the API summarizes (from the latest compaction block), then the
        prompt: ``instructions``, or ctxlab's stand-in for the unpublished default."""
        start = max(self._visible(messages), _preamble_end(messages))
        conversation, counts = conversation_for_summarizer(
            messages[start:],
            redact_tool_content=self.redact_tool_content,
            redact_secrets=self.redact_secrets,
        )
        system = "\n\n".join(m.content for m in messages[: _preamble_end(messages)])
        prompt = self.edit.instructions or STAND_IN_PROMPT
        if self.redact_secrets:
            system, prompt = redact_patterns(system).text, redact_patterns(prompt).text
        head = ({"role": "system", "content": system},) if system else ()
        return SummaryRequest(
            messages=(*head, *conversation, {"role": "user", "content": prompt}),
            model=model,
            redactions=counts,
        )

    def request_preview(
        self, messages: Sequence[Message], counter: TokenCounter, model: str | None = None
    ) -> SummaryRequest | None:
        """The request :meth:`apply` would send, or None when it would not compact."""
        if not self.trigger_report(messages, counter).fires:
            return None
        return self.summary_request(messages, model or "")

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        before = counter.count_messages(messages)
        pinned = _preamble_end(messages)
        visible = self._visible(messages)
        decisions = dict.fromkeys((m.id for m in messages[:pinned]), Decision.PINNED)
        # The API ignores everything before the latest compaction block.
        decisions.update(dict.fromkeys((m.id for m in messages[pinned:visible]), Decision.DROPPED))
        decisions.update(
            dict.fromkeys((m.id for m in messages[max(pinned, visible) :]), Decision.KEPT)
        )
        prompt = self._prompt(messages)
        notes: list[str] = []
        if visible > pinned:
            notes.append(
                f"The API ignores the {visible - pinned:,} messages before the latest "
                "compaction block."
            )
        untouched = TrimResult(
            prompt,
            decisions,
            before,
            counter.count_messages(prompt),
            warnings=tuple(notes),
            strategy=self.name,
        )
        if not self.trigger_report(messages, counter).fires or max(pinned, visible) == len(
            messages
        ):
            return untouched
        if summarizer is None:
            summarizer = OfflineSummarizer()
            notes.append(
                "No summarizer was configured: the offline extractive summarizer (no LLM) "
                "wrote the summary."
            )
        request = self.summary_request(messages, summarizer.model)
        try:
            reply = summarizer.summarize(request).text.strip()
        except SummarizerError as exc:
            reply, failure = "", str(exc)
        except Exception as exc:  # a summarizer that broke the protocol
            reply = ""
            failure = f"The summarizer failed ({type(exc).__name__}: "
            failure += f"{redact_patterns(str(exc)).text[:200]}); nothing was changed."
        else:
            failure = "The summarizer returned an empty summary; nothing was changed."
        if not reply:
            return TrimResult(
                prompt,
                decisions,
                before,
                untouched.tokens_after,
                summary_request=request,
                warnings=(*notes, failure),
                strategy=self.name,
            )
        found = latest_compaction(messages)
        previous = messages[found].id if found is not None else None
        block = Message(
            Role.ASSISTANT,
            reply,
            _block_id(messages),
            is_summary=True,
            compaction_meta=CompactionMeta(
                tail_start_id=None, previous_compaction_id=previous, summary_text=reply
            ),
            extra=((COMPACTION_KEY, True),),
        )
        for m in messages[max(pinned, visible) :]:
            decisions[m.id] = Decision.SUMMARIZED
        out = (*messages[:pinned], block)
        if self.edit.pause_after_compaction:
            notes.append(
                "pause_after_compaction: the response stops after the compaction block (stop "
                "reason 'compaction'); your client may add messages before continuing."
            )
        return TrimResult(
            out,
            decisions,
            before,
            counter.count_messages(out),
            inserted=(block,),
            replace=True,
            summary_request=request,
            warnings=tuple(notes),
            strategy=self.name,
        )


def _block_id(messages: Sequence[Message]) -> str:
    return fresh_id(messages, f"compaction-block-{len(messages)}")
