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
read small tables whatever the number of calls.

Invariants: every write is one transaction holding whole sources (all their conversations, their
calls, their errors and their ``sources`` markers), so no reader ever sees half a conversation,
and a source marked finished is never evaluated again for that configuration. A killed run
loses at most the sources of its last, uncommitted write; restarted, it evaluates exactly those.
Only the parent process writes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from ctxlab.corpus.evaluate import CALL_COLUMNS, TOTAL_COLUMNS
from ctxlab.corpus.grid import Configuration
from ctxlab.corpus.work import SourceOutcome
from ctxlab.errors import CtxlabError

__all__ = ["TABLES", "DoneSet", "Store"]

_WRITTEN = ("configurations", "conversations", "results", "calls", "errors", "sources")
_DERIVED = ("call_tokens", "call_problems")
TABLES = (*_WRITTEN, *_DERIVED)

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


class Store:
    """A DuckDB results file, opened for writing (one writer: the run's parent process).

    Raises:
        CtxlabError: the file exists but is not a DuckDB database, or is locked by another run.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = os.fspath(path)
        try:
            self.con = duckdb.connect(self.path, read_only=read_only)
        except (duckdb.IOException, duckdb.InvalidInputException) as exc:
            raise CtxlabError(f"cannot open results file {self.path}: {exc}") from None
        # The writer only appends small batches: a small buffer pool keeps the parent's memory
        # flat, and one thread leaves the cores to the workers.
        self.con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        self.con.execute("SET threads = 1")
        if not read_only:
            self._create()

    def _create(self) -> None:
        for table, columns in _SCHEMA.items():
            body = ", ".join(f"{c} {t}" for c, t in columns)
            key = _KEYS.get(table)
            if key is not None:
                body += f", PRIMARY KEY ({key})"
            self.con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({body})")

    def close(self) -> None:
        self.con.close()

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
        """Insert ``tables`` (and what derives from new calls) in one transaction."""
        con = self.con
        views = []
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
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            for view in views:
                con.unregister(view)

    def export_parquet(self, folder: str | os.PathLike[str]) -> list[str]:
        """Write every table to ``folder/<table>.parquet`` (zstd); returns the paths.

        The folder is itself a results file for :func:`ctxlab.corpus.report.open_results`.
        """
        os.makedirs(folder, exist_ok=True)
        paths = []
        for table in TABLES:
            path = os.path.join(os.fspath(folder), f"{table}.parquet")
            self.con.execute(
                f"COPY {table} TO '{_quoted(path)}' (FORMAT parquet, COMPRESSION zstd)"
            )
            paths.append(path)
        return paths


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
