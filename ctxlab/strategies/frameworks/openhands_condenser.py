"""OpenHands SDK's ``LLMSummarizingCondenser`` (openhands-sdk 1.43.1), ported; events = messages.

Source (MIT): ``OpenHands/software-agent-sdk`` @ 611629e6,
``openhands-sdk/openhands/sdk/context/condenser/llm_summarizing_condenser.py``, its prompt
``prompts/summarizing_prompt.j2``, ``context/condenser/utils.py``, ``context/view/`` (the
manipulation indices) and ``event/`` (``str(event)``, ``Condensation``,
``CondensationSummaryEvent``). Not run in the tests (the SDK is not in the oracle
environment): ported from the code.

OpenHands works on *events* (one per message, one per tool call, one per observation); here
one ctxlab message is one event. When the view holds more than ``max_size`` events (EVENTS),
or more than ``max_tokens`` tokens (TOKENS, off by default), the condenser keeps the first
``keep_first`` events and the last ``max_size // 2 - keep_first - 1`` (the TOKENS reason keeps
the longest tail that brings the count under half of ``max_tokens``; the stricter wins); both
ends of the forgotten range move forward to the next index where no tool call waits for its
result. The forgotten events, each rendered by ``str(event)`` (cut at 500 characters), go to
the summarizing LLM in one user message; its reply becomes a user-role
``CondensationSummaryEvent`` at offset ``keep_first``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.redaction import redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.summarizers import OfflineSummarizer, SummaryRequest

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "N_CHAR_PREVIEW",
    "OpenHandsCondenser",
    "event_string",
    "forgetting_range",
    "manipulation_indices",
    "summarizing_prompt",
]

OPENHANDS_VERSION = "openhands-sdk 1.43.1"
N_CHAR_PREVIEW = 500
"""``openhands/sdk/event/base.py``: how much of an event ``str(event)`` shows."""

# Quoted from openhands-sdk/openhands/sdk/context/condenser/prompts/summarizing_prompt.j2
# (OpenHands/software-agent-sdk @ 611629e6, openhands-sdk 1.43.1, MIT): the text before the
# events loop, without the blank line that precedes the loop.
SUMMARIZING_PROMPT_HEAD = """You are maintaining a context-aware state summary for an interactive agent.
You will be given a list of events corresponding to actions taken by the agent, which will include previous summaries.
If the events being summarized contain ANY task-tracking, you MUST include a TASK_TRACKING section to maintain continuity.
When referencing tasks make sure to preserve exact task IDs and statuses.

Track:

USER_CONTEXT: (Preserve essential user requirements, goals, and clarifications in concise form)

TASK_TRACKING: {Active tasks, their IDs and statuses - PRESERVE TASK IDs}

COMPLETED: (Tasks completed so far, with brief results)
PENDING: (Tasks that still need to be done)
CURRENT_STATE: (Current variables, data structures, or relevant state)

For code-specific tasks, also include:
CODE_STATE: {File paths, function signatures, data structures}
TESTS: {Failing cases, error messages, outputs}
CHANGES: {Code edits, variable updates}
DEPS: {Dependencies, imports, external calls}
VERSION_CONTROL_STATUS: {Repository state, current branch, PR status, commit history}

PRIORITIZE:
1. Adapt tracking format to match the actual task type
2. Capture key user requirements and goals
3. Distinguish between completed and pending tasks
4. Keep all sections concise and relevant

SKIP: Tracking irrelevant details for the current task type

Example formats:

For code tasks:
USER_CONTEXT: Fix FITS card float representation issue
COMPLETED: Modified mod_float() in card.py, all tests passing
PENDING: Create PR, update documentation
CODE_STATE: mod_float() in card.py updated
TESTS: test_format() passed
CHANGES: str(val) replaces f"{val:.16G}"
DEPS: None modified
VERSION_CONTROL_STATUS: Branch: fix-float-precision, Latest commit: a1b2c3d

For other tasks:
USER_CONTEXT: Write 20 haikus based on coin flip results
COMPLETED: 15 haikus written for results [T,H,T,H,T,H,T,T,H,T,H,T,H,T,H]
PENDING: 5 more haikus needed
CURRENT_STATE: Last flip: Heads, Haiku count: 15/20"""  # noqa: E501
SUMMARIZING_PROMPT_TAIL = "Now summarize the events using the rules above."


def _preview(text: str, *, message_style: bool) -> str:
    """The SDK's two truncations: a message event keeps 497 characters + "..."; an action's
    thought or an observation keeps 500 + "..."."""
    if len(text) <= N_CHAR_PREVIEW:
        return text
    if message_style:
        return text[: N_CHAR_PREVIEW - 3] + "..."
    return text[:N_CHAR_PREVIEW] + "..."


def event_string(message: Message, tool_names: dict[str | None, str]) -> str:
    """``str(event)`` of the OpenHands event ``message`` stands for (``event/**/*.py``).

    A system message is a ``SystemPromptEvent``, a user or assistant text a ``MessageEvent``,
    an assistant message with tool calls an ``ActionEvent`` (its text is the thought), a tool
    result an ``ObservationEvent``, a ctxlab summary a ``CondensationSummaryEvent``.
    """
    if message.is_summary:
        text = _preview(message.content, message_style=True) or "[no text content]"
        return f"CondensationSummaryEvent (environment)\n  user: {text}"
    if message.role.is_instruction:
        prompt = _preview(message.content, message_style=False)
        return f"SystemPromptEvent (agent)\n  System: {prompt}\n  Tools: 0 available"
    if message.role.is_tool_result:
        name = message.name or tool_names.get(message.tool_call_id, "")
        result = _preview(message.content, message_style=False)
        return f"ObservationEvent (environment)\n  Tool: {name}\n  Result: {result}"
    if message.tool_calls:
        thought = _preview(message.content, message_style=False)
        actions = ", ".join(call.name for call in message.tool_calls)
        return f"ActionEvent (agent)\n  Thought: {thought}\n  Action: {actions}"
    source = "user" if message.role is Role.USER else "agent"
    text = _preview(message.content, message_style=True) or "[no text content]"
    return f"MessageEvent ({source})\n  {message.role.value}: {text}"


def summarizing_prompt(event_strings: Sequence[str]) -> str:
    """``render_template("summarizing_prompt.j2", events=...)``: Jinja's defaults (no
    ``trim_blocks``, the final newline dropped), then ``.strip()``."""
    events = "".join(f"\n<EVENT>\n{event}\n</EVENT>\n" for event in event_strings)
    return f"{SUMMARIZING_PROMPT_HEAD}\n\n{events}\n\n{SUMMARIZING_PROMPT_TAIL}".strip()


def manipulation_indices(messages: Sequence[Message]) -> list[bool]:
    """``View.manipulation_indices`` as a flag per boundary ``0..len``: True where events may
    be cut or inserted (``ToolCallMatchingProperty``: not while a tool call waits for its
    result). A call never answered in the chat, or a result answering no call, does not
    block (OpenHands' view drops such events before condensing)."""
    answered = {m.tool_call_id for m in messages if m.is_tool_result}
    asked = {c.id for m in messages for c in m.tool_calls}
    ok = [True] * (len(messages) + 1)
    pending: set[str | None] = set()
    for index, message in enumerate(messages):
        if message.tool_calls:
            pending.update(c.id for c in message.tool_calls if c.id in answered)
        elif message.is_tool_result and message.tool_call_id in asked:
            pending.discard(message.tool_call_id)
        if pending:
            ok[index + 1] = False
    return ok


def _find_next(ok: Sequence[bool], threshold: int) -> int | None:
    """``ManipulationIndices.find_next``: the smallest allowed index >= ``threshold``."""
    return next((i for i in range(max(threshold, 0), len(ok)) if ok[i]), None)


def _suffix_for_token_reduction(
    messages: Sequence[Message], keep_first: int, reduction: int, counter: TokenCounter
) -> int:
    """``get_suffix_length_for_token_reduction`` over ``messages[keep_first:]`` with the
    first ``keep_first`` as base events: the longest tail whose removal saves ``reduction``."""
    events = messages[keep_first:]
    base = messages[:keep_first]
    if not events:
        return 0
    if reduction <= 0:
        return len(events)
    base_tokens = counter.count_messages(base) if base else 0

    def prefix_tokens(k: int) -> int:
        return counter.count_messages([*base, *events[:k]]) - base_tokens

    if prefix_tokens(len(events)) <= reduction:
        return 0
    left, right = 1, len(events)
    while left < right:
        mid = (left + right) // 2
        if prefix_tokens(mid) > reduction:
            right = mid
        else:
            left = mid + 1
    return len(events) - left


@dataclass(frozen=True, slots=True)
class Forgetting:
    """The events OpenHands forgets, ``[start, end)``, and why (``EVENTS``/``TOKENS``)."""

    start: int
    end: int
    reasons: tuple[str, ...]
    hard_reset: bool = False


def forgetting_range(
    messages: Sequence[Message],
    *,
    max_size: int,
    max_tokens: int | None,
    keep_first: int,
    minimum_progress: float,
    counter: TokenCounter,
) -> Forgetting | str | None:
    """``condense``'s decision: None (no reason), a sentence (no condensation available), or
    the range to forget. Under TOKENS (a hard requirement) an unavailable condensation
    becomes a hard context reset: every event is summarized."""
    n = len(messages)
    reasons: list[str] = []
    total = counter.count_messages(messages) if max_tokens is not None else 0
    if max_tokens is not None and total > max_tokens:
        reasons.append("TOKENS")
    if n > max_size:
        reasons.append("EVENTS")
    if not reasons:
        return None
    tails: list[int] = []
    if "EVENTS" in reasons:
        tails.append(max_size // 2 - keep_first - 1)
    if "TOKENS" in reasons and max_tokens is not None:
        tails.append(
            _suffix_for_token_reduction(messages, keep_first, total - max_tokens // 2, counter)
        )
    naive_end = n - min(tails)
    ok = manipulation_indices(messages)
    start, end = _find_next(ok, keep_first), _find_next(ok, naive_end)
    why = ""
    if start is None or end is None:
        why = "no index to cut at past the first events without splitting a tool call."
    elif end <= start:
        why = "Cannot condense 0 events (a tool loop spans the range to forget)."
    elif end - start < n * minimum_progress:
        why = (
            f"only {end - start:,} of {n:,} events would be forgotten, under "
            f"minimum_progress ({minimum_progress:g})."
        )
    if not why:
        assert start is not None and end is not None
        return Forgetting(start, end, tuple(reasons))
    if "TOKENS" in reasons and n:
        return Forgetting(0, n, tuple(reasons), hard_reset=True)
    return why


@dataclass(frozen=True, slots=True)
class OpenHandsCondenser(FrameworkStrategy):
    """OpenHands SDK ``LLMSummarizingCondenser``: forget the middle, insert a summary."""

    name: ClassVar[str] = "openhands-condenser"
    title: ClassVar[str] = "OpenHands · LLMSummarizingCondenser"
    summary: ClassVar[str] = (
        "Past max_size events, summarize the middle, keeping the first events and half a window."
    )
    explanation: ClassVar[str] = (
        "The OpenHands agent SDK condenses its event history when it holds more than "
        "max_size events (240), or more than max_tokens tokens when that is set. It keeps the "
        "first keep_first events (the system prompt and the first user message) and the "
        "newest max_size // 2 - keep_first - 1, never cutting between a tool call and its "
        "result. The forgotten events, each shortened to 500 characters, are sent to an LLM "
        "with a structured-summary prompt (USER_CONTEXT, COMPLETED, PENDING, CODE_STATE...), "
        "and the summary comes back as a user message where the forgotten events were. "
        "Ported from the SDK's code; one ctxlab message stands for one OpenHands event."
    )
    uses_summarizer: ClassVar[bool] = True
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="OpenHands",
        component="LLMSummarizingCondenser",
        version=OPENHANDS_VERSION,
        source=(
            "OpenHands/software-agent-sdk @ 611629e6: openhands-sdk/openhands/sdk/context/"
            "condenser/llm_summarizing_condenser.py, prompts/summarizing_prompt.j2, "
            "context/view/, event/"
        ),
        evidence="code",
        counter="event count; tokens with the agent LLM's tokenizer (litellm) when max_tokens",
        persists="state",
        unpublished=(
            "One ctxlab message is one event here; OpenHands makes one ActionEvent per tool "
            "call (an assistant message with 3 calls is 3 events), so its counts run higher.",
            "str(event) of an action names the action class (e.g. TerminalAction), which "
            "depends on the tool's definition; ctxlab writes the tool names. A system prompt "
            "event lists its tools ('Tools: N available'); ctxlab has no tool list and writes 0.",
            "TOKENS is counted with the strategy's counter; OpenHands counts the messages plus "
            "the tool definitions with the agent LLM's tokenizer, and also caps max_tokens at "
            "the model's input limit.",
            "Tool loops with thinking blocks (ToolLoopAtomicityProperty) are not modelled: "
            "ctxlab messages carry no thinking blocks.",
            "A condensation request (the REQUEST reason, from the user or a context-window "
            "error) is not modelled.",
            "When the summarizer fails, OpenHands retries a hard reset with event strings cut "
            "by 20% each time (5 attempts); ctxlab keeps the history and warns.",
        ),
        known_issues=(
            "OpenHands/software-agent-sdk#2744: the summary is built from str(event), cut at "
            "500 characters per event: long tool results reach the summarizer truncated.",
            "OpenHands/software-agent-sdk#1172: the default trigger counts events, not tokens.",
        ),
    )

    max_size: int = param(
        240,
        label="max_size (events)",
        help="Condense when the view holds more events than this (SDK default 240; the "
        "SDK's default agent uses 80). Here one message is one event.",
        min=1,
        step=1,
        unit="messages",
    )
    max_tokens: int | None = param(
        None,
        label="max_tokens",
        help="Also condense when the view is over this many tokens, keeping a tail under half "
        "of it (SDK default None: off).",
        min=1,
        step=1000,
        unit="tokens",
    )
    keep_first: int = param(
        2,
        label="keep_first (events)",
        help="Events at the start never condensed (SDK default 2: the system prompt and the "
        "first user message).",
        min=0,
        step=1,
        unit="messages",
    )
    minimum_progress: float = param(
        0.1,
        label="minimum_progress",
        help="Skip a condensation that would forget fewer than this share of the events "
        "(SDK default 0.1).",
        min=0.01,
        max=0.99,
        step=0.01,
    )
    redact_secrets: bool = param(
        False,
        label="Redact secrets in the request (ctxlab)",
        help="Mask credential-looking text in what is sent to the summarizer. OpenHands does "
        "not do this; off by default to show what it sends.",
    )

    def __post_init__(self) -> None:
        check_params(self)
        if self.max_size // 2 - self.keep_first - 1 <= 0:
            raise ParameterError(
                f"keep_first ({self.keep_first}) must be less than max_size // 2 - 1 "
                f"({self.max_size // 2 - 1}) to leave room for condensation (max_size "
                f"{self.max_size})"
            )

    def _range(self, messages: Sequence[Message], counter: TokenCounter) -> Forgetting | str | None:
        return forgetting_range(
            messages,
            max_size=self.max_size,
            max_tokens=self.max_tokens,
            keep_first=self.keep_first,
            minimum_progress=self.minimum_progress,
            counter=counter,
        )

    def _request(
        self, messages: Sequence[Message], forgetting: Forgetting, model: str | None
    ) -> SummaryRequest:
        names = {c.id: c.name for m in messages for c in m.tool_calls}
        strings = [event_string(m, names) for m in messages[forgetting.start : forgetting.end]]
        prompt = summarizing_prompt(strings)
        counts: dict[str, int] = {}
        if self.redact_secrets:
            masked = redact_patterns(prompt)
            prompt, counts = masked.text, dict(masked.counts)
        return SummaryRequest(
            messages=({"role": "user", "content": prompt},), model=model or "", redactions=counts
        )

    def request_preview(
        self, messages: Sequence[Message], counter: TokenCounter, model: str | None = None
    ) -> SummaryRequest | None:
        """The exact request :meth:`apply` would send, without sending it."""
        forgetting = self._range(messages, counter)
        if not isinstance(forgetting, Forgetting):
            return None
        return self._request(messages, forgetting, model)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        total = counter.count_messages(messages)
        unchanged = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        forgetting = self._range(messages, counter)
        if not isinstance(forgetting, Forgetting):
            notes = () if forgetting is None else (f"No condensation available: {forgetting}",)
            return TrimResult(
                tuple(messages), unchanged, total, total, warnings=notes, strategy=self.name
            )
        notes_list: list[str] = []
        if summarizer is None:
            summarizer = OfflineSummarizer()
            notes_list.append(
                "No summarizer was configured: the offline extractive summarizer (no LLM) "
                "wrote the summary."
            )
        if forgetting.hard_reset:
            notes_list.append(
                "Hard context reset: over max_tokens and no safe range to forget, so OpenHands "
                "summarizes every event."
            )
        request = self._request(messages, forgetting, summarizer.model)
        try:
            text = summarizer.summarize(request).text
        except Exception as exc:  # OpenHands: NoCondensationAvailableException
            name = getattr(summarizer, "name", type(summarizer).__name__)
            notes_list.append(
                f"The {name} summarizer failed ({type(exc).__name__}); OpenHands raises "
                "NoCondensationAvailableException and keeps the view."
            )
            return TrimResult(
                tuple(messages),
                unchanged,
                total,
                total,
                summary_request=request,
                warnings=tuple(notes_list),
                strategy=self.name,
            )
        forgotten = messages[forgetting.start : forgetting.end]
        inserted: tuple[Message, ...] = ()
        if text:
            seed = "\x1f".join([*(m.id for m in forgotten), text])
            digest = hashlib.sha256(seed.encode()).hexdigest()[:16]
            inserted = (
                Message(
                    Role.USER, text, f"openhands-condensation-{digest}-summary", is_summary=True
                ),
            )
        else:  # Condensation(summary=None): the events are forgotten, no summary inserted
            notes_list.append(
                "The summarizer returned no text: OpenHands forgets the events without a summary."
            )
        out = (*messages[: forgetting.start], *inserted, *messages[forgetting.end :])
        decisions = dict(unchanged)
        decisions.update(dict.fromkeys((m.id for m in forgotten), Decision.SUMMARIZED))
        return TrimResult(
            messages=out,
            decisions=decisions,
            tokens_before=total,
            tokens_after=counter.count_messages(out),
            inserted=inserted,
            replace=True,
            summary_request=request,
            warnings=tuple(notes_list),
            strategy=self.name,
        )

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return None if self.max_tokens is None else counter.count_messages(messages)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        n = len(messages)
        at = self.max_size + 1
        events_fire = n > self.max_size
        events_text = (
            f"Condenses at {at:,} events (max_size {self.max_size:,}; OpenHands counts "
            f"events, here one per message); this chat has {n:,}"
        )
        if self.max_tokens is None:
            return TriggerReport(
                events_fire, at, "messages", n, None, events_text + ".", "OpenHands"
            )
        tokens = counter.count_messages(messages)
        fires = events_fire or tokens > self.max_tokens
        text = (
            f"{events_text}, or over max_tokens {self.max_tokens:,} tokens; this chat is at "
            f"{tokens:,}."
        )
        return TriggerReport(
            fires, self.max_tokens + 1, "tokens", tokens, tokens, text, "OpenHands"
        )

    def config_code(self) -> str:
        args = ["llm=summary_llm", f"max_size={self.max_size}", f"keep_first={self.keep_first}"]
        if self.max_tokens is not None:
            args.append(f"max_tokens={self.max_tokens}")
        if self.minimum_progress != 0.1:
            args.append(f"minimum_progress={self.minimum_progress}")
        lines = "".join(f"    {a},\n" for a in args)
        return (
            "from pydantic import SecretStr\n\n"
            "from openhands.sdk import LLM, Agent\n"
            "from openhands.sdk.context.condenser import LLMSummarizingCondenser\n\n"
            'llm = LLM(model="openai/gpt-4o", api_key=SecretStr("..."), usage_id="agent")\n'
            'summary_llm = llm.model_copy(update={"usage_id": "condenser"})\n'
            f"condenser = LLMSummarizingCondenser(\n{lines})\n"
            "agent = Agent(llm=llm, tools=[...], condenser=condenser)\n"
        )
