"""Fleet results in one embedded DuckDB file: what was evaluated, keyed by content hashes.

Tables (created on first open)::

    configurations  config_key PK, strategy, params (JSON), model, budget, retention, label
    conversations   conversation_key PK, source_key, source, conversation, title, messages, turns
    results         conversation_key x config_key (PK): the conversation's totals
    calls           conversation_key, config_key, one row per model call (CallRow columns)
    errors          source, conversation, config_key, stage, reason: what could not be evaluated
    sources         source_key x config_key (PK): this source is finished for that configuration
    call_tokens     config_key, tokens (3 significant digits), calls: a histogram of calls
    call_problems   conversation_key, config_key, code, problems: validator codes counted

The last two are derived from the new calls inside each write, so reports and the Fleet page
read small tables whatever the number of calls. ``ctxlab_meta`` (key, value) records the
schema version (:data:`SCHEMA_VERSION`); a file without it was written by version 1.

A results file is checked before it is read or written (:func:`check_results`): not a DuckDB
file, a file cut short, a database without ctxlab's tables, or one written by a newer ctxlab
(a later schema) is a one-line :class:`~ctxlab.errors.CtxlabError` naming the file, as is any
DuckDB error met later while reading or writing it.

Invariants: every write is one transaction holding whole sources (all their conversations, their
calls, their errors and their ``sources`` markers), so no reader ever sees half a conversation,
and a source marked finished is never evaluated again for that configuration. A killed run
loses at most the sources of its last, uncommitted write; restarted, it evaluates exactly those.
Only the parent process writes, and one writer at a time: DuckDB's file lock refuses a second
process, and this module refuses a second writer in the same process (two viewers of one
server evaluating into one file), so nothing is ever half-written by two runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from ctxlab.corpus.evaluate import CALL_COLUMNS, TOTAL_COLUMNS
from ctxlab.corpus.grid import Configuration
from ctxlab.corpus.work import SourceOutcome
from ctxlab.errors import CtxlabError

__all__ = [
    "META_TABLE",
    "SCHEMA_VERSION",
    "TABLES",
    "DoneSet",
    "Store",
    "check_results",
    "connect_results",
    "interrupt_deferred",
    "results_errors",
]

_WRITTEN = ("configurations", "conversations", "results", "calls", "errors", "sources")
_DERIVED = ("call_tokens", "call_problems")
TABLES = (*_WRITTEN, *_DERIVED)

SCHEMA_VERSION = 1
"""The layout of the tables below; a file of a later version is refused, not misread."""
META_TABLE = "ctxlab_meta"

MEMORY_LIMIT = "256MB"
"""DuckDB's buffer pool for a results file opened by a run."""

TOKEN_BUCKET_SQL = (
    "CASE WHEN tokens_sent < 1000 THEN tokens_sent ELSE "
    "tokens_sent // CAST(pow(10, floor(log10(tokens_sent)) - 2) AS BIGINT) "
    "* CAST(pow(10, floor(log10(tokens_sent)) - 2) AS BIGINT) END"
)
"""``tokens_sent`` rounded down to three significant digits (exact below 1,000)."""

_CALL_TYPES = {
    "over_budget": "BOOLEAN",
    "cost": "DOUBLE",
    "cost_with_cache": "DOUBLE",
    "cost_untrimmed": "DOUBLE",
    "problem_codes": "VARCHAR[]",
}
_TOTAL_TYPES = {
    "cost": "DOUBLE",
    "cost_with_cache": "DOUBLE",
    "cost_untrimmed": "DOUBLE",
    "retention": "DOUBLE",
}
_ARROW = {
    "BOOLEAN": pa.bool_(),
    "DOUBLE": pa.float64(),
    "BIGINT": pa.int64(),
    "VARCHAR": pa.string(),
    "VARCHAR[]": pa.list_(pa.string()),
}


def _columns(names: Sequence[str], types: dict[str, str]) -> list[tuple[str, str]]:
    return [(n, types.get(n, "BIGINT")) for n in names]


_SCHEMA: dict[str, list[tuple[str, str]]] = {
    "configurations": [
        ("config_key", "VARCHAR"),
        ("strategy", "VARCHAR"),
        ("params", "VARCHAR"),
        ("model", "VARCHAR"),
        ("budget", "BIGINT"),
        ("retention", "BOOLEAN"),
        ("label", "VARCHAR"),
    ],
    "conversations": [
        ("conversation_key", "VARCHAR"),
        ("source_key", "VARCHAR"),
        ("source", "VARCHAR"),
        ("conversation", "VARCHAR"),
        ("title", "VARCHAR"),
        ("messages", "BIGINT"),
        ("turns", "BIGINT"),
    ],
    "results": [
        ("conversation_key", "VARCHAR"),
        ("config_key", "VARCHAR"),
        *_columns(TOTAL_COLUMNS, _TOTAL_TYPES),
    ],
    "calls": [
        ("conversation_key", "VARCHAR"),
        ("config_key", "VARCHAR"),
        *_columns(CALL_COLUMNS, _CALL_TYPES),
    ],
    "errors": [
        ("source_key", "VARCHAR"),
        ("source", "VARCHAR"),
        ("conversation_key", "VARCHAR"),
        ("conversation", "VARCHAR"),
        ("config_key", "VARCHAR"),
        ("stage", "VARCHAR"),
        ("reason", "VARCHAR"),
    ],
    "sources": [("source_key", "VARCHAR"), ("config_key", "VARCHAR")],
    # Derived from ``calls`` in the same transaction, so the Fleet page never scans calls.
    "call_tokens": [("config_key", "VARCHAR"), ("tokens", "BIGINT"), ("calls", "BIGINT")],
    "call_problems": [
        ("conversation_key", "VARCHAR"),
        ("config_key", "VARCHAR"),
        ("code", "VARCHAR"),
        ("problems", "BIGINT"),
    ],
}
_DERIVED_SQL = {
    "call_tokens": f"SELECT config_key, {TOKEN_BUCKET_SQL} AS tokens, count(*) AS calls "
    "FROM _new_calls GROUP BY ALL",
    "call_problems": "SELECT conversation_key, config_key, code, count(*) AS problems FROM "
    "(SELECT conversation_key, config_key, unnest(problem_codes) AS code FROM _new_calls "
    "WHERE len(problem_codes) > 0) GROUP BY ALL",
}
_KEYS = {
    "configurations": "config_key",
    "conversations": "conversation_key",
    "results": "conversation_key, config_key",
    "sources": "source_key, config_key",
}


_ARROW_SCHEMA = {
    table: pa.schema([(c, _ARROW[t]) for c, t in columns]) for table, columns in _SCHEMA.items()
}


@dataclass(slots=True)
class DoneSet:
    """Which sources are finished for which configurations of a grid.

    ``complete`` holds sources finished for the whole grid (the common case, kept compact);
    ``partial`` the others with the configuration keys they have.
    """

    grid: frozenset[str]
    complete: set[str] = field(default_factory=set)
    partial: dict[str, set[str]] = field(default_factory=dict)

    def missing(self, source_key: str) -> frozenset[str]:
        """Configuration keys of the grid still to evaluate for ``source_key``."""
        if source_key in self.complete:
            return frozenset()
        return self.grid - self.partial.get(source_key, set())


@dataclass
class _Batch:
    """The rows of several sources, per table, as tuples in the table's column order.

    Rows are tuples (as :class:`~ctxlab.corpus.work.ConfigRows` brings them) rather than
    dicts: a run writes one row per call, and this is the parent's share of the work.
    """

    tables: dict[str, list[tuple[Any, ...]]] = field(
        default_factory=lambda: {t: [] for t in _WRITTEN}
    )

    def add(self, table: str, row: tuple[Any, ...]) -> None:
        self.tables[table].append(row)

    def arrow(self, table: str) -> pa.Table:
        schema = _ARROW_SCHEMA[table]
        rows = self.tables[table]
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
        return pa.Table.from_arrays(
            [pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)],
            schema=schema,
        )


@contextlib.contextmanager
def interrupt_deferred() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) that arrives inside the block until the block is done, then raise
    it as KeyboardInterrupt.

    DuckDB answers a SIGINT during a statement by aborting it ("Query interrupted"), and Python
    raises KeyboardInterrupt between two statements of a transaction: either way the results a
    run had finished were rolled back and the user got a traceback instead of a clean stop that
    commits them. Only the main thread receives signals, and only Python's own handler is
    replaced (a process that ignores SIGINT, like a pool worker, keeps ignoring it).
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    received: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if received:
        raise KeyboardInterrupt


class Store:
    """A DuckDB results file, opened for writing (one writer: the run's parent process).

    Raises:
        CtxlabError: the file is not a DuckDB database, is damaged, holds other tables or a
            later schema, or is being written by another run (another process, or another
            evaluation in this one).
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = os.fspath(path)
        self._claim = None if read_only else _claim_writer(self.path)
        try:
            self.con = connect_results(self.path, read_only=read_only)
            try:
                with results_errors(self.path):
                    # The writer only appends small batches: a small buffer pool keeps the
                    # parent's memory flat, and one thread leaves the cores to the workers.
                    self.con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
                    self.con.execute("SET threads = 1")
                    check_results(self.con, self.path, empty_ok=not read_only)
                    if not read_only:
                        self._create()
            except BaseException:
                self.con.close()
                raise
        except BaseException:
            self._release()
            raise

    def _create(self) -> None:
        for table, columns in _SCHEMA.items():
            body = ", ".join(f"{c} {t}" for c, t in columns)
            key = _KEYS.get(table)
            if key is not None:
                body += f", PRIMARY KEY ({key})"
            self.con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({body})")
        self.con.execute(
            f"CREATE TABLE IF NOT EXISTS {META_TABLE} (key VARCHAR PRIMARY KEY, value VARCHAR)"
        )
        self.con.execute(
            f"INSERT OR IGNORE INTO {META_TABLE} VALUES ('schema_version', ?)",
            [str(SCHEMA_VERSION)],
        )

    def _release(self) -> None:
        if self._claim is not None:
            with _WRITERS_LOCK:
                _WRITERS.discard(self._claim)
            self._claim = None

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            self._release()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    def done(self, configurations: Sequence[Configuration]) -> DoneSet:
        """The sources already finished for each configuration of ``configurations``."""
        grid = frozenset(c.key for c in configurations)
        out = DoneSet(grid)
        if not grid:
            return out
        with results_errors(self.path):
            rows = self.con.execute(
                "SELECT source_key, list(config_key) FROM sources "
                "WHERE list_contains(?, config_key) GROUP BY source_key",
                [sorted(grid)],
            ).fetchall()
        for source_key, keys in rows:
            if len(keys) >= len(grid):
                out.complete.add(source_key)
            else:
                out.partial[source_key] = set(keys)
        return out

    def count(self, table: str) -> int:
        if table not in TABLES:
            raise ValueError(f"no table {table!r}")
        row = self.con.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0

    # -- writing ---------------------------------------------------------------------------

    def add_configurations(self, configurations: Sequence[Configuration]) -> None:
        batch = _Batch()
        for c in configurations:
            row = (c.key, c.strategy, c.params_json, c.model, c.budget, c.retention, c.label)
            batch.add("configurations", row)
        self._insert({"configurations": batch.arrow("configurations")}, ignore=("configurations",))

    def write(self, outcomes: Sequence[SourceOutcome]) -> None:
        """Write whole sources in one transaction, with their finished markers."""
        if not outcomes:
            return
        batch = _Batch()
        for outcome in outcomes:
            _add_outcome(batch, outcome)
        self._insert(
            {t: batch.arrow(t) for t in _WRITTEN if t != "configurations"},
            ignore=("conversations",),
        )

    def _insert(self, tables: dict[str, pa.Table], ignore: Sequence[str]) -> None:
        """Insert ``tables`` (and what derives from new calls) in one transaction, with Ctrl-C
        deferred until it is committed (:func:`interrupt_deferred`)."""
        with interrupt_deferred():
            self._insert_now(tables, ignore)

    def _insert_now(self, tables: dict[str, pa.Table], ignore: Sequence[str]) -> None:
        con = self.con
        views = []
        with results_errors(self.path, writing=True):
            con.execute("BEGIN TRANSACTION")
        try:
            for name, table in tables.items():
                if table.num_rows == 0:
                    continue
                view = f"_new_{name}"
                con.register(view, table)
                views.append(view)
                verb = "INSERT OR IGNORE INTO" if name in ignore else "INSERT INTO"
                con.execute(f"{verb} {name} SELECT * FROM {view}")
            if "_new_calls" in views:
                for name, query in _DERIVED_SQL.items():
                    con.execute(f"INSERT INTO {name} {query}")
            con.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            if isinstance(exc, duckdb.Error):
                raise _results_error(self.path, exc, writing=True) from None
            raise
        finally:
            for view in views:
                with contextlib.suppress(duckdb.Error):
                    con.unregister(view)

    def export_parquet(self, folder: str | os.PathLike[str]) -> list[str]:
        """Write every table to ``folder/<table>.parquet`` (zstd); returns the paths.

        The folder is itself a results file for :func:`ctxlab.corpus.report.open_results`.
        """
        os.makedirs(folder, exist_ok=True)
        paths = []
        for table in (*TABLES, META_TABLE):
            path = os.path.join(os.fspath(folder), f"{table}.parquet")
            self.con.execute(
                f"COPY {table} TO '{_quoted(path)}' (FORMAT parquet, COMPRESSION zstd)"
            )
            paths.append(path)
        return paths


_MAGIC = b"DUCK"  # bytes 8-12 of every DuckDB database file
_WRITERS: set[str] = set()
_WRITERS_LOCK = threading.Lock()


def _claim_writer(path: str) -> str:
    """Mark ``path`` as written by this process; refuse when another Store here writes it.

    DuckDB locks a file against other processes only: two connections of one process (two
    viewers of one server) would share the database and race on its keys.
    """
    key = os.path.realpath(path)
    with _WRITERS_LOCK:
        if key in _WRITERS:
            raise CtxlabError(
                f"results file {path} is being written by another evaluation; wait for it to "
                "finish, or write to another file"
            )
        _WRITERS.add(key)
    return key


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _results_error(path: str, exc: BaseException, *, writing: bool = False) -> CtxlabError:
    """The one-line error for a DuckDB failure on the results file ``path``."""
    text = _first_line(exc)
    if "Could not set lock" in text:
        return CtxlabError(
            f"results file {path} is being written by another process (a ctxlab eval?); "
            "wait for it to finish, or use another file"
        )
    if "different configuration" in text:
        return CtxlabError(
            f"results file {path} is open for writing in this process; wait for the "
            "evaluation to finish"
        )
    if "not a valid DuckDB database" in text:
        return CtxlabError(f"{path} is not a ctxlab results file (not a DuckDB database)")
    if isinstance(exc, duckdb.IOException) and "read enough bytes" in text:
        return CtxlabError(f"results file {path} is damaged: it is cut short ({text})")
    verb = "write to" if writing else "read"
    return CtxlabError(f"cannot {verb} results file {path}: {text}")


@contextlib.contextmanager
def results_errors(path: str, *, writing: bool = False) -> Iterator[None]:
    """Turn any DuckDB error inside the block into a one-line CtxlabError naming ``path``."""
    try:
        yield
    except duckdb.Error as exc:
        raise _results_error(path, exc, writing=writing) from None


def connect_results(path: str, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection on ``path``, refused (CtxlabError) when the file is cut short.

    A DuckDB file is three 4 KiB headers then ``total_blocks`` blocks; a file shorter than that
    lost its end (a copy cut off, a full disk) and would fail on whichever query first reads a
    missing block. Skipped while a write-ahead log is pending (its blocks are not in the file).
    """
    if os.path.isfile(path):
        with open(path, "rb") as fh:
            head = fh.read(12)
        if (head or read_only) and head[8:12] != _MAGIC:
            raise CtxlabError(f"{path} is not a ctxlab results file (not a DuckDB database)")
    with results_errors(path, writing=not read_only):
        con = duckdb.connect(path, read_only=read_only)
        try:
            row = con.execute(
                "SELECT block_size, total_blocks FROM pragma_database_size() "
                "WHERE database_name = current_database()"
            ).fetchone()
            size = os.path.getsize(path) if os.path.isfile(path) else 0
            if row and not os.path.exists(path + ".wal"):
                needed = 3 * 4096 + int(row[0]) * int(row[1])
                if int(row[1]) > 0 and size < needed:
                    raise CtxlabError(
                        f"results file {path} is damaged: it is cut short "
                        f"({size:,} bytes of the {needed:,} it needs)"
                    )
        except BaseException:
            con.close()
            raise
    return con


def check_results(con: duckdb.DuckDBPyConnection, path: str, *, empty_ok: bool = False) -> None:
    """Refuse a database that is not ctxlab's results, or of a later schema than this ctxlab's.

    ``empty_ok``: a database without any table is accepted (a new file, about to be created).

    Raises:
        CtxlabError: one line naming ``path``: other tables, a ctxlab table missing a
            column, or a schema version above :data:`SCHEMA_VERSION`.
    """
    with results_errors(path):
        rows = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_catalog = current_database() AND table_schema = 'main'"
        ).fetchall()
    columns: dict[str, set[str]] = {}
    for table, column in rows:
        columns.setdefault(str(table), set()).add(str(column))
    if not columns and empty_ok:
        return
    missing = [t for t in TABLES if t not in columns]
    if missing:
        others = sorted(t for t in columns if t not in TABLES and t != META_TABLE)
        held = f"; it holds {', '.join(others[:5])}" if others else ""
        raise CtxlabError(
            f"{path} is not a ctxlab results file (no table {', '.join(missing[:3])}{held})"
        )
    version = SCHEMA_VERSION if META_TABLE not in columns else _schema_version(con, path)
    if version > SCHEMA_VERSION:
        raise CtxlabError(
            f"results file {path} was written by a newer ctxlab (results schema {version}; "
            f"this ctxlab reads {SCHEMA_VERSION}): upgrade ctxlab to read it"
        )
    for table in TABLES:
        lacking = [c for c, _ in _SCHEMA[table] if c not in columns[table]]
        if lacking:
            raise CtxlabError(
                f"results file {path} is damaged: table {table} has no column {lacking[0]}"
            )


def _schema_version(con: duckdb.DuckDBPyConnection, path: str) -> int:
    with results_errors(path):
        row = con.execute(f"SELECT value FROM {META_TABLE} WHERE key = 'schema_version'").fetchone()
    text = str(row[0]) if row else "1"
    if not text.isdigit():
        raise CtxlabError(f"results file {path} is damaged: schema version {text[:20]!r}")
    return int(text)


def _quoted(path: str) -> str:
    """``path`` inside a single-quoted SQL string."""
    return path.replace("'", "''")


def _add_outcome(batch: _Batch, outcome: SourceOutcome) -> None:
    """The rows of one source, each tuple in its table's ``_SCHEMA`` column order."""
    calls = batch.tables["calls"]
    for conv in outcome.conversations:
        batch.add(
            "conversations",
            (
                conv.key,
                outcome.key,
                outcome.label,
                conv.conversation,
                conv.title,
                conv.messages,
                conv.turns,
            ),
        )
        for result in conv.outcomes:
            keys = (conv.key, result.config_key)
            if result.error is not None or result.totals is None:
                batch.add(
                    "errors",
                    (
                        outcome.key,
                        outcome.label,
                        conv.key,
                        conv.conversation,
                        result.config_key,
                        "evaluate",
                        result.error,
                    ),
                )
                continue
            batch.add("results", keys + result.totals)
            calls.extend(keys + call for call in result.calls)
    if outcome.error is not None:
        for config_key in outcome.configurations:
            batch.add(
                "errors",
                (outcome.key, outcome.label, None, None, config_key, outcome.stage, outcome.error),
            )
    for config_key in outcome.configurations:
        batch.add("sources", (outcome.key, config_key))
