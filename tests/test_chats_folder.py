"""The server's chats folder: names only, never a path; listing without parsing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxlab.chats_folder import (
    CHATS_DIR_ENV,
    chats_dir,
    check_chat_name,
    folder_chat,
    list_folder_chats,
)
from ctxlab.errors import CtxlabError, UnknownNameError

CHAT = '[{"role": "user", "content": "hi"}]'


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "../secrets",
        "..",
        "a/b",
        "/etc/passwd",
        "a\\b",
        "..\\x",
        ".hidden",
        "x\x00y",
        "tab\tname",
        "x" * 201,
    ],
)
def test_names_with_paths_dots_or_controls_are_refused(name: str) -> None:
    with pytest.raises(CtxlabError, match="refused"):
        check_chat_name(name)


@pytest.mark.parametrize("name", ["large_agent_100k", "chat-2026.11", "Über chat", "a"])
def test_plain_names_are_accepted(name: str) -> None:
    assert check_chat_name(name) == name


def test_folder_lists_json_and_jsonl_files_only(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(CHAT, encoding="utf-8")
    (tmp_path / "two.jsonl").write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    (tmp_path / "both.json").write_text(CHAT, encoding="utf-8")
    (tmp_path / "both.jsonl").write_text(CHAT, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    (tmp_path / ".hidden.json").write_text(CHAT, encoding="utf-8")
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.json").write_text(CHAT, encoding="utf-8")
    found = {c.name: c for c in list_folder_chats(tmp_path)}
    assert sorted(found) == ["both", "one", "two"]
    assert found["both"].path.name == "both.json"
    assert found["one"].size == len(CHAT.encode())
    assert folder_chat("two", tmp_path).path == tmp_path / "two.jsonl"


def test_symlinks_leading_out_of_the_folder_are_not_chats(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(CHAT, encoding="utf-8")
    folder = tmp_path / "chats"
    folder.mkdir()
    os.symlink(outside / "secret.json", folder / "secret.json")
    assert list_folder_chats(folder) == []
    with pytest.raises(UnknownNameError):
        folder_chat("secret", folder)


def test_unknown_or_refused_names_raise_before_reading(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="no chat called 'missing'"):
        folder_chat("missing", tmp_path)
    with pytest.raises(CtxlabError, match="path separator"):
        folder_chat("../outside", tmp_path)
    assert list_folder_chats(tmp_path / "does-not-exist") == []


def test_environment_variable_names_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CHATS_DIR_ENV, raising=False)
    assert (
        chats_dir().resolve() == (Path(__file__).resolve().parent.parent / "sample_chats").resolve()
    )
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    (tmp_path / "mine.json").write_text(CHAT, encoding="utf-8")
    assert chats_dir() == tmp_path
    assert [c.name for c in list_folder_chats()] == ["mine"]
