"""Summarize: fold older messages into a compaction pair (summarize_options, compaction_meta).

Over ``trigger_token_budget`` tokens (``counter.count_messages``, reply priming included), the
messages older than the last ``keep_recent_messages`` are rendered by
:func:`ctxlab.transcript.render_transcript` (redaction applied) and sent to a summarizer; they
are replaced by a *compaction pair*: a user message with ``is_compaction=True`` whose
:class:`~ctxlab.model.CompactionMeta` records where the kept tail starts, the previous compaction
and the summary text, then an assistant message with ``is_summary=True`` holding the summary.

Layout of a compacted history, which every later compaction reads back::

    [pinned preamble: leading system/developer messages]  never summarized (Decision.PINNED)
    [compaction user message][summary assistant message]  replaced by the next compaction
    [kept tail]                                           verbatim

Decisions this module takes:

* The preamble — the system/developer messages before the first other message — is pinned: it
  is the instruction the main model needs and is never sent to the summarizer. Instruction
  messages later in the chat are ordinary messages and may be folded (and redacted).
* A second compaction folds only what came after the latest compaction pair, feeds the previous
  summary to the summarizer to be *updated* (the transcript says so), links
  ``previous_compaction_id`` to the previous compaction message and marks the old pair
  SUMMARIZED: the new pair replaces it.
* The kept tail never starts inside a tool call's results: the cut moves back to the assistant
  message that made the calls, and a warning says so. A context the API would reject is a bug.
* The request is built once, by :func:`build_summary_request`; the app's preview and the call
  both use it, so the preview is byte-identical to what is sent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar, Self

from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import CompactionMeta, Message, Role
from ctxlab.redaction import RedactionPolicy, merge_counts, redact_patterns
from ctxlab.strategies.base import (
    Decision,
    ResummarizationGuard,
    ResummarizationRisk,
    Strategy,
    TrimResult,
    check_params,
    nice_fraction,
    param,
    reasons_for,
    token_default,
    token_share_note,
)
from ctxlab.summarizers import OfflineSummarizer, Summarizer, SummaryRequest
from ctxlab.transcript import render_transcript

if TYPE_CHECKING:
    from ctxlab.counted import CountedChat
    from ctxlab.tokens import TokenCounter

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "LARGE_TRANSCRIPT_TOKENS",
    "FoldPlan",
    "Summarize",
    "SummarizeOptions",
    "build_summary_request",
    "compaction_note",
    "plan_fold",
    "resummarization_risk",
    "summarize_history",
]

DEFAULT_SUMMARY_PROMPT = (
    "You summarize the earlier part of a conversation between a user and an AI assistant, "
    "including the tools it called, so that the assistant can carry on with only your summary "
    "and the most recent messages.\n"
    "\n"
    "Keep every fact, decision, constraint and user preference; names, numbers, identifiers, "
    "file paths, URLs, commands and error messages, verbatim. Say what was done and what is "
    "still pending: open tasks, unanswered questions, next steps. Drop greetings, repetition and "
    "dead ends that no longer matter.\n"
    "\n"
    "When you are given a previous summary, update it rather than rewrite it: keep what still "
    "holds, correct what changed, add what is new.\n"
    "\n"
    "Text shown as [REDACTED] or [REDACTED:<kind>] was removed on purpose: never guess it. "
    "Answer with the summary only, as compact bullet points."
)


def compaction_note(folded: int, updated: bool) -> str:
    """The human-readable content of a compaction user message."""
    plural = "message" if folded == 1 else "messages"
    text = f"[Conversation compacted: {folded} earlier {plural} summarized"
    return text + ("; the summary updates the previous one]" if updated else "]")


@dataclass(frozen=True, slots=True)
class SummarizeOptions:
    """Tunables of :func:`summarize_history` (the summarize_options seed, plus redact_patterns).

    ``redact_roles``, when non-empty, is exactly the set of redacted roles and overrides
    ``redact_tool_content``; ``tool`` also covers the legacy ``function`` role.
    """

    trigger_token_budget: int = param(
        8000,
        label="Trigger (tokens)",
        help="Summarize only when the chat is over this many tokens (reply priming included); "
        "at or under it nothing happens.",
        min=0,
        step=100,
        unit="tokens",
    )
    keep_recent_messages: int = param(
        6,
        label="Keep recent (messages)",
        help="How many of the newest messages stay verbatim. The cut moves earlier when it "
        "would separate tool results from their call.",
        min=0,
        step=1,
        unit="messages",
    )
    summary_system_prompt: str = param(
        DEFAULT_SUMMARY_PROMPT,
        label="Summary prompt",
        help="The system prompt of the summarizer call.",
        multiline=True,
    )
    summary_max_tokens: int | None = param(
        None,
        label="Summary max tokens",
        help="Cap on the summary's output tokens (max_tokens); empty for no cap.",
        min=1,
        step=50,
        unit="tokens",
    )
    redact_tool_content: bool = param(
        True,
        label="Redact tool content",
        help="Replace tool results and tool-call arguments by [REDACTED] before anything is "
        "sent to the summarizer. Ignored when 'Redact roles' is set.",
    )
    redact_roles: tuple[Role, ...] = param(
        (),
        label="Redact roles",
        help="Roles whose content is replaced by [REDACTED]; when set, exactly these roles "
        "(overrides 'Redact tool content'). 'tool' includes legacy function results.",
    )
    redact_patterns: bool = param(
        True,
        label="Mask secrets",
        help="Mask credential-looking spans (API keys, tokens, private keys, password=...) in "
        "every role before anything is sent to the summarizer.",
    )

    def __post_init__(self) -> None:
        try:
            roles = tuple(dict.fromkeys(Role(r) for r in self.redact_roles))
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"Redact roles (redact_roles): {exc}") from None
        object.__setattr__(self, "redact_roles", roles)
        check_params(self)
        if not self.summary_system_prompt.strip():
            raise ParameterError("Summary prompt (summary_system_prompt) must not be empty")

    @property
    def redaction(self) -> RedactionPolicy:
        """What the transcript masks under these options."""
        return RedactionPolicy.from_options(
            self.redact_tool_content, self.redact_roles, self.redact_patterns
        )


@dataclass(frozen=True, slots=True)
class FoldPlan:
    """Which messages one summarization pins, replaces, folds and keeps (in chat order).

    Attributes:
        pinned: the leading system/developer messages; they stay in front.
        replaced: the previous compaction pair, replaced by the new one (empty when none).
        folded: the messages rendered into the transcript (empty: nothing to summarize).
        kept: the tail kept verbatim.
        previous_compaction_id: id of the previous compaction user message, or None.
        previous_summary: the summary being updated, or None.
        tokens_before: ``counter.count_messages`` of the input.
        folded_tokens: tokens of the folded messages (about the size of the transcript).
        warnings: sentences for the user (e.g. the cut moved to keep a tool call whole).
    """

    pinned: tuple[Message, ...]
    replaced: tuple[Message, ...]
    folded: tuple[Message, ...]
    kept: tuple[Message, ...]
    previous_compaction_id: str | None
    previous_summary: str | None
    tokens_before: int
    folded_tokens: int = 0
    warnings: tuple[str, ...] = field(default=())


# Above this many folded tokens, say that the transcript may not fit a summarizer model.
LARGE_TRANSCRIPT_TOKENS = 100_000


def _preamble_end(messages: Sequence[Message]) -> int:
    end = 0
    while end < len(messages) and messages[end].role.is_instruction:
        end += 1
    return end


def _tool_safe_cut(messages: Sequence[Message], cut: int, floor: int) -> int:
    """The latest cut <= ``cut`` (and >= ``floor``) that leaves no kept tool result callless.

    A tool result pairs with the nearest earlier assistant message that made tool calls (as the
    API and :mod:`ctxlab.rounds` pair them); when that caller is folded, the cut moves to it.
    One pass: a moved cut is itself a caller, so results after it pair at or after it.
    """
    last_caller = -1
    for i, message in enumerate(messages):
        if message.role is Role.ASSISTANT and message.tool_calls:
            last_caller = i
        elif message.role.is_tool_result and i >= cut and floor <= last_caller < cut:
            cut = last_caller
    return cut


def plan_fold(
    messages: Sequence[Message], options: SummarizeOptions, counter: TokenCounter
) -> FoldPlan | None:
    """Decide what a summarization would fold, without rendering or calling anything.

    Args:
        messages: the history, oldest first (never modified).
        options: the tunables.
        counter: the token counter the trigger is measured with.

    Returns:
        None at or under ``options.trigger_token_budget``; otherwise a plan, whose ``folded``
        is empty (with a warning saying why) when nothing can be summarized.
    """
    total = counter.count_messages(messages)
    if total <= options.trigger_token_budget:
        return None
    n = len(messages)
    pinned_end = _preamble_end(messages)
    latest = next((i for i in range(n - 1, pinned_end - 1, -1) if messages[i].is_compaction), None)
    start = pinned_end
    replaced: tuple[Message, ...] = ()
    previous_id: str | None = None
    previous_summary: str | None = None
    older: tuple[Message, ...] = ()
    if latest is not None:
        pair_end = latest + 1
        if pair_end < n and messages[pair_end].is_summary:
            pair_end += 1
        marker = messages[latest]
        replaced = tuple(messages[latest:pair_end])
        previous_id = marker.id
        meta = marker.compaction_meta
        if meta is not None and meta.summary_text:
            previous_summary = meta.summary_text
        elif pair_end - latest == 2:
            previous_summary = messages[latest + 1].content
        # ctxlab puts the pair right after the preamble; anything between (a history built
        # elsewhere) has not been summarized yet, so it is folded too.
        older = tuple(messages[pinned_end:latest])
        start = pair_end
    keep = options.keep_recent_messages
    wanted = max(n - keep, start)
    cut = _tool_safe_cut(messages, wanted, start)
    warnings: list[str] = []
    if cut < wanted:
        warnings.append(
            f"The last {keep} messages would have begun with tool results whose call was "
            f"being summarized: the cut moved back to the assistant message that made the "
            f"call, so {n - cut} messages are kept verbatim."
        )
    folded = older + tuple(messages[start:cut])
    folded_tokens = sum(counter.counts(folded))
    if folded_tokens > LARGE_TRANSCRIPT_TOKENS:
        warnings.append(
            f"The {len(folded):,} messages to summarize hold about {folded_tokens:,} tokens: more "
            "than many summarizer models accept in one request. Lower the trigger so that "
            "summaries happen earlier, or use a model with a larger context window."
        )
    if not folded:
        if latest is not None:
            where = f"all {n - start} messages after the previous summary are"
        elif pinned_end:
            where = f"all {n - start} messages after the pinned system messages are"
        else:
            where = f"all {n} messages are"
        warnings.append(
            f"The chat is over the trigger ({total:,} > {options.trigger_token_budget:,} tokens) "
            f"but nothing can be summarized: {where} kept verbatim. Lower "
            f"keep_recent_messages (now {keep})."
        )
    return FoldPlan(
        pinned=tuple(messages[:pinned_end]),
        replaced=replaced,
        folded=folded,
        kept=tuple(messages[cut:]),
        previous_compaction_id=previous_id,
        previous_summary=previous_summary,
        tokens_before=total,
        folded_tokens=folded_tokens,
        warnings=tuple(warnings),
    )


def _request_for(plan: FoldPlan, options: SummarizeOptions, model: str | None) -> SummaryRequest:
    policy = options.redaction
    transcript = render_transcript(plan.folded, policy, previous_summary=plan.previous_summary)
    system = options.summary_system_prompt
    counts = dict(transcript.redactions)
    if policy.patterns:
        masked = redact_patterns(system)
        system = masked.text
        counts = merge_counts(counts, masked.counts)
    return SummaryRequest(
        messages=(
            {"role": "system", "content": system},
            {"role": "user", "content": transcript.text},
        ),
        model=model or "",
        max_tokens=options.summary_max_tokens,
        redactions=counts,
    )


def build_summary_request(
    messages: Sequence[Message],
    options: SummarizeOptions,
    counter: TokenCounter,
    model: str | None = None,
) -> tuple[SummaryRequest, FoldPlan] | None:
    """The exact request a summarization would send, and its plan, without calling anything.

    :func:`summarize_history` sends the request this function builds, so a preview made here is
    byte-identical to what leaves the process.

    Args:
        messages: the history (never modified).
        options: the tunables.
        counter: the token counter the trigger is measured with.
        model: the model named in the request (None: the summarizer's default).

    Returns:
        ``(request, plan)``, or None when summarization would be a no-op (at or under the
        trigger, or nothing to fold).
    """
    plan = plan_fold(messages, options, counter)
    if plan is None or not plan.folded:
        return None
    return _request_for(plan, options, model), plan


def _pair_ids(plan: FoldPlan, summary: str, taken: set[str]) -> tuple[str, str]:
    """Deterministic ids for the new pair, unique in the history."""
    seed = "\x1f".join(
        [
            *(m.id for m in plan.folded),
            plan.previous_compaction_id or "",
            plan.kept[0].id if plan.kept else "",
            summary,
        ]
    )
    while True:
        digest = hashlib.sha256(seed.encode()).hexdigest()[:16]
        ids = (f"compaction-{digest}", f"summary-{digest}")
        if not taken.intersection(ids):
            return ids
        seed += "\x1f"


def _call(summarizer: Summarizer, request: SummaryRequest) -> str:
    name = getattr(summarizer, "name", type(summarizer).__name__)
    try:
        response = summarizer.summarize(request)
    except SummarizerError:
        raise
    except Exception as exc:  # a summarizer that broke the protocol: still one error type
        detail = redact_patterns(str(exc)).text[:200]
        raise SummarizerError(
            f"the {name} summarizer failed ({type(exc).__name__}: {detail}); nothing was changed"
        ) from exc
    text = response.text.strip()
    if not text:
        raise SummarizerError(f"the {name} summarizer returned an empty summary; nothing changed")
    return text


def _compact(
    plan: FoldPlan,
    request: SummaryRequest,
    summarizer: Summarizer,
    counter: TokenCounter,
    options: SummarizeOptions,
) -> TrimResult:
    summary = _call(summarizer, request)
    taken = {m.id for part in (plan.pinned, plan.replaced, plan.folded, plan.kept) for m in part}
    compaction_id, summary_id = _pair_ids(plan, summary, taken)
    meta = CompactionMeta(
        tail_start_id=plan.kept[0].id if plan.kept else None,
        previous_compaction_id=plan.previous_compaction_id,
        summary_text=summary,
    )
    pair = (
        Message(
            Role.USER,
            compaction_note(len(plan.folded), plan.previous_summary is not None),
            compaction_id,
            is_compaction=True,
            compaction_meta=meta,
        ),
        Message(Role.ASSISTANT, summary, summary_id, is_summary=True),
    )
    out = (*plan.pinned, *pair, *plan.kept)
    decisions = dict.fromkeys((m.id for m in plan.pinned), Decision.PINNED)
    decisions.update(dict.fromkeys((m.id for m in plan.replaced), Decision.SUMMARIZED))
    decisions.update(dict.fromkeys((m.id for m in plan.folded), Decision.SUMMARIZED))
    decisions.update(dict.fromkeys((m.id for m in plan.kept), Decision.KEPT))
    after = counter.count_messages(out)
    warnings = list(plan.warnings)
    if after >= plan.tokens_before:
        warnings.append(
            f"The summary did not make the context smaller ({plan.tokens_before:,} -> "
            f"{after:,} tokens): set summary_max_tokens or keep fewer recent messages."
        )
    elif after > options.trigger_token_budget:
        warnings.append(
            f"Still over the trigger after summarizing ({after:,} > "
            f"{options.trigger_token_budget:,} tokens): the kept messages alone are too large; "
            "lower keep_recent_messages."
        )
    return TrimResult(
        messages=out,
        decisions=decisions,
        tokens_before=plan.tokens_before,
        tokens_after=after,
        inserted=pair,
        replace=True,
        summary_request=request,
        warnings=tuple(warnings),
        strategy=Summarize.name,
    )


def summarize_history(
    messages: Sequence[Message],
    options: SummarizeOptions,
    counter: TokenCounter,
    summarizer: Summarizer,
    *,
    model: str | None = None,
) -> TrimResult | None:
    """Replace the older part of ``messages`` by a compaction pair holding their summary.

    Args:
        messages: the history, oldest first (never modified).
        options: the tunables.
        counter: the token counter the trigger is measured with.
        summarizer: who writes the summary; called once, with the request of
            :func:`build_summary_request`.
        model: the model named in the request (None: ``summarizer.model``).

    Returns:
        None at or under the trigger (or when nothing can be folded); otherwise a
        ``replace=True`` result whose ``messages`` are the new history (pinned preamble,
        compaction pair, kept tail) and whose ``summary_request`` is the object sent.

    Raises:
        SummarizerError: the summarizer failed; nothing was changed.
    """
    built = build_summary_request(
        messages, options, counter, model if model is not None else summarizer.model
    )
    if built is None:
        return None
    request, plan = built
    return _compact(plan, request, summarizer, counter, options)


@dataclass(frozen=True, slots=True)
class Summarize(Strategy):
    """Over the trigger, folds all but the newest messages into a summary (a compaction pair).

    Leading system/developer messages are pinned; the kept tail never starts inside a tool
    call's results; an existing compaction is updated, not regenerated. The result replaces the
    history (``replace=True``). Without a summarizer, the offline extractive one is used and a
    warning says so.
    """

    name: ClassVar[str] = "summarize"
    title: ClassVar[str] = "Summarize (compaction)"
    summary: ClassVar[str] = (
        "Over a token trigger, replace older messages by an LLM-written summary."
    )
    explanation: ClassVar[str] = (
        "When the chat grows past a token trigger, everything but the newest messages is "
        "rendered into a transcript — with tool output and secrets redacted — and a summarizer "
        "model writes a summary. The old messages are replaced by a compaction marker and the "
        "summary, and the next compaction updates that summary instead of starting over. It "
        "costs a model call and is lossy, but the context stays small for ever."
    )
    uses_summarizer: ClassVar[bool] = True
    order: ClassVar[int] = 30

    options: SummarizeOptions = field(default_factory=SummarizeOptions)

    def _noop(self, messages: Sequence[Message], total: int, warnings: Sequence[str]) -> TrimResult:
        return TrimResult(
            messages=tuple(messages),
            decisions=dict.fromkeys((m.id for m in messages), Decision.KEPT),
            tokens_before=total,
            tokens_after=total,
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        plan = plan_fold(messages, self.options, counter)
        if plan is None:
            return self._noop(messages, counter.count_messages(messages), ())
        if not plan.folded:
            return self._noop(messages, plan.tokens_before, plan.warnings)
        notes: tuple[str, ...] = ()
        if summarizer is None:
            summarizer = OfflineSummarizer()
            notes = (
                "No summarizer was configured: the offline extractive summarizer (no LLM) "
                "wrote the summary.",
            )
        request = _request_for(plan, self.options, summarizer.model)
        result = _compact(plan, request, summarizer, counter, self.options)
        return replace(result, warnings=(*notes, *result.warnings))

    def explain_round(self, chat: CountedChat, result: TrimResult, index: int) -> str:
        total, trigger = result.tokens_before, self.options.trigger_token_budget
        keep = self.options.keep_recent_messages
        phrases = {
            Decision.PINNED: "pinned: the leading system prompt is never summarized",
            Decision.SUMMARIZED: f"summarized: the chat's {total:,} tokens are over the "
            f"{trigger:,}-token trigger, and these messages are older than the last {keep:,} "
            "kept verbatim",
            Decision.KEPT: f"kept: the chat's {total:,} tokens are at or under the "
            f"{trigger:,}-token trigger"
            if total <= trigger
            else f"kept verbatim: among the last {keep:,} messages",
        }
        return reasons_for(chat, result, index, phrases, self.title)

    def over_limit_reason(self, chat: CountedChat, result: TrimResult) -> str:
        kept = [i for i, mid in enumerate(chat.ids) if result.decisions.get(mid) is Decision.KEPT]
        held = chat.tokens_of(kept)
        n = len(kept)
        text = (
            f"{self.title} keeps the last {n:,} message{'s' if n != 1 else ''} verbatim "
            f"(keep_recent_messages = {self.options.keep_recent_messages:,}), which already "
            f"hold {held:,} tokens"
        )
        if result.inserted:
            text += ", plus the summary"
        return text + "; the next call would summarize again."

    def request_preview(
        self, messages: Sequence[Message], counter: TokenCounter, model: str | None = None
    ) -> SummaryRequest | None:
        """The exact request :meth:`apply` would send (for ``model``), without sending it."""
        built = build_summary_request(messages, self.options, counter, model)
        return built[0] if built is not None else None

    def resummarization_guard(
        self, messages: Sequence[Message], counter: TokenCounter
    ) -> ResummarizationGuard:
        """:func:`resummarization_risk` of these options; the fix raises the trigger.

        The suggested trigger is the floor times 1.5, rounded up to a multiple of 100.
        """
        options = self.options
        risk = resummarization_risk(
            messages,
            trigger_token_budget=options.trigger_token_budget,
            keep_recent_messages=options.keep_recent_messages,
            summary_max_tokens=options.summary_max_tokens,
            counter=counter,
        )
        changes: dict[str, int] = {}
        if risk.fires_every_call:
            changes["trigger_token_budget"] = -(-int(risk.floor_tokens * 1.5) // 100) * 100
        return ResummarizationGuard(risk, changes)

    @classmethod
    def suggested(cls, chat: CountedChat, window: int | None = None) -> Self:
        return cls(
            SummarizeOptions(
                trigger_token_budget=token_default(nice_fraction(chat.total, 0.6), window),
                # six, but never the whole chat: a short chat still shows a summary
                keep_recent_messages=min(6, max(len(chat) // 2, 1)),
            )
        )

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        trigger = self.options.trigger_token_budget
        return token_share_note("trigger", trigger, chat, window, "summarized")


def resummarization_risk(
    messages: Sequence[Message],
    *,
    trigger_token_budget: int,
    keep_recent_messages: int,
    summary_max_tokens: int | None,
    counter: TokenCounter,
) -> ResummarizationRisk:
    """Flag a trigger at or below what survives a compaction (pinned + tail + summary).

    The summary is assumed to use its whole ``summary_max_tokens`` (or 500 tokens when uncapped),
    the worst case the configuration allows.
    """
    counts = counter.counts(messages)
    pinned = 0
    for message, n in zip(messages, counts, strict=True):
        if not message.role.is_instruction:
            break
        pinned += n
    tail = sum(counts[-keep_recent_messages:]) if keep_recent_messages else 0
    summary = summary_max_tokens if summary_max_tokens is not None else 500
    floor = pinned + tail + summary + 2 * counter.accounting.tokens_per_message + 16
    floor += counter.accounting.reply_priming
    fires = floor >= trigger_token_budget
    if fires:
        suggestion = (
            f"After a compaction about {floor:,} tokens remain (system prompt, the last "
            f"{keep_recent_messages} messages and the summary), at or over the trigger of "
            f"{trigger_token_budget:,}: the next call summarizes again. Raise the trigger above "
            f"{int(floor * 1.5):,} tokens, or keep fewer recent messages."
        )
    else:
        suggestion = (
            f"After a compaction about {floor:,} tokens remain, "
            f"{trigger_token_budget - floor:,} below the trigger: compactions are spaced out."
        )
    return ResummarizationRisk(fires, floor, trigger_token_budget, suggestion)
