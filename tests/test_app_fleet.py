"""AppTest: the Fleet page opens results from the configured folder, reports per configuration."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
import test_zip_upload as hostile
from app_support import page

from ctxlab.corpus import parse_grid, run_corpus
from ctxlab.corpus.report import configuration_report, open_results
from ctxlab.errors import CtxlabError
from ctxlab.ui.fleet_view import RESULTS_ENV, extract_chats, list_results, playground_link
from ctxlab.ui.text import literal_text

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "sample_chats" / "fleet" / "results"
APPTEST_SESSION = "test session id"  # every AppTest runs as this one session


def shown_errors(at: Any) -> list[str]:
    """The text each error box shows (the boxes hold it as literal Markdown)."""
    return [literal_text(e.value) for e in at.error]


def end_session() -> None:
    """What Streamlit does when a viewer's session disconnects: release its resources."""
    from streamlit.runtime import caching

    caching.clear_session_resource_cache(APPTEST_SESSION)


@pytest.fixture(autouse=True)
def _fresh_session() -> Iterator[None]:
    end_session()
    yield
    end_session()


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
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CTXLAB_PROFILE", "local")
    at = page("pages/5_Fleet.py")
    at.run()
    assert not at.exception
    assert any("ctxlab eval" in i.value for i in at.info)


def test_a_hosted_server_does_not_tell_visitors_where_it_keeps_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "operators-private-results"
    folder.mkdir()
    monkeypatch.setenv(RESULTS_ENV, str(folder))
    monkeypatch.setenv("CTXLAB_PROFILE", "hosted")
    at = page("pages/5_Fleet.py")
    at.run()
    assert not at.exception
    infos = [i.value for i in at.info]
    assert any("evaluate a zip of chats" in i for i in infos), infos
    assert not any("operators-private-results" in i for i in infos)


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


def _upload(at: Any, data: bytes, grid: str = "window-drop:budget=1000") -> Any:
    at.file_uploader(key="fleet-zip").set_value(("chats.zip", data, "application/zip"))
    at.text_area(key="fleet-grid").set_value(grid)
    at.run()
    return at.button(key="fleet-evaluate").click().run()


def _fleet_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "no-results-here"))
    at = page("pages/5_Fleet.py")
    at.run()
    return at


SUPPORT = (ROOT / "sample_chats" / "support_function_calls.json").read_bytes()


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (hostile.encrypted(), "zip member 'team/chat.json' is encrypted"),
        (hostile.bad_crc(), "zip member 'chat.json': its data does not match its CRC"),
        (hostile.size_header(1_000_000), "zip member 'chat.json': its size header says"),
        (hostile.method_99(), "zip member 'chat.json' uses compression method 99"),
        (_zip({"x" * 65_000 + ".json": b"[]"}), "characters; the page takes 1,024"),
        (b"PK\x05\x06" + b"\x00" * 18, "no .json"),
    ],
    ids=["encrypted", "bad-crc", "lying-size", "method-99", "name-65k", "empty-zip"],
)
def test_a_hostile_zip_is_an_error_box_naming_the_member(
    data: bytes, needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _upload(_fleet_page(tmp_path, monkeypatch), data)
    assert not at.exception
    assert [e for e in shown_errors(at) if needle in e], [e for e in shown_errors(at)]
    assert not list(tmp_path.glob("ctxlab-upload-*")), "a refused upload leaves no folder"


def test_colliding_names_are_both_evaluated_on_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = (ROOT / "sample_chats" / "hostile_content.json").read_bytes()
    at = _upload(
        _fleet_page(tmp_path, monkeypatch), _zip({"a/b.json": SUPPORT, "a__b.json": other})
    )
    assert not at.exception
    assert any("Evaluated 2 conversations" in s.value for s in at.success)
    worst = at.dataframe[1].value
    assert sorted(worst["source"]) == ["a__b-2.json", "a__b.json"]


@pytest.mark.parametrize(
    ("grid", "needle"),
    [
        # the box keeps its first 2,000 characters (max_chars): over 24 configurations
        ("window-drop:budget=" + ",".join(str(1000 + i) for i in range(8000)), "over 24"),
        ("window-drop:budget=" + ",".join(str(1000 + i) for i in range(25)), "over 24"),
        ("window-drop:budget=1000,2000\n" * 13, "over 24"),
    ],
    ids=["8000-values", "25-values", "13-lines"],
)
def test_the_configuration_grid_is_capped_with_a_clear_message(
    grid: str, needle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _upload(_fleet_page(tmp_path, monkeypatch), _zip({"c.json": SUPPORT}), grid)
    assert not at.exception
    assert any(needle in e for e in shown_errors(at)), [e for e in shown_errors(at)]


def test_the_largest_grid_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grid = "window-drop:budget=" + ",".join(str(1000 + 500 * i) for i in range(24))
    at = _upload(_fleet_page(tmp_path, monkeypatch), _zip({"c.json": SUPPORT}), grid)
    assert not at.exception and not at.error
    assert len(at.dataframe[0].value) == 24


def test_the_upload_folder_goes_with_the_session_and_with_the_next_upload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _upload(_fleet_page(tmp_path, monkeypatch), _zip({"c.json": SUPPORT}))
    assert not at.exception
    (first,) = tmp_path.glob("ctxlab-upload-*")
    assert (first / "results.duckdb").is_file() and (first / "chats" / "c.json").is_file()
    assert first.stat().st_mode & 0o077 == 0
    at.button(key="fleet-evaluate").click().run()
    assert not at.exception
    (second,) = tmp_path.glob("ctxlab-upload-*")
    assert second != first and not first.exists()
    end_session()
    assert not second.exists()
    at.run()  # the reconnected session no longer offers the upload, and does not fail
    assert not at.exception
    assert not at.selectbox and any("ctxlab eval" in i.value for i in at.info)


def test_a_damaged_results_file_in_the_folder_is_an_error_box(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    (chats / "c.json").write_bytes(SUPPORT)
    whole = tmp_path / "whole.duckdb"
    run_corpus(chats, parse_grid("window-drop:budget=1000"), whole, backend="inline")
    results = tmp_path / "results"
    results.mkdir()
    data = whole.read_bytes()
    (results / "cut.duckdb").write_bytes(data[: len(data) // 2])
    monkeypatch.setenv(RESULTS_ENV, str(results))
    at = page("pages/5_Fleet.py")
    at.run()
    assert not at.exception
    (box,) = shown_errors(at)
    assert f"results file {results / 'cut.duckdb'} is damaged: it is cut short" in box


def test_a_configurations_text_over_the_cap_is_refused_before_parsing() -> None:
    from ctxlab.ui.fleet_view import MAX_GRID_CHARS, page_grid

    text = "window-drop:budget=" + ",".join(str(1000 + i) for i in range(8000))
    with pytest.raises(CtxlabError, match=f"holds {len(text):,} characters; the page takes"):
        page_grid(text, "gpt-4o")
    assert len(page_grid("window-drop:budget=1000\n" * 24, "gpt-4o")) == 24
    assert len(text) > MAX_GRID_CHARS
