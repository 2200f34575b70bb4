"""Token counts that outlive the process: one SQLite file per tokenizer in the user's cache.

A text's token count depends only on the tokenizer, never on the chat accounting, so the counts
are kept per tokenizer *namespace* (``"o200k_base:<sha256 of its verified ranks>"``: a counter
declares it as ``count_namespace``) under the 128-bit digest the in-memory cache already uses
(:func:`ctxlab.tokens._text_key`). The app, the CLI, ``ctxlab eval`` workers and ``replay`` all
read and write the same files, so a chat counted once is never tokenized again, whichever process
opens it next.

Where: ``platformdirs.user_cache_dir("ctxlab")/counts/``; ``CTXLAB_CACHE_DIR=/path`` puts the
files under ``/path/counts/`` and ``CTXLAB_CACHE_DIR=`` (empty) switches the store off. Each file
holds at most ``CTXLAB_COUNT_STORE_MB`` (default 256, about 5 million texts).

Why SQLite (stdlib ``sqlite3``), measured by ``bench/bench_count_store.py`` on the 100k-message
chat's 102,577 distinct texts on a shared 2-core machine (one run): writing every count cost
0.37 s of CPU with SQLite, 0.07 s with LMDB, 0.22 s with DuckDB (from a pandas frame: its
``executemany`` took minutes); reading them back from a new connection 0.37 s, 0.05 s and 0.10 s.
SQLite is not the fastest here. It was kept because it is in the standard library, takes
concurrent readers with one writer across processes (WAL) with a busy timeout instead of
DuckDB's single-writer file lock (a second process cannot even open a DuckDB file another holds
for writing), and survives crashes by design; LMDB would add a dependency whose map size is fixed
in advance. Looking up the 100k texts one by one still cost 1.33 s of CPU on a re-open (the
issue's goal is 1.0 s), so a whole chat is also kept as one entry (next paragraph).

Whole entries: the table ``blobs`` holds values under keys of their own kind, with the same
check (a CRC-32 of key, value and namespace) and the same least-recently-used stamps, bounded
together with the counts (an eviction deletes the same share of the oldest rows of each table):
a message list's per-message counts (``chat:``, :meth:`ctxlab.tokens._CachingCounter.counts`),
what ``ctxlab show`` printed for a file and a file's content digest by its identity
(``show:``, ``stat:``, :mod:`ctxlab.show_cache`). Files of format 1 written before the table
existed gain it on opening and keep their counts; older code ignores it.

Properties:

- **Concurrent readers and writers.** WAL mode: readers never wait for a writer; writers wait up
  to :data:`BUSY_TIMEOUT_S` for each other, then skip their batch (the counts are written by the
  next process that counts those texts). Each connection is used under a lock by one thread at
  a time.
- **Bounded, least recently used out (approximately).** Every row carries the hour it was last
  written or read (:func:`_stamp`); a read refreshes the stamps of the rows it found that are
  older than the current hour, in one batch. After a write that takes the file's live pages over
  the bound, the rows with the oldest stamps are deleted until a quarter of the bound is free:
  rows used within the same hour are equals, which is what "approximate" means here.
- **Verified on read, never trusted.** A ``meta`` table holds the format version
  (:data:`FORMAT_VERSION`) and the namespace in full; a file whose meta differs (another
  tokenizer's store copied over it, an older format), that is not an SQLite database (garbage, a
  truncated header) or that SQLite reports malformed is deleted and rebuilt. And every row carries
  a check of its key, its count and the namespace (a CRC-32): a row whose check fails (a flipped
  byte, a row copied from another namespace) is treated as missing, so the text is counted again.
- **Cheap on the hot path.** A batch of at least :data:`BACKGROUND_ROWS` counts (the first
  count of a large chat) is written by a writer thread, in one transaction; a read or close of
  the store, and the process's exit (``atexit``), first write what is pending, so a process
  always finds its own counts and a command's counts persist. Smaller batches are written at
  once, as before.
- **Never fatal.** A folder that cannot be created or written, a full disk, a lock held too long:
  counting goes on without the store (or without writing to it), and the log gets one warning per
  process (logger ``ctxlab.count_store``), no more.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

__all__ = [
    "BACKGROUND_ROWS",
    "BUSY_TIMEOUT_S",
    "DEFAULT_STORE_MB",
    "FORMAT_VERSION",
    "CountStore",
    "flush_all",
    "store_folder",
    "store_for",
]

FORMAT_VERSION = "1"
"""The layout of a store file; a file with another version is rebuilt."""

DEFAULT_STORE_MB = 256
"""Default of ``CTXLAB_COUNT_STORE_MB``: the bound of each store file."""

BUSY_TIMEOUT_S = 0.5
"""How long a write waits for another process's write before it skips its batch."""

OPEN_TIMEOUT_S = 10.0
"""How long opening (which may create the file's tables) waits for another process's write."""

BACKGROUND_ROWS = 5000
"""Rows from which :meth:`CountStore.put_many_later` leaves a batch to the writer thread."""

_BATCH = 2000
"""Keys per ``SELECT ... WHERE key IN (...)``: well under SQLite's parameter limit (32,766)."""

_FREE_AFTER_EVICTION = 0.25
"""The share of the bound an eviction frees, so that the next writes do not evict again."""

_LOGGER = logging.getLogger(__name__)
_warned = False
_warn_lock = threading.Lock()


def _warn_once(message: str) -> None:
    """Log ``message`` unless this process already logged a store warning."""
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    _LOGGER.warning("%s; token counts are not kept between runs", message)


def store_folder() -> Path | None:
    """Where the store files live, by ``CTXLAB_CACHE_DIR`` (empty: None, the store is off)."""
    configured = os.environ.get("CTXLAB_CACHE_DIR")
    if configured is not None:
        return Path(configured) / "counts" if configured.strip() else None
    import platformdirs  # only when a count needs the store

    return Path(platformdirs.user_cache_dir("ctxlab")) / "counts"


def _max_bytes() -> int:
    raw = os.environ.get("CTXLAB_COUNT_STORE_MB", "").strip()
    try:
        value = float(raw) if raw else float(DEFAULT_STORE_MB)
    except ValueError:
        value = float(DEFAULT_STORE_MB)
    return int(max(value, 0.0) * 1024 * 1024)


def _stamp() -> int:
    """The current hour since the epoch: the unit of the least-recently-used order."""
    return int(time.time() // 3600)


def _file_name(namespace: str) -> str:
    """A file name for ``namespace``: its readable head, then a digest of all of it."""
    head = re.sub(r"[^A-Za-z0-9_.-]+", "-", namespace.split(":", 1)[0])[:40]
    digest = hashlib.blake2b(namespace.encode("utf-8"), digest_size=8).hexdigest()
    return f"{head}-{digest}.sqlite3"


class CountStore:
    """The counts of one tokenizer namespace in one SQLite file (see the module docstring).

    Every method swallows the database's errors (the store is a cache, never a source of truth)
    and returns what it could: :meth:`get_many` returns None for what it could not read.
    """

    def __init__(self, path: Path, namespace: str, max_bytes: int) -> None:
        self.path = path
        self.namespace = namespace
        self.max_bytes = max_bytes
        self._salt = zlib.crc32(namespace.encode("utf-8"))
        self._lock = threading.Lock()
        # Large batches are written by a thread of their own (:meth:`put_many_later`).
        self._pending: list[tuple[bytes, int]] = []
        self._pending_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None
        self._writable = True
        self._conn: sqlite3.Connection | None = self._open()

    # -- opening, verifying, rebuilding ---------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        # Several processes may create the file at once: the switch to WAL and the schema
        # take the write lock, so opening waits longer for it than a write does.
        conn = sqlite3.connect(
            self.path, timeout=OPEN_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a crash loses at most the last batch
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS counts (key BLOB PRIMARY KEY, "
                "value INTEGER NOT NULL, used INTEGER NOT NULL) WITHOUT ROWID"
            )
            # Whole entries (a chat's per-message counts, what ``ctxlab show`` printed): a
            # table format 1 files gain without losing their counts (older code ignores it).
            conn.execute(
                "CREATE TABLE IF NOT EXISTS blobs (key BLOB PRIMARY KEY, value BLOB NOT NULL, "
                "checksum INTEGER NOT NULL, used INTEGER NOT NULL)"
            )
            conn.execute(
                "INSERT OR IGNORE INTO meta VALUES ('format', ?), ('namespace', ?)",
                (FORMAT_VERSION, self.namespace),
            )
            conn.execute("COMMIT")
            meta = dict(conn.execute("SELECT name, value FROM meta").fetchall())
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        except BaseException:
            conn.close()
            raise
        if meta != {"format": FORMAT_VERSION, "namespace": self.namespace}:
            conn.close()
            raise sqlite3.DatabaseError(f"foreign store meta {meta!r}")
        return conn

    def _open(self) -> sqlite3.Connection | None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _warn_once(f"cannot create the count store folder {self.path.parent} ({exc})")
            return None
        try:
            return self._connect()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                _warn_once(f"the count store {self.path} is locked ({exc})")
                return None
            if not self._is_damage(exc):
                _warn_once(f"cannot open the count store {self.path} ({exc})")
                return None
        except sqlite3.DatabaseError:
            pass  # not a database, malformed, or another store: rebuilt below
        return self._rebuild()

    @staticmethod
    def _is_damage(exc: sqlite3.Error) -> bool:
        text = str(exc)
        return any(s in text for s in ("malformed", "not a database", "foreign store"))

    def _rebuild(self) -> sqlite3.Connection | None:
        """Delete the untrusted file (and its WAL, which belongs to it) and start afresh."""
        for suffix in ("", "-wal", "-shm"):
            try:
                os.remove(f"{self.path}{suffix}")
            except FileNotFoundError:
                continue
            except OSError as exc:
                _warn_once(f"cannot replace the damaged count store {self.path} ({exc})")
                return None
        try:
            return self._connect()
        except sqlite3.Error as exc:
            _warn_once(f"cannot rebuild the count store {self.path} ({exc})")
            return None

    def _failed(self, exc: sqlite3.Error) -> None:
        """After an error mid-use: damage rebuilds the file; anything else stops the writes
        of this process (a read-only file, a full disk) with one warning."""
        if self._is_damage(exc):
            if self._conn is not None:
                self._conn.close()
            self._conn = self._rebuild()
        elif "locked" not in str(exc) and "busy" not in str(exc):
            self._writable = False
            _warn_once(f"cannot write the count store {self.path} ({exc})")

    @property
    def is_open(self) -> bool:
        return self._conn is not None

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- rows ------------------------------------------------------------------------------------
    def _check(self, key: bytes, count: int) -> int:
        return zlib.crc32(key, count & 0xFFFFFFFF) ^ self._salt

    def _value(self, key: bytes, count: int) -> int:
        return (count << 32) | self._check(key, count)

    def get_many(self, keys: Sequence[bytes]) -> list[int | None]:
        """The stored count of each key (None: not stored, or its row failed its check)."""
        out: list[int | None] = [None] * len(keys)
        if not keys:
            return out
        self.flush()  # what this process wrote is found, written or not yet
        with self._lock:
            conn = self._conn
            if conn is None:
                return out
            found: dict[bytes, int] = {}
            stale: list[bytes] = []
            now = _stamp()
            try:
                for lo in range(0, len(keys), _BATCH):
                    chunk = keys[lo : lo + _BATCH]
                    marks = ",".join("?" * len(chunk))
                    for key, value, used in conn.execute(
                        f"SELECT key, value, used FROM counts WHERE key IN ({marks})", chunk
                    ):
                        count = value >> 32
                        if count >= 0 and (value & 0xFFFFFFFF) == self._check(key, count):
                            found[key] = count
                            if used < now:
                                stale.append(key)
            except sqlite3.Error as exc:
                self._failed(exc)
                return out
            if stale and self._writable:
                self._write(conn, "UPDATE counts SET used = ? WHERE key = ?", stale, now)
        get = found.get
        return [get(key) for key in keys]

    def put_many_later(self, items: Sequence[tuple[bytes, int]]) -> None:
        """:meth:`put_many`, in a writer thread when the batch is large (at least
        :data:`BACKGROUND_ROWS`): the 100k texts of a large chat cost about 0.4 s to write,
        which the count that found them need not wait for. Pending rows are written before any
        read or close of this store, and at the process's exit (:func:`flush_all`)."""
        if len(items) < BACKGROUND_ROWS:
            self.put_many(items)
            return
        with self._pending_lock:
            self._pending.extend(items)
            if self._writer is None or not self._writer.is_alive():  # none yet, or forked
                self._writer = threading.Thread(
                    target=self._write_pending, name="ctxlab-count-store", daemon=True
                )
                self._writer.start()
        self._wake.set()

    def _write_pending(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            self.flush()

    def flush(self) -> None:
        """Write the rows :meth:`put_many_later` left pending (waits for a write under way)."""
        with self._flush_lock:
            with self._pending_lock:
                rows, self._pending = self._pending, []
            if rows:
                self.put_many(rows)

    def put_many(self, items: Sequence[tuple[bytes, int]]) -> None:
        """Store these counts (a batch another writer holds up too long is skipped)."""
        if not items:
            return
        with self._lock:
            conn = self._conn
            if conn is None or not self._writable:
                return
            now = _stamp()
            rows = [(key, self._value(key, count), now) for key, count in items]
            if self._write(conn, "INSERT OR REPLACE INTO counts VALUES (?, ?, ?)", rows, None):
                self._evict_if_over(conn)

    def _write(
        self, conn: sqlite3.Connection, sql: str, rows: Sequence[object], stamp: int | None
    ) -> bool:
        params: Iterator[object] | Sequence[object]
        params = ((stamp, key) for key in rows) if stamp is not None else rows
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(sql, params)  # type: ignore[arg-type]
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self._failed(exc)
            return False
        return True

    def _blob_check(self, key: bytes, value: bytes) -> int:
        return zlib.crc32(value, zlib.crc32(key, self._salt))

    def get_blob(self, key: bytes) -> bytes | None:
        """The entry stored under ``key`` (None: not stored, or it failed its check)."""
        with self._lock:
            conn = self._conn
            if conn is None:
                return None
            try:
                row = conn.execute(
                    "SELECT value, checksum, used FROM blobs WHERE key = ?", (key,)
                ).fetchone()
            except sqlite3.Error as exc:
                self._failed(exc)
                return None
            if row is None:
                return None
            value, checksum, used = row
            if not isinstance(value, bytes) or checksum != self._blob_check(key, value):
                return None
            now = _stamp()
            if used < now and self._writable:
                self._write(conn, "UPDATE blobs SET used = ? WHERE key = ?", [key], now)
            return value

    def put_blob(self, key: bytes, value: bytes) -> None:
        """Store ``value`` under ``key`` (skipped when another writer holds the file too long)."""
        with self._lock:
            conn = self._conn
            if conn is None or not self._writable:
                return
            row = (key, value, self._blob_check(key, value), _stamp())
            if self._write(conn, "INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?)", [row], None):
                self._evict_if_over(conn)

    def live_bytes(self) -> int:
        """Bytes of the file's pages in use (free pages, reused by later writes, excluded)."""
        with self._lock:
            if self._conn is None:
                return 0
            return self._live_bytes(self._conn)

    @staticmethod
    def _live_bytes(conn: sqlite3.Connection) -> int:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * size)

    def _evict_if_over(self, conn: sqlite3.Connection) -> None:
        """Over the bound: delete the least recently used rows of each table, the same share
        of each, until a quarter of the bound is free."""
        try:
            live = self._live_bytes(conn)
            if live <= self.max_bytes:
                return
            keep_share = self.max_bytes * (1 - _FREE_AFTER_EVICTION) / live
            conn.execute("BEGIN IMMEDIATE")
            try:
                for table in ("counts", "blobs"):
                    rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                    if rows:
                        conn.execute(
                            f"DELETE FROM {table} WHERE key IN "
                            f"(SELECT key FROM {table} ORDER BY used LIMIT ?)",
                            (max(rows - int(rows * keep_share), 1),),
                        )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            self._failed(exc)


_STORES: dict[tuple[Path, str], CountStore | None] = {}
_STORES_LOCK = threading.Lock()


def flush_all() -> None:
    """Write every store's pending rows (run at exit, so a command's counts persist)."""
    with _STORES_LOCK:
        stores = [store for store in _STORES.values() if store is not None]
    for store in stores:
        store.flush()


atexit.register(flush_all)


def store_for(namespace: str) -> CountStore | None:
    """The shared store of ``namespace`` in :func:`store_folder` (None: the store is off or
    could not be opened; the reason was logged once)."""
    folder = store_folder()
    if folder is None:
        return None
    key = (folder, namespace)
    with _STORES_LOCK:
        if key not in _STORES:
            store = CountStore(folder / _file_name(namespace), namespace, _max_bytes())
            _STORES[key] = store if store.is_open else None
        return _STORES[key]
