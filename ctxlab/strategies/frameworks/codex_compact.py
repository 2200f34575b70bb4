"""Codex CLI's local compaction (``openai/codex``, ``codex-rs/core/src/compact.rs``), ported.

Sources (Apache-2.0), read at these commits:

* ``codex-rs/core/src/compact.rs`` @ e06dd0e5d5694c24968bf49b62466cdedae04aaa:
  ``run_compact_task_inner`` (the summarizer request: the history plus the compact prompt as a
  user message), ``collect_user_messages`` / ``is_summary_message``,
  ``build_compacted_history_with_limit`` with ``COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000``;
* ``codex-rs/core/templates/compact/prompt.md`` @ 11baefb5 and ``summary_prefix.md`` @
  50a53333 (quoted below);
* ``codex-rs/utils/string/src/truncate.rs`` @ b24d7f3c9a1acadc145019747224f7312bc9b3b4:
  ``approx_token_count`` (UTF-8 bytes / 4, rounded up) and
  ``truncate_middle_with_token_budget`` (the cut of the user message that does not fit, with
  its ``…N tokens truncated…`` marker), reached through ``truncate_text(.., Tokens(n))`` of
  ``codex-rs/utils/output-truncation``;
* contextual user messages (not "real" user messages): the start/end markers of
  ``CONTEXTUAL_USER_MARKERS`` in ``codex-rs/core/src/context/contextual_user_message.rs``,
  plus the older ``<user_instructions>`` wrapper.

Trigger: ``auto_compact_limit = model_auto_compact_token_limit`` or, unset, 90% of the model's
context window; compaction runs when the total tokens reach it. After compaction the history is
the most recent real user messages (newest first within 20,000 tokens, the one that does not
fit cut in the middle, older ones gone, earlier summaries never kept) in order, then one user
message ``SUMMARY_PREFIX + "\\n" + summary``. Every assistant message, tool call and result is
gone. The system prompt (Codex's base instructions, sent as ``instructions`` on every request)
stays. Codex re-injects its initial context (developer permissions, AGENTS.md, environment
context) on the next turn; those messages are summarized here like the rest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.catalog import CATALOG, get_model
from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import Message, Role
from ctxlab.redaction import merge_counts, redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.summarizers import SummaryRequest

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "COMPACT_USER_MESSAGE_MAX_TOKENS",
    "SUMMARIZATION_PROMPT",
    "SUMMARY_PREFIX",
    "CodexCompact",
    "approx_token_count",
    "collect_user_messages",
    "is_real_user_message",
    "select_user_messages",
    "truncate_middle_with_token_budget",
]

# codex-rs/core/templates/compact/prompt.md @ 11baefb5 (openai/codex, Apache-2.0)
SUMMARIZATION_PROMPT = (
    "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another "
    "LLM that will resume the task.\n"
    "\n"
    "Include:\n"
    "- Goal / user objective\n"
    "- Current progress and key decisions made\n"
    "- Important context, constraints, or user preferences\n"
    "- What remains to be done (clear next steps)\n"
    "- Any critical data, examples, or references needed to continue\n"
    "\n"
    "Be concise, structured, and focused on helping the next LLM seamlessly continue the work.\n"
)
# codex-rs/core/templates/compact/summary_prefix.md @ 50a53333 (openai/codex, Apache-2.0);
# the double space before "assist" is Codex's own.
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. You also have access to the state of the tools that were used by that "
    "language model. Use this to build on the work that has already been done and avoid "
    "duplicating work. Here is the summary produced by the other language model, use the "
    "information in this summary to  assist with your own analysis:"
)
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000
APPROX_BYTES_PER_TOKEN = 4
# codex-rs/core/src/compact.rs, run_compact_task_inner
COMPACTION_WARNING = (
    "Heads up: Long threads and multiple compactions can cause the model to be less accurate. "
    "Start a new thread when possible to keep threads small and targeted."
)
# CONTEXTUAL_USER_MARKERS (codex-rs/core/src/context/contextual_user_message.rs), plus the
# older <user_instructions> wrapper of AGENTS.md: matched on the trimmed text, ignoring case.
CONTEXTUAL_USER_MARKERS: tuple[tuple[str, str], ...] = (
    ("# AGENTS.md instructions for ", "</INSTRUCTIONS>"),
    ("<user_instructions>", "</user_instructions>"),
    ("<agents_instructions>", "</agents_instructions>"),
    ("<environment_context>", "</environment_context>"),
    ("<multiagent_context>", "</multiagent_context>"),
    ("<skill>", "</skill>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<subagent_notification>", "</subagent_notification>"),
    ("<goal_context>", "</goal_context>"),
)
_OPENAI_MODELS = tuple(m.name for m in CATALOG if m.provider == "openai")


def approx_token_count(text: str) -> int:
    """Codex's ``approx_token_count``: UTF-8 bytes / 4, rounded up."""
    return -(-len(text.encode()) // APPROX_BYTES_PER_TOKEN)


def _is_boundary(data: bytes, at: int) -> bool:
    return at >= len(data) or (data[at] & 0xC0) != 0x80


def truncate_middle_with_token_budget(text: str, max_tokens: int) -> str:
    """Codex's ``truncate_middle_with_token_budget(text, max_tokens).0``: the first and last
    ``max_tokens * 4 / 2`` bytes (on character boundaries) around ``…N tokens truncated…``,
    N = (bytes removed) / 4 rounded up."""
    data = text.encode()
    if not data:
        return ""
    max_bytes = max_tokens * APPROX_BYTES_PER_TOKEN
    if max_tokens > 0 and len(data) <= max_bytes:
        return text
    if max_bytes == 0:
        return f"…{approx_token_count(text)} tokens truncated…"
    left = max_bytes // 2
    right = max_bytes - left
    prefix_end = left
    while prefix_end > 0 and not _is_boundary(data, prefix_end):
        prefix_end -= 1
    suffix_start = len(data) - right
    while not _is_boundary(data, suffix_start):
        suffix_start += 1
    suffix_start = max(suffix_start, prefix_end)
    removed = -(-(len(data) - max_bytes) // APPROX_BYTES_PER_TOKEN)
    head = data[:prefix_end].decode()
    tail = data[suffix_start:].decode()
    return f"{head}…{removed} tokens truncated…{tail}"


def _is_contextual(text: str) -> bool:
    trimmed = text.strip().lower()
    return any(
        trimmed.startswith(start.lower()) and trimmed.endswith(end.lower())
        for start, end in CONTEXTUAL_USER_MARKERS
    )


def is_real_user_message(message: Message) -> bool:
    """A user message Codex keeps through compaction: not one of its contextual messages, not
    an earlier summary (``SUMMARY_PREFIX + "\\n"``), not a remote compaction item."""
    if message.role is not Role.USER:
        return False
    if dict(message.extra).get("codex_compaction_summary"):
        return False
    return not _is_contextual(message.content) and not message.content.startswith(
        SUMMARY_PREFIX + "\n"
    )


def collect_user_messages(messages: Sequence[Message]) -> list[int]:
    """Positions of the real user messages, in order (``collect_user_messages``)."""
    return [i for i, m in enumerate(messages) if is_real_user_message(m)]


def select_user_messages(
    texts: Sequence[str], max_tokens: int = COMPACT_USER_MESSAGE_MAX_TOKENS
) -> list[tuple[int, str]]:
    """``build_compacted_history_with_limit``'s selection: ``(index in texts, text kept)``,
    newest first within ``max_tokens`` (bytes / 4), the first that does not fit cut in the
    middle, then back in order."""
    selected: list[tuple[int, str]] = []
    if max_tokens > 0:
        remaining = max_tokens
        for index in range(len(texts) - 1, -1, -1):
            if remaining == 0:
                break
            tokens = approx_token_count(texts[index])
            if tokens <= remaining:
                selected.append((index, texts[index]))
                remaining -= tokens
            else:
                selected.append((index, truncate_middle_with_token_budget(texts[index], remaining)))
                break
        selected.reverse()
    return selected


def _item(message: Message) -> list[dict[str, object]]:
    """``message`` as the Responses items Codex stores (what its estimate serializes)."""
    if message.role.is_tool_result:
        return [
            {
                "type": "function_call_output",
                "call_id": message.tool_call_id or "",
                "output": message.content,
            }
        ]
    items: list[dict[str, object]] = []
    if message.content or not message.tool_calls:
        kind = "output_text" if message.role is Role.ASSISTANT else "input_text"
        items.append(
            {
                "type": "message",
                "role": message.role.value,
                "content": [{"type": kind, "text": message.content}],
            }
        )
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "name": call.name,
                "arguments": call.arguments,
                "call_id": call.id or "",
            }
        )
    return items


def codex_estimate(messages: Sequence[Message]) -> int:
    """Codex's local estimate of a history: the base instructions (a leading system message)
    by ``approx_token_count``, each other item by the bytes / 4 of its JSON."""
    total = 0
    for i, message in enumerate(messages):
        if i == 0 and message.role.is_instruction:
            total += approx_token_count(message.content)
            continue
        for item in _item(message):
            total += approx_token_count(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
    return total


def _request_text(message: Message) -> str:
    """A history message as text for the summarizer request (calls as ``name(arguments)``)."""
    parts = [message.content] if message.content else []
    parts += [f"{c.name}({c.arguments})" for c in message.tool_calls]
    return "\n".join(parts)


@dataclass(frozen=True, slots=True)
class CodexCompact(FrameworkStrategy):
    """Codex CLI's auto-compaction: at 90% of the window, keep the user's messages (20,000
    tokens, newest first) and one summary; every assistant and tool item goes."""

    name: ClassVar[str] = "codex-compact"
    title: ClassVar[str] = "Codex · auto-compaction"
    summary: ClassVar[str] = (
        "Codex CLI's compaction: your messages (up to 20,000 tokens) plus one summary."
    )
    explanation: ClassVar[str] = (
        "Codex compacts when the conversation reaches model_auto_compact_token_limit (by "
        "default 90% of the model's context window), counted with its own estimate of 4 bytes "
        "a token. It asks the model for a handoff summary with its CONTEXT CHECKPOINT "
        "COMPACTION prompt, then replaces the history with the user's own messages — newest "
        "first, up to 20,000 tokens, the one that does not fit cut in the middle — and one "
        "user message holding the summary. Every assistant message, tool call and tool result "
        "is gone. This is Codex's local compaction; with an OpenAI provider Codex asks the "
        "server's /responses/compact instead, whose output is opaque."
    )
    uses_summarizer: ClassVar[bool] = True
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Codex",
        component="compaction (compact.rs)",
        version="openai/codex codex-rs @ e06dd0e5",
        source="codex-rs/core/src/compact.rs @ e06dd0e5, templates/compact/prompt.md @ "
        "11baefb5, summary_prefix.md @ 50a53333, utils/string/src/truncate.rs @ b24d7f3c",
        evidence="code",
        counter="bytes / 4 (approx_token_count) of each stored item's JSON",
        persists="state",
        unpublished=(
            "Codex estimates an item by the bytes of its serialized JSON; ctxlab serializes "
            "its own Responses-shaped item, which can differ by a few bytes from Codex's.",
            "Codex also counts the last request's reported usage; a strategy sees only the "
            "messages, so the trigger uses the bytes / 4 estimate throughout.",
            "Codex's window comes from its model info (272,000 for GPT-5 models); ctxlab uses "
            "the catalog window minus the maximum output, or model_context_window.",
            "When the summarizer request overflows the window Codex drops the oldest items "
            "and retries; ctxlab sends the whole history.",
        ),
        known_issues=(
            "openai/codex#45296: keeping every user message (up to 20,000 tokens) can leave a "
            "large history right after compaction.",
        ),
    )

    model: str = param(
        "gpt-5",
        label="Model",
        help="The Codex model (model in config.toml): its context window sets the default limit.",
        choices=_OPENAI_MODELS,
    )
    model_context_window: int | None = param(
        None,
        label="Model context window (tokens)",
        help="model_context_window: overrides the model's window. None: the catalog window "
        "minus the maximum output (272,000 for gpt-5).",
        min=1,
        step=1000,
        unit="tokens",
    )
    model_auto_compact_token_limit: int | None = param(
        None,
        label="Auto-compact token limit (tokens)",
        help="model_auto_compact_token_limit: compact when the history reaches this many "
        "tokens (Codex's bytes/4 estimate). None: 90% of the context window.",
        min=1,
        step=1000,
        unit="tokens",
    )
    redact_patterns: bool = param(
        False,
        label="Redact secrets in the summarizer request",
        help="ctxlab's pattern redaction on the request (Codex itself does not redact).",
    )

    def __post_init__(self) -> None:
        for name in ("model_context_window", "model_auto_compact_token_limit"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ParameterError(f"{name} must be a whole number or None, got {value!r}")
        check_params(self)

    @property
    def context_window(self) -> int:
        if self.model_context_window is not None:
            return self.model_context_window
        return get_model(self.model).input_room

    @property
    def auto_compact_limit(self) -> int:
        if self.model_auto_compact_token_limit is not None:
            return self.model_auto_compact_token_limit
        return self.context_window * 9 // 10

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return codex_estimate(messages)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        estimate = codex_estimate(messages)
        limit = self.auto_compact_limit
        if self.model_auto_compact_token_limit is not None:
            where = f"{limit:,} tokens (model_auto_compact_token_limit)"
        else:
            where = f"{limit:,} tokens (90% of {self.model}'s {self.context_window:,})"
        text = f"Codex compacts at {where} by its bytes/4 estimate; this chat is at {estimate:,}."
        exact = counter.count_messages(messages)
        return TriggerReport(estimate >= limit, limit, "tokens", estimate, exact, text, "Codex")

    def summary_request(self, messages: Sequence[Message]) -> SummaryRequest:
        """What Codex sends its model: the history (base instructions as the system message)
        then the compact prompt as a user message."""
        out: list[dict[str, str]] = []
        counts: dict[str, int] = {}
        for message in messages:
            text = _request_text(message)
            if self.redact_patterns:
                masked = redact_patterns(text)
                text, counts = masked.text, merge_counts(counts, masked.counts)
            out.append({"role": message.role.value, "content": text})
        out.append({"role": "user", "content": SUMMARIZATION_PROMPT})
        return SummaryRequest(messages=tuple(out), model=self.model, redactions=counts)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        chat = counter.counted(tuple(messages))
        pinned = 1 if chat.messages and chat.messages[0].role.is_instruction else 0
        untouched = dict.fromkeys(chat.ids, Decision.KEPT)
        if pinned:
            untouched[chat.ids[0]] = Decision.PINNED

        def unchanged(*warnings: str) -> TrimResult:
            return TrimResult(
                chat.messages,
                untouched,
                chat.total,
                chat.total,
                warnings=warnings,
                strategy=self.name,
            )

        if codex_estimate(chat.messages) < self.auto_compact_limit:
            return unchanged()
        request = self.summary_request(chat.messages)
        if summarizer is None:
            return unchanged("Codex would compact here, but no summarizer is set: nothing changed.")
        try:
            reply = summarizer.summarize(request).text
        except SummarizerError as exc:
            return unchanged(f"Codex's compaction failed ({exc}); the history is unchanged.")
        summary_text = f"{SUMMARY_PREFIX}\n{reply}"
        users = collect_user_messages(chat.messages)
        selected = select_user_messages([chat.messages[i].content for i in users])
        decisions = {
            m.id: (Decision.DROPPED if is_real_user_message(m) else Decision.SUMMARIZED)
            for m in chat.messages
        }
        out: list[Message] = []
        inserted: list[Message] = []
        if pinned:
            decisions[chat.ids[0]] = Decision.PINNED
            out.append(chat.messages[0])
        for k, text in selected:
            original = chat.messages[users[k]]
            if text == original.content:
                decisions[original.id] = Decision.KEPT
                out.append(original)
            else:
                decisions[original.id] = Decision.CLEARED
                stand_in = original.replace(content=text)
                out.append(stand_in)
                inserted.append(stand_in)
        digest = hashlib.sha256(summary_text.encode()).hexdigest()[:12]
        summary = Message(
            role=Role.USER,
            content=summary_text,
            id=f"codex-summary-{digest}",
            is_summary=True,
            extra=(("codex_compaction_summary", True),),
        )
        out.append(summary)
        inserted.append(summary)
        sent = tuple(out)
        return TrimResult(
            messages=sent,
            decisions=decisions,
            tokens_before=chat.total,
            tokens_after=counter.count_messages(sent),
            inserted=tuple(inserted),
            replace=True,
            summary_request=request,
            warnings=(COMPACTION_WARNING,),
            strategy=self.name,
        )

    def config_code(self) -> str:
        lines = ["# ~/.codex/config.toml", f'model = "{self.model}"']
        if self.model_context_window is not None:
            lines.append(f"model_context_window = {self.model_context_window}")
        if self.model_auto_compact_token_limit is not None:
            lines.append(f"model_auto_compact_token_limit = {self.model_auto_compact_token_limit}")
        else:
            lines.append(
                f"# model_auto_compact_token_limit = {self.auto_compact_limit}  "
                "# the default: 90% of the context window"
            )
        return "\n".join(lines) + "\n"
