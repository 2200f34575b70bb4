"""LangChain's ``SummarizationMiddleware`` (langchain 1.5.2), as its agents run it.

``langchain/agents/middleware/summarization.py``: before every model call of an agent built
with ``create_agent``, the middleware counts the agent's state messages (the system prompt is
the agent's ``system_prompt`` slot: never counted, never summarized, always sent first) with
``count_tokens_approximately`` (chars / 3.3 for a Claude model, chars / 4 otherwise, + 3 per
message) and checks ``trigger``: ``("tokens", N)`` fires at a count >= N, ``("messages", N)``
at >= N messages, ``("fraction", f)`` at ``int(profile max_input_tokens * f)``; a list fires
when any item does, a dict when all its keys do. The default ``trigger=None`` never fires.

The cut keeps ``keep=("messages", 20)`` (or the newest messages within a token budget, found by
binary search) and is then made "safe": when it lands on a tool result it moves back to the
first earlier AI message that made *any* of the calls answered there. That is
langchain-ai/langchain#38352 (open in 1.5.2): when the results at the cut answer two AI
messages, the older call is summarized and its result kept, orphaned. ctxlab keeps the bug and
says so.

Everything before the cut is trimmed to its newest ``trim_tokens_to_summarize=4000`` tokens
(``trim_messages(strategy="last", start_on="human", allow_partial=True,
include_system=True)``), rendered with ``get_buffer_string(format="xml")`` into
``DEFAULT_SUMMARY_PROMPT`` and sent to the model as one user message; the reply replaces those
messages as one ``HumanMessage`` "Here is a summary of the conversation to date:\\n\\n{summary}"
in the stored state (``replace=True``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar

from ctxlab.catalog import CATALOG, ModelInfo
from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import Message, Role
from ctxlab.redaction import redact_patterns
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._langchain import (
    ANTHROPIC_CHARS_PER_TOKEN,
    DEFAULT_SUMMARY_PROMPT,
    SUMMARY_PREFIX,
    ListCounter,
    approx_counter,
    buffer_string_xml,
    message_counter,
    parsed_tool_calls,
    trim_messages,
)
from ctxlab.summarizers import OfflineSummarizer, SummaryRequest

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["LangChainSummarization", "SummarizationMiddleware", "parse_context_size"]

_KINDS = ("tokens", "messages", "fraction")
NOTHING_TO_SUMMARIZE = "No previous conversation history."
TOO_LONG_TO_SUMMARIZE = "Previous conversation was too long to summarize."
TRIGGER_SYNTAX = (
    "'none', 'tokens=4000', 'messages=50', 'fraction=0.8'; '|' between clauses for a list "
    "(any fires), '&' inside a clause for a dict (all must hold): "
    "'tokens=4000 & messages=10 | fraction=0.8'"
)
KEEP_SYNTAX = "'messages=20', 'tokens=3000' or 'fraction=0.3'"

Clause = tuple[tuple[str, float], ...]


def parse_context_size(text: str, parameter: str) -> tuple[str, float]:
    """``"tokens=4000"`` -> ``("tokens", 4000)``, validated as LangChain validates a
    ``ContextSize`` (tokens and messages: whole numbers > 0; fraction: 0 < f <= 1)."""
    kind, sep, raw = text.strip().partition("=")
    kind = kind.strip().lower()
    if not sep or kind not in _KINDS:
        raise ValueError(
            f"{text.strip()!r} is not kind=value with kind tokens, messages or fraction"
        )
    try:
        value: float = float(raw) if kind == "fraction" else int(raw.strip().replace("_", ""))
    except ValueError:
        whole = "a number" if kind == "fraction" else "a whole number"
        raise ValueError(f"{kind} needs {whole}, got {raw.strip()!r}") from None
    if kind == "fraction" and not 0 < value <= 1:
        raise ValueError(f"Fractional {parameter} values must be between 0 and 1, got {value}.")
    if kind != "fraction" and value <= 0:
        raise ValueError(f"{parameter} thresholds must be greater than 0, got {value}.")
    return kind, value


def _parse_trigger(text: str) -> tuple[Clause, ...]:
    if text.strip().lower() in ("", "none"):
        return ()
    clauses: list[Clause] = []
    for part in text.split("|"):
        items = [parse_context_size(item, "trigger") for item in part.split("&")]
        kinds = [k for k, _ in items]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"a clause names {kinds} twice: a dict has each key once")
        clauses.append(tuple(items))
    return tuple(clauses)


def _number(kind: str, value: float) -> str:
    return repr(value) if kind == "fraction" else f"{int(value):_}"


@dataclass(frozen=True, slots=True)
class SummarizationMiddleware:
    """``SummarizationMiddleware``'s parameters with LangChain's names and defaults; the richer
    ones (``trigger``, ``keep``) in a text spelling of LangChain's tuples, lists and dicts."""

    trigger: str = param(
        "none",
        label="Trigger",
        help="trigger: when to summarize. " + TRIGGER_SYNTAX + ". LangChain's default is None: "
        "it never summarizes until you set one.",
    )
    keep: str = param(
        "messages=20",
        label="Keep",
        help="keep: what stays verbatim after a summary: " + KEEP_SYNTAX + ".",
    )
    trim_tokens_to_summarize: int | None = param(
        4000,
        label="Trim tokens to summarize",
        help="trim_tokens_to_summarize: the summarizer sees only the newest this-many tokens "
        "of what is summarized (starting on a user message). Empty = None: all of it.",
        min=1,
        step=500,
        unit="tokens",
    )
    summary_prompt: str = param(
        DEFAULT_SUMMARY_PROMPT,
        label="Summary prompt",
        help="summary_prompt: the prompt sent as one user message; {messages} is replaced by "
        "the messages in get_buffer_string's XML format.",
        multiline=True,
    )
    model: str = param(
        "gpt-4o",
        label="Model",
        help="model: the agent's model, from ctxlab's catalog. A Claude model makes LangChain "
        "count 3.3 characters per token instead of 4; a fraction reads its input limit.",
    )
    token_counter: str = param(
        "approximate",
        label="Token counter",
        help="token_counter: count_tokens_approximately (LangChain's default) or the model's "
        "own counter (ctxlab's exact count).",
        choices=("approximate", "model"),
    )

    def __post_init__(self) -> None:
        check_params(self)
        try:
            _parse_trigger(self.trigger)
        except ValueError as exc:
            raise ParameterError(f"trigger: {exc}; write {TRIGGER_SYNTAX}") from None
        try:
            parse_context_size(self.keep, "keep")
        except ValueError as exc:
            raise ParameterError(f"keep: {exc}; write {KEEP_SYNTAX}") from None
        if CATALOG.get(self.model) is None:
            raise ParameterError(
                f"model: {self.model!r} is not in ctxlab's catalog; use one of "
                f"{', '.join(CATALOG.names())}"
            )
        try:
            self.summary_prompt.format(messages="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ParameterError(
                f"summary_prompt: LangChain fills it with str.format(messages=...), which fails "
                f"on it ({type(exc).__name__}: {exc}); double any other braces"
            ) from None

    @property
    def clauses(self) -> tuple[Clause, ...]:
        """The trigger as LangChain normalizes it: OR of clauses, each an AND of thresholds."""
        return _parse_trigger(self.trigger)

    @property
    def keep_size(self) -> tuple[str, float]:
        return parse_context_size(self.keep, "keep")

    @property
    def model_info(self) -> ModelInfo:
        info = CATALOG.get(self.model)
        assert info is not None  # checked in __post_init__
        return info

    @property
    def max_input_tokens(self) -> int:
        """The profile's ``max_input_tokens``: the catalog's context window."""
        return self.model_info.context_window

    @property
    def chars_per_token(self) -> float:
        """4, or 3.3 for a Claude model (``_get_approximate_token_counter``)."""
        return ANTHROPIC_CHARS_PER_TOKEN if self.model_info.provider == "anthropic" else 4.0

    def threshold(self, kind: str, value: float) -> int:
        """A token or message threshold of one trigger item."""
        if kind == "fraction":
            return max(int(self.max_input_tokens * value), 1)
        return int(value)


@dataclass(frozen=True, slots=True)
class _Cut:
    index: int
    orphans: tuple[str, ...] = ()  # tool results kept without their call (#38352)


@dataclass(frozen=True, slots=True)
class LangChainSummarization(FrameworkStrategy):
    """``create_agent(..., middleware=[SummarizationMiddleware(...)])`` (see the module)."""

    name: ClassVar[str] = "langchain-summarization"
    title: ClassVar[str] = "LangChain · SummarizationMiddleware"
    summary: ClassVar[str] = (
        "LangChain's SummarizationMiddleware: over its trigger, older messages become one "
        "summary message. Its default trigger=None never fires."
    )
    explanation: ClassVar[str] = (
        "LangChain's SummarizationMiddleware for agents built with create_agent. Before each "
        "model call it counts the agent's messages with count_tokens_approximately (characters "
        "/ 4 + 3 per message; / 3.3 for Claude), without the system prompt; when the trigger "
        "holds, everything but the newest 'keep' messages is summarized by the model: the "
        "newest 4,000 tokens of it, in XML, inside LangChain's summary prompt. The summary "
        "replaces those messages in the stored state as a user message 'Here is a summary of "
        "the conversation to date'. The default trigger is None: it never summarizes until you "
        "set one. On code and JSON the approximate count is low, so a token trigger fires late."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="LangChain",
        component="SummarizationMiddleware",
        version="langchain 1.5.2",
        source="langchain/agents/middleware/summarization.py; langchain_core/messages/utils.py "
        "(langchain-core 1.8.3)",
        evidence="oracle",
        counter="count_tokens_approximately of the agent's messages (system prompt not "
        "counted): ceil(characters / 4) + 3 per message, / 3.3 for Claude models",
        persists="state",
        unpublished=(
            "A fraction reads the model profile's max_input_tokens; ctxlab takes the catalog's "
            "context window (a provider profile may give a smaller input limit).",
            "Usage-metadata scaling (x1.0-1.25 from the last AI message's reported tokens) and "
            "the reported-tokens trigger need provider usage, which ctxlab chats do not carry.",
        ),
        known_issues=(
            "langchain-ai/langchain#38352 (open): the safe cut stops at the first AI message "
            "owning any of the tool results at the cut, so a result of an older call can be "
            "kept while its call is summarized.",
        ),
    )
    uses_summarizer: ClassVar[bool] = True

    middleware: SummarizationMiddleware = field(default_factory=SummarizationMiddleware)
    redact_patterns: bool = param(
        False,
        label="Mask secrets",
        help="ctxlab's own option, off as in LangChain: mask credential-looking spans in the "
        "summarizer request.",
    )

    def __post_init__(self) -> None:
        check_params(self)

    # -- LangChain's rules ------------------------------------------------------------------

    def _count(self, counter: TokenCounter) -> ListCounter:
        if self.middleware.token_counter == "model":
            return message_counter(counter.count_message, counter.accounting.reply_priming)
        return approx_counter(self.middleware.chars_per_token)

    @staticmethod
    def _split(messages: Sequence[Message]) -> tuple[Message | None, list[Message]]:
        if messages and messages[0].role.is_instruction:
            return messages[0], list(messages[1:])
        return None, list(messages)

    def should_summarize(self, state: Sequence[Message], total: int) -> bool:
        """``_should_summarize`` (no reported usage: ctxlab chats carry none)."""
        mw = self.middleware
        for clause in mw.clauses:
            met = True
            for kind, value in clause:
                if kind == "messages":
                    met = len(state) >= int(value)
                else:
                    met = total >= mw.threshold(kind, value)
                if not met:
                    break
            if met:
                return True
        return False

    def _cutoff(self, state: Sequence[Message], count: ListCounter) -> _Cut:
        kind, value = self.middleware.keep_size
        if kind == "messages":
            if len(state) <= int(value):
                return _Cut(0)
            return _safe_cutoff_point(state, len(state) - int(value))
        return self._token_cutoff(state, count, self.middleware.threshold(kind, value))

    @staticmethod
    def _token_cutoff(state: Sequence[Message], count: ListCounter, target: int) -> _Cut:
        """``_find_token_based_cutoff``: the earliest start whose suffix fits ``target``."""
        n = len(state)
        if not n:
            return _Cut(0)
        target = max(target, 1)
        per = [count.per_message(m) for m in state]
        suffix = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            suffix[i] = suffix[i + 1] + per[i]
        if suffix[0] + count.fixed <= target:
            return _Cut(0)
        left, right = 0, n
        candidate = n
        for _ in range(n.bit_length() + 1):
            if left >= right:
                break
            mid = (left + right) // 2
            if suffix[mid] + count.fixed <= target:
                candidate = mid
                right = mid
            else:
                left = mid + 1
        if candidate == n:
            candidate = left
        if candidate >= n:
            if n == 1:
                return _Cut(0)
            candidate = n - 1
        return _safe_cutoff_point(state, candidate)

    def _summarized_view(
        self, to_summarize: Sequence[Message], count: ListCounter
    ) -> list[Message]:
        """``_trim_messages_for_summary``: what the summarizer sees."""
        limit = self.middleware.trim_tokens_to_summarize
        if limit is None:
            return list(to_summarize)
        outcome = trim_messages(
            to_summarize,
            max_tokens=limit,
            counter=count,
            strategy="last",
            allow_partial=True,
            start_on=("human",),
            include_system=True,
        )
        return outcome.messages(to_summarize)

    def _prompt(self, view: Sequence[Message]) -> str:
        return self.middleware.summary_prompt.format(messages=buffer_string_xml(view)).rstrip()

    # -- the strategy -----------------------------------------------------------------------

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        system, state = self._split(messages)
        count = self._count(counter)
        total = count(state)
        before = counter.count_messages(messages)
        noop = self._noop(messages, system, before)
        if not self.should_summarize(state, total):
            return noop
        cut = self._cutoff(state, count)
        if cut.index <= 0:
            return replace(
                noop,
                warnings=(
                    f"The trigger holds ({total:,} tokens, {len(state):,} messages) but keep="
                    f"{self.middleware.keep} keeps every message: nothing is summarized.",
                ),
            )
        to_summarize, kept = state[: cut.index], state[cut.index :]
        warnings: list[str] = []
        if cut.orphans:
            warnings.append(
                f"LangChain keeps tool result(s) {', '.join(map(repr, cut.orphans))} whose call "
                "is summarized: its safe cut stops at the first AI message owning any result at "
                "the cut (langchain-ai/langchain#38352, open in 1.5.2). The next request sends a "
                "tool result without its call, which OpenAI rejects."
            )
        view = self._summarized_view(to_summarize, count)
        request: SummaryRequest | None = None
        if not view:
            summary = TOO_LONG_TO_SUMMARIZE
        else:
            prompt = self._prompt(view)
            redactions: dict[str, int] = {}
            if self.redact_patterns:
                masked = redact_patterns(prompt)
                prompt, redactions = masked.text, dict(masked.counts)
            if summarizer is None:
                summarizer = OfflineSummarizer()
                warnings.insert(
                    0,
                    "No summarizer was configured: the offline extractive summarizer (no LLM) "
                    "wrote the summary.",
                )
            request = SummaryRequest(
                messages=({"role": "user", "content": prompt},),
                model=summarizer.model or "",
                redactions=redactions,
            )
            try:
                summary = summarizer.summarize(request).text.strip()
            except SummarizerError as exc:
                return replace(noop, warnings=(*warnings, f"{exc}; nothing was changed."))
        summary_message = Message(
            Role.USER, SUMMARY_PREFIX + summary, _summary_id(to_summarize, summary)
        )
        out = ([system] if system is not None else []) + [summary_message, *kept]
        decisions = dict.fromkeys((m.id for m in to_summarize), Decision.SUMMARIZED)
        decisions.update(dict.fromkeys((m.id for m in kept), Decision.KEPT))
        if system is not None:
            decisions[system.id] = Decision.PINNED
        return TrimResult(
            messages=tuple(out),
            decisions=decisions,
            tokens_before=before,
            tokens_after=counter.count_messages(out),
            inserted=(summary_message,),
            replace=True,
            summary_request=request,
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def _noop(self, messages: Sequence[Message], system: Message | None, total: int) -> TrimResult:
        decisions = dict.fromkeys((m.id for m in messages), Decision.KEPT)
        if system is not None:
            decisions[system.id] = Decision.PINNED
        return TrimResult(
            messages=tuple(messages),
            decisions=decisions,
            tokens_before=total,
            tokens_after=total,
            strategy=self.name,
        )

    def request_preview(
        self, messages: Sequence[Message], counter: TokenCounter, model: str | None = None
    ) -> SummaryRequest | None:
        """The request :meth:`apply` would send, without sending it (None: it would not)."""
        _, state = self._split(messages)
        count = self._count(counter)
        if not self.should_summarize(state, count(state)):
            return None
        cut = self._cutoff(state, count)
        if cut.index <= 0:
            return None
        view = self._summarized_view(state[: cut.index], count)
        if not view:
            return None
        prompt = self._prompt(view)
        redactions: dict[str, int] = {}
        if self.redact_patterns:
            masked = redact_patterns(prompt)
            prompt, redactions = masked.text, dict(masked.counts)
        return SummaryRequest(
            messages=({"role": "user", "content": prompt},),
            model=model or "",
            redactions=redactions,
        )

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        _, state = self._split(messages)
        return self._count(counter)(state)

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        _, state = self._split(messages)
        mw = self.middleware
        estimate = self._count(counter)(state)
        exact = counter.count_messages(messages)
        if not mw.clauses:
            return TriggerReport(
                fires=False,
                threshold=None,
                unit="tokens",
                estimate=estimate,
                exact=exact,
                text="Never fires: trigger is None (LangChain's default); set trigger=tokens=N "
                f"(this chat is at {estimate:,} tokens by LangChain's count).",
                framework="LangChain",
            )
        fires = self.should_summarize(state, estimate)
        parts: list[str] = []
        threshold: int | None = None
        for clause in mw.clauses:
            words = []
            for kind, value in clause:
                if kind == "messages":
                    words.append(f"{int(value):,} messages")
                else:
                    limit = mw.threshold(kind, value)
                    threshold = limit if threshold is None else min(threshold, limit)
                    where = (
                        f" ({value:g} of {mw.model}'s {mw.max_input_tokens:,})"
                        if kind == "fraction"
                        else ""
                    )
                    words.append(f"{limit:,} tokens{where}")
            parts.append(" and ".join(words))
        how = (
            f"count_tokens_approximately, {mw.chars_per_token:g} characters per token, "
            "system prompt not counted"
            if mw.token_counter == "approximate"
            else "the model's count, system prompt not counted"
        )
        unit = "tokens" if threshold is not None else "messages"
        measure = estimate if unit == "tokens" else len(state)
        if unit == "messages":
            threshold = min(int(v) for c in mw.clauses for k, v in c if k == "messages")
        text = (
            f"Fires at {' or at '.join(parts)} ({how}); this chat is at {estimate:,} tokens "
            f"and {len(state):,} messages: {'fires now' if fires else 'not yet'}."
        )
        return TriggerReport(
            fires=fires,
            threshold=threshold,
            unit=unit,
            estimate=measure,
            exact=exact if unit == "tokens" else None,
            text=text,
            framework="LangChain",
        )

    def config_code(self) -> str:
        mw = self.middleware
        provider = {"openai": "openai", "anthropic": "anthropic", "gemini": "google_genai"}.get(
            mw.model_info.provider, mw.model_info.provider
        )
        args = [f'"{provider}:{mw.model_info.name}"']
        if mw.clauses:
            args.append(f"trigger={_trigger_code(mw.clauses)}")
        kind, value = mw.keep_size
        if (kind, value) != ("messages", 20):
            args.append(f'keep=("{kind}", {_number(kind, value)})')
        if mw.trim_tokens_to_summarize != 4000:
            args.append(f"trim_tokens_to_summarize={mw.trim_tokens_to_summarize}")
        if mw.summary_prompt != DEFAULT_SUMMARY_PROMPT:
            args.append("summary_prompt=SUMMARY_PROMPT")
        if mw.token_counter == "model":
            args.append("token_counter=model.get_num_tokens_from_messages")
        lines = [
            "from langchain.agents import create_agent",
            "from langchain.agents.middleware import SummarizationMiddleware",
            "",
        ]
        if mw.summary_prompt != DEFAULT_SUMMARY_PROMPT:
            lines += [f"SUMMARY_PROMPT = {mw.summary_prompt!r}", ""]
        if not mw.clauses:
            lines.append("# trigger=None (the default) never summarizes: set one, e.g.")
            lines.append('# trigger=("tokens", 100_000)')
        joined = ",\n            ".join(args)
        lines += [
            "agent = create_agent(",
            f'    model="{provider}:{mw.model_info.name}",',
            "    tools=tools,",
            "    system_prompt=system_prompt,",
            "    middleware=[",
            "        SummarizationMiddleware(",
            f"            {joined},",
            "        )",
            "    ],",
            ")",
        ]
        return "\n".join(lines) + "\n"


def _trigger_code(clauses: tuple[Clause, ...]) -> str:
    def one(clause: Clause) -> str:
        if len(clause) == 1:
            kind, value = clause[0]
            return f'("{kind}", {_number(kind, value)})'
        return "{" + ", ".join(f'"{k}": {_number(k, v)}' for k, v in clause) + "}"

    if len(clauses) == 1:
        return one(clauses[0])
    return "[" + ", ".join(one(c) for c in clauses) + "]"


def _safe_cutoff_point(messages: Sequence[Message], cutoff: int) -> _Cut:
    """``_find_safe_cutoff_point``, bug #38352 included: the first earlier AI message owning
    *any* of the tool results at the cut becomes the cut."""
    if cutoff >= len(messages) or messages[cutoff].role is not Role.TOOL:
        return _Cut(cutoff)
    wanted: set[str] = set()
    idx = cutoff
    while idx < len(messages) and messages[idx].role is Role.TOOL:
        if messages[idx].tool_call_id:
            wanted.add(messages[idx].tool_call_id or "")
        idx += 1
    for i in range(cutoff - 1, -1, -1):
        ai_ids = _call_ids(messages[i])
        if ai_ids and wanted & ai_ids:
            kept_calls: set[str] = set()
            for m in messages[i:cutoff]:
                kept_calls |= _call_ids(m)
            owned_before = set().union(*(_call_ids(m) for m in messages[:i]))
            orphans = tuple(
                m.id
                for m in messages[cutoff:idx]
                if m.tool_call_id
                and m.tool_call_id not in kept_calls
                and m.tool_call_id in owned_before
            )
            return _Cut(i, orphans)
    return _Cut(idx)


def _call_ids(message: Message) -> set[str]:
    if message.role is not Role.ASSISTANT:
        return set()
    return {c["id"] for c in parsed_tool_calls(message) if c["id"]}


def _summary_id(summarized: Sequence[Message], summary: str) -> str:
    """A stable id for the summary message (LangChain gives it a random uuid4)."""
    seed = "\x1f".join([*(m.id for m in summarized), summary])
    return "langchain-summary-" + hashlib.sha256(seed.encode()).hexdigest()[:16]
