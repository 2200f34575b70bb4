"""AppTest: the Fleet page opens results from the configured folder, reports per configuration."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from app_support import page

from ctxlab.corpus import parse_grid, run_corpus
from ctxlab.corpus.report import configuration_report, open_results
from ctxlab.errors import CtxlabError
from ctxlab.ui.fleet_view import RESULTS_ENV, extract_chats, list_results, playground_link

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sample_chats" / "fleet" / "results"


def _configurations_in(folder: Path) -> int:
    con = open_results(folder)
    try:
        row = con.execute("SELECT count(*) FROM configurations").fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


def test_page_opens_the_demo_results_with_every_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    at = page("pages/5_Fleet.py")
    at.run()
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == _configurations_in(DEMO / "demo")
    assert len(at.get("plotly_chart")) >= 3  # Pareto, ECDF, retention (+ problems when any)
    worst = at.dataframe[1].value
    assert len(worst) == 20
    query = parse_qs(urlparse(worst["open"].iloc[0]).query)
    assert query["strategy"] and query["chat"]
    assert (ROOT / "sample_chats" / "fleet" / "chats" / f"{query['chat'][0]}.json").exists()


def test_filter_redraws_with_the_chosen_configurations(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    at = page("pages/5_Fleet.py")
    at.run()
    chooser = at.multiselect(key="fleet-filter")
    keep = list(chooser.value)[:2]
    chooser.set_value(keep).run()
    assert not at.exception
    assert len(at.dataframe[0].value) == 2
    ecdf = next(c for c in at.get("plotly_chart") if "ECDF" in c.proto.spec)
    assert len(json.loads(ecdf.proto.spec)["data"]) == 2


def test_page_reads_a_duckdb_results_file_from_the_configured_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    for name in ("support_function_calls", "hostile_content"):
        shutil.copy(ROOT / "sample_chats" / f"{name}.json", chats)
    results = tmp_path / "results"
    results.mkdir()
    db = results / "mine.duckdb"
    run_corpus(chats, parse_grid("window-drop:budget=1000,3000"), db, backend="inline")
    monkeypatch.setenv(RESULTS_ENV, str(results))
    assert list_results(results) == ["mine.duckdb"]
    at = page("pages/5_Fleet.py")
    at.run()
    assert not at.exception
    con = open_results(db)
    expected = sorted(r["input_tokens"] for r in configuration_report(con))
    con.close()
    assert sorted(at.dataframe[0].value["input tokens"]) == expected


def test_empty_results_folder_says_how_to_make_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path))
    at = page("pages/5_Fleet.py")
    at.run()
    assert not at.exception
    assert any("ctxlab eval" in i.value for i in at.info)


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_zip_upload_writes_only_chat_files_inside_the_target(tmp_path: Path) -> None:
    data = _zip(
        {
            "../../escape.json": b"[]",
            "nested/dir/chat.jsonl": b"{}",
            "readme.txt": b"no",
            "__MACOSX/._chat.json": b"junk",
        }
    )
    target = tmp_path / "out"
    written = extract_chats(data, target)
    assert sorted(p.name for p in written) == ["escape.json", "nested__dir__chat.jsonl"]
    assert all(p.parent == target for p in written)
    assert not (tmp_path / "escape.json").exists()


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"not a zip", "not a zip"),
        (_zip({"a.txt": b"x"}), "no .json"),
        (_zip({f"c{i}.json": b"[]" for i in range(201)}), "201 chat files"),
    ],
)
def test_bad_zip_is_refused_with_a_reason(data: bytes, needle: str, tmp_path: Path) -> None:
    with pytest.raises(CtxlabError, match=needle):
        extract_chats(data, tmp_path)


def test_playground_link_names_chat_strategy_and_short_parameters() -> None:
    link = playground_link(
        "sub/coding_0003.json",
        "0",
        "summarize",
        {"trigger_token_budget": 8000, "prompt": "x" * 500},
    )
    query = parse_qs(urlparse(link).query)
    assert query == {
        "chat": ["coding_0003"],
        "strategy": ["summarize"],
        "trigger_token_budget": ["8000"],
    }
    multi = parse_qs(urlparse(playground_link("batch.jsonl", "3", "window-drop", {})).query)
    assert multi["conversation"] == ["3"]


def test_uploaded_zip_is_evaluated_and_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "no-results-here"))
    chats = {
        "team/support.json": (ROOT / "sample_chats" / "support_function_calls.json").read_bytes(),
        "hostile.json": (ROOT / "sample_chats" / "hostile_content.json").read_bytes(),
        "broken.json": b"{",
    }
    at = page("pages/5_Fleet.py")
    at.run()
    at.file_uploader(key="fleet-zip").set_value(("chats.zip", _zip(chats), "application/zip"))
    at.text_area(key="fleet-grid").set_value("window-drop:budget=1000,4000")
    at.run()
    at.button(key="fleet-evaluate").click().run()
    assert not at.exception
    assert any(
        "Evaluated 2 conversations" in s.value and "1 could not" in s.value for s in at.success
    )
    table = at.dataframe[0].value
    assert sorted(table["configuration"]) == ["window-drop budget=1000", "window-drop budget=4000"]
    assert list(table["conversations"]) == [2, 2] and list(table["errors"]) == [1, 1]
