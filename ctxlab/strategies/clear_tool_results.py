"""ClearToolResults: replace old tool results with a placeholder (Anthropic's context editing).

Models Anthropic's ``clear_tool_uses_20250919`` edit: once the context exceeds a token trigger,
every tool result older than the most recent ``keep_tool_results`` is replaced by a short
placeholder, except the results of excluded tools; optionally the arguments of the calls whose
results were cleared are emptied too. When ``clear_at_least`` is set and clearing would save
fewer tokens, nothing is cleared, as Anthropic documents.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from itertools import accumulate, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, ClassVar, Self

from ctxlab.counted import CountedChat
from ctxlab.model import Message, Role, ToolCall
from ctxlab.plural import plural
from ctxlab.strategies.base import (
    Decision,
    EditSites,
    Projection,
    Strategy,
    TrimResult,
    check_params,
    check_whole_numbers,
    nice_fraction,
    param,
    reasons_for,
    token_default,
    token_share_note,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "DEFAULT_PLACEHOLDER",
    "ClearToolResults",
    "StandIns",
    "ToolResultIndex",
    "stand_in_of",
    "stand_ins",
    "tool_result_index",
]

DEFAULT_PLACEHOLDER = "[tool result cleared to save context]"
CLEARED_ARGUMENTS = "{}"


@dataclass(frozen=True, slots=True)
class ToolResultIndex:
    """What clearing each tool result of a chat would save, as prefix sums.

    Attributes:
        positions: index in the chat of every tool result (TOOL or legacy FUNCTION), ascending.
        callers: for each result, ``(assistant index, call index)`` of the call it answers, or
            None when no call matches. A result pairs with the nearest preceding assistant
            message that made tool calls, by ``tool_call_id`` within that message (real chats
            reuse ids across turns, so pairing is by position, as the APIs do).
        names: the tool name of each result: its call's name, else the message's ``name``.
        clearable: False for results of excluded tools.
        savings: tokens saved by clearing each result (0 when not clearable); with
            ``clear_tool_inputs``, the saving of emptying its call's arguments is added to the
            first result that answers that call.
        savings_prefix / clearable_prefix: prefix sums of ``savings`` and of ``clearable``.
    """

    positions: tuple[int, ...]
    callers: tuple[tuple[int, int] | None, ...]
    names: tuple[str, ...]
    clearable: tuple[bool, ...]
    savings: tuple[int, ...]
    savings_prefix: tuple[int, ...]
    clearable_prefix: tuple[int, ...]


def _pair_tool_results(
    messages: Sequence[Message],
) -> tuple[list[int], list[tuple[int, int] | None], list[str]]:
    """Positions, callers and tool names of the tool results of ``messages`` (one O(n) pass)."""
    positions: list[int] = []
    callers: list[tuple[int, int] | None] = []
    names: list[str] = []
    caller = -1
    call_ids: dict[str | None, int] = {}
    for i, message in enumerate(messages):
        if message.role is Role.ASSISTANT and message.tool_calls:
            caller = i
            call_ids = {}
            for j, c in enumerate(message.tool_calls):
                call_ids.setdefault(c.id, j)
        elif message.role.is_tool_result:
            found = call_ids.get(message.tool_call_id) if caller >= 0 else None
            positions.append(i)
            if found is None:
                callers.append(None)
                names.append(message.name or "")
            else:
                callers.append((caller, found))
                names.append(messages[caller].tool_calls[found].name)
    return positions, callers, names


def tool_result_index(
    chat: CountedChat,
    counter: TokenCounter,
    *,
    placeholder: str,
    exclude: frozenset[str],
    clear_inputs: bool,
) -> ToolResultIndex:
    """Build the :class:`ToolResultIndex` of ``chat`` (O(n); texts are already tokenized)."""
    positions, callers, names = _pair_tool_results(chat.messages)
    placeholder_tokens = counter.count_text(placeholder)
    empty_args_tokens = counter.count_text(CLEARED_ARGUMENTS)
    clearable = [name not in exclude for name in names]
    savings: list[int] = []
    inputs_seen: set[tuple[int, int]] = set()
    for pos, who, ok in zip(positions, callers, clearable, strict=True):
        if not ok:
            savings.append(0)
            continue
        saved = counter.count_text(chat.messages[pos].content) - placeholder_tokens
        if clear_inputs and who is not None and who not in inputs_seen:
            inputs_seen.add(who)
            arguments = chat.messages[who[0]].tool_calls[who[1]].arguments
            saved += counter.count_text(arguments) - empty_args_tokens
        savings.append(saved)
    return ToolResultIndex(
        positions=tuple(positions),
        callers=tuple(callers),
        names=tuple(names),
        clearable=tuple(clearable),
        savings=tuple(savings),
        savings_prefix=(0, *accumulate(savings)),
        clearable_prefix=(0, *accumulate(int(c) for c in clearable)),
    )


def _edit_sites(index: ToolResultIndex, placeholder: str) -> EditSites:
    """The clearable tool results, in order, with the tokens clearing each saves."""
    sites = [
        (p, saved)
        for p, ok, saved in zip(index.positions, index.clearable, index.savings, strict=True)
        if ok
    ]
    return EditSites(
        positions=tuple(p for p, _ in sites),
        saved_prefix=(0, *accumulate(saved for _, saved in sites)),
        content=placeholder,
    )


def _cached_index(
    chat: CountedChat,
    counter: TokenCounter,
    placeholder: str,
    exclude: frozenset[str],
    clear_inputs: bool,
) -> ToolResultIndex:
    # A replay asks about many prefixes of one chat: the index is built once per chat.
    return chat.derived(
        ("clear-tool-results", placeholder, exclude, clear_inputs),
        lambda c: tool_result_index(
            c, counter, placeholder=placeholder, exclude=exclude, clear_inputs=clear_inputs
        ),
    )


@dataclass(frozen=True, slots=True)
class StandIns:
    """The stand-in of every clearable tool result of a chat, in chat order.

    Attributes:
        positions: chat index of each clearable result (those of :class:`ToolResultIndex`
            whose ``clearable`` is True), ascending.
        stand_ins: for each, ``message.replace(content=placeholder)`` (equal field for field).
        ids: the id of each (the original's).
    """

    positions: tuple[int, ...]
    stand_ins: tuple[Message, ...]
    ids: tuple[str, ...]


_MESSAGE_FIELDS = tuple(f.name for f in fields(Message))
_message_values = attrgetter(*_MESSAGE_FIELDS)


def stand_in_of(message: Message, placeholder: str) -> Message:
    """``message.replace(content=placeholder)`` without ``dataclasses.replace``'s per-call
    work (a new frozen Message with the same field values but ``content``): a chat of
    100,000 messages has 50,000 tool results to stand in for."""
    new = object.__new__(Message)
    set_field = object.__setattr__
    for name, value in zip(_MESSAGE_FIELDS, _message_values(message), strict=True):
        set_field(new, name, value)
    set_field(new, "content", placeholder)
    return new


def stand_ins(chat: CountedChat, index: ToolResultIndex, placeholder: str) -> StandIns:
    """The :class:`StandIns` of ``chat``'s clearable tool results (O(n), once per chat)."""
    positions = tuple(p for p, ok in zip(index.positions, index.clearable, strict=True) if ok)
    messages = chat.messages
    built = tuple(stand_in_of(messages[p], placeholder) for p in positions)
    return StandIns(positions, built, tuple(m.id for m in built))


def _cached_stand_ins(
    chat: CountedChat, counter: TokenCounter, placeholder: str, exclude: frozenset[str]
) -> StandIns:
    # Which results are clearable does not depend on clear_inputs: any index of the chat will do.
    index = _cached_index(chat, counter, placeholder, exclude, False)
    return chat.derived(
        ("clear-tool-results-stand-ins", placeholder, exclude),
        lambda c: stand_ins(c, index, placeholder),
    )


def _all_kept(chat: CountedChat) -> dict[str, Decision]:
    """Every id of ``chat`` mapped to KEPT (built once per chat; callers copy it)."""
    return chat.derived("decisions-all-kept", lambda c: dict.fromkeys(c.ids, Decision.KEPT))


@dataclass(frozen=True, slots=True)
class ClearToolResults(Strategy):
    """Replaces the tool results older than the last ``keep_tool_results`` with a placeholder.

    Nothing happens while the whole context is at or under ``trigger_tokens``. Above it, every
    tool result except the most recent ``keep_tool_results`` (counted over all tools) and the
    results of ``exclude_tools`` is replaced by a stand-in with the same id, role and
    ``tool_call_id`` whose content is ``placeholder``; with ``clear_tool_inputs`` the calling
    assistant message's arguments of those calls become ``{}``. If ``clear_at_least`` > 0 and the
    clearing would save fewer tokens, nothing is cleared. Message count and order never change,
    so no tool call loses its result. A projection: ``tokens_after`` is
    ``count_messages`` of the context with the stand-ins. O(n) per apply; ``project`` is
    O(log n) after one O(n) pass per chat.
    """

    name: ClassVar[str] = "clear-tool-results"
    title: ClassVar[str] = "Clear tool results"
    summary: ClassVar[str] = (
        "Past a token trigger, replace old tool results with a placeholder; keep the last N."
    )
    explanation: ClassVar[str] = (
        "Agents fill their context with tool output they no longer need: file contents, search "
        "results, logs. Anthropic's context editing (clear_tool_uses) replaces the older tool "
        "results with a short placeholder once the context passes a trigger, keeping the most "
        "recent few intact. Every message stays in place, so calls and results stay paired; "
        "only the bulky contents go. Clearing changes the prompt prefix, which invalidates a "
        "prompt cache, so 'clear at least' skips clearings too small to be worth it."
    )
    order: ClassVar[int] = 40

    trigger_tokens: int = param(
        100_000,
        label="Trigger (tokens)",
        help="Clearing happens only when the whole context is over this many tokens.",
        min=0,
        step=100,
        unit="tokens",
    )
    keep_tool_results: int = param(
        3,
        label="Keep last tool results",
        help="How many of the most recent tool results always stay intact.",
        min=0,
        step=1,
        unit="tool_results",
    )
    clear_at_least: int = param(
        0,
        label="Clear at least (tokens)",
        help="If clearing would save fewer tokens than this, nothing is cleared (0: no minimum).",
        min=0,
        step=100,
        unit="tokens",
    )
    exclude_tools: str = param(
        "",
        label="Never clear these tools",
        help="Comma-separated tool names whose results are never cleared.",
    )
    clear_tool_inputs: bool = param(
        False,
        label="Also clear tool call arguments",
        help="Replace the arguments of the calls whose results were cleared with {}.",
    )
    placeholder: str = param(
        DEFAULT_PLACEHOLDER,
        label="Placeholder",
        help="The text that replaces a cleared tool result.",
    )

    def __post_init__(self) -> None:
        check_whole_numbers(self, "trigger_tokens", "keep_tool_results", "clear_at_least")
        check_params(self)

    @property
    def excluded(self) -> frozenset[str]:
        """The tool names of ``exclude_tools``, parsed."""
        return frozenset(n.strip() for n in self.exclude_tools.split(",") if n.strip())

    def _index(self, chat: CountedChat, counter: TokenCounter) -> ToolResultIndex:
        return _cached_index(chat, counter, self.placeholder, self.excluded, self.clear_tool_inputs)

    def _cleared_count(self, index: ToolResultIndex, results: int, total: int) -> tuple[int, int]:
        """``(k, saved)``: the first ``k`` of ``results`` tool results are cleared.

        ``k`` is 0 when nothing is cleared (under the trigger, nothing clearable, or less than
        ``clear_at_least`` saved).
        """
        if total <= self.trigger_tokens:
            return 0, 0
        k = max(results - self.keep_tool_results, 0)
        if index.clearable_prefix[k] == 0:
            return 0, 0
        saved = index.savings_prefix[k]
        if self.clear_at_least > 0 and saved < self.clear_at_least:
            return 0, 0
        return k, saved

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        chat = counter.counted(messages)
        index = self._index(chat, counter)
        total = chat.total
        k, saved = self._cleared_count(index, len(index.positions), total)
        decisions = dict(_all_kept(chat))
        warnings: tuple[str, ...] = ()
        if k == 0:
            if total > self.trigger_tokens and self.clear_at_least > 0:
                would = index.savings_prefix[max(len(index.positions) - self.keep_tool_results, 0)]
                if index.clearable_prefix[-1] and would < self.clear_at_least:
                    warnings = (
                        f"Clearing would save only {would:,} tokens, less than 'clear at least' "
                        f"({self.clear_at_least:,}): nothing was cleared.",
                    )
            return TrimResult(
                chat.messages, decisions, total, total, warnings=warnings, strategy=self.name
            )
        sites = _cached_stand_ins(chat, counter, self.placeholder, self.excluded)
        m = index.clearable_prefix[k]  # the clearable results among the first k: the first m
        out = list(chat.messages)
        for pos, stand_in in zip(sites.positions[:m], sites.stand_ins[:m], strict=True):
            out[pos] = stand_in
        decisions.update(zip(sites.ids[:m], repeat(Decision.CLEARED)))
        inserted: tuple[Message, ...] = sites.stand_ins[:m]
        if self.clear_tool_inputs:
            emptied: dict[int, set[int]] = {}
            for who, ok in zip(index.callers[:k], index.clearable[:k], strict=True):
                if ok and who is not None:
                    emptied.setdefault(who[0], set()).add(who[1])
            for caller, calls in emptied.items():
                original = out[caller]
                out[caller] = original.replace(
                    tool_calls=tuple(
                        ToolCall(c.id, c.name, CLEARED_ARGUMENTS, c.type) if j in calls else c
                        for j, c in enumerate(original.tool_calls)
                    )
                )
                decisions[original.id] = Decision.CLEARED
            if emptied:
                changed = sorted({*sites.positions[:m], *emptied})
                inserted = tuple(out[pos] for pos in changed)
        return TrimResult(
            messages=tuple(out),
            decisions=decisions,
            tokens_before=total,
            tokens_after=total - saved,
            inserted=inserted,
            warnings=warnings,
            strategy=self.name,
        )

    def over_limit_reason(self, chat: CountedChat, result: TrimResult) -> str:
        cleared = sum(d is Decision.CLEARED for d in result.decisions.values())
        return (
            f"{self.title} only replaces tool results (it cleared {cleared:,}, keeping the "
            f"last {self.keep_tool_results:,}); every other message is sent as it is."
        )

    def explain_round(self, chat: CountedChat, result: TrimResult, index: int) -> str:
        total, trigger = result.tokens_before, self.trigger_tokens
        over = f"the context's {total:,} tokens are over the {trigger:,}-token trigger"
        phrases = {
            Decision.CLEARED: f"cleared: {over}, and these tool results are older than the "
            f"last {self.keep_tool_results:,}: a placeholder replaces them",
            Decision.KEPT: f"kept: the context's {total:,} tokens are at or under the "
            f"{trigger:,}-token trigger"
            if total <= trigger
            else "kept: no tool result here is older than the last "
            f"{self.keep_tool_results:,} (or its tool is excluded)",
        }
        return reasons_for(chat, result, index, phrases, self.title)

    def project(self, chat: CountedChat, stop: int, counter: TokenCounter) -> Projection:
        index = self._index(chat, counter)
        results = bisect_left(index.positions, stop)
        total = chat.tokens(0, stop)
        k, saved = self._cleared_count(index, results, total)
        if self.clear_tool_inputs:  # edits assistant messages too: no single list of edit sites
            return Projection(stop, total - saved)
        edits = chat.derived(
            ("clear-tool-results-edits", self.placeholder, self.excluded),
            lambda _: _edit_sites(index, self.placeholder),
        )
        return Projection(
            stop,
            total - saved,
            start=0,
            end=stop,
            edits=edits,
            edited=index.clearable_prefix[k],
        )

    def project_many(
        self, chat: CountedChat, stops: Sequence[int], counter: TokenCounter
    ) -> Iterator[Projection]:
        """:meth:`project` of every stop, in one loop (:meth:`_cleared_count` inlined; the
        parameters parsed and the chat's tables looked up once)."""
        excluded = self.excluded
        index = _cached_index(chat, counter, self.placeholder, excluded, self.clear_tool_inputs)
        edits = None
        if not self.clear_tool_inputs:
            edits = chat.derived(
                ("clear-tool-results-edits", self.placeholder, excluded),
                lambda _: _edit_sites(index, self.placeholder),
            )
        positions, clearable, savings = (
            index.positions,
            index.clearable_prefix,
            index.savings_prefix,
        )
        sums, fixed = chat.prefix, chat.fixed
        trigger, keep, at_least = self.trigger_tokens, self.keep_tool_results, self.clear_at_least
        for stop in stops:
            total = sums[stop] + fixed
            k = saved = 0
            if total > trigger:
                k = bisect_left(positions, stop) - keep
                if k < 0:
                    k = 0
                if clearable[k] == 0:
                    k = 0
                else:
                    saved = savings[k]
                    if at_least > 0 and saved < at_least:
                        k = saved = 0
            if edits is None:
                yield Projection(stop, total - saved)
            else:
                yield Projection(stop, total - saved, 0, stop, 0, edits, clearable[k])

    @classmethod
    def suggested(cls, chat: CountedChat, window: int | None = None) -> Self:
        # Keep the newest three results, but always leave at least one to clear.
        results = _tool_result_count(chat)
        return cls(
            trigger_tokens=token_default(nice_fraction(chat.total, 0.5), window),
            keep_tool_results=min(3, max(results - 1, 0)),
        )

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        results = _tool_result_count(chat)
        if results == 0:
            return "this chat has no tool results, so there is nothing to clear"
        trigger = token_share_note("trigger", self.trigger_tokens, chat, window, "cleared")
        kept = plural(self.keep_tool_results, "tool result")
        return f"{trigger}; the newest {kept} (of {results:,}) stay"


def _tool_result_count(chat: CountedChat) -> int:
    """How many tool results ``chat`` holds (computed once per counted chat)."""
    return chat.derived(
        ("clear_tool_results.count",), lambda c: sum(1 for m in c.messages if m.is_tool_result)
    )
