"""What a results file says, per configuration: SQL aggregations in DuckDB, never Python loops.

Every function takes an open DuckDB connection on a results file (:func:`open_results`) and
returns plain values (lists of dicts, or pandas frames for the Fleet page's figures). Totals
with an unknown price are None (SQL NULL), not a partial sum: a cost column is summed only
when every row has one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import duckdb

from ctxlab.corpus.store import (
    META_TABLE,
    TABLES,
    check_results,
    connect_results,
    results_errors,
)
from ctxlab.errors import CtxlabError

# The frames are the Fleet page's, whose app extra brings pandas; `ctxlab report` needs only
# the fleet extra (DuckDB and Arrow).
if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "REPORT_COLUMNS",
    "calls_ecdf",
    "configuration_report",
    "is_results",
    "open_results",
    "problem_counts",
    "reading_results",
    "retention_stats",
    "worst_conversations",
]

REPORT_COLUMNS: tuple[str, ...] = (
    "strategy",
    "params",
    "label",
    "model",
    "budget",
    "conversations",
    "calls",
    "input_tokens",
    "input_tokens_untrimmed",
    "calls_over_budget",
    "share_over_budget",
    "invalid_calls",
    "p50_tokens",
    "p95_tokens",
    "max_tokens",
    "cost",
    "cost_with_cache",
    "cost_untrimmed",
    "retention",
    "errors",
    "config_key",
)


def is_results(path: str | os.PathLike[str]) -> bool:
    """True for a DuckDB results file or a folder of Parquet exports (by name, not content)."""
    text = os.fspath(path)
    if os.path.isdir(text):
        return all(os.path.isfile(os.path.join(text, f"{t}.parquet")) for t in TABLES)
    return text.endswith(".duckdb") and os.path.isfile(text)


def open_results(path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """A read-only connection on a results file, or on a folder of its Parquet exports.

    A folder (``ctxlab eval --parquet DIR``) is opened as an in-memory database whose tables
    are views over ``DIR/<table>.parquet``, so every query here works on both. The file is
    checked first (:func:`~ctxlab.corpus.store.check_results`); a DuckDB error met by a later
    query is turned into the same kind of one-line error by :func:`reading_results`.

    Raises:
        CtxlabError: no such file, not a ctxlab results file, cut short, a later schema, or
            being written by another process.
    """
    text = os.fspath(path)
    if os.path.isdir(text):
        if not is_results(text):
            raise CtxlabError(f"{text} holds no ctxlab Parquet results ({', '.join(TABLES)})")
        con = duckdb.connect(":memory:")
        try:
            with results_errors(text):
                for table in (*TABLES, META_TABLE):
                    file = os.path.join(text, f"{table}.parquet")
                    if table == META_TABLE and not os.path.isfile(file):
                        continue
                    quoted = file.replace("'", "''")
                    con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{quoted}')")
            check_results(con, text)
        except BaseException:
            con.close()
            raise
        return con
    if not os.path.isfile(text):
        raise CtxlabError(f"no such results file: {text}")
    con = connect_results(text, read_only=True)
    try:
        check_results(con, text)
    except BaseException:
        con.close()
        raise
    return con


@contextlib.contextmanager
def reading_results(path: str | os.PathLike[str]) -> Iterator[duckdb.DuckDBPyConnection]:
    """``with reading_results(path) as con``: :func:`open_results`, closed after the block.

    Any DuckDB error inside the block (a block of the file that cannot be read) becomes a
    one-line :class:`~ctxlab.errors.CtxlabError` naming the file.
    """
    con = open_results(path)
    try:
        with results_errors(os.fspath(path)):
            yield con
    finally:
        con.close()


def _known_sum(column: str) -> str:
    """SUM of ``column`` when every row has a value, else NULL."""
    return f"CASE WHEN count({column}) = count(*) THEN sum({column}) END"


_REPORT_SQL = f"""
WITH r AS (
    SELECT config_key,
           count(*) AS conversations,
           sum(calls) AS calls,
           sum(tokens_sent) AS input_tokens,
           sum(tokens_untrimmed) AS input_tokens_untrimmed,
           sum(calls_over_budget) AS calls_over_budget,
           sum(invalid_calls) AS invalid_calls,
           max(max_tokens_sent) AS max_tokens,
           {_known_sum("cost")} AS cost,
           {_known_sum("cost_with_cache")} AS cost_with_cache,
           {_known_sum("cost_untrimmed")} AS cost_untrimmed,
           avg(retention) AS retention
    FROM results GROUP BY config_key
), h AS (
    SELECT config_key, tokens, sum(calls) AS calls FROM call_tokens GROUP BY ALL
), c AS (
    SELECT config_key, tokens,
           sum(calls) OVER (PARTITION BY config_key ORDER BY tokens) / sum(calls)
               OVER (PARTITION BY config_key) AS share
    FROM h
), q AS (
    SELECT config_key,
           min(tokens) FILTER (WHERE share >= 0.5) AS p50_tokens,
           min(tokens) FILTER (WHERE share >= 0.95) AS p95_tokens
    FROM c GROUP BY config_key
), e AS (
    SELECT config_key, count(*) AS errors FROM errors GROUP BY config_key
)
SELECT c.strategy, c.params, c.label, c.model, c.budget,
       coalesce(r.conversations, 0) AS conversations,
       coalesce(r.calls, 0) AS calls,
       coalesce(r.input_tokens, 0) AS input_tokens,
       coalesce(r.input_tokens_untrimmed, 0) AS input_tokens_untrimmed,
       coalesce(r.calls_over_budget, 0) AS calls_over_budget,
       coalesce(r.calls_over_budget / nullif(r.calls, 0), 0) AS share_over_budget,
       coalesce(r.invalid_calls, 0) AS invalid_calls,
       q.p50_tokens, q.p95_tokens, r.max_tokens,
       r.cost, r.cost_with_cache, r.cost_untrimmed, r.retention,
       coalesce(e.errors, 0) AS errors,
       c.config_key
FROM configurations c
LEFT JOIN r USING (config_key)
LEFT JOIN q USING (config_key)
LEFT JOIN e USING (config_key)
ORDER BY c.strategy, c.label, c.config_key
"""


def _plain(value: Any) -> Any:
    """A DuckDB value as JSON holds it (HUGEINT sums and decimals become int/float)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return value
    return int(number) if number.is_integer() and not isinstance(value, float) else number


def configuration_report(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """One dict per configuration (keys :data:`REPORT_COLUMNS`; ``params`` a dict).

    ``share_over_budget`` is calls over budget / calls; ``p50_tokens``/``p95_tokens`` are
    quantiles of the tokens sent per call to three significant digits (from the histogram
    ``call_tokens``); ``max_tokens`` is exact; ``retention`` the mean percent of facts kept at
    the last call; ``errors`` the error rows recorded for the configuration.
    """
    rows = con.execute(_REPORT_SQL).fetchall()
    out = []
    for row in rows:
        item = {k: _plain(v) for k, v in zip(REPORT_COLUMNS, row, strict=True)}
        item["params"] = json.loads(item["params"])
        out.append(item)
    return out


def problem_counts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Validator problems by configuration and code: columns config_key, code, problems."""
    return con.execute(
        "SELECT config_key, code, sum(problems) AS problems FROM call_problems "
        "GROUP BY ALL ORDER BY config_key, problems DESC, code"
    ).df()


def calls_ecdf(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The ECDF of tokens sent per call, per configuration, from the call histogram.

    Columns: config_key, tokens (rounded down to 3 significant digits), share (0..1] of calls
    at or under it. Its size depends on the spread of token counts, not on the number of calls.
    """
    return con.execute(
        """
        WITH h AS (SELECT config_key, tokens, sum(calls) AS calls FROM call_tokens GROUP BY ALL)
        SELECT config_key, tokens,
               sum(calls) OVER (PARTITION BY config_key ORDER BY tokens)
                 / sum(calls) OVER (PARTITION BY config_key) AS share
        FROM h ORDER BY config_key, tokens
        """
    ).df()


def retention_stats(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Fact retention per configuration as box statistics over its conversations.

    Columns: config_key, conversations, low, q1, median, q3, high (percent; low/high are the
    minimum and maximum).
    """
    return con.execute(
        """
        SELECT config_key, count(retention) AS conversations, min(retention) AS low,
               quantile_cont(retention, 0.25) AS q1, median(retention) AS median,
               quantile_cont(retention, 0.75) AS q3, max(retention) AS high
        FROM results WHERE retention IS NOT NULL GROUP BY config_key ORDER BY config_key
        """
    ).df()


_WORST_ORDER = {
    "calls_over_budget": "r.calls_over_budget DESC, r.max_tokens_sent DESC",
    "invalid_calls": "r.invalid_calls DESC, r.problems DESC",
    "retention": "r.retention ASC NULLS LAST",
    "cost": "r.cost DESC NULLS LAST",
    "max_tokens_sent": "r.max_tokens_sent DESC",
}


def worst_conversations(
    con: duckdb.DuckDBPyConnection, config_key: str, by: str = "calls_over_budget", limit: int = 20
) -> pd.DataFrame:
    """The ``limit`` worst conversations of one configuration by ``by``.

    Columns: source, conversation, title, messages, calls, calls_over_budget, max_tokens_sent,
    invalid_calls, retention, cost.

    Raises:
        ValueError: ``by`` is not one of the orders this function knows.
    """
    order = _WORST_ORDER.get(by)
    if order is None:
        raise ValueError(f"cannot rank by {by!r}; use one of {', '.join(_WORST_ORDER)}")
    return con.execute(
        f"""
        SELECT v.source, v.conversation, v.title, v.messages, r.calls, r.calls_over_budget,
               r.max_tokens_sent, r.invalid_calls, r.retention, r.cost
        FROM results r JOIN conversations v USING (conversation_key)
        WHERE r.config_key = ?
        ORDER BY {order}, v.source, v.conversation
        LIMIT ?
        """,
        [config_key, limit],
    ).df()
