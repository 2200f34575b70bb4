"""A JSONL file whose last line was cut off mid-write loads the rest, with a warning naming it.

Every JSONL reader behaves alike (openai-jsonl, finetune-jsonl, claude-code, codex), also when
the bytes go through the fast path first (a name that does not end in ``.jsonl``); a bad line
anywhere but last is damage, an error naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.errors import ChatFormatError
from ctxlab.formats import list_conversations, load_chat, load_chat_file

FORMATS = Path(__file__).parent / "fixtures" / "formats"
CODEX = FORMATS / "codex" / "turn_two.jsonl"
CLAUDE_CODE = FORMATS / "claude_code" / "thinking_session.jsonl"

# (fixture, format, a cut-off last line in that format's own shape)
READERS = [
    (FORMATS / "messages.jsonl", "openai-jsonl", b'{"role": "assistant", "content": "Half a sen'),
    (FORMATS / "finetune.jsonl", "finetune-jsonl", b'{"messages": [{"role": "user", "con'),
    (CLAUDE_CODE, "claude-code", b'{"type": "assistant", "message": {"id": "msg_x", "con'),
    (CODEX, "codex", b'{"timestamp": "2026-05-11T13:30:00Z", "type": "response_item", "pay'),
]


def _lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line.strip()]


def _cut(path: Path, tail: bytes) -> bytes:
    return b"\n".join(_lines(path)) + b"\n" + tail


@pytest.mark.parametrize(("fixture", "fmt", "tail"), READERS, ids=[r[1] for r in READERS])
@pytest.mark.parametrize("how", ["file", "bytes", "format given"])
def test_a_cut_off_last_line_is_skipped_with_a_warning_naming_file_and_line(
    tmp_path: Path, fixture: Path, fmt: str, tail: bytes, how: str
) -> None:
    whole = load_chat_file(fixture)
    path = tmp_path / fixture.name
    path.write_bytes(_cut(fixture, tail))
    if how == "file":
        loaded = load_chat_file(path)
    elif how == "bytes":
        loaded = load_chat_file(path.read_bytes(), name="upload.jsonl")
    else:
        loaded = load_chat_file(path, fmt=fmt)
    name = "upload.jsonl" if how == "bytes" else fixture.name
    line = len(_lines(fixture)) + 1
    assert loaded.format == fmt
    assert loaded.messages == whole.messages
    cut = f"{name}: line {line}: the last line is cut off (not complete JSON); skipped it"
    assert loaded.warnings == (cut, *whole.warnings)


@pytest.mark.parametrize(("fixture", "fmt", "tail"), READERS, ids=[r[1] for r in READERS])
def test_a_bad_line_in_the_middle_fails_naming_file_and_line(
    tmp_path: Path, fixture: Path, fmt: str, tail: bytes
) -> None:
    lines = _lines(fixture)
    path = tmp_path / fixture.name
    path.write_bytes(b"\n".join([lines[0], tail, *lines[1:]]))
    with pytest.raises(ChatFormatError) as err:
        # finetune-jsonl parses only the conversation asked for: ask for the broken one.
        load_chat(path, conversation=1 if fmt == "finetune-jsonl" else None)
    assert err.value.where == f"{fixture.name}: line 2"
    assert "invalid JSON" in str(err.value)


def test_a_file_of_one_cut_off_line_is_an_error_not_an_empty_chat(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"role": "user", "content": "hel')
    with pytest.raises(ChatFormatError) as err:
        load_chat(path)
    assert err.value.where == "log.jsonl: line 1"


def test_openai_jsonl_through_the_fast_path_skips_a_cut_off_last_line(tmp_path: Path) -> None:
    # A .json name sends the bytes to the msgspec fast path first; JSONL is not JSON, so the
    # general reader takes over and must tolerate the cut-off line just the same.
    fixture = FORMATS / "messages.jsonl"
    path = tmp_path / "messages.json"
    path.write_bytes(_cut(fixture, b'{"role": "assistant", "content": "Half'))
    loaded = load_chat_file(path)
    assert loaded.format == "openai-jsonl"
    assert loaded.messages == load_chat(fixture)
    line = len(_lines(fixture)) + 1
    assert loaded.warnings == (
        f"messages.json: line {line}: the last line is cut off (not complete JSON); skipped it",
    )
    pasted = load_chat_file(path.read_bytes())  # no name at all: the warning names the line
    assert pasted.warnings == (
        f"line {line}: the last line is cut off (not complete JSON); skipped it",
    )


def test_the_conversation_list_leaves_out_a_cut_off_last_line(tmp_path: Path) -> None:
    fixture = FORMATS / "finetune.jsonl"
    path = tmp_path / fixture.name
    path.write_bytes(_cut(fixture, b'{"messages": [{"role": "user", "con'))
    assert list_conversations(path) == list_conversations(fixture)
    messages = tmp_path / "messages.jsonl"
    messages.write_bytes(_cut(FORMATS / "messages.jsonl", b'{"role": "user", "con'))
    assert list_conversations(messages) == list_conversations(FORMATS / "messages.jsonl")


@pytest.mark.parametrize(("fixture", "fmt", "tail"), READERS, ids=[r[1] for r in READERS])
def test_a_malformed_last_line_is_damage_not_a_cut(
    tmp_path: Path, fixture: Path, fmt: str, tail: bytes
) -> None:
    # Complete but wrong (not a prefix of any JSON text): an error naming file and line.
    path = tmp_path / fixture.name
    path.write_bytes(_cut(fixture, b'{"role": "user", "content": "a" "b"}\n'))
    last = len(_lines(fixture))
    with pytest.raises(ChatFormatError) as err:
        load_chat(path, conversation=last if fmt == "finetune-jsonl" else None)
    assert err.value.where == f"{fixture.name}: line {last + 1}"


def test_a_cut_inside_a_multi_byte_character_is_a_cut(tmp_path: Path) -> None:
    fixture = FORMATS / "messages.jsonl"
    path = tmp_path / fixture.name
    path.write_bytes(_cut(fixture, '{"role": "user", "content": "Grüße 日本'.encode()[:-2]))
    loaded = load_chat_file(path)
    assert loaded.messages == load_chat(fixture)
    assert len(loaded.warnings) == 1 and "cut off" in loaded.warnings[0]
