"""A chat with its per-message token counts and prefix sums: what strategies trim over.

Built once per chat by :meth:`TokenCounter.counted` and cached by the counter, so re-trimming
after a parameter change costs no tokenization and O(rounds) or less (the window_drop seed's
``trim_with_counts``).
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import accumulate
from types import MappingProxyType
from typing import Any, TypeVar

from ctxlab.model import Message
from ctxlab.rounds import Round, round_starts

__all__ = ["CountedChat", "wait_for_prefetch"]

T = TypeVar("T")

_PREFETCH_LOCK = threading.Lock()
_prefetcher: ThreadPoolExecutor | None = None
_prefetching: set[Future[Any]] = set()
_delayed: set[_DelayedJob] = set()  # scheduled, waiting for their delay


def _submit(job: Callable[[], Any]) -> Future[Any]:
    """Run ``job`` on the one background thread that builds prefetched tables."""
    global _prefetcher
    with _PREFETCH_LOCK:
        if _prefetcher is None:
            _prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ctxlab-prefetch")
        future = _prefetcher.submit(job)
        _prefetching.add(future)
    future.add_done_callback(_prefetching.discard)
    return future


class _DelayedJob:
    """A job handed to the prefetch thread once: when ``delay_s`` has passed, or at
    :meth:`start`, whichever comes first. :attr:`future` settles with the job's outcome.

    The delay runs on a daemon timer, not on the prefetch thread: a job that waits holds up no
    other, and an exiting process does not wait for it.
    """

    def __init__(self, job: Callable[[], Any], delay_s: float) -> None:
        self.future: Future[Any] = Future()
        self._job = job
        self._lock = threading.Lock()
        self._started = False
        with _PREFETCH_LOCK:
            _prefetching.add(self.future)
        self.future.add_done_callback(_prefetching.discard)
        self._timer: threading.Timer | None = None
        if delay_s > 0:
            with _PREFETCH_LOCK:
                _delayed.add(self)
            self._timer = threading.Timer(delay_s, self.start)
            self._timer.daemon = True
            self._timer.name = "ctxlab-prefetch-delay"
            self._timer.start()
        else:
            self.start()

    def _claim(self) -> bool:
        """True for the one caller that decides what becomes of the job."""
        with self._lock:
            if self._started:
                return False
            self._started = True
        if self._timer is not None:
            self._timer.cancel()
            with _PREFETCH_LOCK:
                _delayed.discard(self)
        return True

    def start(self) -> None:
        if self._claim():
            _submit(self._job).add_done_callback(self._settle)

    def drop(self) -> None:
        """Never run the job if it has not started (its chat was released): settled with None,
        so :func:`wait_for_prefetch` does not wait for it."""
        if self._claim():
            self.future.set_result(None)

    def _settle(self, done: Future[Any]) -> None:
        error = done.exception()
        if error is None:
            self.future.set_result(done.result())
        else:
            self.future.set_exception(error)


def wait_for_prefetch(timeout: float | None = None, *, start_delayed: bool = False) -> bool:
    """Wait until every table :meth:`CountedChat.prefetch` scheduled so far is built; False
    when ``timeout`` seconds passed first. Benchmarks call it to time clicks on an idle
    process; ``start_delayed`` ends the delay of those still waiting for it first (the state a
    user finds after waiting that long, without the wait)."""
    if start_delayed:
        with _PREFETCH_LOCK:
            waiting = list(_delayed)
        for job in waiting:
            job.start()
    with _PREFETCH_LOCK:
        pending = list(_prefetching)
    for future in pending:
        try:
            future.result(timeout)
        except TimeoutError:
            return False
        except Exception:  # the error is raised to whoever asks for the table
            continue
    return True


class _PrefixPositions(Mapping[str, int]):
    """Message id -> index for the first ``len(ids)`` messages of a chat whose ids are unique:
    the chat's own positions, read only below that length (a head's, without a new dict)."""

    __slots__ = ("_all", "_ids")

    def __init__(self, positions: Mapping[str, int], ids: tuple[str, ...]) -> None:
        self._all = positions
        self._ids = ids

    def __getitem__(self, key: str) -> int:
        index = self._all[key]
        if index >= len(self._ids):
            raise KeyError(key)
        return index

    def __contains__(self, key: object) -> bool:
        index = self._all.get(key)  # type: ignore[call-overload]
        return index is not None and index < len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class CountedChat:
    """``messages`` with ``counts[i]`` tokens each, the reply priming of the counter, and the
    request's fixed ``overhead`` (the tokens of its tool definitions; 0 without tools).

    ``prefix[i]`` is the sum of ``counts[:i]``; every token total a strategy compares with a
    budget is :meth:`tokens` of the messages it would send, :attr:`fixed` (reply priming and
    overhead) included, which equals ``counter.count_messages`` of those messages plus the
    overhead. A chat without tool definitions (``overhead == 0``) counts exactly as before.
    """

    messages: tuple[Message, ...]
    counts: tuple[int, ...]
    reply_priming: int
    overhead: int = 0
    prefix: tuple[int, ...] = field(init=False)
    starts: tuple[int, ...] = field(init=False)
    # Tables strategies derive from this chat (prefix sums by role, tool-result indexes, ...),
    # built on first use and living exactly as long as the chat.
    _derived: dict[Hashable, Any] = field(init=False, default_factory=dict, repr=False)
    # Tables waiting to be built in the background (see prefetch), by key.
    _pending: dict[Hashable, _DelayedJob] = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if len(self.counts) != len(self.messages):
            raise ValueError("counts and messages differ in length")
        object.__setattr__(self, "prefix", (0, *accumulate(self.counts)))
        object.__setattr__(self, "starts", tuple(round_starts(self.messages)))

    def __len__(self) -> int:
        return len(self.messages)

    @property
    def fixed(self) -> int:
        """Tokens every request of this chat pays whatever it sends: reply priming + overhead."""
        return self.reply_priming + self.overhead

    def with_overhead(self, overhead: int) -> CountedChat:
        """The same chat with another fixed overhead (self when it is the same); the same object
        for every caller while this chat lives, so what is derived from it is shared too."""
        if overhead == self.overhead:
            return self
        return self.derived(
            ("with_overhead", overhead),
            lambda chat: CountedChat(chat.messages, chat.counts, chat.reply_priming, overhead),
        )

    @property
    def total(self) -> int:
        """Tokens of the whole chat as one request (:attr:`fixed` included)."""
        return self.tokens(0, len(self.messages))

    def tokens(self, start: int = 0, stop: int | None = None) -> int:
        """Tokens of ``messages[start:stop]`` sent as one request (:attr:`fixed` included)."""
        stop = len(self.messages) if stop is None else stop
        return self.prefix[stop] - self.prefix[start] + self.reply_priming + self.overhead

    def tokens_of(self, indices: Sequence[int]) -> int:
        """Tokens of the messages at ``indices`` sent as one request."""
        counts = self.counts
        return sum(counts[i] for i in indices) + self.reply_priming + self.overhead

    def derived(self, key: Hashable, build: Callable[[CountedChat], T]) -> T:
        """``build(self)``, computed once per chat and key.

        A replay asks a strategy about thousands of prefixes of one chat; a table derived once
        here (e.g. prefix sums over tool results) makes each answer O(log n). Tables are pure
        values, so two threads racing to build one is harmless.
        """
        try:
            value: T = self._derived[key]
        except KeyError:
            pending = self._pending.get(key)
            if pending is None:
                return self._build(key, build)
            # Scheduled in the background: start it now if it waits, and wait for it rather
            # than build it twice.
            pending.start()
            value = pending.future.result()
        return value

    def _build(self, key: Hashable, build: Callable[[CountedChat], T]) -> T:
        value: T = self._derived.setdefault(key, build(self))
        return value

    def prefetch(
        self, key: Hashable, build: Callable[[CountedChat], Any], *, delay_s: float = 0.0
    ) -> None:
        """Start building :meth:`derived` table ``key`` on a background thread, ``delay_s``
        seconds from now, unless it is built or being built.

        For a table that takes seconds on a long chat and that a click may soon ask for (the
        chat's facts): the click then finds it built, or waits for the rest of the build
        instead of starting its own. The delay leaves the CPU to what is on screen first (the
        app's first render of a chat); a :meth:`derived` call for ``key``, or a prefetch of it
        without delay, ends the wait at once. An error in ``build`` is raised to whoever asks
        for the table, as if it had been built then.
        """
        if key in self._derived:
            return
        pending = self._pending.get(key)
        if pending is not None:
            if delay_s <= 0:
                pending.start()
            return
        # The job holds the chat weakly: a chat released while its prefetch waits is not built.
        dropped: list[_DelayedJob] = []
        chat = weakref.ref(self, lambda _: dropped[0].drop() if dropped else None)

        def job() -> Any:
            alive = chat()
            return None if alive is None else alive._build(key, build)

        delayed = _DelayedJob(job, delay_s)
        dropped.append(delayed)
        self._pending[key] = delayed

    @property
    def ids(self) -> tuple[str, ...]:
        """Message ids in order (built once: decisions are built from slices of it)."""
        return self.derived("ids", lambda chat: tuple(m.id for m in chat.messages))

    @property
    def positions(self) -> Mapping[str, int]:
        """Message id -> index in ``messages`` (built once, read-only; ids are unique)."""
        return self.derived(
            "positions",
            lambda chat: MappingProxyType({m.id: i for i, m in enumerate(chat.messages)}),
        )

    def instruction_positions(self) -> tuple[int, ...]:
        """Indices of the system/developer messages."""
        return self.derived(
            "instruction_positions",
            lambda chat: tuple(i for i, m in enumerate(chat.messages) if m.role.is_instruction),
        )

    def instruction_prefix(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(count, tokens)``: prefix sums over system/developer messages only."""
        return self.derived("instruction_prefix", _instruction_prefix)

    def rounds(self) -> list[Round]:
        starts = self.starts
        stops = (*starts[1:], len(self.messages)) if starts else ()
        preamble = bool(self.messages) and self.messages[0].role.value != "user"
        return [
            Round(k, a, b, is_preamble=(k == 0 and preamble))
            for k, (a, b) in enumerate(zip(starts, stops, strict=True))
        ]

    def head(self, n: int) -> CountedChat:
        """The counted chat of the first ``n`` messages, built by slicing this one's tables.

        Equal to counting ``messages[:n]`` afresh (same counts, prefix sums and rounds), in
        O(messages of the last round) instead of O(n): a replay asks for the head of a
        100,000-message chat at every turn a user scrubs to. A round start of the whole chat
        before ``n`` is one of the head's; the head may have more after the last of them (user
        messages that a later tool result withdraws from the whole chat's rounds), which only
        a scan of that last stretch finds.
        """
        n = max(0, min(n, len(self.messages)))
        messages = self.messages[:n]
        kept = self.starts[: bisect_right(self.starts, n - 1)] if n else ()
        last = kept[-1] if kept else 0
        tail = [last + s for s in round_starts(messages[last:])][1:] if n else []
        head = object.__new__(CountedChat)
        for name, value in (
            ("messages", messages),
            ("counts", self.counts[:n]),
            ("reply_priming", self.reply_priming),
            ("overhead", self.overhead),
            ("prefix", self.prefix[: n + 1]),
            ("starts", (*kept, *tail)),
            ("_derived", {}),
            ("_pending", {}),
        ):
            object.__setattr__(head, name, value)
        # A replay asks for the head of a long chat at every turn a user scrubs to, and builds
        # its decisions from the head's ids and positions: slices and views of the chat's own,
        # each built once per chat, instead of a tuple and a dict of n ids per head.
        ids = self.ids[:n]
        head._derived["ids"] = ids
        positions = self.positions
        if len(positions) == len(self.messages):  # unique ids: a position is the same in both
            head._derived["positions"] = _PrefixPositions(positions, ids)
        return head

    def round_start_prefix(self) -> tuple[int, ...]:
        """``prefix[starts[k]]`` for every round ``k``: the tokens before each round, ascending
        (a search over it needs no key function, which a replay calls once per assistant turn)."""
        return self.derived(
            "round_start_prefix", lambda chat: tuple(map(chat.prefix.__getitem__, chat.starts))
        )

    def round_containing(self, index: int) -> int:
        """Index of the round that holds message ``index``."""
        return bisect_right(self.starts, index) - 1

    def rounds_in_prefix(self, stop: int) -> int:
        """How many rounds begin before message ``stop``."""
        return bisect_right(self.starts, stop - 1) if stop > 0 else 0


def _instruction_prefix(chat: CountedChat) -> tuple[tuple[int, ...], tuple[int, ...]]:
    flags = [1 if m.role.is_instruction else 0 for m in chat.messages]
    count = (0, *accumulate(flags))
    tokens = (0, *accumulate(c * f for c, f in zip(chat.counts, flags, strict=True)))
    return count, tokens
