"""Caches whose memory is bounded: by bytes and entries (LRU), or by who still holds a value.

A shared server keeps what its viewers computed so that the next viewer of the same chat pays
nothing; these caches make sure it keeps no more than that. :class:`BoundedCache` keeps values
strongly, least recently used first out, within a byte and an entry bound; a value heavier than
the whole bound is not kept at all. :class:`SharedWhileHeld` keeps values only while something
else holds them (weak references): a chat parsed for one session is handed to every session
that asks for it, and is released with the last of them.

The bounds come from the environment (:func:`megabytes_from_env`), so an operator can size them
for the machine; :data:`ENV_BOUNDS` lists the variables.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

__all__ = [
    "ENV_BOUNDS",
    "BoundedCache",
    "SharedWhileHeld",
    "megabytes_from_env",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MB = 1024 * 1024

ENV_BOUNDS: dict[str, tuple[int, str]] = {
    "CTXLAB_TEXT_COUNT_CACHE_MB": (
        4,
        "each token counter's per-text count cache, about 200 bytes a text (kept by digest, "
        "least recently used first out); the counts of messages and chats are kept while a "
        "session holds the chat",
    ),
    "CTXLAB_SUMMARY_CACHE_MB": (
        64,
        "summaries held in memory by the summary cache (a summary larger than this is kept "
        "only on disk, when a cache folder is set)",
    ),
}
"""Environment variable -> (default in MB, what it bounds)."""


def megabytes_from_env(name: str) -> int:
    """The bound ``name`` of :data:`ENV_BOUNDS` in bytes: the variable's value in MB (a number,
    0 or more), else its default. A value that is not a number falls back to the default."""
    default, _ = ENV_BOUNDS[name]
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else float(default)
    except ValueError:
        value = float(default)
    return int(max(value, 0.0) * MB)


class BoundedCache(Generic[K, V]):
    """A thread-safe LRU mapping holding at most ``max_bytes`` (as ``weigh(key, value)`` counts
    them) and at most ``max_entries`` values (None: no such bound); the least recently used go
    first.

    A value whose weight alone exceeds ``max_bytes`` is not kept (and replaces nothing): one huge
    value must not evict everything else to be kept for nobody.

    Attributes:
        held_bytes: the weight of what is held now.
    """

    def __init__(
        self,
        *,
        max_entries: int | None = None,
        max_bytes: int | None = None,
        weigh: Callable[[K, V], int] | None = None,
    ) -> None:
        if max_bytes is not None and weigh is None:
            raise ValueError("a byte bound needs a weigh function")
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._weigh = weigh
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[K, threading.Lock] = {}
        self.held_bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        """The value under ``key`` (now the most recently used), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def get_many(self, keys: Iterable[K]) -> list[V | None]:
        """:meth:`get` of each key, under one lock (a counter asks for thousands at once)."""
        entries = self._entries
        out: list[V | None] = []
        with self._lock:
            for key in keys:
                found = entries.get(key)
                if found is None:
                    out.append(None)
                else:
                    entries.move_to_end(key)
                    out.append(found[0])
        return out

    def put(self, key: K, value: V) -> bool:
        """Keep ``value`` under ``key``; False (nothing kept) when it alone weighs more than
        the bound."""
        return self.put_many(((key, value),)) == 1

    def put_many(self, items: Iterable[tuple[K, V]]) -> int:
        """:meth:`put` of each pair under one lock; how many were kept."""
        kept = 0
        with self._lock:
            for key, value in items:
                weight = 0 if self._weigh is None else self._weigh(key, value)
                if self.max_bytes is not None and weight > self.max_bytes:
                    continue
                old = self._entries.pop(key, None)
                if old is not None:
                    self.held_bytes -= old[1]
                self._entries[key] = (value, weight)
                self.held_bytes += weight
                kept += 1
            self._evict()
        return kept

    def _evict(self) -> None:
        entries = self._entries
        limit = self.max_entries
        max_bytes = self.max_bytes
        while entries and (
            (max_bytes is not None and self.held_bytes > max_bytes)
            or (limit is not None and len(entries) > limit)
        ):
            _, (_, weight) = entries.popitem(last=False)
            self.held_bytes -= weight

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The value under ``key``, built by ``build()`` and kept when missing. Concurrent
        callers of one key build it once (the others wait for it); an error is raised to each
        caller and nothing is kept."""
        found = self.get(key)
        if found is not None:
            return found
        with self._lock:
            building = self._building.setdefault(key, threading.Lock())
        with building:
            found = self.get(key)
            if found is None:
                found = build()
                self.put(key, found)
            with self._lock:
                if self._building.get(key) is building:
                    del self._building[key]
        return found

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.held_bytes = 0


class SharedWhileHeld(Generic[K, V]):
    """Values by key, kept only while something else holds them (a weak reference each).

    :meth:`get_or_build` hands every caller of a key the very same value while any of them still
    holds it, builds it once when several ask at the same time, and forgets it when the last
    holder drops it: a chat opened by six sessions is parsed once and released with the sixth.
    Values must accept weak references (a slotted dataclass needs ``weakref_slot=True``).
    """

    def __init__(self) -> None:
        self._values: weakref.WeakValueDictionary[K, V] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self._building: dict[K, threading.Lock] = {}

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        """The value held under ``key``, or None."""
        with self._lock:
            return self._values.get(key)

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        """The value under ``key`` while anyone holds it, else ``build()`` (once for concurrent
        callers; an error is raised to each caller and nothing is kept)."""
        with self._lock:
            found = self._values.get(key)
            if found is not None:
                return found
            building = self._building.setdefault(key, threading.Lock())
        with building:
            with self._lock:
                found = self._values.get(key)
            if found is None:
                found = build()
                with self._lock:
                    self._values[key] = found
            with self._lock:
                if self._building.get(key) is building:
                    del self._building[key]
        return found
