"""Fleet evaluation: strategies over many logged chats, results in an embedded DuckDB file.

>>> from ctxlab.corpus import parse_grid, run_corpus  # doctest: +SKIP
>>> grid = parse_grid("window-drop:budget=8000,16000")  # doctest: +SKIP
>>> run_corpus("logs/", grid, "fleet.duckdb")  # doctest: +SKIP

Modules, one concept each: :mod:`~ctxlab.corpus.grid` (configurations and their keys),
:mod:`~ctxlab.corpus.inputs` (files and tables of conversations),
:mod:`~ctxlab.corpus.evaluate` (one conversation against a grid: the rows),
:mod:`~ctxlab.corpus.work` (the per-source function every executor runs),
:mod:`~ctxlab.corpus.store` (the DuckDB tables), :mod:`~ctxlab.corpus.run` (executors and the
run loop), :mod:`~ctxlab.corpus.report` (SQL aggregations for the CLI and the Fleet page).
Importing this package imports neither Streamlit nor Ray, nor DuckDB: the names below load
their module on first use (PEP 562), so a pool worker, which imports only
:mod:`~ctxlab.corpus.work`, never loads DuckDB or Arrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab._lazy import lazy_names

if TYPE_CHECKING:
    from ctxlab.corpus.evaluate import CallRow, ConfigOutcome, Totals, evaluate_conversation
    from ctxlab.corpus.grid import Configuration, configuration, parse_grid
    from ctxlab.corpus.inputs import Corpus, Source, open_corpus
    from ctxlab.corpus.run import BACKENDS, Progress, RunSummary, run_corpus

_HOMES = {
    "BACKENDS": "run",
    "CallRow": "evaluate",
    "ConfigOutcome": "evaluate",
    "Configuration": "grid",
    "Corpus": "inputs",
    "Progress": "run",
    "RunSummary": "run",
    "Source": "inputs",
    "Totals": "evaluate",
    "configuration": "grid",
    "evaluate_conversation": "evaluate",
    "open_corpus": "inputs",
    "parse_grid": "grid",
    "run_corpus": "run",
}

__all__ = [
    "BACKENDS",
    "CallRow",
    "ConfigOutcome",
    "Configuration",
    "Corpus",
    "Progress",
    "RunSummary",
    "Source",
    "Totals",
    "configuration",
    "evaluate_conversation",
    "open_corpus",
    "parse_grid",
    "run_corpus",
]


__getattr__, __dir__ = lazy_names(
    __name__, globals(), {name: f"{__name__}.{home}" for name, home in _HOMES.items()}, __all__
)
