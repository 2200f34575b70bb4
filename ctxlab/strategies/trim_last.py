"""TrimLast: LangChain's ``trim_messages(strategy="last")``, message by message.

Reproduces ``langchain_core.messages.trim_messages`` with ``strategy="last"`` and
``allow_partial=False`` over ctxlab's token counter: optionally drop trailing messages until one
of the ``end_on`` types, set a leading system message aside (``include_system``), keep the
longest suffix of the rest that fits what the budget leaves, then drop from the front of that
suffix until it starts on a user message (``start_on="human"``).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Self

from ctxlab.counted import CountedChat
from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import (
    Decision,
    Fix,
    Projection,
    SendsNothing,
    Strategy,
    TrimResult,
    check_params,
    nice_ceiling,
    nice_fraction,
    nice_round_up,
    param,
    reasons_for,
    sends_conversation,
    token_default,
    token_share_note,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["LANGCHAIN_TYPES", "TrimLast", "langchain_type"]

# LangChain's message ``type`` for each role (developer becomes a SystemMessage in LangChain).
LANGCHAIN_TYPES: dict[Role, str] = {
    Role.SYSTEM: "system",
    Role.DEVELOPER: "system",
    Role.USER: "human",
    Role.ASSISTANT: "ai",
    Role.TOOL: "tool",
    Role.FUNCTION: "function",
}
# Names accepted in ``end_on``: LangChain's types and ctxlab's role names.
_END_ON_ALIASES: dict[str, str] = {
    **{t: t for t in LANGCHAIN_TYPES.values()},
    **{r.value: t for r, t in LANGCHAIN_TYPES.items()},
}


def langchain_type(role: Role) -> str:
    """The LangChain message type a message of ``role`` becomes."""
    return LANGCHAIN_TYPES[role]


@dataclass(frozen=True, slots=True)
class _Plan:
    """Which messages of ``chat.messages[:stop]`` are sent: ``[pinned?] + [start, end)``."""

    pinned: bool
    start: int
    end: int


def _table(chat: CountedChat, kind: str, types: frozenset[str]) -> tuple[int, ...]:
    """``kind == "next"``: for each i, the first j >= i whose type is in ``types`` (else n).
    ``kind == "last"``: for each stop, the last j < stop whose type is in ``types`` (else -1).
    Built once per chat (a replay asks about many prefixes of one chat).
    """
    return chat.derived(("trim-last", kind, types), lambda c: _build_table(c, kind, types))


def _build_table(chat: CountedChat, kind: str, types: frozenset[str]) -> tuple[int, ...]:
    match = [LANGCHAIN_TYPES[m.role] in types for m in chat.messages]
    n = len(match)
    out: list[int]
    if kind == "next":
        out = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            out[i] = i if match[i] else out[i + 1]
    else:
        out = [-1] * (n + 1)
        for i in range(n):
            out[i + 1] = i if match[i] else out[i]
    return tuple(out)


_HUMAN = frozenset({"human"})


@dataclass(frozen=True, slots=True)
class TrimLast(Strategy):
    """Keeps the most recent messages that fit, message by message (LangChain "last").

    With ``include_system`` a leading system (or developer) message is always kept (PINNED),
    even over budget, and the budget left for the rest is ``max_tokens`` minus its tokens.
    ``count_messages`` of what is sent (reply priming included) is at most ``max_tokens``
    unless the pinned message alone exceeds it. With ``start_on_user`` the kept messages begin
    at a user message (possibly none are kept). ``end_on`` first drops trailing messages until
    one of the listed types. Being message-level, it can keep a tool result and drop its call:
    that is LangChain's behaviour, reproduced; the validator flags it. A projection;
    ``project`` is O(log n) after one O(n) pass per chat.
    """

    name: ClassVar[str] = "trim-last"
    title: ClassVar[str] = "Trim last (LangChain)"
    summary: ClassVar[str] = "LangChain's trim_messages 'last': the newest messages that fit."
    explanation: ClassVar[str] = (
        "LangChain's trim_messages with strategy='last' keeps the most recent messages whose "
        "tokens fit the budget, one message at a time, optionally keeping the system prompt and "
        "starting the kept part on a user message. It does not know about rounds, so without "
        "'start on user' it can keep a tool result whose call was dropped, which APIs reject."
    )
    order: ClassVar[int] = 50
    system_prompt_hint: ClassVar[str] = (
        "Turn on “Keep the system prompt” to pin a system prompt that is the first message."
    )

    max_tokens: int = param(
        8000,
        label="Max tokens",
        help="Maximum tokens of the context sent, reply priming included.",
        min=0,
        step=100,
        unit="tokens",
    )
    start_on_user: bool = param(
        True,
        label="Start on a user message",
        help="Drop kept messages from the front until the first is a user message "
        "(LangChain start_on='human').",
    )
    include_system: bool = param(
        True,
        label="Keep the system prompt",
        help="Always keep the first message when it is a system message.",
    )
    end_on: str = param(
        "",
        label="End on (types)",
        help="Comma-separated types (user, assistant, tool, system); drop trailing messages "
        "until the last is one of them. Empty: no end filter.",
    )

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            raise ParameterError(f"max_tokens must be a whole number, got {self.max_tokens!r}")
        check_params(self)
        unknown = [n for n in self._end_on_names() if n not in _END_ON_ALIASES]
        if unknown:
            known = ", ".join(sorted(_END_ON_ALIASES))
            raise ParameterError(f"end_on: unknown message type {unknown[0]!r}; use: {known}")

    def _end_on_names(self) -> list[str]:
        return [n.strip().lower() for n in self.end_on.split(",") if n.strip()]

    @property
    def end_on_types(self) -> frozenset[str]:
        """LangChain types of ``end_on`` (empty: no end filter)."""
        return frozenset(_END_ON_ALIASES[n] for n in self._end_on_names())

    def _plan(self, chat: CountedChat, stop: int) -> _Plan:
        end = stop
        types = self.end_on_types
        if types:
            end = _table(chat, "last", types)[stop] + 1
        messages = chat.messages
        pinned = self.include_system and end > 0 and messages[0].role.is_instruction
        lo = 1 if pinned else 0
        prefix = chat.prefix
        available = self.max_tokens - chat.fixed - (chat.counts[0] if pinned else 0)
        # smallest start in [lo, end] with prefix[end] - prefix[start] <= available
        threshold = prefix[end] - available
        start = min(bisect_left(prefix, threshold, lo, end + 1), end)
        if self.start_on_user and start < end:
            start = min(_table(chat, "next", _HUMAN)[start], end)
        return _Plan(pinned, start, end)

    def _tokens(self, chat: CountedChat, plan: _Plan) -> int:
        pinned = chat.counts[0] if plan.pinned else 0
        return pinned + chat.prefix[plan.end] - chat.prefix[plan.start] + chat.fixed

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        chat = counter.counted(messages)
        plan = self._plan(chat, len(chat))
        decisions = dict.fromkeys(chat.ids, Decision.DROPPED)
        decisions.update(dict.fromkeys(chat.ids[plan.start : plan.end], Decision.KEPT))
        kept = chat.messages[plan.start : plan.end]
        if plan.pinned:
            decisions[chat.messages[0].id] = Decision.PINNED
            kept = (chat.messages[0], *kept)
        after = self._tokens(chat, plan)
        warnings: list[str] = []
        if plan.pinned and after > self.max_tokens:
            warnings.append(
                f"The system message alone is {after:,} tokens with reply priming, over the "
                f"budget of {self.max_tokens:,}: it is kept anyway (include_system)."
            )
        if plan.start < plan.end and chat.messages[plan.start].role.is_tool_result:
            warnings.append(
                f"The kept messages start with a tool result (id {chat.messages[plan.start].id!r})"
                " whose call was dropped; OpenAI rejects such a context. Turn on 'start on "
                "user', or use window-drop, which keeps whole rounds."
            )
        return TrimResult(
            messages=tuple(kept),
            decisions=decisions,
            tokens_before=chat.total,
            tokens_after=after,
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def sends_nothing(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        result: TrimResult,
        window: int | None = None,
    ) -> SendsNothing | None:
        """Names the setting that empties the context: ``end_on`` leaving no message,
        ``start_on_user`` finding no user message among the newest messages that fit, or
        ``max_tokens`` too small for the newest message (after a pinned system prompt)."""
        if sends_conversation(result) or all(m.role.is_instruction for m in messages):
            return None
        chat = counter.counted(messages)
        plan = self._plan(chat, len(chat))
        lo = 1 if plan.pinned else 0
        what = "only the system prompt" if plan.pinned else "nothing"
        head = f"{self.title} sends {what} of this chat: "
        if plan.end <= lo:
            kinds = ", ".join(sorted(self.end_on_types))
            return SendsNothing(
                head + f"End on (end_on) = {self.end_on!r} drops every message after the last "
                f"one of type {kinds}, and there is none after the system prompt.",
                ("end_on",),
                self._working((Fix("Clear End on", {"end_on": ""}),), chat, window),
            )
        system = chat.counts[0] if plan.pinned else 0
        room = self.max_tokens - chat.fixed - system
        last_user = _table(chat, "last", _HUMAN)[plan.end]
        if self.start_on_user:
            target = last_user if last_user >= lo else plan.end - 1
        else:
            target = plan.end - 1
        need = nice_ceiling(system + chat.prefix[plan.end] - chat.prefix[target] + chat.fixed)
        if window is not None and need > window:
            raise_fix: tuple[Fix, ...] = ()
        else:
            raise_fix = (Fix(f"Raise Max tokens to {need:,}", {"max_tokens": need}),)
        fits = chat.prefix[plan.end] - chat.prefix[plan.end - 1] <= room
        if self.start_on_user and fits:
            where = (
                "the chat has no user message after the system prompt"
                if last_user < lo
                else f"sending the last user message and what follows needs Max tokens of {need:,}"
            )
            text = (
                f"the newest {max(room, 0):,} tokens that Max tokens (max_tokens) = "
                f"{self.max_tokens:,} leaves hold no user message, and Start on a user message "
                f"(start_on_user) drops everything before the first one; {where}."
            )
            fixes = (
                *raise_fix,
                Fix("Turn off Start on a user message", {"start_on_user": False}),
            )
            return SendsNothing(
                head + text, ("max_tokens", "start_on_user"), self._working(fixes, chat, window)
            )
        last = chat.counts[plan.end - 1]
        text = f"Max tokens (max_tokens) = {self.max_tokens:,} leaves {max(room, 0):,} tokens"
        if plan.pinned:
            text += (
                f" after the {system:,}-token system prompt (kept by Keep the system prompt, "
                "include_system)"
            )
        text += f", less than the newest message alone ({last:,} tokens)."
        fixes = raise_fix
        if plan.pinned:
            fixes = (*fixes, Fix("Turn off Keep the system prompt", {"include_system": False}))
        names = ("max_tokens", "include_system") if plan.pinned else ("max_tokens",)
        return SendsNothing(head + text, names, self._working(fixes, chat, window))

    def _working(
        self, fixes: Sequence[Fix], chat: CountedChat, window: int | None
    ) -> tuple[Fix, ...]:
        """The fixes that do send a conversation message on ``chat`` (planned, not applied)."""
        out: list[Fix] = []
        for fix in fixes:
            changed = replace(self, **fix.changes)
            plan = changed._plan(chat, len(chat))
            if plan.start < plan.end:
                out.append(fix)
        return tuple(out)

    def over_limit_reason(self, chat: CountedChat, result: TrimResult) -> str:
        system = chat.counts[0] if chat.messages else 0
        return (
            f"{self.title} keeps the system prompt (Keep the system prompt, include_system), "
            f"which alone holds {system:,} tokens."
        )

    def explain_round(self, chat: CountedChat, result: TrimResult, index: int) -> str:
        limit = f"{self.max_tokens:,}-token limit"
        phrases = {
            Decision.PINNED: "pinned: the system prompt is always sent (include_system)",
            Decision.DROPPED: f"dropped: the newer messages already fill the {limit}"
            + (", or the kept part must start on a user message" if self.start_on_user else ""),
            Decision.KEPT: f"kept: among the newest messages that fit the {limit} "
            f"({result.tokens_after:,} tokens sent)",
        }
        return reasons_for(chat, result, index, phrases, self.title)

    def project(self, chat: CountedChat, stop: int, counter: TokenCounter) -> Projection:
        plan = self._plan(chat, stop)
        pinned = 1 if plan.pinned else 0
        return Projection(
            plan.end - plan.start + pinned,
            self._tokens(chat, plan),
            start=plan.start,
            end=plan.end,
            pinned=pinned,
        )

    def project_many(
        self, chat: CountedChat, stops: Sequence[int], counter: TokenCounter
    ) -> Iterator[Projection]:
        """:meth:`project` of every stop, in one loop (:meth:`_plan` inlined, its parameters
        parsed and the chat's tables looked up once)."""
        types = self.end_on_types
        last = _table(chat, "last", types) if types else None
        first_user = _table(chat, "next", _HUMAN) if self.start_on_user else None
        sums, fixed = chat.prefix, chat.fixed
        pin = self.include_system and bool(chat.messages) and chat.messages[0].role.is_instruction
        system_tokens = chat.counts[0] if pin else 0
        room = self.max_tokens - fixed  # for the messages after a pinned system prompt
        for stop in stops:
            end = stop if last is None else last[stop] + 1
            if pin and end > 0:
                lo = pinned = 1
                head = system_tokens
            else:
                lo = pinned = head = 0
            start = bisect_left(sums, sums[end] - (room - head), lo, end + 1)
            if start > end:
                start = end
            if first_user is not None and start < end:
                start = first_user[start]
                if start > end:
                    start = end
            tokens = head + sums[end] - sums[start] + fixed
            yield Projection(end - start + pinned, tokens, start, end, pinned)

    @classmethod
    def suggested(cls, chat: CountedChat, window: int | None = None) -> Self:
        # Half the chat (within the model's room); but with "start on a user message" that can
        # keep nothing when the last user message starts further back (an agent session), so
        # the budget grows to keep from that message, or the option is turned off when keeping
        # from it would keep everything or not fit the room.
        budget = token_default(nice_fraction(chat.total, 0.5), window)
        plain = cls(max_tokens=budget)
        plan = plain._plan(chat, len(chat))
        if plan.end > plan.start or not chat.messages:
            return plain
        last_user = next(
            (i for i in range(len(chat) - 1, -1, -1) if chat.messages[i].role is Role.USER), None
        )
        pinned = 1 if chat.messages[0].role.is_instruction else 0
        if last_user is not None and last_user > pinned:
            needed = chat.tokens(last_user) + (chat.counts[0] if pinned else 0)
            roomy = window is None or needed <= nice_fraction(window, 0.75)
            if roomy and needed < chat.total:
                return cls(max_tokens=min(nice_round_up(needed), chat.total - 1))
        return cls(max_tokens=budget, start_on_user=False)

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        note = token_share_note("limit", self.max_tokens, chat, window, "dropped")
        if not self.start_on_user:
            note += (
                "; “Start on a user message” is off: from the last user message on, this chat "
                "does not fit such a budget, so the option would send nothing"
            )
        return note
