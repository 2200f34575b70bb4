"""Aider's ``ChatSummary`` (Aider-AI/aider @ 5dc9490b, 0.86.3.dev), ported from its source.

``aider/history.py``: after each exchange Aider checks its ``done_messages`` (the chat history;
its system prompt, files and repo map are rebuilt every turn and never summarized); when they
count more than ``max_chat_history_tokens`` (``aider/models.py``: ``min(max(max_input_tokens /
16, 1024), 8192)``, or ``--max-chat-history-tokens``), ``summarize`` runs ``summarize_real``:
with at most 4 messages, or deeper than 3 recursions, everything is summarized; otherwise the
tail is the newest messages summing under half the budget, the split moves back until the head
ends on an assistant message (everything is summarized when that leaves at most 4 messages in
the head), the head (cut to the model's max input − 512 tokens) is summarized into one user
message, and when summary + tail still do not fit under the budget the whole thing recurses.
``summarize`` then appends an assistant ``"Ok."`` when the last message is not the
assistant's. Each message counts as ``token_count(message)`` of Aider's first (weak) model: the
tokens of ``json.dumps(message)``; a summary list counts with ``litellm.token_counter``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.catalog import CATALOG
from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import Message, Role
from ctxlab.redaction import redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.summarizers import OfflineSummarizer, SummaryRequest

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "SUMMARIZE_PROMPT",
    "SUMMARY_PREFIX",
    "AiderChatSummary",
    "max_chat_history_tokens",
    "summarize_all_request",
]

# aider/prompts.py @ 5dc9490b (Aider-AI/aider, Apache-2.0): ``summarize``.
SUMMARIZE_PROMPT = """*Briefly* summarize this partial conversation about programming.
Include less detail about older parts and more detail about the most recent messages.
Start a new paragraph every time the topic changes!

This is only part of a longer conversation so *DO NOT* conclude the summary with language like "Finally, ...". Because the conversation continues after the summary.
The summary *MUST* include the function names, libraries, packages that are being discussed.
The summary *MUST* include the filenames that are being referenced by the assistant inside the ```...``` fenced code blocks!
The summaries *MUST NOT* include ```...``` fenced code blocks!

Phrase the summary with the USER in first person, telling the ASSISTANT about the conversation.
Write *as* the user.
The user should refer to the assistant as *you*.
Start the summary with "I asked you...".
"""  # noqa: E501

# aider/prompts.py @ 5dc9490b: ``summary_prefix``.
SUMMARY_PREFIX = "I spoke to you previously about a number of things.\n"

MIN_SPLIT = 4  # history.py: min_split
MAX_DEPTH = 3  # history.py: recursion stops (summarize_all) when depth > 3
DEFAULT_MAX_INPUT = 4096  # history.py: max_input_tokens fallback
INPUT_RESERVE = 512  # history.py: "reserve buffer for safety"


def max_chat_history_tokens(max_input_tokens: int) -> float:
    """``aider/models.py``: 1/16 of the model's max input tokens, at least 1k, at most 8k (a
    float, as Aider computes it)."""
    return min(max(max_input_tokens / 16, 1024), 8192)


def _aider_dict(message: Message) -> dict[str, str]:
    """The message as Aider holds it in ``done_messages``: role and content only (Aider
    sends no tool calls; a tool call's arguments are not part of its history)."""
    return {"role": message.role.value, "content": message.content}


def summarize_all_request(messages: Sequence[dict[str, str]]) -> SummaryRequest:
    """``ChatSummary.summarize_all``'s request: USER and ASSISTANT messages as ``# ROLE``
    sections (other roles skipped), after the summarize system prompt."""
    content = ""
    for msg in messages:
        role = msg["role"].upper()
        if role not in ("USER", "ASSISTANT"):
            continue
        content += f"# {role}\n"
        content += msg["content"]
        if not content.endswith("\n"):
            content += "\n"
    return SummaryRequest(
        messages=(
            {"role": "system", "content": SUMMARIZE_PROMPT},
            {"role": "user", "content": content},
        )
    )


@dataclass(frozen=True, slots=True)
class _Entry:
    """One message of the list ``summarize_real`` works on: an original message (its index)
    or a summary Aider wrote (``index`` None), with the originals it covers."""

    data: dict[str, str]
    index: int | None
    covers: tuple[int, ...] = ()


class _Run:
    """One ``ChatSummary.summarize`` call: the summarizer requests it sends, in order."""

    def __init__(
        self,
        counter: TokenCounter,
        summarizer: Summarizer,
        max_tokens: float,
        max_input: int,
        redact: bool,
    ) -> None:
        self.counter = counter
        self.summarizer = summarizer
        self.max_tokens = max_tokens
        self.max_input = max_input
        self.redact = redact
        self.requests: list[SummaryRequest] = []
        self.dropped: set[int] = set()

    def tokens(self, entry: _Entry) -> int:
        # Model.token_count(dict): len(tokenizer(json.dumps(message)))
        return self.counter.count_text(json.dumps(entry.data))

    def summary_tokens(self, summary: _Entry) -> int:
        # Model.token_count(list): litellm.token_counter(messages=[summary])
        message = Message(Role.USER, summary.data["content"], "aider-summary-count")
        return self.counter.count_messages([message])

    def summarize_all(self, entries: Sequence[_Entry]) -> _Entry:
        request = summarize_all_request([e.data for e in entries])
        if self.redact:
            masked = redact_patterns(request.messages[1]["content"])
            request = SummaryRequest(
                messages=(request.messages[0], {"role": "user", "content": masked.text}),
                redactions=dict(masked.counts),
            )
        self.requests.append(request)
        covers = tuple(
            i for e in entries for i in ((e.index,) if e.index is not None else e.covers)
        )
        name = getattr(self.summarizer, "name", type(self.summarizer).__name__)
        try:
            reply = self.summarizer.summarize(request).text
        except SummarizerError:
            raise
        except Exception as exc:  # a summarizer that broke the protocol
            raise SummarizerError(f"the {name} summarizer failed ({type(exc).__name__})") from exc
        return _Entry({"role": "user", "content": SUMMARY_PREFIX + reply}, None, covers)

    def summarize_real(self, entries: list[_Entry], depth: int = 0) -> list[_Entry]:
        sized = [self.tokens(e) for e in entries]
        total = sum(sized)
        if total <= self.max_tokens and depth == 0:
            return entries
        if len(entries) <= MIN_SPLIT or depth > MAX_DEPTH:
            return [self.summarize_all(entries)]
        tail_tokens = 0
        split_index = len(entries)
        half_max_tokens = self.max_tokens // 2
        for i in range(len(sized) - 1, -1, -1):
            if tail_tokens + sized[i] < half_max_tokens:
                tail_tokens += sized[i]
                split_index = i
            else:
                break
        # the head ends with an assistant message
        while entries[split_index - 1].data["role"] != "assistant" and split_index > 1:
            split_index -= 1
        if split_index <= MIN_SPLIT:
            return [self.summarize_all(entries)]
        tail = entries[split_index:]
        keep: list[_Entry] = []
        running = 0
        for tokens, entry in zip(sized[:split_index], entries[:split_index], strict=True):
            running += tokens
            if running > self.max_input - INPUT_RESERVE:
                break
            keep.append(entry)
        for entry in entries[len(keep) : split_index]:
            # over the summarizer's input: neither summarized nor kept
            self.dropped.update((entry.index,) if entry.index is not None else entry.covers)
        summary = self.summarize_all(keep)
        if self.summary_tokens(summary) + sum(sized[split_index:]) < self.max_tokens:
            return [summary, *tail]
        return self.summarize_real([summary, *tail], depth + 1)


@dataclass(frozen=True, slots=True)
class AiderChatSummary(FrameworkStrategy):
    """Aider's chat-history summary: over ``max_chat_history_tokens`` the older messages become
    one user message, recursively. Rewrites the history (state)."""

    name: ClassVar[str] = "aider-chat-summary"
    title: ClassVar[str] = "Aider · chat history summary"
    summary: ClassVar[str] = (
        "Aider's ChatSummary: over max_chat_history_tokens (1/16 of the model's input, 1k-8k), "
        "older messages become one user message 'I spoke to you previously about…'."
    )
    explanation: ClassVar[str] = (
        "Aider keeps its chat history under max_chat_history_tokens: 1/16 of the model's input "
        "window, at least 1,024 and at most 8,192 tokens (--max-chat-history-tokens overrides "
        "it). When the history grows past it, a background thread keeps the newest messages "
        "that fit in half the budget (cut after an assistant message) and asks the weak model "
        "to summarize the rest; the summary becomes a user message starting 'I spoke to you "
        "previously about a number of things.', followed by an assistant 'Ok.' when needed. If "
        "the summary and the tail still do not fit, it summarizes again, up to 3 levels deep. "
        "Aider's system prompt, files and repo map are rebuilt every turn and never summarized."
    )
    uses_summarizer: ClassVar[bool] = True
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Aider",
        component="ChatSummary",
        version="aider 0.86.3.dev (Aider-AI/aider @ 5dc9490b)",
        source="aider/history.py (ChatSummary), aider/prompts.py (summarize, summary_prefix), "
        "aider/models.py (max_chat_history_tokens, token_count), aider/coders/base_coder.py "
        "(summarize_start/summarize_end)",
        evidence="code",
        counter="each message as json.dumps of its role and content, counted with ctxlab's "
        "counter for the model (Aider uses litellm's tokenizer for its weak model); a summary "
        "as litellm.token_counter, i.e. OpenAI's chat accounting",
        persists="state",
        unpublished=(
            "Tokens are counted with ctxlab's counter for the chosen model in place of "
            "litellm's tokenizer for Aider's weak model; max_input_tokens is ctxlab's catalog "
            "context window of the model (litellm's max_input_tokens).",
            "The whole chat is taken as done_messages after its last exchange; a leading "
            "system message is Aider's own system prompt (rebuilt every turn), pinned.",
            "Aider holds role and content only: tool calls are not part of its history, and "
            "tool results are counted but left out of the summarizer's transcript.",
            "Aider summarizes in a background thread and applies the result only if the history "
            "did not change meanwhile; ctxlab applies it at once.",
        ),
        known_issues=(
            "Read from the code (aider/coders/base_coder.py summarize_worker/summarize_end): "
            "when every summarizer model fails, Aider replaces done_messages with an empty list, "
            "losing the history; ctxlab keeps the history and warns instead.",
        ),
    )

    model: str = param(
        "gpt-4o",
        label="Model (--model)",
        help="Aider's main model: max_chat_history_tokens is 1/16 of its input window "
        "(1,024 to 8,192) unless set below.",
        choices=tuple(CATALOG.names()),
    )
    max_chat_history_tokens: int | None = param(
        None,
        label="Max chat history tokens (tokens)",
        help="--max-chat-history-tokens: the soft limit after which Aider summarizes. Empty: "
        "the model's max_chat_history_tokens.",
        min=1,
        step=256,
        unit="tokens",
    )
    redact_patterns: bool = param(
        False,
        label="Redact secrets in the summarizer request",
        help="ctxlab's redaction of the text sent to the summarizer (Aider sends it as is).",
    )

    def __post_init__(self) -> None:
        value = self.max_chat_history_tokens
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ParameterError(f"max_chat_history_tokens must be a whole number, got {value!r}")
        check_params(self)
        if CATALOG.get(self.model) is None:
            raise ParameterError(f"model: unknown model {self.model!r}")

    @property
    def max_input_tokens(self) -> int:
        info = CATALOG.get(self.model)
        return info.context_window if info is not None else DEFAULT_MAX_INPUT

    @property
    def budget(self) -> float:
        """``args.max_chat_history_tokens or main_model.max_chat_history_tokens``."""
        if self.max_chat_history_tokens:
            return self.max_chat_history_tokens
        return max_chat_history_tokens(self.max_input_tokens)

    @staticmethod
    def _split(messages: Sequence[Message]) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
        pinned = tuple(messages[:1]) if messages and messages[0].role.is_instruction else ()
        return pinned, tuple(messages[len(pinned) :])

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int:
        """Aider's count of ``done_messages``: ``json.dumps`` of each message, summed."""
        _, done = self._split(messages)
        return sum(counter.count_text(json.dumps(_aider_dict(m))) for m in done)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        pinned, done = self._split(messages)
        before = counter.count_messages(messages)
        untouched = TrimResult(
            messages=tuple(messages),
            decisions={
                m.id: Decision.PINNED if i < len(pinned) else Decision.KEPT
                for i, m in enumerate(messages)
            },
            tokens_before=before,
            tokens_after=before,
            strategy=self.name,
        )
        if self.estimate(messages, counter) <= self.budget:  # summarizer.too_big(...)
            return untouched
        notes: tuple[str, ...] = ()
        if summarizer is None:
            summarizer = OfflineSummarizer()
            notes = (
                "No summarizer was configured: the offline extractive summarizer (no LLM) "
                "wrote the summary.",
            )
        run = _Run(counter, summarizer, self.budget, self.max_input_tokens, self.redact_patterns)
        entries = [_Entry(_aider_dict(m), i) for i, m in enumerate(done)]
        try:
            final = run.summarize_real(entries)
        except SummarizerError as exc:
            return TrimResult(
                messages=untouched.messages,
                decisions=untouched.decisions,
                tokens_before=before,
                tokens_after=before,
                summary_request=run.requests[-1] if run.requests else None,
                warnings=(
                    f"The summarizer failed ({exc}): the history is left untouched. Aider "
                    "itself would empty its chat history here (summarize_end keeps the empty "
                    "result).",
                ),
                strategy=self.name,
            )
        out: list[Message] = list(pinned)
        inserted: list[Message] = []
        kept: set[int] = set()
        for entry in final:
            if entry.index is not None:
                out.append(done[entry.index])
                kept.add(entry.index)
            else:
                summary = Message(
                    Role.USER, entry.data["content"], self._id("summary", entry.data["content"])
                )
                out.append(summary)
                inserted.append(summary)
        if out and out[-1].role is not Role.ASSISTANT:
            ok = Message(Role.ASSISTANT, "Ok.", self._id("ok", out[-1].id))
            out.append(ok)
            inserted.append(ok)
        decisions: dict[str, Decision] = {m.id: Decision.PINNED for m in pinned}
        for i, m in enumerate(done):
            if i in kept:
                decisions[m.id] = Decision.KEPT
            elif i in run.dropped:
                decisions[m.id] = Decision.DROPPED
            else:
                decisions[m.id] = Decision.SUMMARIZED
        warnings: list[str] = list(notes)
        if len(run.requests) > 1:
            warnings.append(
                f"Aider asked the summarizer {len(run.requests)} times (summary and tail did "
                "not fit the budget, so it summarized again); the request shown is the last."
            )
        if run.dropped:
            warnings.append(
                f"{len(run.dropped):,} message(s) of the head exceed the summarizer's input "
                f"({self.max_input_tokens:,} − 512 tokens): Aider neither summarizes nor "
                "keeps them."
            )
        return TrimResult(
            messages=tuple(out),
            decisions=decisions,
            tokens_before=before,
            tokens_after=counter.count_messages(out),
            inserted=tuple(inserted),
            replace=True,
            summary_request=run.requests[-1] if run.requests else None,
            warnings=tuple(warnings),
            strategy=self.name,
        )

    @staticmethod
    def _id(kind: str, seed: str) -> str:
        return f"aider-{kind}-{hashlib.sha256(seed.encode()).hexdigest()[:12]}"

    def _budget_words(self) -> str:
        if self.max_chat_history_tokens:
            return f"--max-chat-history-tokens {self.max_chat_history_tokens:,}"
        return (
            f"max_chat_history_tokens {self.budget:,.0f} on {self.model} "
            f"(input {self.max_input_tokens:,} / 16, within 1,024-8,192)"
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        estimate = self.estimate(messages, counter)
        exact = counter.count_messages(messages)
        fires = estimate > self.budget
        verb = "Summarizes" if fires else "Would summarize"
        text = (
            f"{verb} above {self._budget_words()}; Aider counts {estimate:,} tokens of chat "
            f"history (each message as JSON, {counter.label}); the model sees {exact:,} with "
            "the system prompt."
        )
        return TriggerReport(
            fires=fires,
            threshold=int(self.budget),
            unit="tokens",
            estimate=estimate,
            exact=exact,
            text=text,
            framework="Aider",
        )

    def config_code(self) -> str:
        lines = ["# .aider.conf.yml", f"model: {self.model}"]
        flags = f"aider --model {self.model}"
        if self.max_chat_history_tokens:
            lines.append(f"max-chat-history-tokens: {self.max_chat_history_tokens}")
            flags += f" --max-chat-history-tokens {self.max_chat_history_tokens}"
        lines += ["", "# or on the command line:", f"# {flags}"]
        return "\n".join(lines) + "\n"
