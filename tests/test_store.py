"""Results files damaged, foreign, newer, or written twice at once: one clear error each."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from ctxlab.corpus import parse_grid, run_corpus
from ctxlab.corpus.report import configuration_report, open_results, reading_results
from ctxlab.corpus.store import META_TABLE, SCHEMA_VERSION, TABLES, Store
from ctxlab.corpus.work import SourceOutcome, Task, evaluate_source
from ctxlab.errors import CtxlabError

ROOT = Path(__file__).resolve().parent.parent
FLEET_CHATS = ROOT / "sample_chats" / "fleet" / "chats"
GRID = parse_grid("window-drop:budget=2000,8000")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real results file: a few of the fleet sample chats under two configurations."""
    folder = tmp_path_factory.mktemp("chats")
    for path in sorted(FLEET_CHATS.glob("*.json"))[:6]:
        shutil.copy(path, folder)
    db = tmp_path_factory.mktemp("results") / "fleet.duckdb"
    run_corpus(folder, GRID, db, backend="inline")
    return db


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "chats"
    folder.mkdir()
    for path in sorted(FLEET_CHATS.glob("*.json"))[:4]:
        shutil.copy(path, folder)
    return folder


def cut(results: Path, target: Path, keep: int) -> Path:
    target.write_bytes(results.read_bytes()[:keep])
    return target


def _one_line_error(path: Path) -> str:
    with pytest.raises(CtxlabError) as caught, reading_results(path) as con:
        configuration_report(con)
    message = str(caught.value)
    assert str(path) in message and "\n" not in message
    return message


@pytest.mark.parametrize("fraction", [0.001, 0.01, 0.1, 0.5, 0.9, 0.999])
def test_a_results_file_cut_short_is_one_error_naming_it(
    results: Path, tmp_path: Path, fraction: float
) -> None:
    size = results.stat().st_size
    damaged = cut(results, tmp_path / "cut.duckdb", max(16, int(size * fraction)))
    assert "cut short" in _one_line_error(damaged)
    with pytest.raises(CtxlabError, match="cut short"):
        Store(damaged)


def test_a_file_that_is_not_duckdb_is_one_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"hello world" * 500)
    assert "not a ctxlab results file (not a DuckDB database)" in _one_line_error(junk)
    with pytest.raises(CtxlabError, match="not a DuckDB database"):
        Store(junk)


def test_a_duckdb_file_without_ctxlab_tables_is_refused_for_reading_and_writing(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.close()
    assert "no table configurations" in _one_line_error(other)
    with pytest.raises(CtxlabError, match="it holds invoices"):
        Store(other)


def test_a_file_of_a_later_schema_is_refused(results: Path, tmp_path: Path) -> None:
    newer = tmp_path / "newer.duckdb"
    shutil.copy(results, newer)
    con = duckdb.connect(str(newer))
    con.execute(f"UPDATE {META_TABLE} SET value = ? WHERE key = 'schema_version'", ["2"])
    con.close()
    assert "written by a newer ctxlab (results schema 2" in _one_line_error(newer)
    with pytest.raises(CtxlabError, match="newer ctxlab"):
        Store(newer)


def test_a_ctxlab_table_missing_a_column_is_damaged(results: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.duckdb"
    shutil.copy(results, broken)
    con = duckdb.connect(str(broken))
    con.execute("ALTER TABLE calls DROP COLUMN tokens_sent")
    con.close()
    assert "table calls has no column tokens_sent" in _one_line_error(broken)


def test_new_files_record_the_schema_version_and_parquet_exports_carry_it(
    results: Path, tmp_path: Path
) -> None:
    con = open_results(results)
    row = con.execute(f"SELECT value FROM {META_TABLE}").fetchone()
    con.close()
    assert row == (str(SCHEMA_VERSION),)
    with Store(results, read_only=True) as store:
        paths = store.export_parquet(tmp_path / "export")
    assert len(paths) == len(TABLES) + 1
    with reading_results(tmp_path / "export") as con:
        assert len(configuration_report(con)) == len(GRID)


def test_a_file_written_before_the_version_marker_still_reads(
    results: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old.duckdb"
    shutil.copy(results, old)
    con = duckdb.connect(str(old))
    con.execute(f"DROP TABLE {META_TABLE}")
    con.close()
    with reading_results(old) as con:
        assert len(configuration_report(con)) == len(GRID)


def _gated(started: threading.Event, release: threading.Event) -> object:
    def evaluate(task: Task) -> SourceOutcome:
        started.set()
        release.wait(timeout=60)
        return evaluate_source(task)

    return evaluate


def test_two_evaluations_into_one_file_in_one_process_one_is_refused_cleanly(
    corpus: Path, tmp_path: Path
) -> None:
    """Two viewers of one server evaluating into one file: the second gets a clear error."""
    db = tmp_path / "shared.duckdb"
    started, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def first() -> None:
        outcome["first"] = run_corpus(
            corpus, GRID, db, backend="inline", evaluate=_gated(started, release)
        )

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert started.wait(timeout=60)
        with pytest.raises(CtxlabError, match="being written by another evaluation"):
            run_corpus(corpus, GRID, db, backend="inline")
    finally:
        release.set()
        thread.join(timeout=120)
    assert "first" in outcome
    # the refused run wrote nothing; the first one's rows are whole
    reference = tmp_path / "reference.duckdb"
    run_corpus(corpus, GRID, reference, backend="inline")
    assert _rows(db) == _rows(reference)
    # once the first has finished, the file takes a writer again
    again = run_corpus(corpus, GRID, db, backend="inline")
    assert again.evaluated == 0 and again.skipped == again.sources


def test_a_reader_in_the_writing_process_gets_a_clear_error(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "busy.duckdb"
    with Store(db) as store:
        store.add_configurations(GRID)
        with pytest.raises(CtxlabError, match="open for writing in this process"):
            open_results(db)


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES}
    finally:
        con.close()


@pytest.fixture()
def held(results: Path, tmp_path: Path) -> Iterator[Path]:
    """A results file another process holds open for writing (as a running ``ctxlab eval``)."""
    db = tmp_path / "held.duckdb"
    shutil.copy(results, db)
    code = (
        "import sys, time; from ctxlab.corpus.store import Store; s = Store(sys.argv[1]); "
        "print('open', flush=True); time.sleep(120)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, env=env, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
            yield db
        finally:
            holder.kill()


def test_another_process_writing_the_file_is_a_clear_error_for_readers_and_writers(
    held: Path, corpus: Path
) -> None:
    assert "being written by another process" in _one_line_error(held)
    with pytest.raises(CtxlabError, match="being written by another process"):
        run_corpus(corpus, GRID, held, backend="inline")
