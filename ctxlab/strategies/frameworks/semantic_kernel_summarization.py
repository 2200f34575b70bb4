"""Semantic Kernel's ``ChatHistorySummarizationReducer`` (semantic-kernel 1.45.0).

Same trigger and cut as the truncation reducer (past ``target_count + threshold_count``
messages; see :mod:`.semantic_kernel_truncation`), but the messages before the cut go to the
summarization service first: SK sends them (system/developer messages left out, function calls
and results left out unless ``include_function_content_in_summary``) followed by
``summarization_instructions`` as a *system message at the end*, marks the service's reply
(an assistant message) with ``__summary__`` metadata and rebuilds the history as
[first system message] + [older summaries, unless ``use_single_summary``] + summary + tail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ctxlab.errors import SummarizerError
from ctxlab.model import Message, Role
from ctxlab.redaction import merge_counts, redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._semantic_kernel import (
    DEFAULT_SUMMARIZATION_PROMPT,
    SK_SOURCE,
    SK_VERSION,
    contains_function_call_or_result,
    extract_range,
    locate_safe_reduction_index,
    locate_summarization_boundary,
    message_body,
    summary_id,
)
from ctxlab.strategies.frameworks.semantic_kernel_truncation import (
    TARGET_HELP_NOTE,
    reduction_trigger,
)
from ctxlab.summarizers import OfflineSummarizer, SummaryRequest

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["SemanticKernelSummarization", "SummarizationPlan", "plan_summarization"]

ISSUE_13062 = "microsoft/semantic-kernel#13062"


@dataclass(frozen=True, slots=True)
class SummarizationPlan:
    """What ``ChatHistorySummarizationReducer.reduce`` does before calling the service.

    ``cut``: the tail starts here; ``system``: the first system/developer message that is not
    a summary (-1: none); ``boundary``: the leading summaries end here (SK's insertion point);
    ``summarized``: indexes of the messages sent to the service, in SK's order.
    """

    cut: int
    system: int
    boundary: int
    summarized: tuple[int, ...]


def plan_summarization(
    messages: Sequence[Message],
    *,
    target_count: int,
    threshold_count: int,
    use_single_summary: bool,
    include_function_content_in_summary: bool,
) -> SummarizationPlan | str:
    """SK's plan, or why ``reduce()`` returns None (a sentence) when it changes nothing."""
    n = len(messages)
    if n <= target_count + (threshold_count or 0):
        return (
            f"{n:,} messages are at most target + threshold ({target_count + threshold_count:,})."
        )
    system = next(
        (i for i, m in enumerate(messages) if m.role.is_instruction and not m.is_summary), -1
    )
    boundary = locate_summarization_boundary(messages)
    if boundary == n:  # SK: "All messages are summaries, forcing boundary to 0."
        boundary = 0
    would_be_truncated = system >= 0 and system < n - target_count
    cut = locate_safe_reduction_index(
        messages,
        target_count,
        threshold_count,
        offset_count=boundary,
        has_system_message=would_be_truncated,
    )
    if cut is None:
        return (
            f"no safe cut: the {boundary:,} leading summaries leave no room before the last "
            f"{target_count + threshold_count:,} messages."
        )
    summarized = extract_range(
        messages,
        0 if use_single_summary else boundary,
        cut,
        skip_function_content=not include_function_content_in_summary,
        preserve_pairs=include_function_content_in_summary,
    )
    if not summarized:
        return (
            "nothing to summarize: every message before the cut is a system message or "
            "function content left out of the summary."
        )
    return SummarizationPlan(cut, system, boundary, tuple(summarized))


def orphans_in(bodies: Sequence[Mapping[str, Any]]) -> list[str]:
    """Tool call ids of ``bodies`` (Chat Completions messages) without their partner: a call
    not answered by the tool messages right after it, or a tool message answering no call
    right before it. An API rejects such a request."""
    orphans: list[str] = []
    open_calls: list[str] = []
    for body in bodies:
        if body["role"] == "tool":
            call_id = str(body.get("tool_call_id", ""))
            if call_id in open_calls:
                open_calls.remove(call_id)
            else:
                orphans.append(call_id)
            continue
        orphans.extend(open_calls)
        open_calls = [str(c["id"]) for c in body.get("tool_calls", ())]
    orphans.extend(open_calls)
    return orphans


@dataclass(frozen=True, slots=True)
class SemanticKernelSummarization(FrameworkStrategy):
    """Semantic Kernel ``ChatHistorySummarizationReducer``: older messages -> one summary."""

    name: ClassVar[str] = "semantic-kernel-summarization"
    title: ClassVar[str] = "Semantic Kernel · ChatHistorySummarizationReducer"
    summary: ClassVar[str] = (
        "Past target + threshold messages, summarize all but the last target_count."
    )
    explanation: ClassVar[str] = (
        "Semantic Kernel's summarization reducer fires like its truncation reducer, on a "
        "message count: past target_count + threshold_count messages. The messages before "
        "the cut are sent to the chat service with SK's five-sentence instructions appended "
        "as a system message; function calls and results are left out of that request (and "
        "lost) unless include_function_content_in_summary is on. The reply becomes an "
        "assistant message marked as a summary, placed after the system message and before "
        "the kept tail. The ChatHistory is rewritten in place."
    )
    uses_summarizer: ClassVar[bool] = True
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="Semantic Kernel",
        component="ChatHistorySummarizationReducer",
        version=SK_VERSION,
        source=SK_SOURCE,
        evidence="oracle",
        counter="message count (no tokens)",
        persists="state",
        unpublished=(
            "target_count has no default in Semantic Kernel; ctxlab starts at 10, the value of "
            "SK's agent samples.",
            "The summary's role is the service's reply role (assistant for OpenAI); ctxlab "
            "writes an assistant message.",
            "SK sends an assistant message with tool calls without its text (tool_calls "
            "only); ctxlab's request adds an empty content beside them.",
        ),
        known_issues=(
            f"{ISSUE_13062}: with include_function_content_in_summary, a call or result whose "
            "partner lies outside the summarized range is still sent (an invalid request); "
            "closed as stale, the code path is unchanged in 1.45.0.",
        ),
    )

    target_count: int = param(
        10,
        label="target_count (messages)",
        help="Messages kept verbatim after a reduction, the system message included when it "
        "is put back (the summary is not counted)." + TARGET_HELP_NOTE,
        min=1,
        step=1,
        unit="messages",
    )
    threshold_count: int = param(
        0,
        label="threshold_count (messages)",
        help="Messages allowed over target_count before summarizing (SK's default 0); the cut "
        "may also move back by up to this many messages to start on a user message.",
        min=0,
        step=1,
        unit="messages",
    )
    summarization_instructions: str = param(
        DEFAULT_SUMMARIZATION_PROMPT,
        label="summarization_instructions",
        help="Sent as a system message after the messages to summarize (SK's default text).",
        multiline=True,
    )
    use_single_summary: bool = param(
        True,
        label="use_single_summary",
        help="On (SK's default): leading earlier summaries are summarized again into one. "
        "Off: they are kept and the new summary follows them.",
    )
    include_function_content_in_summary: bool = param(
        False,
        label="include_function_content_in_summary",
        help="Off (SK's default): tool calls and results before the cut are not sent to the "
        "summarizer and are lost. On: they are sent, call and result together.",
    )
    fail_on_error: bool = param(
        True,
        label="fail_on_error",
        help="On (SK's default): a failing summarizer raises ChatHistoryReducerException. "
        "Off: the history stays as it is.",
    )
    redact_secrets: bool = param(
        False,
        label="Redact secrets in the request (ctxlab)",
        help="Mask credential-looking text in what is sent to the summarizer. Semantic Kernel "
        "does not do this; off by default to show what SK sends.",
    )

    def __post_init__(self) -> None:
        check_params(self)

    def _plan(self, messages: Sequence[Message]) -> SummarizationPlan | str:
        return plan_summarization(
            messages,
            target_count=self.target_count,
            threshold_count=self.threshold_count,
            use_single_summary=self.use_single_summary,
            include_function_content_in_summary=self.include_function_content_in_summary,
        )

    def _request(
        self, messages: Sequence[Message], plan: SummarizationPlan, model: str | None
    ) -> SummaryRequest:
        bodies = [message_body(messages[i]) for i in plan.summarized]
        bodies.append({"role": "system", "content": self.summarization_instructions})
        counts: dict[str, int] = {}
        if self.redact_secrets:
            for body in bodies:
                masked = redact_patterns(body["content"])
                body["content"] = masked.text
                counts = merge_counts(counts, masked.counts)
                for call in body.get("tool_calls", ()):
                    args = redact_patterns(call["function"]["arguments"])
                    call["function"]["arguments"] = args.text
                    counts = merge_counts(counts, args.counts)
        # tool_calls is a list, as SK's connector sends it: the request stays a valid body
        sent = cast(tuple[Mapping[str, str], ...], tuple(bodies))
        return SummaryRequest(messages=sent, model=model or "", redactions=counts)

    def request_preview(
        self, messages: Sequence[Message], counter: TokenCounter, model: str | None = None
    ) -> SummaryRequest | None:
        """The exact request :meth:`apply` would send, without sending it."""
        plan = self._plan(messages)
        return None if isinstance(plan, str) else self._request(messages, plan, model)

    def _unchanged(
        self, messages: Sequence[Message], total: int, warnings: Sequence[str]
    ) -> TrimResult:
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
        total = counter.count_messages(messages)
        plan = self._plan(messages)
        if isinstance(plan, str):
            if len(messages) > self.target_count + self.threshold_count:
                return self._unchanged(messages, total, (f"SK's reduce() returns None: {plan}",))
            return self._unchanged(messages, total, ())
        notes: list[str] = []
        if summarizer is None:
            summarizer = OfflineSummarizer()
            notes.append(
                "No summarizer was configured: the offline extractive summarizer (no LLM) "
                "wrote the summary."
            )
        request = self._request(messages, plan, summarizer.model)
        orphans = orphans_in(request.messages)
        if orphans:
            notes.append(
                f"{ISSUE_13062}: the summarizer request holds {len(orphans)} tool call(s) "
                f"without their partner ({', '.join(orphans[:3])}); an OpenAI-compatible "
                "service rejects it. Semantic Kernel 1.45.0 sends it all the same."
            )
        try:
            text = summarizer.summarize(request).text
        except Exception as exc:  # SK catches every error of the service
            name = getattr(summarizer, "name", type(summarizer).__name__)
            if self.fail_on_error:
                raise SummarizerError(
                    f"the {name} summarizer failed ({type(exc).__name__}); Semantic Kernel "
                    "raises ChatHistoryReducerException('Chat History Summarization failed.') "
                    "(fail_on_error=True) and the history is unchanged"
                ) from exc
            notes.append(
                f"The {name} summarizer failed ({type(exc).__name__}); with "
                "fail_on_error=False Semantic Kernel keeps the history unchanged."
            )
            return replace(self._unchanged(messages, total, notes), summary_request=request)
        return self._reduced(messages, counter, plan, request, text, total, notes)

    def _reduced(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        plan: SummarizationPlan,
        request: SummaryRequest,
        text: str,
        total: int,
        notes: list[str],
    ) -> TrimResult:
        covered = [messages[i] for i in plan.summarized]
        summary = Message(
            Role.ASSISTANT,
            text,
            summary_id(covered, text, {m.id for m in messages}),
            is_summary=True,
        )
        earlier = (
            list(range(plan.boundary)) if plan.boundary > 0 and not self.use_single_summary else []
        )
        tail = range(plan.cut, len(messages))
        order = [*earlier, -1, *tail]
        if plan.system >= 0 and plan.system not in order:
            order.insert(0, plan.system)
        out = tuple(summary if i < 0 else messages[i] for i in order)
        decisions = dict.fromkeys((m.id for m in messages[: plan.cut]), Decision.DROPPED)
        decisions.update(dict.fromkeys((m.id for m in covered), Decision.SUMMARIZED))
        decisions.update(dict.fromkeys((messages[i].id for i in earlier), Decision.KEPT))
        if 0 <= plan.system < plan.cut:
            decisions[messages[plan.system].id] = Decision.PINNED
        decisions.update(dict.fromkeys((m.id for m in messages[plan.cut :]), Decision.KEPT))
        lost = sum(
            1
            for i in range(plan.cut)
            if decisions[messages[i].id] is Decision.DROPPED
            and contains_function_call_or_result(messages[i])
        )
        if lost:
            notes.append(
                f"{lost:,} tool call/result message(s) before the cut were deleted without "
                "being summarized (include_function_content_in_summary=False, SK's default)."
            )
        return TrimResult(
            messages=out,
            decisions=decisions,
            tokens_before=total,
            tokens_after=counter.count_messages(out),
            inserted=(summary,),
            replace=True,
            summary_request=request,
            warnings=tuple(notes),
            strategy=self.name,
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        return reduction_trigger(
            self.framework_policy.framework, messages, self.target_count, self.threshold_count
        )

    def config_code(self) -> str:
        args = [
            'service=OpenAIChatCompletion(ai_model_id="gpt-4o-mini")',
            f"target_count={self.target_count}",
            f"threshold_count={self.threshold_count}",
        ]
        if self.summarization_instructions != DEFAULT_SUMMARIZATION_PROMPT:
            args.append(f"summarization_instructions={self.summarization_instructions!r}")
        if not self.use_single_summary:
            args.append("use_single_summary=False")
        if self.include_function_content_in_summary:
            args.append("include_function_content_in_summary=True")
        if not self.fail_on_error:
            args.append("fail_on_error=False")
        lines = "".join(f"    {a},\n" for a in args)
        return (
            "from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion\n"
            "from semantic_kernel.contents import ChatHistorySummarizationReducer\n\n"
            f"reducer = ChatHistorySummarizationReducer(\n{lines})\n"
            "# add the chat's messages to reducer (it is a ChatHistory), then before each call:\n"
            "await reducer.reduce()  # rewrites reducer.messages in place\n"
        )
