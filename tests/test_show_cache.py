"""Whole entries of the count store: a chat's per-message counts, and what ``ctxlab show`` printed.

The reference for counts is a counter with the store off (``CTXLAB_CACHE_DIR=``), which counts
every text with the tokenizer; for ``ctxlab show`` it is the output of a run without the store.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from ctxlab import cli, show_cache
from ctxlab.count_store import CountStore
from ctxlab.model import Message, Role
from ctxlab.tokens import CHAT_ENTRY_MIN, new_counter

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "ctxlab" / "sample_chats" / "coding_agent_session.json"


def _chat(tag: str, n: int = CHAT_ENTRY_MIN + 6) -> tuple[Message, ...]:
    roles = (Role.USER, Role.ASSISTANT)
    return tuple(
        Message(roles[i % 2], f"{tag} message {i}: " + "words " * (i % 13), f"{tag}{i}")
        for i in range(n)
    )


def _reference(chat: tuple[Message, ...], monkeypatch: pytest.MonkeyPatch) -> list[int]:
    with monkeypatch.context() as patch:
        patch.setenv("CTXLAB_CACHE_DIR", "")
        return new_counter("gpt-4o").counts(chat)


def _show(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(["show", *args]) == 0
    return capsys.readouterr().out


def test_a_chat_counted_before_is_one_read_and_no_text_is_tokenized(
    empty_count_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = _chat("whole")
    first = new_counter("gpt-4o")
    assert first.counts(chat) == _reference(chat, monkeypatch)
    second = new_counter("gpt-4o")
    assert second.counts(chat) == _reference(chat, monkeypatch)
    assert (second.texts_tokenized, second.texts_from_store, second.chats_from_store) == (0, 0, 1)
    # Another accounting of the same tokenizer shares the entry (it holds the fields' tokens).
    legacy = new_counter("gpt-3.5-turbo-0301")
    cl100k_chat = legacy.counts(chat)
    with monkeypatch.context() as patch:
        patch.setenv("CTXLAB_CACHE_DIR", "")
        assert cl100k_chat == new_counter("gpt-3.5-turbo-0301").counts(chat)


def test_new_message_objects_over_texts_in_memory_add_no_entry(
    empty_count_store: Path,
) -> None:
    counter = new_counter("gpt-4o")
    chat = _chat("copies")
    counter.counts(chat)
    # A strategy's rewritten list: new objects, in another order, over the same texts.
    copies = tuple(m.replace(id=f"copy-{m.id}") for m in reversed(chat))
    counter.counts(copies)
    assert counter.texts_tokenized == len(chat) + 2  # the contents, "user" and "assistant"
    fresh = new_counter("gpt-4o")
    fresh.counts(copies)
    assert fresh.chats_from_store == 0  # no entry was written for the copies


def test_an_edited_chat_reads_the_texts_it_shares_and_tokenizes_only_the_new_one(
    empty_count_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = _chat("edit")
    new_counter("gpt-4o").counts(chat)
    edited = (*chat[:-1], chat[-1].replace(content="an edited last message"))
    counter = new_counter("gpt-4o")
    assert counter.counts(edited) == _reference(edited, monkeypatch)
    assert counter.chats_from_store == 0
    assert counter.texts_tokenized == 1
    assert counter.texts_from_store > 0


def test_messages_whose_fields_join_alike_are_different_chats(
    empty_count_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = _chat("split")
    new_counter("gpt-4o").counts(chat)
    # The same characters in the same order, cut at another place between two messages.
    moved = list(chat)
    moved[0] = chat[0].replace(content=chat[0].content[:-3])
    moved[1] = chat[1].replace(content=chat[0].content[-3:] + chat[1].content)
    assert "".join(m.content for m in moved) == "".join(m.content for m in chat)
    counter = new_counter("gpt-4o")
    assert counter.counts(moved) == _reference(tuple(moved), monkeypatch)
    assert counter.chats_from_store == 0


def test_a_damaged_chat_entry_is_ignored_and_the_chat_counted_again(
    empty_count_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = _chat("damaged")
    new_counter("gpt-4o").counts(chat)
    (path,) = (empty_count_store / "counts").glob("*.sqlite3")
    conn = sqlite3.connect(path)
    ((key, blob),) = [
        (k, v) for k, v in conn.execute("SELECT key, value FROM blobs") if k.startswith(b"chat:")
    ]
    changed = bytes([blob[0] ^ 1]) + blob[1:]  # one token more or less for the first message
    conn.execute("UPDATE blobs SET value = ? WHERE key = ?", (changed, key))
    conn.commit()
    conn.close()
    counter = new_counter("gpt-4o")
    assert counter.counts(chat) == _reference(chat, monkeypatch)
    assert counter.chats_from_store == 0


def test_least_recently_used_entries_go_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxlab import count_store

    hour = [1000]
    monkeypatch.setattr(count_store, "_stamp", lambda: hour[0])
    store = CountStore(tmp_path / "entries.sqlite3", "test:blobs", max_bytes=512 * 1024)
    old = [f"old {i}".encode() for i in range(30)]
    for key in old:
        store.put_blob(key, os.urandom(10_000))
    hour[0] += 1
    kept = store.get_blob(old[0])  # used again: its stamp is refreshed
    hour[0] += 1
    written = 0
    look = sqlite3.connect(tmp_path / "entries.sqlite3")  # reads without refreshing stamps
    while look.execute("SELECT count(*) FROM blobs").fetchone()[0] == len(old) + written:
        assert written < 200  # write newer entries until the first eviction
        store.put_blob(f"new {written}".encode(), os.urandom(10_000))
        written += 1
    look.close()
    assert store.live_bytes() <= 512 * 1024
    assert kept is not None and store.get_blob(old[0]) == kept
    assert all(store.get_blob(f"new {i}".encode()) is not None for i in range(written))
    store.close()


def test_a_second_show_prints_the_same_and_parses_nothing(
    empty_count_store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setenv("CTXLAB_CACHE_DIR", "")
        reference = _show([str(SAMPLE)], capsys)
    assert _show([str(SAMPLE)], capsys) == reference

    def no_parsing(*args: object, **kwargs: object) -> None:
        raise AssertionError("the chat was parsed again")

    monkeypatch.setattr(cli, "load_chat_file", no_parsing)
    assert _show([str(SAMPLE)], capsys) == reference
    # Other options are another entry: this one is parsed.
    with pytest.raises(AssertionError, match="parsed again"):
        cli.main(["show", str(SAMPLE), "--model", "gpt-4"])


def _write_chat(path: Path, words: str) -> None:
    path.write_text(
        json.dumps({"messages": [{"role": "user", "content": words}]}), encoding="utf-8"
    )


def test_a_changed_file_is_shown_afresh(
    empty_count_store: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "chat.json"
    _write_chat(path, "alpha beta")
    first = _show([str(path)], capsys)
    _write_chat(path, "a b c d ef")  # the same size, written within the same second
    second = _show([str(path)], capsys)
    assert second != first
    assert "1 message" in second


def test_a_settled_files_identity_stands_for_its_digest_until_it_changes(
    empty_count_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(show_cache, "SETTLED_S", 0.0)
    store = CountStore(tmp_path / "digests.sqlite3", "test:digests", max_bytes=1 << 20)
    path = tmp_path / "chat.json"
    _write_chat(path, "one")
    digest = show_cache.file_digest(path, store)
    read: list[Path] = []
    real_hash = show_cache._hash_file
    monkeypatch.setattr(show_cache, "_hash_file", lambda p: read.append(p) or real_hash(p))
    assert show_cache.file_digest(path, store) == digest
    assert read == []  # known by its identity
    time.sleep(0.01)
    _write_chat(path, "two")
    assert show_cache.file_digest(path, store) == real_hash(path) != digest
    assert read == [path]
    store.close()


def test_an_unsettled_file_is_hashed_every_time(
    empty_count_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CountStore(tmp_path / "digests.sqlite3", "test:digests", max_bytes=1 << 20)
    path = tmp_path / "chat.json"
    _write_chat(path, "just written")
    show_cache.file_digest(path, store)
    read: list[Path] = []
    real_hash = show_cache._hash_file
    monkeypatch.setattr(show_cache, "_hash_file", lambda p: read.append(p) or real_hash(p))
    show_cache.file_digest(path, store)
    assert read == [path]
    store.close()


def test_provider_counts_folders_and_estimates_are_never_cached(empty_count_store: Path) -> None:
    namespace = new_counter("gpt-4o").count_namespace
    options = ("gpt-4o", "auto", "None", "auto")
    assert show_cache.show_entry(str(SAMPLE), options, namespace, provider_count=True) is None
    assert (
        show_cache.show_entry(str(SAMPLE.parent), options, namespace, provider_count=False) is None
    )
    assert show_cache.show_entry(str(SAMPLE), options, None, provider_count=False) is None


def test_nothing_is_cached_while_a_format_plugin_may_be_installed(
    empty_count_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxlab import _entry_points

    namespace = new_counter("gpt-4o").count_namespace
    options = ("gpt-4o", "auto", "None", "auto")
    assert show_cache.show_entry(str(SAMPLE), options, namespace, provider_count=False)
    monkeypatch.setattr(_entry_points, "may_declare", lambda group: True)
    assert show_cache.show_entry(str(SAMPLE), options, namespace, provider_count=False) is None


def test_a_large_batch_written_in_the_background_persists_at_exit(empty_count_store: Path) -> None:
    import subprocess
    import sys

    from ctxlab.count_store import BACKGROUND_ROWS

    script = (
        "from ctxlab.tokens import new_counter\n"
        f"texts = [f'background text {{i}} ' * 5 for i in range({BACKGROUND_ROWS + 10})]\n"
        "c = new_counter('gpt-4o')\n"
        "print(sum(c._count_texts(texts)), c.texts_tokenized, c.texts_from_store)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run() -> list[int]:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        return [int(x) for x in done.stdout.split()]

    total, tokenized, from_store = run()
    assert (tokenized, from_store) == (BACKGROUND_ROWS + 10, 0)
    # The process exited right after counting: its pending rows were written at exit.
    assert run() == [total, 0, BACKGROUND_ROWS + 10]


def test_an_edited_catalog_changes_the_code_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user may edit ctxlab/data/models.toml (its own comment says so): the window and prices
    ``show`` prints come from it, so a kept output must not outlive an edit."""
    import ctxlab
    from ctxlab import show_cache

    package = tmp_path / "ctxlab"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    catalog = package / "data" / "models.toml"
    catalog.write_text('as_of = "2026-12-02"\n', encoding="utf-8")
    monkeypatch.setattr(ctxlab, "__file__", str(package / "__init__.py"))
    before = show_cache.code_identity()
    catalog.write_text('as_of = "2026-12-03"\n', encoding="utf-8")
    assert show_cache.code_identity() != before
