"""The contract every strategy keeps: parameters as a frozen dataclass, ``apply`` -> TrimResult.

A strategy never mutates its input. ``TrimResult.decisions`` has an entry for every input message;
``messages`` is exactly what would be sent. Parameters are dataclass fields declared with
:func:`param`, whose metadata (label, range, step, unit, help) is all the UI and CLI need to
build widgets and flags: no strategy is special-cased outside its own module.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from bisect import bisect_right
from collections.abc import Callable, ItemsView, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any, ClassVar, Self

from ctxlab.counted import CountedChat
from ctxlab.errors import CtxlabError, ParameterError
from ctxlab.model import Message
from ctxlab.plural import share
from ctxlab.strategies.provenance import FrameworkPolicy

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer, SummaryRequest
    from ctxlab.tokens import TokenCounter

__all__ = [
    "BudgetNote",
    "Decision",
    "DecisionRuns",
    "EditSites",
    "Fix",
    "ParamSpec",
    "Projection",
    "ResummarizationGuard",
    "ResummarizationRisk",
    "SendsNothing",
    "Strategy",
    "SweepRange",
    "TrimResult",
    "check_params",
    "check_whole_numbers",
    "describe_round",
    "nice_ceiling",
    "nice_fraction",
    "nice_round_up",
    "param",
    "reasons_for",
    "round_decisions",
    "run_decisions",
    "sends_conversation",
    "suffix_decisions",
    "suggested_for",
    "sweep_range_from_counts",
    "token_default",
    "token_share_note",
]


class Decision(StrEnum):
    """What a strategy did with one input message."""

    KEPT = "kept"
    DROPPED = "dropped"
    SUMMARIZED = "summarized"
    CLEARED = "cleared"
    PINNED = "pinned"  # kept because of its role (e.g. a system prompt), whatever the budget

    @property
    def is_sent(self) -> bool:
        """The message (or a cleared stand-in of it) is in the context sent."""
        return self in (Decision.KEPT, Decision.PINNED, Decision.CLEARED)


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """UI/CLI metadata of one strategy parameter."""

    label: str
    help: str
    min: float | None = None
    max: float | None = None
    step: float | None = None
    # What the number measures, so the UI can scale its range to the chat:
    # "tokens", "messages", "rounds", "tool_results", or None.
    unit: str | None = None
    multiline: bool = False
    # The values a text parameter accepts (the UI shows a picker), in the order shown; empty
    # for free text.
    choices: tuple[str, ...] = ()


def param(
    default: Any,
    *,
    label: str,
    help: str,
    min: float | None = None,
    max: float | None = None,
    step: float | None = None,
    unit: str | None = None,
    multiline: bool = False,
    choices: tuple[str, ...] = (),
) -> Any:
    """A dataclass field carrying its :class:`ParamSpec` (``metadata["ctxlab"]``)."""
    spec = ParamSpec(label, help, min, max, step, unit, multiline, choices)
    if isinstance(default, list | dict | set):
        raise TypeError("parameters are immutable: use a tuple or frozenset default")
    return field(default=default, metadata={"ctxlab": spec})


def check_whole_numbers(obj: Any, *names: str, optional: bool = False) -> None:
    """Raise :class:`ParameterError` unless each field of ``names`` is an int (not a bool), or
    None when ``optional``."""
    for name in names:
        value = getattr(obj, name)
        if optional and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(f"{name} must be a whole number, got {value!r}")


def check_params(obj: Any) -> None:
    """Raise :class:`ParameterError` for a field outside its declared range or of a wrong type."""
    for f in dataclasses.fields(obj):
        spec = f.metadata.get("ctxlab")
        value = getattr(obj, f.name)
        if spec is None or value is None or isinstance(value, bool):
            continue
        if spec.choices and isinstance(value, str) and value not in spec.choices:
            known = ", ".join(repr(c) for c in spec.choices)
            raise ParameterError(f"{spec.label} ({f.name}) must be one of {known}, got {value!r}")
        if isinstance(value, int | float):
            if spec.min is not None and value < spec.min:
                raise ParameterError(
                    f"{spec.label} ({f.name}) must be >= {spec.min:g}, got {value}"
                )
            if spec.max is not None and value > spec.max:
                raise ParameterError(
                    f"{spec.label} ({f.name}) must be <= {spec.max:g}, got {value}"
                )


@dataclass(frozen=True, slots=True)
class EditSites:
    """Positions of a chat a strategy replaces by stand-ins, ascending, with the tokens saved.

    A stand-in is the original message with its content replaced by ``content``;
    ``saved_prefix[k]`` is the tokens saved by replacing the first ``k`` sites. Built once per
    chat and shared by every projection of it.
    """

    positions: tuple[int, ...]
    saved_prefix: tuple[int, ...]
    content: str


@dataclass(frozen=True, slots=True)
class Projection:
    """How much of ``chat.messages[:stop]`` a strategy would send: replay's fast path.

    When ``start`` is set, the projection also says which messages it sends, so a replay can
    find the prompt-cache prefix between two calls without building either context: the first
    ``pinned`` instruction (system/developer) messages of the chat, then ``messages[start:end]``,
    where the first ``edited`` of ``edits`` are replaced by stand-ins. ``start`` None means the
    strategy does not describe its context this way.
    """

    messages_sent: int
    tokens_sent: int
    start: int | None = None
    end: int = 0
    pinned: int = 0
    edits: EditSites | None = None
    edited: int = 0


@dataclass(frozen=True, slots=True)
class ResummarizationRisk:
    """Whether a summarize configuration fires again right after it compacts.

    ``floor_tokens`` is what the history holds just after a compaction (pinned messages, the
    kept tail, the summary); when it is at or over the trigger, the very next call summarizes again.
    """

    fires_every_call: bool
    floor_tokens: int
    trigger_tokens: int
    suggestion: str


@dataclass(frozen=True, slots=True)
class ResummarizationGuard:
    """The risk of one configured strategy and the parameter change that removes it.

    A summarizing strategy answers it from :meth:`Strategy.resummarization_guard`; ``changes``
    maps parameter leaf names to values (``with_params`` applies them).
    """

    risk: ResummarizationRisk
    changes: dict[str, int]  # parameter name -> suggested value; empty when nothing fires


@dataclass(frozen=True, slots=True)
class Fix:
    """A parameter change that makes a configuration send something: a button's words and the
    values it sets, by parameter leaf name (``with_params`` applies them)."""

    label: str
    changes: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class SendsNothing:
    """A configuration whose context holds no message of the conversation (nothing at all, or
    only the system prompt): why, which settings cause it, and changes that send something.

    ``settings`` are parameter leaf names; every fix in ``fixes`` was checked to send at least
    one conversation message on the chat it was computed for.
    """

    text: str
    settings: tuple[str, ...]
    fixes: tuple[Fix, ...]


@dataclass(frozen=True, slots=True)
class BudgetNote:
    """The context sent is over the user's own token limit (a budget or a trigger).

    Not a provider problem: no API rejects a request for being over a limit the user chose.
    ``reason`` says why the strategy went over it (what it always keeps).
    """

    parameter: str
    label: str
    limit: int
    tokens: int
    reason: str

    @property
    def text(self) -> str:
        """``Over your token budget: 4,145 of 3,800 tokens — <reason>``."""
        label = self.label.removesuffix(" (tokens)")
        head = f"Over your {label[:1].lower()}{label[1:]}: {self.tokens:,} of "
        head += f"{self.limit:,} tokens"
        return f"{head} — {self.reason}" if self.reason else f"{head}."


def sends_conversation(result: TrimResult) -> bool:
    """Whether ``result``'s context holds a message that is not a system/developer prompt."""
    return any(not m.role.is_instruction for m in result.messages)


def nice_ceiling(value: int) -> int:
    """``value`` rounded up to two significant digits (a limit a person can type), at least 1.

    >>> nice_ceiling(41_234), nice_ceiling(87), nice_ceiling(0)
    (42000, 87, 1)
    """
    if value < 100:
        return max(value, 1)
    scale: int = 10 ** (len(str(value)) - 2)
    return -(-value // scale) * scale


@dataclass(frozen=True, slots=True, eq=False)
class DecisionRuns(Mapping[str, Decision]):
    """A decision for every message of a chat, held as runs in chat order.

    Messages ``ids[stops[k-1]:stops[k]]`` (from 0 for ``k == 0``) all get ``values_[k]``.
    ``stops`` ascend strictly and end at ``len(ids)``; ``positions`` maps each id to its
    index (the chat's :attr:`CountedChat.positions`; ids are unique). A strategy that cuts the
    chat into a few runs (pinned, dropped, kept) builds this in O(runs) instead of a dict of
    every id; as a ``Mapping`` it equals that dict (same keys in chat order, same values).

    Readers that work per run (:meth:`run_lengths`, :meth:`TrimResult.decision_counts`, the
    UI's decision codes) stay O(runs). ``get`` is the C-speed ``get`` of the equivalent
    dict, built on first use and kept: bulk readers (``map(decisions.get, ids)``) cost what
    they cost on a dict. One ``[id]`` lookup is a binary search over the runs.
    """

    ids: Sequence[str]
    positions: Mapping[str, int]
    stops: tuple[int, ...]
    values_: tuple[Decision, ...]
    _dict: list[dict[str, Decision]] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.stops) != len(self.values_):
            raise ValueError("one decision per run")
        if any(b <= a for a, b in zip((0, *self.stops), self.stops, strict=False)):
            raise ValueError("runs must be non-empty and ascending")
        if (self.stops[-1] if self.stops else 0) != len(self.ids):
            raise ValueError("runs must cover every id")

    def __getitem__(self, key: str) -> Decision:
        return self.values_[bisect_right(self.stops, self.positions[key])]

    def __contains__(self, key: object) -> bool:
        return key in self.positions

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def run_lengths(self) -> Iterator[tuple[Decision, int]]:
        """``(decision, messages)`` of each run, in chat order."""
        return zip(self.values_, map(int.__sub__, self.stops, (0, *self.stops)), strict=True)

    def values(self) -> ValuesView[Decision]:
        return _RunValues(self)

    def items(self) -> ItemsView[str, Decision]:
        return _RunItems(self)

    def as_dict(self) -> dict[str, Decision]:
        """The equivalent plain dict (built once, then shared: callers must not modify it)."""
        if not self._dict:
            self._dict.append(dict(zip(self.ids, self.values(), strict=True)))
        return self._dict[0]

    def __reduce__(self) -> tuple[type[dict[str, Decision]], tuple[list[tuple[str, Decision]]]]:
        """Pickled (and deep-copied) as the equivalent dict: the chat's tables stay behind."""
        return (dict, (list(self.items()),))

    @property
    def get(self) -> Callable[..., Decision | None]:  # type: ignore[override]
        """The equivalent dict's ``get`` (``get(id)``, ``get(id, default)``)."""
        return self.as_dict().get


class _RunValues(ValuesView[Decision]):
    _mapping: DecisionRuns

    def __iter__(self) -> Iterator[Decision]:
        runs = self._mapping.run_lengths()
        return chain.from_iterable(repeat(d, n) for d, n in runs)


class _RunItems(ItemsView[str, Decision]):
    _mapping: DecisionRuns

    def __iter__(self) -> Iterator[tuple[str, Decision]]:
        return zip(self._mapping.ids, self._mapping.values(), strict=True)


def run_decisions(
    chat: CountedChat, runs: Sequence[tuple[int, Decision]]
) -> Mapping[str, Decision]:
    """The decisions of ``chat``'s messages given as ``(stop, decision)`` runs in chat order
    (empty runs are skipped; the last stop must be ``len(chat)``): a :class:`DecisionRuns`,
    or a plain dict when the chat repeats an id (then the later message's decision wins,
    as when the dict is built id by id)."""
    ids, positions = chat.ids, chat.positions
    stops: list[int] = []
    values: list[Decision] = []
    start = 0
    for stop, decision in runs:
        if stop <= start:
            continue
        if values and values[-1] is decision:
            stops[-1] = stop
        else:
            stops.append(stop)
            values.append(decision)
        start = stop
    if start != len(ids):
        raise ValueError(f"runs end at {start}, the chat has {len(ids)} messages")
    out = DecisionRuns(ids, positions, tuple(stops), tuple(values))
    if len(positions) != len(ids):
        return dict(out.items())
    return out


@dataclass(frozen=True, slots=True)
class TrimResult:
    """The outcome of one strategy call.

    Attributes:
        messages: the context to send, in order.
        decisions: a :class:`Decision` for the id of every input message.
        inserted: messages the strategy created (a summary, a compaction marker, a cleared
            stand-in); they appear in ``messages`` too.
        tokens_before / tokens_after: ``count_messages`` of the input and of ``messages``.
        replace: False for a projection (recomputed from the full history every call); True when
            ``messages`` replaces the history from now on (compaction).
        summary_request: the exact request sent to the summarizer, or None.
        warnings: plain sentences a user should read (e.g. "kept round is over budget").
        strategy: the registry name of the strategy that produced it.
    """

    messages: tuple[Message, ...]
    decisions: Mapping[str, Decision]
    tokens_before: int
    tokens_after: int
    inserted: tuple[Message, ...] = ()
    replace: bool = False
    summary_request: SummaryRequest | None = None
    warnings: tuple[str, ...] = ()
    strategy: str = ""

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def decision_counts(self) -> dict[Decision, int]:
        """How many input messages got each decision (every decision present, maybe 0)."""
        # list.count compares by identity first, in C: a loop here hashes every Enum member
        # in Python (13 ms on a 100,000-message result, on every Playground rerun).
        decisions = self.decisions
        if isinstance(decisions, DecisionRuns):
            counts = dict.fromkeys(Decision, 0)
            for decision, n in decisions.run_lengths():
                counts[decision] += n
            return counts
        values = list(decisions.values())
        return {decision: values.count(decision) for decision in Decision}


def nice_fraction(total: int, fraction: float) -> int:
    """``fraction`` of ``total`` rounded down to two significant digits, at least 1.

    Strategies use it for :meth:`Strategy.suggested` values a person can read (4,300, not 4,317).

    >>> nice_fraction(8634, 0.5)
    4300
    """
    raw = max(int(total * fraction), 1)
    if raw < 100:
        return raw
    scale: int = 10 ** (len(str(raw)) - 2)
    return max(raw // scale * scale, 1)


def nice_round_up(tokens: int) -> int:
    """``tokens`` rounded up to two significant digits: a derived value that still holds
    ``tokens``.

    >>> nice_round_up(4317), nice_round_up(73_375), nice_round_up(42)
    (4400, 74000, 42)
    """
    if tokens < 100:
        return tokens
    scale: int = 10 ** (len(str(tokens)) - 2)
    return -(-tokens // scale) * scale


WINDOW_SHARE = 0.75
"""The share of the model's input room a token parameter defaults to (see :func:`token_default`)."""


def token_default(chat_based: int, window: int | None) -> int:
    """A token parameter's default: ``chat_based``, capped at :data:`WINDOW_SHARE` of ``window``.

    ``window`` is the tokens the model can take as a prompt (its context window minus room for
    the reply: :attr:`ctxlab.catalog.ModelInfo.input_room`), None when no model is known. The
    result never exceeds ``chat_based``, so a chat smaller than the window still shows trimming
    on first view, and never exceeds the window's share, so a huge chat opens at a budget the
    model accepts.

    >>> token_default(600_000, 128_000 - 16_384), token_default(16_000, 111_616)
    (83000, 16000)
    """
    if window is None or window <= 0:
        return chat_based
    return min(chat_based, nice_fraction(window, WINDOW_SHARE))


def token_share_note(
    label: str, value: int, chat: CountedChat, window: int | None, shows: str
) -> str:
    """Why a token parameter opened at ``value`` (:meth:`Strategy.opening_note`'s words).

    ``"budget 3,200 tokens: 50% of this 6,420-token chat, so you see what is dropped"``; when
    the model's room capped it (:func:`token_default`), the room is named instead.

    >>> from ctxlab.counted import CountedChat
    >>> chat = CountedChat((), (), 6_420)
    >>> token_share_note("budget", 3_200, chat, None, "dropped")
    'budget 3,200 tokens: 50% of this 6,420-token chat, so you see what is dropped'
    """
    total = max(chat.total, 1)
    capped = window is not None and window > 0 and value == nice_fraction(window, WINDOW_SHARE)
    if capped and value < total:
        return (
            f"{label} {value:,} tokens: {WINDOW_SHARE:.0%} of the model's {window:,}-token "
            f"room for a prompt (this chat has {total:,} tokens), so the request fits"
        )
    shown = share(value, total)
    return (
        f"{label} {value:,} tokens: {shown} of this {total:,}-token chat, "
        f"so you see what is {shows}"
    )


SWEEP_FLOOR = 0.02
"""A token sweep starts at this share of its top: below it a context holds about one message."""


@dataclass(frozen=True, slots=True)
class SweepRange:
    """The values of one parameter worth sweeping on a chat: ``lo`` to ``hi``, both included.

    ``0 < lo <= hi``. ``log`` says the values are best spaced geometrically (a token budget's
    knee lies in the low part of its range); ``basis`` says in words what ``hi`` is (``the
    chat's 6,420 tokens``), for the page's caption.
    """

    lo: float
    hi: float
    integer: bool
    log: bool
    basis: str


def sweep_range_from_counts(
    spec: ParamSpec,
    *,
    integer: bool,
    top: float,
    basis: str,
    log: bool,
    floor: float = 0,
) -> SweepRange | None:
    """The range from ``floor`` to ``top`` clamped to ``spec``'s declared bounds and kept above
    0 (1 for integers, a hundredth of ``top`` otherwise); None when the chat leaves nothing to
    sweep (``top`` at or below that)."""
    hi = top if spec.max is None else min(top, spec.max)
    lo = max(floor, spec.min or 0)
    if integer:
        hi, lo = math.floor(hi), max(math.ceil(lo), 1)
    elif lo <= 0:
        lo = hi / 100
    if hi <= 0 or hi < lo:
        return None
    return SweepRange(float(lo), float(hi), integer, log and hi > lo, basis)


def _replaced(obj: Any, path: tuple[str, ...], value: Any) -> Any:
    """A copy of the frozen dataclass ``obj`` with the (nested) field at ``path`` set to
    ``value``; works for a strategy outside the registry too (no ``build_strategy``)."""
    head, *rest = path
    inner = _replaced(getattr(obj, head), tuple(rest), value) if rest else value
    return dataclasses.replace(obj, **{head: inner})


def _setting_phrase(strategy: Strategy, name: str, values: Mapping[str, Any]) -> str:
    """``Max tokens (max_tokens) = 8,000``: how a check names a setting the user can find."""
    from ctxlab.strategies.registry import parameters

    label = next((i.spec.label for i in parameters(type(strategy)) if i.name == name), name)
    value = values.get(name)
    if isinstance(value, bool):
        shown = "on" if value else "off"
    elif isinstance(value, int):
        shown = f"{value:,}"
    elif isinstance(value, str):
        shown = repr(value)
    else:
        shown = str(value)
    return f"{label} ({name}) = {shown}"


def suggested_for(cls: type[Strategy], chat: CountedChat, window: int | None = None) -> Strategy:
    """``cls.suggested(chat, window=window)``; ``cls.suggested(chat)`` for a strategy whose
    ``suggested`` predates the ``window`` argument (a third party's keeps working)."""
    try:
        parameters = inspect.signature(cls.suggested).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        parameters = {}  # type: ignore[assignment]
    accepts = "window" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
    return cls.suggested(chat, window=window) if accepts else cls.suggested(chat)


def suffix_decisions(
    ids: Sequence[str], cut: int, *, before: Decision = Decision.DROPPED
) -> dict[str, Decision]:
    """``before`` for ``ids[:cut]``, KEPT for the rest; built with C-speed bulk operations."""
    decisions = dict.fromkeys(ids[:cut], before)
    decisions.update(dict.fromkeys(ids[cut:], Decision.KEPT))
    return decisions


def round_decisions(chat: CountedChat, result: TrimResult, index: int) -> dict[Decision, int]:
    """How many messages of round ``index`` got each decision (only decisions present)."""
    start = chat.starts[index]
    stop = chat.starts[index + 1] if index + 1 < len(chat.starts) else len(chat)
    out: dict[Decision, int] = {}
    decisions = result.decisions
    if isinstance(decisions, DecisionRuns) and decisions.ids is chat.ids:
        # the runs' overlaps with [start, stop), in chat order: O(runs)
        low = 0
        for decision, n in decisions.run_lengths():
            high = low + n
            if min(high, stop) > max(low, start):
                out[decision] = out.get(decision, 0) + min(high, stop) - max(low, start)
            low = high
        return out
    for message_id in chat.ids[start:stop]:
        decision = decisions.get(message_id, Decision.KEPT)
        out[decision] = out.get(decision, 0) + 1
    return out


def describe_round(chat: CountedChat, result: TrimResult, index: int, by: str) -> str:
    """``"dropped: 3 messages by Window drop"``, or each decision's share for a mixed round."""
    counts = round_decisions(chat, result, index)
    if len(counts) == 1:
        decision, n = next(iter(counts.items()))
        return f"{decision.value}: {n:,} message{'s' if n != 1 else ''}, by {by}"
    parts = ", ".join(f"{n:,} {d.value}" for d, n in counts.items())
    return f"mixed: {parts}, by {by}"


def reasons_for(
    chat: CountedChat, result: TrimResult, index: int, phrases: Mapping[Decision, str], by: str
) -> str:
    """The phrase of every decision present in round ``index``, joined with "; ".

    A decision without a phrase falls back to :func:`describe_round`.
    """
    counts = round_decisions(chat, result, index)
    if any(d not in phrases for d in counts):
        return describe_round(chat, result, index, by)
    return "; ".join(phrases[d] for d in Decision if d in counts)


class Strategy:
    """Base class of strategies. Subclasses are frozen dataclasses registered by name.

    Class attributes:
        name: kebab-case registry name used by the CLI, the URL and the UI.
        title: human name; ``summary``: one sentence for pickers; ``explanation``: a paragraph
            for the Learn page and help text.
        uses_summarizer: the strategy calls a summarizer (the UI shows the backend controls).
        system_prompt_hint: what to change so the strategy keeps the system prompt, shown
            when it drops one ("" when it never does).
        framework_policy: for a framework's policy (``ctxlab.strategies.frameworks``), what
            it reproduces and from where; None for ctxlab's own strategies.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]
    explanation: ClassVar[str] = ""
    uses_summarizer: ClassVar[bool] = False
    system_prompt_hint: ClassVar[str] = ""
    framework_policy: ClassVar[FrameworkPolicy | None] = None

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        raise NotImplementedError

    def project(self, chat: CountedChat, stop: int, counter: TokenCounter) -> Projection:
        """Messages and tokens sent for ``chat.messages[:stop]``.

        The default applies the strategy to the prefix; projections override it with an
        O(log n) answer from the prefix sums, so a replay over every turn stays linear.
        """
        result = self.apply(chat.messages[:stop], counter)
        return Projection(len(result.messages), result.tokens_after)

    def project_many(
        self, chat: CountedChat, stops: Sequence[int], counter: TokenCounter
    ) -> Iterator[Projection]:
        """``self.project(chat, stop, counter)`` for each of ``stops``, in order, lazily: a
        replay's every call.

        Projections override it with the same answers computed in one loop (the chat's tables
        and the parameters looked up once, not once per call). Lazy, so that a replay holds
        one projection at a time rather than one per call. ``stops`` ascend in a replay, but
        an override must not rely on it.
        """
        project = self.project
        return (project(chat, stop, counter) for stop in stops)

    def explain_round(self, chat: CountedChat, result: TrimResult, index: int) -> str:
        """One sentence on why round ``index`` of ``chat`` got its decisions in ``result``
        (``result`` is this strategy applied to ``chat.messages``): the round map's hover.

        It starts with the decision ("dropped: ..."). The default names the decisions only;
        strategies override it with the numbers that decided.
        """
        return describe_round(chat, result, index, self.title)

    @classmethod
    def suggested(cls, chat: CountedChat, window: int | None = None) -> Self:
        """Parameters that make the strategy visibly act on ``chat`` (the UI's first view).

        ``window`` is the model's input room in tokens (None: no model known); token parameters
        default to :func:`token_default` of it. Call it through :func:`suggested_for`, which
        also serves strategies written before the argument existed.
        """
        return cls()

    def opening_note(self, chat: CountedChat, window: int | None = None) -> str:
        """Why the first view of ``chat`` uses this strategy's parameters: one clause the UI
        shows under the settings while they are the ones :meth:`suggested` derived ("budget
        3,200 tokens: 50% of this 6,420-token chat, so you see what is dropped").

        Called on the strategy :func:`suggested_for` returned, with the same ``window``. ""
        (the default) says nothing; built-ins override it with the numbers they derived.
        """
        return ""

    def sweep_range(
        self, name: str, chat: CountedChat, window: int | None = None
    ) -> SweepRange | None:
        """The values of parameter ``name`` (its leaf name) worth trying on ``chat``, for Tune;
        None when nothing in this chat is acted on by it (a tool-result count on a chat
        without tool results).

        ``window`` is the model's context window (None: unknown). The default reads the
        parameter's unit: ``tokens`` run from :data:`SWEEP_FLOOR` of the top to the smaller of
        the chat's tokens and ``window`` (above it every value keeps the whole chat, or a
        call the model refuses), log-spaced; ``messages``, ``rounds`` and ``tool_results``
        run from 1 to the chat's count; any other parameter over its declared range. A
        strategy whose parameter counts something else overrides it.
        """
        from ctxlab.strategies.registry import parameters

        info = next((i for i in parameters(type(self)) if i.name == name), None)
        if info is None or info.kind not in ("int", "float", "optional_int"):
            return None
        spec, integer = info.spec, info.kind != "float"
        if spec.unit == "tokens":
            top = chat.total if window is None else min(chat.total, window)
            basis = (
                f"the chat's {chat.total:,} tokens"
                if window is None or chat.total <= window
                else f"the model's {window:,}-token window"
            )
            return sweep_range_from_counts(
                spec, integer=integer, top=top, basis=basis, log=True, floor=top * SWEEP_FLOOR
            )
        counts: tuple[int, str] | None = None
        if spec.unit == "messages":
            counts = len(chat), f"the chat's {len(chat):,} messages"
        elif spec.unit == "rounds":
            counts = len(chat.starts), f"the chat's {len(chat.starts):,} rounds"
        elif spec.unit == "tool_results":
            results = sum(1 for m in chat.messages if m.is_tool_result)
            counts = results, f"the chat's {results:,} tool results"
        if counts is not None:
            return sweep_range_from_counts(
                spec, integer=integer, top=counts[0], basis=counts[1], log=counts[0] > 24
            )
        default = info.default if isinstance(info.default, int | float) else 0
        declared = spec.max if spec.max is not None else max(float(default) * 4, 10)
        return sweep_range_from_counts(
            spec, integer=integer, top=declared, basis="its declared range", log=False
        )

    def resummarization_guard(
        self, messages: Sequence[Message], counter: TokenCounter
    ) -> ResummarizationGuard | None:
        """Whether this configuration would summarize again right after it compacts.

        None for a strategy that never summarizes (the default); a summarizing strategy
        overrides it, so no page special-cases a strategy by its parameter names.
        """
        return None

    def sends_nothing(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        result: TrimResult,
        window: int | None = None,
    ) -> SendsNothing | None:
        """Why ``result`` (this strategy applied to ``messages``) sends no conversation message,
        with fixes, or None when it sends one or the chat has none to send.

        The default names the parameters whose change makes it send something: each token
        parameter raised to the chat's size (kept within ``window``, the model's input room,
        when one is known) and each switch flipped, every candidate checked by applying the
        changed strategy. A strategy that knows its rules better overrides it.
        """
        if sends_conversation(result) or all(m.role.is_instruction for m in messages):
            return None
        from ctxlab.strategies.registry import current_params, parameters

        values = current_params(self)
        total = counter.counted(messages).total
        fixes: list[Fix] = []
        for info in parameters(type(self)):
            value = values.get(info.name)
            if isinstance(value, bool):
                verb = "Turn off" if value else "Turn on"
                candidate = Fix(f"{verb} {info.spec.label}", {info.name: not value})
            elif info.spec.unit == "tokens" and isinstance(value, int):
                target = nice_ceiling(total)
                if window is not None and window > 0:
                    target = min(target, window)
                if target <= value:
                    continue
                candidate = Fix(f"Raise {info.spec.label} to {target:,}", {info.name: target})
            else:
                continue
            try:
                changed = _replaced(self, info.path, candidate.changes[info.name])
                if sends_conversation(changed.apply(messages, counter)):
                    fixes.append(candidate)
            except (CtxlabError, ValueError):
                continue  # the changed value is not one this strategy accepts: no fix
        what = "only the system prompt" if result.messages else "nothing"
        settings = tuple(name for fix in fixes for name in fix.changes)
        named = ", ".join(_setting_phrase(self, name, values) for name in settings)
        text = f"{self.title} sends {what} of this chat with these settings"
        text += f" ({named})." if named else "."
        return SendsNothing(text, settings, tuple(fixes))

    def budget_note(
        self, messages: Sequence[Message], counter: TokenCounter, result: TrimResult
    ) -> BudgetNote | None:
        """The context is over this strategy's own token limit (its first token parameter: a
        budget or a trigger), or None. The reason comes from :meth:`over_limit_reason`."""
        from ctxlab.strategies.registry import current_params, parameters

        values = current_params(self)
        for info in parameters(type(self)):
            value = values.get(info.name)
            if info.spec.unit != "tokens" or isinstance(value, bool) or not isinstance(value, int):
                continue
            if result.tokens_after <= value:
                return None
            reason = self.over_limit_reason(counter.counted(messages), result)
            return BudgetNote(info.name, info.spec.label, value, result.tokens_after, reason)
        return None

    def over_limit_reason(self, chat: CountedChat, result: TrimResult) -> str:
        """Why ``result`` is over this strategy's token limit, as the end of a sentence; the
        default repeats the strategy's own warning, if any."""
        if result.warnings:
            return result.warnings[0]
        return f"{self.title} keeps this much whatever the limit."

    def params(self) -> dict[str, Any]:
        """The parameter values, by field name (nested dataclasses as dicts)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload, no-any-return]
