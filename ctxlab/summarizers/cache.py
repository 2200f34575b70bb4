"""The response cache: a summary is paid for once per request, model and endpoint.

Thread-safe, in memory (bounded: ``CTXLAB_SUMMARY_CACHE_MB``, least recently used first out) and
optionally as one JSON file per request key on disk; disk errors never fail a summary (the cache
is an optimisation).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
import threading
import weakref
from pathlib import Path

from ctxlab.caches import BoundedCache, megabytes_from_env
from ctxlab.summarizers.base import SummaryResponse

__all__ = ["SummaryCache", "shared_cache"]

_KEY = re.compile(r"[0-9a-f]{64}")


class SummaryCache:
    """Summaries by request key, in memory and optionally as JSON files in ``directory``.

    Thread-safe: one instance may serve every session of the app. Memory holds at most
    ``max_bytes`` of summaries (default ``CTXLAB_SUMMARY_CACHE_MB``), least recently used first
    out; a response larger than that is not kept in memory (only on disk, when configured).
    Disk entries are written atomically (a temporary file renamed into place); an entry that
    cannot be read (corrupted, truncated, wrong shape) is ignored and rewritten by the next
    :meth:`put`. Disk errors never fail a summary: the cache is an optimisation.

    Attributes:
        hits / misses: lookups served / not served, for tests and the UI.
    """

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, max_bytes: int | None = None
    ) -> None:
        self.directory = Path(directory) if directory is not None else None
        if max_bytes is None:
            max_bytes = megabytes_from_env("CTXLAB_SUMMARY_CACHE_MB")
        self._memory: BoundedCache[str, SummaryResponse] = BoundedCache(
            max_bytes=max_bytes, weigh=_response_weight
        )
        self._lock = threading.Lock()
        # A lock lives while a caller holds it: no lock per key ever asked is kept forever.
        self._key_locks: weakref.WeakValueDictionary[str, threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._memory)

    def key_lock(self, key: str) -> threading.Lock:
        """A lock per key, so concurrent callers of one request make one call (single flight)."""
        with self._lock:
            lock = self._key_locks.get(key)
            if lock is None:
                lock = threading.Lock()
                self._key_locks[key] = lock
            return lock

    def _path(self, key: str) -> Path | None:
        if self.directory is None:
            return None
        if not _KEY.fullmatch(key):
            raise ValueError("cache keys are sha256 hex digests")
        return self.directory / f"{key}.json"

    def get(self, key: str) -> SummaryResponse | None:
        """The cached response (``cached=True``), or None."""
        path = self._path(key)
        with self._lock:
            found = self._memory.get(key)
            if found is None and path is not None:
                found = _read_entry(path)
                if found is not None:
                    self._memory.put(key, found)
            if found is None:
                self.misses += 1
                return None
            self.hits += 1
            return dataclasses.replace(found, cached=True)

    def peek(self, key: str) -> bool:
        """Whether ``key`` is cached (memory or a readable disk entry); counts nothing."""
        path = self._path(key)
        with self._lock:
            if key in self._memory:
                return True
            found = _read_entry(path) if path is not None else None
            if found is not None:
                self._memory.put(key, found)
            return found is not None

    def put(self, key: str, response: SummaryResponse) -> None:
        """Store ``response`` under ``key`` (in memory, and on disk when configured)."""
        path = self._path(key)
        stored = dataclasses.replace(response, cached=False)
        with self._lock:
            self._memory.put(key, stored)
            if path is not None:
                _write_entry(path, stored)

    def clear(self) -> None:
        """Forget the in-memory entries (disk files stay)."""
        with self._lock:
            self._memory.clear()


def _response_weight(key: str, response: SummaryResponse) -> int:
    """Roughly what keeping ``response`` costs: its text (up to 4 bytes a character in memory;
    counted as 1, the common case, plus 4 for anything beyond ASCII), its model and the entry."""
    text = response.text
    size = len(text) if text.isascii() else 4 * len(text)
    return size + len(response.model) + len(key) + 300


def _read_entry(path: Path) -> SummaryResponse | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        response = SummaryResponse(
            text=data["text"],
            input_tokens=data["input_tokens"],
            output_tokens=data["output_tokens"],
            model=data["model"],
            finish_reason=data.get("finish_reason"),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    fields_ok = (
        isinstance(response.text, str)
        and bool(response.text)
        and isinstance(response.input_tokens, int)
        and isinstance(response.output_tokens, int)
        and isinstance(response.model, str)
    )
    return response if fields_ok else None


def _write_entry(path: Path, response: SummaryResponse) -> None:
    payload = {
        "text": response.text,
        "input_tokens": response.input_tokens,
        "output_tokens": response.output_tokens,
        "model": response.model,
        "finish_reason": response.finish_reason,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


_SHARED: dict[str | None, SummaryCache] = {}
_SHARED_LOCK = threading.Lock()


def shared_cache(directory: str | os.PathLike[str] | None = None) -> SummaryCache:
    """The process-wide cache for ``directory`` (None: memory only), shared by every summarizer."""
    key = None if directory is None else str(Path(directory).resolve())
    with _SHARED_LOCK:
        cache = _SHARED.get(key)
        if cache is None:
            cache = SummaryCache(directory)
            _SHARED[key] = cache
        return cache
