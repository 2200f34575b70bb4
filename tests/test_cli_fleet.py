"""`ctxlab eval` and `ctxlab report`: the fleet commands, end to end through main()."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from ctxlab.cli import main

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = {
    "strategy",
    "params",
    "conversations",
    "calls",
    "input_tokens",
    "input_tokens_untrimmed",
    "calls_over_budget",
    "errors",
}


def _make_corpus(folder: Path) -> Path:
    folder.mkdir()
    for name in ("support_function_calls", "hostile_content"):
        shutil.copy(ROOT / "sample_chats" / f"{name}.json", folder)
    (folder / "broken.json").write_text("[{", encoding="utf-8")
    return folder


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    return _make_corpus(tmp_path / "chats")


def test_eval_then_report_json_gives_one_object_per_configuration(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "fleet.duckdb"
    status = main(
        [
            "eval",
            str(corpus),
            "--grid",
            "window-drop:budget=1000,4000",
            "--grid",
            "clear-tool-results:trigger_tokens=3000",
            "--db",
            str(db),
            "--workers",
            "1",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "3 sources evaluated (2 conversations)" in out and "1 failed" in out
    assert "window-drop budget=1000" in out and "clear-tool-results trigger_tokens=3000" in out
    assert "3/3 sources" in err  # the progress bar
    assert main(["report", str(db), "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert len(items) == 3 and all(set(item) >= REQUIRED for item in items)
    con = duckdb.connect(str(db), read_only=True)
    for item in items:
        expected = con.execute(
            "SELECT count(*), sum(tokens_sent), sum(tokens_untrimmed), sum(over_budget::INT) "
            "FROM calls JOIN configurations USING (config_key) WHERE label = ?",
            [item["label"]],
        ).fetchone()
        assert expected is not None
        got = (
            item["calls"],
            item["input_tokens"],
            item["input_tokens_untrimmed"],
            item["calls_over_budget"],
        )
        assert got == expected
        assert item["conversations"] == 2 and item["errors"] == 1
    con.close()
    by_label = {i["label"]: i for i in items}
    assert by_label["window-drop budget=1000"]["params"] == {"budget": 1000, "keep_system": False}
    # a second eval finds everything done
    assert main(["eval", str(corpus), "--grid", "window-drop:budget=1000", "--db", str(db)]) == 0
    assert "0 sources evaluated" in capsys.readouterr().out
    # CSV: the same numbers, one line per configuration
    assert main(["report", str(db), "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [int(r["input_tokens"]) for r in rows] == [i["input_tokens"] for i in items]
    # --errors lists the unreadable file with its reason
    assert main(["report", str(db), "--errors"]) == 0
    assert "error: broken.json" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["eval", "{corpus}", "--grid", "window-drop:budget=lots", "--db", "{db}"], "budget"),
        (["eval", "{corpus}", "--grid", "nope:x=1", "--db", "{db}"], "nope"),
        (["eval", "{corpus}", "--db", "{db}"], "--grid"),
        (["eval", "{tmp}/missing", "--grid", "window-drop", "--db", "{db}"], "no chat files"),
        (["report", "{tmp}/missing.duckdb"], "no such results file"),
        (
            ["eval", "{corpus}", "--grid", "window-drop", "--db", "{db}", "--model", "llama"],
            "llama",
        ),
        (["report", "{corpus}/hostile_content.json"], "not a ctxlab results file"),
    ],
)
def test_bad_fleet_input_is_one_line_on_stderr(
    argv: list[str],
    needle: str,
    corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    values = {"corpus": str(corpus), "db": str(tmp_path / "x.duckdb"), "tmp": str(tmp_path)}
    status = main([a.format(**values) for a in argv])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("ctxlab: error:") and needle in err and err.count("\n") == 1


@pytest.fixture(scope="module")
def whole_results(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes of a real results file, evaluated once for the module's cut copies."""
    folder = tmp_path_factory.mktemp("whole")
    chats = _make_corpus(folder / "chats")
    db = folder / "whole.duckdb"
    assert main(["eval", str(chats), "--grid", "window-drop:budget=1000", "--db", str(db)]) == 0
    return db.read_bytes()


@pytest.fixture()
def cut_results(whole_results: bytes, tmp_path: Path) -> Path:
    """A real results file cut past its header (a copy that stopped half way), per test."""
    cut = tmp_path / "cut.duckdb"
    cut.write_bytes(whole_results[: len(whole_results) // 2])
    return cut


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "{db}"],
        ["report", "{db}", "--errors"],
        ["report", "{db}", "--json"],
        ["eval", "{corpus}", "--grid", "window-drop:budget=1000", "--db", "{db}"],
    ],
    ids=["report", "report-errors", "report-json", "eval"],
)
def test_a_cut_results_file_is_exit_2_and_one_line_naming_it(
    argv: list[str],
    cut_results: Path,
    corpus: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    status = main([a.format(db=cut_results, corpus=corpus) for a in argv])
    out, err = capsys.readouterr()
    assert status == 2
    assert err.startswith(f"ctxlab: error: results file {cut_results} is damaged: it is cut short")
    assert err.count("\n") == 1 and "Traceback" not in err and out == ""


def test_a_cut_results_file_prints_no_traceback_from_a_real_process(cut_results: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "ctxlab", "report", str(cut_results), "--errors"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert str(cut_results) in run.stderr


def test_a_second_eval_into_a_file_being_written_is_refused_cleanly(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys

    db = tmp_path / "busy.duckdb"
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
            status = main(["eval", str(corpus), "--grid", "window-drop", "--db", str(db)])
        finally:
            holder.kill()
    err = capsys.readouterr().err
    assert status == 2
    assert "is being written by another process" in err and err.count("\n") == 1
