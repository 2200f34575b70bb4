"""The Fleet page's pieces: pick a results file, evaluate an uploaded zip, render the report.

Results are only ever opened from the configured folder (``CTXLAB_RESULTS_DIR``, default
``sample_chats/fleet/results``), read-only, or from this session's own evaluation of an
uploaded zip: the page never takes a typed path and never writes to the results folder. Every
number comes from SQL in DuckDB (:mod:`ctxlab.corpus.report`), cached per results file and
modification time, so changing a filter only redraws figures from small, cached frames.

An uploaded zip is extracted and evaluated in a private temporary folder of its own
(:class:`~ctxlab.corpus.upload_folder.UploadFolder`, mode 0700) held by a session-scoped
resource: it is removed when the viewer's session disconnects (Streamlit releases session-scoped
resources then; session state itself lingers until a garbage collection that an idle server may
never run), when the viewer evaluates another zip, or when the server exits; a server that was
killed leaves folders that the next one sweeps at start-up.
So two viewers never share a results file. The upload is held to the caps of
:mod:`ctxlab.corpus.zip_upload` and the Configurations box to :data:`MAX_GRID_CHARS` characters
and :data:`MAX_CONFIGURATIONS` configurations; a damaged results file is an error box, never a
traceback.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from ctxlab.corpus import Progress, parse_grid, run_corpus
from ctxlab.corpus.grid import Configuration, GridTooLarge
from ctxlab.corpus.report import (
    calls_ecdf,
    configuration_report,
    is_results,
    problem_counts,
    reading_results,
    retention_stats,
    worst_conversations,
)
from ctxlab.corpus.upload_folder import UploadFolder, sweep_stale
from ctxlab.corpus.zip_upload import MAX_ZIP_BYTES, MAX_ZIP_ENTRIES, MAX_ZIP_FILES, extract_chats
from ctxlab.errors import CtxlabError
from ctxlab.pricing import format_usd
from ctxlab.ui import fleet_figures, notices
from ctxlab.ui.text import markdown_literal

__all__ = [
    "DEFAULT_GRID",
    "MAX_CONFIGURATIONS",
    "MAX_GRID_CHARS",
    "MAX_ZIP_BYTES",
    "MAX_ZIP_ENTRIES",
    "MAX_ZIP_FILES",
    "RESULTS_ENV",
    "extract_chats",
    "list_results",
    "page_grid",
    "playground_link",
    "render_report",
    "results_dir",
    "results_picker",
]

RESULTS_ENV = "CTXLAB_RESULTS_DIR"
MAX_GRID_CHARS = 2_000
"""Characters of the Configurations box."""
MAX_CONFIGURATIONS = 24
"""Configurations one upload is evaluated under (each replays every chat of the zip)."""
DEFAULT_GRID = (
    "window-drop:budget=8000,16000,32000\n"
    "clear-tool-results:trigger_tokens=30000\n"
    "sliding-window:window=40"
)
_RESULTS_FILE = "results.duckdb"
_LONG_PARAM = 200  # parameter texts longer than this stay out of links (a prompt)


def results_dir() -> Path:
    """The folder results are opened from: ``CTXLAB_RESULTS_DIR`` or the demo results."""
    configured = os.environ.get(RESULTS_ENV)
    if configured:
        return Path(configured)
    from ctxlab.samples import samples_dir

    return samples_dir() / "fleet" / "results"


def list_results(folder: Path) -> list[str]:
    """Names (relative to ``folder``) of its results: ``*.duckdb`` files and Parquet folders."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if is_results(p))


def page_grid(specs: str, model: str) -> list[Configuration]:
    """The configurations of the Configurations box, one spec per line, within the page's caps.

    Raises:
        CtxlabError: over :data:`MAX_GRID_CHARS` characters or :data:`MAX_CONFIGURATIONS`
            configurations, no configuration, or a line :func:`~ctxlab.corpus.parse_grid`
            refuses.
    """
    if len(specs) > MAX_GRID_CHARS:
        raise CtxlabError(
            f"the Configurations box holds {len(specs):,} characters; the page takes "
            f"{MAX_GRID_CHARS:,} (use ctxlab eval --grid for larger grids)"
        )
    grid: list[Configuration] = []
    for line in specs.splitlines():
        if not line.strip():
            continue
        left = MAX_CONFIGURATIONS - len(grid)
        try:
            grid.extend(parse_grid(line.strip(), model=model, max_configurations=left))
        except GridTooLarge:
            raise CtxlabError(
                f"the Configurations box expands to over {MAX_CONFIGURATIONS} "
                "configurations; the page takes "
                f"{MAX_CONFIGURATIONS} (use ctxlab eval --grid for larger grids)"
            ) from None
    if not grid:
        raise CtxlabError("give at least one configuration, e.g. window-drop:budget=8000")
    return grid


def playground_link(
    source: str, conversation: str, strategy: str, params: Mapping[str, Any]
) -> str:
    """``/?chat=NAME&strategy=S&param=value``: the Playground on this chat and configuration.

    ``NAME`` is the chat's file name without extension (the Playground's sample names); a
    conversation other than the first of a multi-conversation file is added as
    ``conversation=ID``. Long text parameters (a prompt) are left out to keep links short.
    """
    from ctxlab.ui.session import params_to_query

    query: dict[str, str] = {"chat": PurePosixPath(source.replace("\\", "/")).stem}
    if conversation not in ("", "0"):
        query["conversation"] = conversation
    query["strategy"] = strategy
    for key, text in params_to_query(params).items():
        if len(text) <= _LONG_PARAM:
            query[key] = text
    return "/?" + urlencode(query)


# -- cached reads (per results path and modification time) ------------------------------------


def _stamp(path: Path) -> float:
    if path.is_dir():
        return max((p.stat().st_mtime for p in path.iterdir()), default=0.0)
    return path.stat().st_mtime


@st.cache_data(show_spinner=False, max_entries=16)
def _report(path: str, stamp: float) -> list[dict[str, Any]]:
    del stamp
    with reading_results(path) as con:
        return configuration_report(con)


@st.cache_data(show_spinner=False, max_entries=16)
def _frames(path: str, stamp: float) -> dict[str, pd.DataFrame]:
    del stamp
    with reading_results(path) as con:
        errors = con.execute(
            "SELECT e.source, e.conversation, c.label AS configuration, e.stage, e.reason "
            "FROM errors e LEFT JOIN configurations c USING (config_key) "
            "ORDER BY e.source, c.label LIMIT 500"
        ).df()
        return {
            "ecdf": calls_ecdf(con),
            "retention": retention_stats(con),
            "problems": problem_counts(con),
            "errors": errors,
        }


@st.cache_data(show_spinner=False, max_entries=64)
def _worst(path: str, stamp: float, config_key: str, by: str) -> pd.DataFrame:
    del stamp
    with reading_results(path) as con:
        return worst_conversations(con, config_key, by=by, limit=20)


# -- widgets ----------------------------------------------------------------------------------


class _SessionUpload:
    """The folder of this session's evaluated upload, if any; removed with the session."""

    def __init__(self) -> None:
        self.folder: UploadFolder | None = None

    def replace(self, folder: UploadFolder) -> None:
        previous, self.folder = self.folder, folder
        if previous is not None:
            previous.remove()

    def release(self) -> None:
        if self.folder is not None:
            self.folder.remove()
            self.folder = None


@st.cache_resource(show_spinner=False, scope="session", on_release=_SessionUpload.release)
def _cached_session_upload() -> _SessionUpload:
    return _SessionUpload()


def _session_upload() -> _SessionUpload:
    """This session's upload holder: Streamlit releases it (and the folder) on disconnect.

    Without a session (the page run as a bare script, as a process pool's worker does when it
    re-imports a ``__main__`` that is this page) there is nothing uploaded: an empty holder.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return _SessionUpload()
    return _cached_session_upload()


_sweep_lock = threading.Lock()
_swept = False


def _sweep_once() -> None:
    """Remove the upload folders a killed server left behind; once per server process."""
    global _swept
    with _sweep_lock:
        if not _swept:
            _swept = True
            sweep_stale()


def _show_error(exc: BaseException) -> None:
    notices.error(str(exc))  # literally: member names and paths come from the upload


def _evaluate_zip(data: bytes, specs: str, model: str) -> UploadFolder | None:
    """Evaluate the uploaded chats with a progress bar, in a new private folder; returns it.

    The folder goes (with its chats and results) when the returned object is dropped: on an
    error, at once; else when the session that keeps it ends.
    """
    try:
        grid = page_grid(specs, model)
        folder = UploadFolder()
        extract_chats(data, folder.path / "chats")
    except CtxlabError as exc:
        _show_error(exc)
        return None
    bar = st.progress(0.0, text="Evaluating…")

    def progress(p: Progress) -> None:
        eta = "" if p.eta is None else f", about {p.eta:.0f} s left"
        bar.progress(
            min(p.done / max(p.total, 1), 1.0),
            text=f"{p.done} / {p.total} files, {p.conversations} conversations{eta}",
        )

    try:
        summary = run_corpus(
            folder.path / "chats",
            grid,
            folder.path / _RESULTS_FILE,
            backend="inline",
            progress=progress,
        )
    except CtxlabError as exc:
        bar.empty()
        _show_error(exc)
        return None
    bar.empty()
    st.success(
        f"Evaluated {summary.conversations} conversations in {summary.seconds:.1f} s"
        + (f"; {summary.failed} could not be read" if summary.failed else "")
    )
    return folder


def results_picker() -> Path | None:
    """Sidebar: choose saved results, or evaluate an uploaded zip. Returns the results path."""
    _sweep_once()
    side = st.sidebar
    side.header("Fleet results")
    folder = results_dir()
    names = list_results(folder)
    held = _session_upload()
    options = names + (["This session's upload"] if held.folder is not None else [])
    with side.expander("Evaluate chats from a zip", expanded=not options):
        upload = st.file_uploader(
            "Zip of chat files (.json, .jsonl)", type=["zip"], key="fleet-zip"
        )
        specs = st.text_area(
            "Configurations, one per line",
            DEFAULT_GRID,
            key="fleet-grid",
            max_chars=MAX_GRID_CHARS,
            help=f"At most {MAX_CONFIGURATIONS} configurations in all.",
        )
        model = st.text_input("Model (counts and prices)", "gpt-4o", key="fleet-model")
        if st.button("Evaluate", key="fleet-evaluate", disabled=upload is None) and upload:
            evaluated = _evaluate_zip(upload.getvalue(), specs, model)
            if evaluated is not None:
                held.replace(evaluated)
                st.session_state["fleet-results"] = "This session's upload"
                options = [*names, "This session's upload"]
    if not options:
        from ctxlab.ui.session import hosting_settings

        if hosting_settings().hosted:  # a visitor is not told where the server keeps files
            st.info("No saved results on this server: evaluate a zip of chats in the sidebar.")
        else:
            notices.info(
                f"No results in {folder}. Run ctxlab eval CORPUS --grid ... --db "
                f"{folder}/NAME.duckdb, or evaluate a zip of chats in the sidebar."
            )
        return None
    picked = side.selectbox("Results", options, key="fleet-results")
    if picked == "This session's upload":
        return None if held.folder is None else held.folder.path / _RESULTS_FILE
    return folder / str(picked)


def _table(report: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    rows = []
    for r in report:
        rows.append(
            {
                "configuration": r["label"],
                "conversations": r["conversations"],
                "calls": r["calls"],
                "input tokens": r["input_tokens"],
                "untrimmed": r["input_tokens_untrimmed"],
                "cost": format_usd(r["cost"]),
                "cost with cache": format_usd(r["cost_with_cache"]),
                "over budget": f"{100 * r['share_over_budget']:.1f}%",
                "p50 / call": r["p50_tokens"],
                "p95 / call": r["p95_tokens"],
                "max / call": r["max_tokens"],
                "invalid calls": r["invalid_calls"],
                "retention": "-" if r["retention"] is None else f"{r['retention']:.1f}%",
                "errors": r["errors"],
            }
        )
    return pd.DataFrame(rows)


_RANKS = {
    "Most calls over budget": "calls_over_budget",
    "Most invalid calls": "invalid_calls",
    "Lowest fact retention": "retention",
    "Highest cost": "cost",
}


def render_report(path: Path) -> None:
    """The whole Fleet report of one results file; a damaged file is one error box."""
    try:
        _render_report(path)
    except CtxlabError as exc:
        _show_error(exc)
    except OSError as exc:  # the file went away (or became unreadable) between two reruns
        _show_error(CtxlabError(f"cannot read results file {path}: {exc.strerror or exc}"))


def _render_report(path: Path) -> None:
    key, stamp = str(path), _stamp(path)
    report = _report(key, stamp)
    if not report:
        st.info("This results file has no configuration yet.")
        return
    labels_all = {r["config_key"]: str(r["label"]) for r in report}
    chosen = st.multiselect(
        "Configurations",
        list(labels_all),
        default=list(labels_all),
        format_func=lambda k: labels_all[k],
        key="fleet-filter",
    )
    shown = [r for r in report if r["config_key"] in chosen]
    labels = {r["config_key"]: str(r["label"]) for r in shown}
    if not shown:
        st.info("Pick at least one configuration.")
        return
    first = shown[0]
    st.caption(
        f"{first['conversations']:,} conversations · model {markdown_literal(first['model'])} · "
        "costs at list prices (ctxlab.pricing), with and without OpenAI's prompt cache"
    )
    st.dataframe(_table(shown), hide_index=True, key="fleet-table")
    frames = _frames(key, stamp)
    left, right = st.columns(2)
    with left:
        cache = st.toggle("Cost with prompt cache", value=False, key="fleet-cache")
        st.plotly_chart(fleet_figures.pareto_figure(shown, with_cache=cache), key="fleet-pareto")
    with right:
        st.plotly_chart(fleet_figures.ecdf_figure(frames["ecdf"], labels), key="fleet-ecdf")
    left, right = st.columns(2)
    with left:
        st.plotly_chart(
            fleet_figures.retention_figure(frames["retention"], labels), key="fleet-retention"
        )
    with right:
        problems = frames["problems"]
        if problems[problems["config_key"].isin(list(labels))].empty:
            st.success("No provider-validity problem in any call of these configurations.")
        else:
            st.plotly_chart(fleet_figures.problems_figure(problems, labels), key="fleet-problems")
    _render_worst(key, stamp, shown)
    errors = frames["errors"]
    if not errors.empty:
        with st.expander(f"Errors ({len(errors)} rows)"):
            st.dataframe(errors, hide_index=True, key="fleet-errors")


def _render_worst(key: str, stamp: float, shown: Sequence[Mapping[str, Any]]) -> None:
    st.subheader("Worst conversations")
    by_key = {r["config_key"]: r for r in shown}
    cols = st.columns(2)
    config_key = cols[0].selectbox(
        "Configuration", list(by_key), format_func=lambda k: by_key[k]["label"], key="fleet-worst"
    )
    rank = cols[1].selectbox("Rank by", list(_RANKS), key="fleet-rank")
    config = by_key[config_key]
    worst = _worst(key, stamp, config_key, _RANKS[rank]).copy()
    worst.insert(
        0,
        "open",
        [
            playground_link(s, c, config["strategy"], config["params"])
            for s, c in zip(worst["source"], worst["conversation"], strict=True)
        ],
    )
    st.dataframe(
        worst,
        hide_index=True,
        key="fleet-worst-table",
        column_config={
            "open": st.column_config.LinkColumn("Playground", display_text="open"),
            "retention": st.column_config.NumberColumn("retention %", format="%.1f"),
            "cost": st.column_config.NumberColumn("cost", format="$%.4f"),
        },
    )
