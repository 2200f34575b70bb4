"""Hostile zips: every defect is a one-line CtxlabError naming the member; names never collide.

The hostile archives are built here, byte by byte where ``zipfile`` would refuse to write them
(an encrypted flag, a wrong CRC, a size header that lies, compression method 99).
"""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.corpus.zip_upload import (
    MAX_NAME_CHARS,
    MAX_ZIP_ENTRIES,
    ZipLimits,
    extract_chats,
    shown_name,
)
from ctxlab.errors import CtxlabError

CHAT = b'[{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]'


def zip_of(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _offsets(data: bytes, signature: bytes) -> list[int]:
    found, at = [], data.find(signature)
    while at >= 0:
        found.append(at)
        at = data.find(signature, at + 1)
    return found


def patched(data: bytes, *, local: int, central: int, fmt: str, value: int) -> bytes:
    """``data`` with one field of every local header and central record set to ``value``."""
    out = bytearray(data)
    for at in _offsets(data, b"PK\x03\x04"):
        struct.pack_into(fmt, out, at + local, value)
    for at in _offsets(data, b"PK\x01\x02"):
        struct.pack_into(fmt, out, at + central, value)
    return bytes(out)


def encrypted() -> bytes:
    return patched(zip_of({"team/chat.json": CHAT}), local=6, central=8, fmt="<H", value=0x1)


def bad_crc() -> bytes:
    return patched(zip_of({"chat.json": CHAT}), local=14, central=16, fmt="<L", value=0xDEADBEEF)


def size_header(value: int) -> bytes:
    return patched(zip_of({"chat.json": CHAT * 40}), local=22, central=24, fmt="<L", value=value)


def method_99() -> bytes:
    return patched(zip_of({"chat.json": CHAT}), local=8, central=10, fmt="<H", value=99)


def damaged_deflate() -> bytes:
    data = bytearray(zip_of({"chat.json": CHAT * 40}))
    start = _offsets(bytes(data), b"PK\x03\x04")[0] + 30 + len("chat.json")
    data[start : start + 8] = b"\xff" * 8
    return bytes(data)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (encrypted(), "zip member 'team/chat.json' is encrypted"),
        (bad_crc(), "zip member 'chat.json': its data does not match its CRC"),
        (size_header(10), "zip member 'chat.json'"),
        (size_header(1_000_000), "its size header says 1,000,000 bytes but it holds"),
        (method_99(), "zip member 'chat.json' uses compression method 99 (AES encryption)"),
        (damaged_deflate(), "zip member 'chat.json'"),
        (zip_of({"x" * 65_000 + ".json": CHAT}), "its name is 65,005 characters"),
        (b"not a zip", "not a zip file"),
        (zip_of({"a.txt": b"x"}), "no .json"),
        (zip_of({f"c{i}.json": b"[]" for i in range(201)}), "201 chat files"),
    ],
    ids=[
        "encrypted",
        "bad-crc",
        "size-too-small",
        "size-too-large",
        "method-99",
        "damaged-deflate",
        "name-65k",
        "not-zip",
        "no-chat",
        "too-many-chats",
    ],
)
def test_every_zip_defect_is_one_line_naming_the_member(
    data: bytes, needle: str, tmp_path: Path
) -> None:
    with pytest.raises(CtxlabError) as caught:
        extract_chats(data, tmp_path / "out")
    message = str(caught.value)
    assert needle in message
    assert "\n" not in message and len(message) < 300


def test_a_zip_bomb_stops_at_the_byte_cap_while_decompressing(tmp_path: Path) -> None:
    bomb = zip_of({"bomb.json": b"\0" * 5_000_000})
    # the size header says the truth here; the cap is on bytes actually decompressed
    with pytest.raises(CtxlabError, match=r"over 1 MB uncompressed \(reached at member"):
        extract_chats(bomb, tmp_path, ZipLimits(total_bytes=1_000_000))
    lying = patched(bomb, local=22, central=24, fmt="<L", value=10)
    with pytest.raises(CtxlabError, match=r"'bomb\.json'"):
        extract_chats(lying, tmp_path, ZipLimits(total_bytes=1_000_000))


def test_300k_non_chat_entries_are_refused_before_zipfile_parses_them(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("chat.json", CHAT)
        for i in range(300_000):
            archive.writestr(f"i/{i}", b"")
    with pytest.raises(CtxlabError, match="the zip holds 300,001 entries; the page takes 5,000"):
        extract_chats(buffer.getvalue(), tmp_path)
    assert not (tmp_path / "chat.json").exists()


def test_a_lying_entry_count_is_caught_by_the_table_size(tmp_path: Path) -> None:
    data = bytearray(zip_of({f"i/{i}": b"" for i in range(3_000)} | {"chat.json": CHAT}))
    end = bytes(data).rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, 1, 1)  # "one entry"
    with pytest.raises(CtxlabError, match="table of contents is"):
        extract_chats(bytes(data), tmp_path, ZipLimits(entries=100))


def test_non_chat_entries_under_the_cap_are_skipped(tmp_path: Path) -> None:
    members = {f"img/{i}.png": b"" for i in range(MAX_ZIP_ENTRIES - 1)} | {"c.json": CHAT}
    written = extract_chats(zip_of(members, zipfile.ZIP_STORED), tmp_path)
    assert [p.name for p in written] == ["c.json"]


def test_colliding_names_each_keep_their_chat(tmp_path: Path) -> None:
    members = {
        "a/b.json": b"[1]",
        "a__b.json": b"[2]",
        "A__B.json": b"[3]",
        "a\\b.json": b"[4]",
        ".hidden/c.json": b"[5]",
        "../../escape.json": b"[6]",
        "/abs/q.json": b"[7]",
        "d/" * 200 + "deep.json": b"[8]",
    }
    written = extract_chats(zip_of(members), tmp_path / "out")
    assert sorted(p.read_bytes() for p in written) == sorted(members.values())
    names = [p.name for p in written]
    assert len({n.lower() for n in names}) == len(names)
    assert names[:3] == ["a__b.json", "a__b-2.json", "A__B-3.json"]
    assert all(p.parent == tmp_path / "out" and len(p.name.encode()) <= 255 for p in written)
    assert not any(n.startswith(".") for n in names)
    assert not (tmp_path / "escape.json").exists()


def test_a_member_repeated_in_the_zip_is_kept_twice(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("chat.json", b"[1]")
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("chat.json", b"[2]")
    written = extract_chats(buffer.getvalue(), tmp_path)
    assert sorted(p.read_bytes() for p in written) == [b"[1]", b"[2]"]


def test_member_names_in_messages_are_escaped_and_cut() -> None:
    assert shown_name("a\x1b[31m.json") == repr("a\x1b[31m.json")
    long = shown_name("x" * 10_000 + ".json")
    assert len(long) < 90 and "…" in long


def test_a_name_at_the_limit_is_accepted(tmp_path: Path) -> None:
    name = "n" * (MAX_NAME_CHARS - len(".json")) + ".json"
    (written,) = extract_chats(zip_of({name: CHAT}), tmp_path)
    assert written.read_bytes() == CHAT and len(written.name.encode()) <= 255


@settings(max_examples=150, deadline=None)
@given(noise=st.binary(min_size=0, max_size=400), at=st.integers(min_value=0, max_value=399))
def test_any_corruption_of_a_zip_is_a_ctxlab_error_or_its_chats(
    noise: bytes, at: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data = bytearray(zip_of({"a/chat.json": CHAT, "b.jsonl": CHAT}))
    data[at : at + len(noise)] = noise
    target = tmp_path_factory.mktemp("out")
    try:
        written = extract_chats(bytes(data), target)
    except CtxlabError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(p.parent == target for p in written)
