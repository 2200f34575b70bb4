"""ctxlab.count_store: per-text counts kept between processes, verified, bounded, never fatal.

The reference for every count is tiktoken's ``encode_ordinary`` on the same text. Each test
gets a store folder of its own (``empty_count_store``), so what it finds there it wrote itself.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab import count_store
from ctxlab.count_store import CountStore, store_for
from ctxlab.encodings import encoding_identity, load_encoding
from ctxlab.model import Message, Role
from ctxlab.tokens import ApproxCounter, new_counter

ROOT = Path(__file__).resolve().parents[1]

TEXTS = [
    "Hello, world!",
    "def f(x):\n    return x ** 2\n",
    "漢字とカタカナ、한국어 and English in one line",
    "1234567890" * 30,
    "<|endoftext|> is plain text here",
    "   \n\n\t  trailing spaces   ",
    "a\ud800 lone surrogate",
]


def _expected(texts: list[str], encoding: str = "o200k_base") -> list[int]:
    enc = load_encoding(encoding)
    return [len(enc.encode_ordinary(t)) for t in texts]


def _store_files(folder: Path) -> list[Path]:
    return sorted((folder / "counts").glob("*.sqlite3"))


@pytest.fixture(autouse=True)
def _warn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the store's once-per-process warning afresh."""
    monkeypatch.setattr(count_store, "_warned", False)


def test_a_new_counter_reads_what_another_counted_and_tokenizes_nothing(
    empty_count_store: Path,
) -> None:
    first = new_counter("gpt-4o")
    assert [first.count_text(t) for t in TEXTS] == _expected(TEXTS)
    assert first.texts_tokenized == len(TEXTS)
    assert len(_store_files(empty_count_store)) == 1

    second = new_counter("o200k_base")  # another model of the same tokenizer shares the store
    assert [second.count_text(t) for t in TEXTS] == _expected(TEXTS)
    assert second.texts_tokenized == 0
    assert second.texts_from_store == len(TEXTS)


def test_another_encoding_has_a_store_of_its_own(empty_count_store: Path) -> None:
    o200k = new_counter("gpt-4o")
    o200k.count_text(TEXTS[2])
    cl100k = new_counter("gpt-4")
    assert cl100k.count_text(TEXTS[2]) == _expected(TEXTS[2:3], "cl100k_base")[0]
    assert cl100k.texts_tokenized == 1
    assert len(_store_files(empty_count_store)) == 2


def test_a_new_process_recounts_nothing(empty_count_store: Path) -> None:
    path = ROOT / "ctxlab" / "sample_chats" / "coding_agent_session.json"
    script = (
        "from ctxlab import load_chat\n"
        "from ctxlab.tokens import get_counter\n"
        "c = get_counter('gpt-4o')\n"
        f"chat = load_chat({str(path)!r})\n"
        "print(c.count_messages(chat), c.texts_tokenized, c.texts_from_store, "
        "c.chats_from_store)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run() -> list[int]:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        return [int(x) for x in done.stdout.split()]

    total, tokenized, from_store, chats = run()
    assert tokenized > 0 and from_store == 0 and chats == 0
    again = run()
    assert again == [total, 0, 0, 1]  # the whole chat's counts, one entry of the store


def _count_in_worker(args: tuple[str, list[str]]) -> list[int]:
    folder, texts = args
    os.environ["CTXLAB_CACHE_DIR"] = folder
    counter = new_counter("gpt-4o")
    return [counter.count_text(t) for t in texts]


def test_concurrent_processes_read_and_write_one_store(empty_count_store: Path) -> None:
    texts = [f"message {i}: " + "word " * (i % 17) + str(i * 7919) for i in range(600)]
    jobs = [(str(empty_count_store), texts[k * 100 : k * 100 + 300]) for k in range(4)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        results = pool.map(_count_in_worker, jobs)
    for (_, chunk), counts in zip(jobs, results, strict=True):
        assert counts == _expected(chunk)
    reader = new_counter("gpt-4o")
    assert [reader.count_text(t) for t in texts[:600]] == _expected(texts[:600])
    assert reader.texts_tokenized == 0


def _fill_store(folder: Path) -> Path:
    counter = new_counter("gpt-4o")
    for t in TEXTS:
        counter.count_text(t)
    (path,) = _store_files(folder)
    store = store_for(encoding_identity("o200k_base"))
    assert store is not None
    store.close()
    count_store._STORES.clear()
    return path


def _recount_is_right(path: Path) -> None:
    """Counting in a new counter is right, and ``path`` is now a store of o200k_base."""
    counter = new_counter("gpt-4o")
    assert [counter.count_text(t) for t in TEXTS] == _expected(TEXTS)
    meta = sqlite3.connect(path)
    try:
        assert dict(meta.execute("SELECT name, value FROM meta")) == {
            "format": count_store.FORMAT_VERSION,
            "namespace": encoding_identity("o200k_base"),
        }
    finally:
        meta.close()


def test_a_garbage_file_is_rebuilt(empty_count_store: Path) -> None:
    path = _fill_store(empty_count_store)
    path.write_bytes(os.urandom(64 * 1024))
    _recount_is_right(path)


def test_a_truncated_file_is_never_trusted(empty_count_store: Path) -> None:
    path = _fill_store(empty_count_store)
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    _recount_is_right(path)


def test_another_encodings_store_swapped_in_is_rebuilt(empty_count_store: Path) -> None:
    path = _fill_store(empty_count_store)
    counter = new_counter("gpt-4")
    for t in TEXTS:
        counter.count_text(t)
    count_store._STORES.clear()
    cl100k = next(p for p in _store_files(empty_count_store) if p != path)
    shutil.copyfile(cl100k, path)
    _recount_is_right(path)


def test_a_row_whose_count_was_changed_is_counted_again(empty_count_store: Path) -> None:
    path = _fill_store(empty_count_store)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE counts SET value = value + (1 << 32)")  # each count + 1, check kept
    conn.commit()
    conn.close()
    counter = new_counter("gpt-4o")
    assert [counter.count_text(t) for t in TEXTS] == _expected(TEXTS)
    assert counter.texts_from_store == 0
    assert counter.texts_tokenized == len(TEXTS)


def test_the_store_is_off_with_an_empty_cache_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CTXLAB_CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    assert store_for(encoding_identity("o200k_base")) is None
    counter = new_counter("gpt-4o")
    assert counter.count_text(TEXTS[0]) == _expected(TEXTS[:1])[0]
    assert list(tmp_path.iterdir()) == []


def test_the_approximate_counter_keeps_nothing(empty_count_store: Path) -> None:
    counter = ApproxCounter()
    assert counter.count_text("x" * 40) == 10
    assert not (empty_count_store / "counts").exists()


def test_a_folder_that_cannot_be_made_costs_one_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CTXLAB_CACHE_DIR", str(blocker))
    with caplog.at_level(logging.WARNING, logger="ctxlab.count_store"):
        for name in ("gpt-4o", "gpt-4"):
            counter = new_counter(name)
            assert counter.count_text(TEXTS[1]) == _expected(TEXTS[1:2], counter.encoding_name)[0]
    assert len(caplog.records) == 1
    assert "not kept between runs" in caplog.records[0].getMessage()


def test_a_full_disk_stops_the_writes_and_counting_goes_on(
    empty_count_store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = store_for(encoding_identity("o200k_base"))
    assert store is not None and store._conn is not None
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full
    texts = [f"text number {i} " * 40 for i in range(2000)]
    counter = new_counter("gpt-4o")
    with caplog.at_level(logging.WARNING, logger="ctxlab.count_store"):
        assert counter.counts([Message(Role.USER, t, f"m{i}") for i, t in enumerate(texts)]) == [
            n + 4
            for n in _expected(texts)  # 3 per message and the role "user"
        ]
        counter.count_text("one more text")
    assert len(caplog.records) == 1
    assert "full" in caplog.records[0].getMessage()


def test_a_locked_store_skips_the_write_and_still_reads(empty_count_store: Path) -> None:
    counter = new_counter("gpt-4o")
    counter.count_text(TEXTS[0])
    (path,) = _store_files(empty_count_store)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the timeout
    try:
        other = new_counter("gpt-4o")
        assert other.count_text(TEXTS[0]) == _expected(TEXTS[:1])[0]
        assert other.texts_from_store == 1  # WAL: readers do not wait for the writer
        assert other.count_text(TEXTS[3]) == _expected(TEXTS[3:4])[0]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    third = new_counter("gpt-4o")
    third.count_text(TEXTS[3])
    assert third.texts_tokenized == 1  # the locked write was skipped, not queued
    third.count_text(TEXTS[4])
    assert new_counter("gpt-4o").count_text(TEXTS[4]) == _expected(TEXTS[4:5])[0]


def test_the_least_recently_used_rows_go_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hour = [1000]
    monkeypatch.setattr(count_store, "_stamp", lambda: hour[0])
    bound = 256 * 1024
    store = CountStore(tmp_path / "bounded.sqlite3", "test:lru", max_bytes=bound)
    keys = [i.to_bytes(16, "big") for i in range(100_000)]
    old, refreshed = keys[100:4000], keys[:100]
    store.put_many([(k, 7) for k in keys[:4000]])
    hour[0] += 1
    assert store.get_many(refreshed) == [7] * 100  # used again: their stamp is refreshed
    hour[0] += 1
    written = 4000
    look = sqlite3.connect(tmp_path / "bounded.sqlite3")  # reads without refreshing stamps
    while look.execute("SELECT count(*) FROM counts").fetchone()[0] == written:
        assert written < len(keys)  # write newer rows until the first eviction
        store.put_many([(k, 9) for k in keys[written : written + 200]])
        written += 200
    look.close()
    assert store.live_bytes() <= bound
    assert store.get_many(refreshed) == [7] * 100
    assert store.get_many(keys[4000:written]) == [9] * (written - 4000)
    assert store.get_many(old).count(None) >= 0.2 * bound / 64  # a share of the bound freed
    store.close()
