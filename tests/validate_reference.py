"""PINNED REFERENCE: a verbatim copy of ``ctxlab/validate.py`` as of commit 0d0aeb0 (before
issue 15's speed-up). Do not edit or "fix" it: ``tests/test_validate_equivalence.py`` checks that
the optimised :func:`ctxlab.validate.validate` returns exactly the same Problems (same order,
same texts) as this reference's :func:`validate` on every input. Only this docstring differs from
the original module.

Original docstring: API-shape checks of a context: what a provider would reject before the model
sees it. :func:`validate` runs the rules of one provider over the messages a strategy would send
and returns :class:`Problem` values. Each provider's rules are a tuple of small functions in
:data:`RULES`, so a provider or a rule is added in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ctxlab.errors import UnknownNameError
from ctxlab.model import Message, Role

if TYPE_CHECKING:
    from ctxlab.tokens import TokenCounter

__all__ = ["PROVIDERS", "RULES", "Context", "Problem", "Rule", "validate"]

Severity = Literal["error", "warning"]


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
class Context:
    """What the rules read: the messages, plus the optional budget, counter and the model's
    context window (tokens the model accepts per request)."""

    messages: Sequence[Message]
    budget: int | None = None
    counter: TokenCounter | None = None
    window: int | None = None

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


Rule = Callable[[Context], Iterator[Problem]]


def _calls(message: Message) -> bool:
    return message.role is Role.ASSISTANT and bool(message.tool_calls)


# -- rules shared by providers ---------------------------------------------------------------


def empty_context(ctx: Context) -> Iterator[Problem]:
    if not ctx.messages:
        yield Problem(
            "empty-context",
            "error",
            None,
            "The context has no messages: every request needs at least one; lower the trim or "
            "raise the budget.",
            None,
        )


def over_budget(ctx: Context) -> Iterator[Problem]:
    if ctx.budget is None or ctx.counter is None or not ctx.messages:
        return
    tokens = ctx.counter.count_messages(ctx.messages)
    if tokens > ctx.budget:
        yield Problem(
            "over-budget",
            "error",
            None,
            f"The context is {tokens:,} tokens, over the budget of {ctx.budget:,} by "
            f"{tokens - ctx.budget:,}; trim more or raise the budget.",
            None,
        )


def _over_window(code_text: str, wording: str) -> Rule:
    """A rule: the context counts more tokens than the model's window; the provider's own error
    ``wording`` (``{tokens}`` and ``{window}`` filled in, unformatted as the providers write
    them)."""

    def rule(ctx: Context) -> Iterator[Problem]:
        if ctx.window is None or ctx.counter is None or not ctx.messages:
            return
        tokens = ctx.counter.count_messages(ctx.messages)
        if tokens > ctx.window:
            yield Problem(
                "over-window",
                "error",
                None,
                f"The context is {tokens:,} tokens, over the model's {ctx.window:,}-token "
                f"context window by {tokens - ctx.window:,}: {code_text}; trim more.",
                wording.format(tokens=tokens, window=ctx.window),
            )

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


# -- OpenAI Chat Completions ----------------------------------------------------------------

_OPENAI_ORPHAN = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
_OPENAI_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)


def openai_orphan_tool_results(ctx: Context) -> Iterator[Problem]:
    """A tool message must directly follow (after other tool messages) the assistant message
    whose ``tool_calls`` include its ``tool_call_id``."""
    messages = ctx.messages
    for caller, start, stop in ctx.tool_runs():
        caller_ok = caller >= 0 and _calls(messages[caller])
        ids = {c.id for c in messages[caller].tool_calls} if caller_ok else set()
        for i in range(start, stop):
            m = messages[i]
            if m.role is Role.FUNCTION:
                if caller_ok:
                    continue  # legacy reply: paired with the function_call before it, by name
                reason = "no assistant function_call comes right before it"
            elif not caller_ok:
                reason = "no assistant message with tool_calls comes right before it"
            elif m.tool_call_id not in ids:
                reason = (
                    f"its tool_call_id {m.tool_call_id!r} is not one of the calls of "
                    f"{ctx.where(caller)}"
                )
            else:
                continue
            yield Problem(
                "orphan-tool-result",
                "error",
                m.id,
                f"{ctx.where(i)} is a tool result, but {reason}: keep its call with it "
                "(e.g. window-drop keeps whole rounds) or drop it too.",
                _OPENAI_ORPHAN,
            )


def _unanswered_calls(messages: Sequence[Message]) -> Iterator[tuple[int, Message, str]]:
    """``(position, assistant message, ids)`` for calls not answered right after the message.

    Both OpenAI and Anthropic require every call's result in the tool messages that directly
    follow the calling message.
    """
    for i, m in enumerate(messages):
        if not _calls(m):
            continue
        answered: set[str | None] = set()
        j = i + 1
        while j < len(messages) and messages[j].role.is_tool_result:
            answered.add(messages[j].tool_call_id)
            j += 1
        missing = [c.id for c in m.tool_calls if c.id is not None and c.id not in answered]
        if missing:
            yield i, m, ", ".join(dict.fromkeys(x for x in missing if x is not None))


def openai_unanswered_tool_calls(ctx: Context) -> Iterator[Problem]:
    """Every call id of an assistant message must be answered before the next non-tool one."""
    for i, m, ids in _unanswered_calls(ctx.messages):
        yield Problem(
            "unanswered-tool-call",
            "error",
            m.id,
            f"{ctx.where(i)} calls tools whose results are missing from the context "
            f"({ids}): keep the tool messages right after it, or drop the call too.",
            _OPENAI_UNANSWERED.format(ids=ids),
        )


def duplicate_tool_call_ids(ctx: Context) -> Iterator[Problem]:
    for i, m in enumerate(ctx.messages):
        seen: set[str] = set()
        for c in m.tool_calls:
            if c.id is None:
                continue
            if c.id in seen:
                yield Problem(
                    "duplicate-tool-call-id",
                    "error",
                    m.id,
                    f"{ctx.where(i)} makes two tool calls with the same id {c.id!r}: each call "
                    "of one message needs its own id so its result can answer it.",
                    None,
                )
                break
            seen.add(c.id)


def legacy_function_calls(ctx: Context) -> Iterator[Problem]:
    for i, m in enumerate(ctx.messages):
        if m.role is Role.FUNCTION:
            what = "uses the deprecated 'function' role"
        elif any(c.id is None for c in m.tool_calls):
            what = "uses the deprecated 'function_call' field"
        else:
            continue
        yield Problem(
            "legacy-function-call",
            "warning",
            m.id,
            f"{ctx.where(i)} {what}; OpenAI still accepts it but it is deprecated in favour of "
            "tool_calls and 'tool' messages.",
            None,
        )


def _first_conversational(messages: Sequence[Message]) -> int:
    """Index of the first message that is not system/developer, or -1."""
    return next((i for i, m in enumerate(messages) if not m.role.is_instruction), -1)


def openai_bad_start(ctx: Context) -> Iterator[Problem]:
    i = _first_conversational(ctx.messages)
    if i < 0:
        return
    m = ctx.messages[i]
    if m.role.is_tool_result:
        yield Problem(
            "starts-with-tool-result",
            "error",
            m.id,
            f"The conversation starts with a tool result, {ctx.where(i)}: its call was trimmed "
            "away; drop the result too or keep the call.",
            _OPENAI_ORPHAN,
        )
    elif m.role is Role.ASSISTANT:
        yield Problem(
            "starts-with-assistant",
            "warning",
            m.id,
            f"The conversation starts with an assistant message, {ctx.where(i)}: the user turn "
            "it answered was trimmed away, so the model sees a reply to nothing.",
            None,
        )


# -- Anthropic Messages ---------------------------------------------------------------------


def _anthropic_role(role: Role) -> str:
    """Anthropic's turn role: tool results travel in user turns; system is a parameter."""
    if role.is_instruction:
        return "system"
    return "assistant" if role is Role.ASSISTANT else "user"


def anthropic_first_user(ctx: Context) -> Iterator[Problem]:
    i = _first_conversational(ctx.messages)
    if i >= 0 and ctx.messages[i].role is not Role.USER:
        m = ctx.messages[i]
        yield Problem(
            "first-not-user",
            "error",
            m.id,
            f"The first message after the system prompt must be a user message; it is "
            f"{ctx.where(i)}. Keep the user turn that started the exchange.",
            'messages: first message must use the "user" role',
        )


def anthropic_system_on_top(ctx: Context) -> Iterator[Problem]:
    seen_turn = False
    for i, m in enumerate(ctx.messages):
        if not m.role.is_instruction:
            seen_turn = True
        elif seen_turn:
            yield Problem(
                "system-not-at-top",
                "error",
                m.id,
                f"{ctx.where(i)} is a system message after the conversation started; Anthropic "
                "takes system text only as the top-level 'system' parameter. Move it to the top "
                "or send it as a user message.",
                None,
            )


def anthropic_merged_turns(ctx: Context) -> Iterator[Problem]:
    previous = ""
    for i, m in enumerate(ctx.messages):
        role = _anthropic_role(m.role)
        if role == "system":
            continue
        if role == previous and not m.role.is_tool_result:
            yield Problem(
                "consecutive-same-role",
                "warning",
                m.id,
                f"{ctx.where(i)} follows another {role} turn; Anthropic combines consecutive "
                "turns of one role into a single turn.",
                None,
            )
        previous = role


def anthropic_tool_pairs(ctx: Context) -> Iterator[Problem]:
    """tool_result blocks must be in the user turn right after the assistant's tool_use."""
    messages = ctx.messages
    for caller, start, stop in ctx.tool_runs():
        caller_ok = caller >= 0 and _calls(messages[caller])
        ids = {c.id for c in messages[caller].tool_calls} if caller_ok else set()
        for i in range(start, stop):
            m = messages[i]
            if caller_ok and (m.role is Role.FUNCTION or m.tool_call_id in ids):
                continue
            yield Problem(
                "orphan-tool-result",
                "error",
                m.id,
                f"{ctx.where(i)} is a tool result with no matching tool_use in the assistant "
                "turn right before it: keep its call with it or drop it too.",
                f"unexpected `tool_use_id` found in `tool_result` blocks: {m.tool_call_id}. "
                "Each `tool_result` block must have a corresponding `tool_use` block in the "
                "previous message.",
            )
    for i, m, ids_text in _unanswered_calls(messages):
        yield Problem(
            "unanswered-tool-call",
            "error",
            m.id,
            f"{ctx.where(i)} has tool_use blocks with no tool_result right after it "
            f"({ids_text}): keep the results or drop the call.",
            f"`tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{ids_text}. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message.",
        )


# -- Gemini ---------------------------------------------------------------------------------


def gemini_first_user(ctx: Context) -> Iterator[Problem]:
    i = _first_conversational(ctx.messages)
    if i >= 0 and ctx.messages[i].role is not Role.USER:
        m = ctx.messages[i]
        yield Problem(
            "first-not-user",
            "error",
            m.id,
            f"Gemini needs the first content to come from the user; it is {ctx.where(i)}. "
            "Keep the user turn that started the exchange.",
            "Please ensure that multiturn requests alternate between user and model.",
        )


def gemini_function_pairs(ctx: Context) -> Iterator[Problem]:
    messages = ctx.messages
    for caller, start, stop in ctx.tool_runs():
        if caller < 0 or not _calls(messages[caller]):
            m = messages[start]
            yield Problem(
                "orphan-tool-result",
                "error",
                m.id,
                f"{ctx.where(start)} is a function response with no function call right before "
                "it: keep its call with it or drop it too.",
                "Please ensure that function response turn comes immediately after a function "
                "call turn.",
            )
            continue
        calls = len(messages[caller].tool_calls)
        if stop - start != calls:
            m = messages[caller]
            yield Problem(
                "function-response-count",
                "error",
                m.id,
                f"{ctx.where(caller)} makes {calls} function call(s) but {stop - start} "
                "response(s) follow it: keep every response with its call.",
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn.",
            )
    for i, m in enumerate(messages):
        if _calls(m) and (i + 1 >= len(messages) or not messages[i + 1].role.is_tool_result):
            yield Problem(
                "unanswered-tool-call",
                "error",
                m.id,
                f"{ctx.where(i)} makes function calls with no responses after it: keep the "
                "responses or drop the call.",
                None,
            )


def gemini_system_on_top(ctx: Context) -> Iterator[Problem]:
    for problem in anthropic_system_on_top(ctx):
        yield Problem(
            problem.code,
            "warning",
            problem.message_id,
            problem.text.replace("Anthropic", "Gemini").replace(
                "top-level 'system' parameter", "system_instruction"
            ),
            None,
        )


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
) -> tuple[Problem, ...]:
    """The problems ``provider`` would have with ``messages`` sent as one request.

    Args:
        messages: the context to send (e.g. ``TrimResult.messages``).
        budget: token budget; with ``counter``, a context over it is an error.
        counter: counts ``messages`` for the budget check (reply priming included).
        provider: one of :data:`PROVIDERS`.
        window: the model's context window (``ModelInfo.context_window``); with ``counter``, a
            context over it is an error worded as ``provider`` words it.

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
    return tuple(problem for rule in rules for problem in rule(ctx))
