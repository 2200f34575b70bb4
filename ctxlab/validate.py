"""API-shape checks of a context: what a provider would reject before the model sees it.

:func:`validate` runs the rules of one provider over the messages a strategy would send and
returns :class:`Problem` values (never raises on odd chats: reused call ids, legacy
``function_call``, null contents). Each provider's rules are a tuple of small functions in
:data:`RULES`, so a provider or a rule is added in one place.

Speed (issue 15): the rules do not rescan the messages. :meth:`Context.scan` walks them once and
records, as positions, everything the turn and tool rules look for (:class:`Scan`); each rule
then only turns its few positions into Problems, and returns an empty list when there are none.
Validating the same messages for several providers in a row (the Compare page does it for every
provider) reuses the last scan and token count: messages are frozen, so a sequence holding the
very same Message objects (an identity check at C speed) has the same scan and count.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

from ctxlab.errors import UnknownNameError
from ctxlab.model import Message, Role, ToolCall

if TYPE_CHECKING:
    from ctxlab.tokens import TokenCounter

__all__ = ["PROVIDERS", "RULES", "Context", "Problem", "Rule", "Scan", "validate"]

Severity = Literal["error", "warning"]
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a context.

    Attributes:
        code: kebab-case rule name, stable (tests and the UI key on it).
        severity: "error" (the provider rejects the request) or "warning" (accepted, but
            deprecated, merged or likely unintended).
        message_id: the id of the message at fault, or None for the context as a whole.
        text: a sentence a user can act on, naming the message's position and id.
        provider_error: the provider's own wording of the error this prevents, when known.
    """

    code: str
    severity: Severity
    message_id: str | None
    text: str
    provider_error: str | None = None


@dataclass(frozen=True, slots=True)
class Scan:
    """What the turn and tool rules read, gathered in one pass over the messages.

    Every field lists positions in message order (so the Problems built from it come out in
    message order). A "calling" message is an assistant message with ``tool_calls``; a "run" is
    a maximal stretch of consecutive tool results (TOOL or FUNCTION), and its "caller" is the
    message right before it (-1 when the run opens the context).

    Attributes:
        first_conversational: index of the first message that is not system/developer, or -1.
        late_instructions: system/developer messages after the first conversational one.
        merged_turns: ``(i, role)`` for a non-tool message whose Anthropic turn role
            ("user"/"assistant") is the one of the last non-system message before it.
        duplicate_ids: ``(i, id)``: message i's calls repeat ``id`` (the first repeat).
        legacy: ``(i, function_role)``: message i has the 'function' role (True), or a call
            without an id, the legacy ``function_call`` (False).
        orphans: ``(i, caller, caller_calls)``: tool result i is not answered by its run's
            caller: the caller makes no calls (``caller_calls`` False), or i is a TOOL message
            whose ``tool_call_id`` is not one of the caller's call ids.
        unanswered: ``(i, ids)``: calling message i has call ids (non-None) that no result of
            the run right after it answers; ``ids`` is them, deduplicated, joined by ", ".
        gemini_runs: per run, in run order, ``(i, calls, responses)``: ``calls`` is -1 when the
            caller makes no calls (``i`` is then the run's first result); otherwise ``i`` is the
            caller, whose ``calls`` calls get ``responses`` results, a different number.
        silent_calls: calling messages not followed by a tool result.
    """

    first_conversational: int
    late_instructions: tuple[int, ...]
    merged_turns: tuple[tuple[int, str], ...]
    duplicate_ids: tuple[tuple[int, str], ...]
    legacy: tuple[tuple[int, bool], ...]
    orphans: tuple[tuple[int, int, bool], ...]
    unanswered: tuple[tuple[int, str], ...]
    gemini_runs: tuple[tuple[int, int, int], ...]
    silent_calls: tuple[int, ...]


@dataclass(slots=True)
class _Memo:
    """A context's lazily computed scan and token count (computed at most once each)."""

    scan: Scan | None = None
    tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """What the rules read: the messages, plus the optional budget, counter and the model's
    context window (tokens the model accepts per request).

    :meth:`scan` and :meth:`tokens` are computed on first use and kept: the messages must not
    change while the context is used.
    """

    messages: Sequence[Message]
    budget: int | None = None
    counter: TokenCounter | None = None
    window: int | None = None
    _memo: _Memo = field(default_factory=_Memo, init=False, repr=False, compare=False)

    def where(self, i: int) -> str:
        """``messages[i] (role, id 'x')``: how problem texts name a message."""
        m = self.messages[i]
        return f"messages[{i}] ({m.role.value}, id {m.id!r})"

    def tool_runs(self) -> Iterator[tuple[int, int, int]]:
        """``(caller, start, stop)`` for every run of consecutive tool results.

        ``caller`` is the index of the message just before the run (-1 at the very start);
        the run is ``messages[start:stop]``.
        """
        messages = self.messages
        i, n = 0, len(messages)
        while i < n:
            if messages[i].role.is_tool_result:
                j = i
                while j < n and messages[j].role.is_tool_result:
                    j += 1
                yield i - 1, i, j
                i = j
            else:
                i += 1

    def scan(self) -> Scan:
        """The one-pass :class:`Scan` of the messages (shared by every rule)."""
        memo = self._memo
        if memo.scan is None:
            memo.scan = _shared(self.messages, None, _scan)
        return memo.scan

    def tokens(self) -> int:
        """``counter.count_messages(messages)``; only call it when ``counter`` is set."""
        memo = self._memo
        counter = self.counter
        if memo.tokens is None:
            assert counter is not None, "Context.tokens needs a counter"
            memo.tokens = _shared(self.messages, counter, counter.count_messages)
        return memo.tokens


Rule = Callable[[Context], Iterable[Problem]]
"""A rule: the problems of a context, in message order (an empty list when it is fine)."""


# -- the one pass ---------------------------------------------------------------------------

_MANY = object()  # "the caller makes several calls" (a single call's id may be None)


def _scan(messages: Sequence[Message]) -> Scan:
    """Walk ``messages`` once; see :class:`Scan` for what is recorded.

    The common shapes cost a few comparisons per message: a tool result answering the single
    call of the message before it, a calling message answered by exactly one result, a message
    making no calls or one call with an id. Anything else goes to the small helpers below.
    Roles are told apart by identity: TOOL and FUNCTION are tool results, ASSISTANT and USER
    turns, and every other role an instruction (system or developer).
    """
    late: list[int] = []
    merged: list[tuple[int, str]] = []
    duplicates: list[tuple[int, str]] = []
    legacy: list[tuple[int, bool]] = []
    orphans: list[tuple[int, int, bool]] = []
    unanswered: list[tuple[int, str]] = []
    gemini_runs: list[tuple[int, int, int]] = []
    silent: list[int] = []
    first = next((i for i, m in enumerate(messages) if not m.role.is_instruction), -1)
    top = first if first >= 0 else len(messages)  # instructions after it are late
    previous = ""  # Anthropic turn role of the last non-system message
    # The message before the current (or next) run of tool results: its index, its calls when
    # it is a calling message (else None), the id of its call when it makes exactly one (else
    # _MANY) and the set of its call ids when it makes several. run_start: the current run's
    # first index (-1 outside a run); answered: the run is exactly one result and it answers
    # the caller's single call (nothing for _close_run to look at).
    caller = -1
    calls: tuple[ToolCall, ...] | None = None
    only: object = _MANY
    ids: set[str | None] = set()
    run_start = -1
    answered = False
    tool, function, assistant, user, many = (
        Role.TOOL,
        Role.FUNCTION,
        Role.ASSISTANT,
        Role.USER,
        _MANY,
    )
    for i, m in enumerate(messages):
        role = m.role
        made = m.tool_calls
        if made and (len(made) > 1 or made[0].id is None):
            _odd_calls(i, made, role is function, duplicates, legacy)
        if role is tool or role is function:
            answer = m.tool_call_id
            if run_start < 0:
                run_start = i
                answered = only is None or answer == only
            else:
                answered = False
            if role is function:
                legacy.append((i, True))
                if calls is None:
                    orphans.append((i, caller, False))
            elif calls is None:
                orphans.append((i, caller, False))
            elif answer != only and (only is not many or answer not in ids):
                orphans.append((i, caller, True))
            previous = "user"
            continue
        if calls is not None:
            if not answered:
                _close_run(messages, caller, calls, run_start, i, unanswered, gemini_runs, silent)
        elif run_start >= 0:
            gemini_runs.append((run_start, -1, i - run_start))
        if role is assistant:
            if previous == "assistant":
                merged.append((i, "assistant"))
            previous = "assistant"
            if made:
                calls = made
                if len(made) == 1:
                    only = made[0].id
                else:
                    only = many
                    ids = {c.id for c in made}
            else:
                calls = None
        else:
            calls = None
            if role is user:
                if previous == "user":
                    merged.append((i, "user"))
                previous = "user"
            elif i > top:
                late.append(i)
        caller = i
        run_start = -1
        answered = False
    end = len(messages)
    if calls is not None:
        if not answered:
            _close_run(messages, caller, calls, run_start, end, unanswered, gemini_runs, silent)
    elif run_start >= 0:
        gemini_runs.append((run_start, -1, end - run_start))
    return Scan(
        first,
        tuple(late),
        tuple(merged),
        tuple(duplicates),
        tuple(legacy),
        tuple(orphans),
        tuple(unanswered),
        tuple(gemini_runs),
        tuple(silent),
    )


def _odd_calls(
    i: int,
    made: tuple[ToolCall, ...],
    function_role: bool,
    duplicates: list[tuple[int, str]],
    legacy: list[tuple[int, bool]],
) -> None:
    """Record message i's first repeated call id and its id-less (legacy) call, if any."""
    seen: set[str] = set()
    for c in made:
        if c.id is None:
            continue
        if c.id in seen:
            duplicates.append((i, c.id))
            break
        seen.add(c.id)
    if not function_role and any(c.id is None for c in made):
        legacy.append((i, False))


def _close_run(
    messages: Sequence[Message],
    caller: int,
    calls: tuple[ToolCall, ...],
    run_start: int,
    stop: int,
    unanswered: list[tuple[int, str]],
    gemini_runs: list[tuple[int, int, int]],
    silent: list[int],
) -> None:
    """Record what calling message ``caller`` and the run after it (``messages[run_start:stop]``,
    none when ``run_start`` is -1) leave wrong: call ids no result answers, a response count
    that differs from the call count, no response at all."""
    answered = [] if run_start < 0 else [messages[k].tool_call_id for k in range(run_start, stop)]
    if not answered:
        silent.append(caller)
    elif len(answered) != len(calls):
        gemini_runs.append((caller, len(calls), len(answered)))
    done = set(answered)
    missing = [c.id for c in calls if c.id is not None and c.id not in done]
    if missing:
        unanswered.append((caller, ", ".join(dict.fromkeys(missing))))


@dataclass(slots=True)
class _Kept:
    """The messages last validated (as a tuple of the very Message objects) and what was
    computed from them: the scan under key None, a counter's count under that counter."""

    messages: tuple[Message, ...] = ()
    values: dict[int, tuple[object, object]] = field(default_factory=dict)


# One entry: the Compare page validates one context for every provider in a row.
_KEPT = _Kept()
_KEPT_LOCK = threading.Lock()


def forget_kept() -> None:
    """Drop the memo of the last messages validated (a whole context: a server calls this when
    the sessions that used it have left, so that it does not outlive them)."""
    global _KEPT
    with _KEPT_LOCK:
        _KEPT = _Kept()


def _same_messages(messages: Sequence[Message], kept: tuple[Message, ...]) -> bool:
    """True when ``messages`` holds the very objects of ``kept``, in order (a C-speed identity
    check; messages are frozen, so whatever was computed from ``kept`` holds for them)."""
    return messages is kept or (
        len(messages) == len(kept) and all(map(operator.is_, messages, kept))
    )


def _shared(
    messages: Sequence[Message], key: object, compute: Callable[[Sequence[Message]], _T]
) -> _T:
    """``compute(messages)``, reusing the value kept for the same Message objects and ``key``
    (compared by identity; ``compute`` must depend on nothing else)."""
    global _KEPT
    with _KEPT_LOCK:
        kept = _KEPT
    same = _same_messages(messages, kept.messages)
    if same:
        held = kept.values.get(id(key))
        if held is not None and held[0] is key:
            return held[1]  # type: ignore[return-value]
    value = compute(messages)
    with _KEPT_LOCK:
        if same and _KEPT is kept:
            kept.values[id(key)] = (key, value)
        elif not same:
            frozen = messages if type(messages) is tuple else tuple(messages)
            _KEPT = _Kept(frozen, {id(key): (key, value)})
    return value


# -- rules shared by providers ---------------------------------------------------------------


def empty_context(ctx: Context) -> list[Problem]:
    if ctx.messages:
        return []
    return [
        Problem(
            "empty-context",
            "error",
            None,
            "The context has no messages: every request needs at least one; lower the trim or "
            "raise the budget.",
            None,
        )
    ]


def over_budget(ctx: Context) -> list[Problem]:
    if ctx.budget is None or ctx.counter is None or not ctx.messages:
        return []
    tokens = ctx.tokens()
    if tokens <= ctx.budget:
        return []
    return [
        Problem(
            "over-budget",
            "error",
            None,
            f"The context is {tokens:,} tokens, over the budget of {ctx.budget:,} by "
            f"{tokens - ctx.budget:,}; trim more or raise the budget.",
            None,
        )
    ]


def _over_window(code_text: str, wording: str) -> Rule:
    """A rule: the context counts more tokens than the model's window; the provider's own error
    ``wording`` (``{tokens}`` and ``{window}`` filled in, unformatted as the providers write
    them)."""

    def rule(ctx: Context) -> list[Problem]:
        if ctx.window is None or ctx.counter is None or not ctx.messages:
            return []
        tokens = ctx.tokens()
        if tokens <= ctx.window:
            return []
        return [
            Problem(
                "over-window",
                "error",
                None,
                f"The context is {tokens:,} tokens, over the model's {ctx.window:,}-token "
                f"context window by {tokens - ctx.window:,}: {code_text}; trim more.",
                wording.format(tokens=tokens, window=ctx.window),
            )
        ]

    rule.__name__ = "over_window"
    return rule


openai_over_window = _over_window(
    "OpenAI refuses it (context_length_exceeded)",
    "This model's maximum context length is {window} tokens. However, your messages resulted "
    "in {tokens} tokens. Please reduce the length of the messages.",
)
anthropic_over_window = _over_window(
    "Anthropic refuses it (invalid_request_error)",
    "prompt is too long: {tokens} tokens > {window} maximum",
)
gemini_over_window = _over_window(
    "Gemini refuses it (INVALID_ARGUMENT)",
    "The input token count ({tokens}) exceeds the maximum number of tokens allowed ({window}).",
)


def duplicate_tool_call_ids(ctx: Context) -> list[Problem]:
    return [
        Problem(
            "duplicate-tool-call-id",
            "error",
            ctx.messages[i].id,
            f"{ctx.where(i)} makes two tool calls with the same id {call_id!r}: each call "
            "of one message needs its own id so its result can answer it.",
            None,
        )
        for i, call_id in ctx.scan().duplicate_ids
    ]


# -- OpenAI Chat Completions ----------------------------------------------------------------

_OPENAI_ORPHAN = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
_OPENAI_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)


def openai_orphan_tool_results(ctx: Context) -> list[Problem]:
    """A tool message must directly follow (after other tool messages) the assistant message
    whose ``tool_calls`` include its ``tool_call_id``."""
    problems = []
    for i, caller, caller_calls in ctx.scan().orphans:
        m = ctx.messages[i]
        if caller_calls:
            reason = (
                f"its tool_call_id {m.tool_call_id!r} is not one of the calls of "
                f"{ctx.where(caller)}"
            )
        elif m.role is Role.FUNCTION:
            reason = "no assistant function_call comes right before it"
        else:
            reason = "no assistant message with tool_calls comes right before it"
        problems.append(
            Problem(
                "orphan-tool-result",
                "error",
                m.id,
                f"{ctx.where(i)} is a tool result, but {reason}: keep its call with it "
                "(e.g. window-drop keeps whole rounds) or drop it too.",
                _OPENAI_ORPHAN,
            )
        )
    return problems


def openai_unanswered_tool_calls(ctx: Context) -> list[Problem]:
    """Every call id of an assistant message must be answered before the next non-tool one."""
    return [
        Problem(
            "unanswered-tool-call",
            "error",
            ctx.messages[i].id,
            f"{ctx.where(i)} calls tools whose results are missing from the context "
            f"({ids}): keep the tool messages right after it, or drop the call too.",
            _OPENAI_UNANSWERED.format(ids=ids),
        )
        for i, ids in ctx.scan().unanswered
    ]


def legacy_function_calls(ctx: Context) -> list[Problem]:
    return [
        Problem(
            "legacy-function-call",
            "warning",
            ctx.messages[i].id,
            f"{ctx.where(i)} "
            + (
                "uses the deprecated 'function' role"
                if function_role
                else "uses the deprecated 'function_call' field"
            )
            + "; OpenAI still accepts it but it is deprecated in favour of "
            "tool_calls and 'tool' messages.",
            None,
        )
        for i, function_role in ctx.scan().legacy
    ]


def openai_bad_start(ctx: Context) -> list[Problem]:
    i = ctx.scan().first_conversational
    if i < 0:
        return []
    m = ctx.messages[i]
    if m.role.is_tool_result:
        return [
            Problem(
                "starts-with-tool-result",
                "error",
                m.id,
                f"The conversation starts with a tool result, {ctx.where(i)}: its call was "
                "trimmed away; drop the result too or keep the call.",
                _OPENAI_ORPHAN,
            )
        ]
    if m.role is Role.ASSISTANT:
        return [
            Problem(
                "starts-with-assistant",
                "warning",
                m.id,
                f"The conversation starts with an assistant message, {ctx.where(i)}: the user "
                "turn it answered was trimmed away, so the model sees a reply to nothing.",
                None,
            )
        ]
    return []


# -- Anthropic Messages ---------------------------------------------------------------------


def anthropic_first_user(ctx: Context) -> list[Problem]:
    i = ctx.scan().first_conversational
    if i < 0 or ctx.messages[i].role is Role.USER:
        return []
    return [
        Problem(
            "first-not-user",
            "error",
            ctx.messages[i].id,
            f"The first message after the system prompt must be a user message; it is "
            f"{ctx.where(i)}. Keep the user turn that started the exchange.",
            'messages: first message must use the "user" role',
        )
    ]


def anthropic_system_on_top(ctx: Context) -> list[Problem]:
    return [
        Problem(
            "system-not-at-top",
            "error",
            ctx.messages[i].id,
            f"{ctx.where(i)} is a system message after the conversation started; Anthropic "
            "takes system text only as the top-level 'system' parameter. Move it to the top "
            "or send it as a user message.",
            None,
        )
        for i in ctx.scan().late_instructions
    ]


def anthropic_merged_turns(ctx: Context) -> list[Problem]:
    return [
        Problem(
            "consecutive-same-role",
            "warning",
            ctx.messages[i].id,
            f"{ctx.where(i)} follows another {role} turn; Anthropic combines consecutive "
            "turns of one role into a single turn.",
            None,
        )
        for i, role in ctx.scan().merged_turns
    ]


def anthropic_tool_pairs(ctx: Context) -> list[Problem]:
    """tool_result blocks must be in the user turn right after the assistant's tool_use."""
    scan = ctx.scan()
    problems = []
    for i, _, _ in scan.orphans:
        m = ctx.messages[i]
        problems.append(
            Problem(
                "orphan-tool-result",
                "error",
                m.id,
                f"{ctx.where(i)} is a tool result with no matching tool_use in the assistant "
                "turn right before it: keep its call with it or drop it too.",
                f"unexpected `tool_use_id` found in `tool_result` blocks: {m.tool_call_id}. "
                "Each `tool_result` block must have a corresponding `tool_use` block in the "
                "previous message.",
            )
        )
    for i, ids_text in scan.unanswered:
        problems.append(
            Problem(
                "unanswered-tool-call",
                "error",
                ctx.messages[i].id,
                f"{ctx.where(i)} has tool_use blocks with no tool_result right after it "
                f"({ids_text}): keep the results or drop the call.",
                f"`tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{ids_text}. Each `tool_use` block must have a corresponding `tool_result` "
                "block in the next message.",
            )
        )
    return problems


# -- Gemini ---------------------------------------------------------------------------------


def gemini_first_user(ctx: Context) -> list[Problem]:
    i = ctx.scan().first_conversational
    if i < 0 or ctx.messages[i].role is Role.USER:
        return []
    return [
        Problem(
            "first-not-user",
            "error",
            ctx.messages[i].id,
            f"Gemini needs the first content to come from the user; it is {ctx.where(i)}. "
            "Keep the user turn that started the exchange.",
            "Please ensure that multiturn requests alternate between user and model.",
        )
    ]


def gemini_function_pairs(ctx: Context) -> list[Problem]:
    scan = ctx.scan()
    problems = []
    for i, calls, responses in scan.gemini_runs:
        if calls < 0:
            problems.append(
                Problem(
                    "orphan-tool-result",
                    "error",
                    ctx.messages[i].id,
                    f"{ctx.where(i)} is a function response with no function call right "
                    "before it: keep its call with it or drop it too.",
                    "Please ensure that function response turn comes immediately after a "
                    "function call turn.",
                )
            )
        else:
            problems.append(
                Problem(
                    "function-response-count",
                    "error",
                    ctx.messages[i].id,
                    f"{ctx.where(i)} makes {calls} function call(s) but {responses} "
                    "response(s) follow it: keep every response with its call.",
                    "Please ensure that the number of function response parts is equal to the "
                    "number of function call parts of the function call turn.",
                )
            )
    for i in scan.silent_calls:
        problems.append(
            Problem(
                "unanswered-tool-call",
                "error",
                ctx.messages[i].id,
                f"{ctx.where(i)} makes function calls with no responses after it: keep the "
                "responses or drop the call.",
                None,
            )
        )
    return problems


def gemini_system_on_top(ctx: Context) -> list[Problem]:
    return [
        Problem(
            problem.code,
            "warning",
            problem.message_id,
            problem.text.replace("Anthropic", "Gemini").replace(
                "top-level 'system' parameter", "system_instruction"
            ),
            None,
        )
        for problem in anthropic_system_on_top(ctx)
    ]


RULES: dict[str, tuple[Rule, ...]] = {
    "openai": (
        empty_context,
        openai_bad_start,
        openai_orphan_tool_results,
        openai_unanswered_tool_calls,
        duplicate_tool_call_ids,
        legacy_function_calls,
        over_budget,
        openai_over_window,
    ),
    "anthropic": (
        empty_context,
        anthropic_first_user,
        anthropic_system_on_top,
        anthropic_merged_turns,
        anthropic_tool_pairs,
        duplicate_tool_call_ids,
        over_budget,
        anthropic_over_window,
    ),
    "gemini": (
        empty_context,
        gemini_first_user,
        gemini_system_on_top,
        gemini_function_pairs,
        over_budget,
        gemini_over_window,
    ),
}
PROVIDERS: tuple[str, ...] = tuple(RULES)


def validate(
    messages: Sequence[Message],
    *,
    budget: int | None = None,
    counter: TokenCounter | None = None,
    provider: str = "openai",
    window: int | None = None,
    tokens: int | None = None,
) -> tuple[Problem, ...]:
    """The problems ``provider`` would have with ``messages`` sent as one request.

    Args:
        messages: the context to send (e.g. ``TrimResult.messages``).
        budget: the caller's own token budget; with ``counter``, a context over it is an
            ``over-budget`` error. No API rejects a request for that, so the app leaves it out
            of the provider checks and reports it apart (:mod:`ctxlab.checks`).
        counter: counts ``messages`` for the budget check (reply priming included). Its count
            must depend on the messages only: validating the very same Message objects with the
            same counter again (another provider) reuses the last count.
        provider: one of :data:`PROVIDERS`.
        window: the model's context window (``ModelInfo.context_window``); with ``counter``, a
            context over it is an error worded as ``provider`` words it.
        tokens: ``counter.count_messages(messages)`` when the caller already knows it (a
            ``TrimResult``'s ``tokens_after``): the rules use it instead of counting.

    Returns:
        Problems in rule order, then message order; empty when the context is fine.

    Raises:
        UnknownNameError: ``provider`` is not one of :data:`PROVIDERS`.
    """
    rules = RULES.get(provider)
    if rules is None:
        raise UnknownNameError(
            f"unknown provider {provider!r} for validation; available: {', '.join(PROVIDERS)}"
        )
    ctx = Context(messages, budget, counter, window)
    if tokens is not None:
        ctx._memo.tokens = tokens
    problems: list[Problem] = []
    for rule in rules:
        problems += rule(ctx)
    return tuple(problems)
