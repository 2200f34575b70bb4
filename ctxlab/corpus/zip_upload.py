"""The chat files of an uploaded zip, written flat into a folder: nothing in the zip is trusted.

Every defect of the archive is a one-line :class:`~ctxlab.errors.CtxlabError` that names the
member: encrypted, unsupported compression, a CRC that does not match, a size header that lies,
a name too long, damaged data; or the whole upload when it is not a zip, or holds more entries,
chat files or bytes than the limits below. The limits are checked before Python's ``zipfile``
parses the table of contents (from the end-of-central-directory record, a few dozen bytes), so a
zip of 300,000 entries costs microseconds to refuse, and bytes are counted as they are
decompressed (``file_size`` is a claim, not a fact), so a zip bomb stops at the cap.

Names never collide: each chat gets a flat, safe name built from its path (``a/b.json`` ->
``a__b.json``); a name already taken (``a__b.json`` next to ``a/b.json``, a member repeated,
names that differ only by case) gets a numbered suffix (``a__b-2.json``), so every chat in the
zip is evaluated. Nothing is ever written outside the target folder.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from ctxlab.corpus.inputs import CHAT_SUFFIXES
from ctxlab.errors import CtxlabError

__all__ = [
    "MAX_NAME_CHARS",
    "MAX_ZIP_BYTES",
    "MAX_ZIP_ENTRIES",
    "MAX_ZIP_FILES",
    "ZipLimits",
    "extract_chats",
]

MAX_ZIP_ENTRIES = 5_000
"""Entries of any kind (folders, images, chats) in the zip's table of contents."""
MAX_ZIP_FILES = 200
"""Chat files (``.json``, ``.jsonl``, ``.ndjson``) evaluated from one zip."""
MAX_ZIP_BYTES = 30_000_000
"""Uncompressed bytes of all chat files together, counted as they are decompressed."""
MAX_NAME_CHARS = 1_024
"""Characters of a member's name (a path inside the zip)."""

_SUPPORTED = frozenset(
    {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
)
_METHODS = {1: "shrink", 6: "implode", 9: "deflate64", 12: "bzip2", 14: "lzma", 93: "zstandard"}
_METHODS |= {95: "xz", 96: "jpeg", 97: "wavpack", 98: "ppmd", 99: "AES encryption"}
_CHUNK = 1 << 20
_SAFE_CHAR = re.compile(r"[^\w.\- ]")  # \w is Unicode letters and digits: names stay readable
_MAX_FLAT_BYTES = 200  # below the 255-byte limit of a file name on every common file system
_EOCD = b"PK\x05\x06"
_EOCD_SIZE = 22
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_CENTRAL_RECORD = 46  # the fixed part of one entry of the table of contents


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """The caps an upload is held to (the defaults are the module constants)."""

    entries: int = MAX_ZIP_ENTRIES
    files: int = MAX_ZIP_FILES
    total_bytes: int = MAX_ZIP_BYTES
    name_chars: int = MAX_NAME_CHARS


def shown_name(name: str, limit: int = 80) -> str:
    """A member's name for a message: quoted, control characters escaped, long names cut."""
    cut = name if len(name) <= limit else f"{name[: limit // 2]}…{name[-limit // 4 :]}"
    return repr(cut)


def _directory_size(data: bytes) -> tuple[int, int] | None:
    """(entries, bytes) of the table of contents, from the end record; None when there is none.

    Reads the end-of-central-directory record (and its zip64 twin when the counts overflow),
    so the caps are known before anything parses the table itself.
    """
    at = data.rfind(_EOCD, max(0, len(data) - _EOCD_SIZE - 0xFFFF))
    if at < 0 or len(data) - at < _EOCD_SIZE:
        return None
    entries, size = struct.unpack_from("<HL", data, at + 10)
    if entries != 0xFFFF and size != 0xFFFFFFFF:
        return entries, size
    locator = at - 20
    if locator < 0 or data[locator : locator + 4] != _ZIP64_LOCATOR:
        return entries, size
    (offset,) = struct.unpack_from("<Q", data, locator + 8)
    if offset + 56 > len(data) or data[offset : offset + 4] != _ZIP64_EOCD:
        return None
    entries64, size64 = struct.unpack_from("<QQ", data, offset + 32)
    return int(entries64), int(size64)


def _open(data: bytes, limits: ZipLimits) -> zipfile.ZipFile:
    directory = _directory_size(data)
    if directory is None:
        raise CtxlabError("the upload is not a zip file")
    entries, size = directory
    if entries > limits.entries:
        raise CtxlabError(
            f"the zip holds {entries:,} entries; the page takes {limits.entries:,} "
            "(use ctxlab eval for large corpora)"
        )
    # The end record's count may lie; the table's byte size bounds what zipfile would parse.
    if size > limits.entries * (_CENTRAL_RECORD + 200):
        raise CtxlabError(
            f"the zip's table of contents is {size:,} bytes, more than "
            f"{limits.entries:,} entries (the page's limit) need"
        )
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except UnicodeDecodeError:
        raise CtxlabError("the zip is damaged: a member name is not valid UTF-8") from None
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,  # "zip file version 6.6": a format feature zipfile lacks
        ValueError,
        EOFError,
        OSError,
    ) as exc:
        raise CtxlabError(f"the upload is not a readable zip file ({exc})") from None


def _is_chat(name: str) -> bool:
    """A chat member: a chat suffix, not hidden, not macOS resource-fork litter.

    Plain string tests (no ``PurePosixPath``): every entry of the zip passes through here.
    """
    lower = name.lower()
    if not lower.endswith(CHAT_SUFFIXES) or "__macosx" in lower:
        return False
    base = name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    return not base.startswith(".")


def _check_member(info: zipfile.ZipInfo, limits: ZipLimits) -> None:
    name = shown_name(info.filename)
    if len(info.filename) > limits.name_chars:
        raise CtxlabError(
            f"zip member {name}: its name is {len(info.filename):,} characters; "
            f"the page takes {limits.name_chars:,}"
        )
    if "\x00" in info.orig_filename:
        raise CtxlabError(f"zip member {name}: its name holds a NUL character")
    if info.flag_bits & 0x41:  # bit 0: encrypted; bit 6: strong encryption
        raise CtxlabError(f"zip member {name} is encrypted; upload an unencrypted zip")
    if info.compress_type not in _SUPPORTED:
        method = _METHODS.get(info.compress_type, "unknown")
        raise CtxlabError(
            f"zip member {name} uses compression method {info.compress_type} ({method}), "
            "which ctxlab cannot read; use deflate or no compression"
        )


def _flat_name(member: str) -> str:
    """``a/b c.json`` -> ``a__b c.json``: the path kept in the name, never as folders."""
    parts = [p for p in re.split(r"[/\\]+", member) if p not in ("", ".", "..")]
    flat = "__".join(_SAFE_CHAR.sub("_", p) for p in parts).lstrip(".") or "chat.json"
    stem, dot, suffix = flat.rpartition(".")
    if not dot:
        stem, suffix = flat, "json"
    if len(flat.encode()) > _MAX_FLAT_BYTES:  # a long path: its head, and a hash of the whole
        digest = hashlib.sha256(member.encode()).hexdigest()[:12]
        head = stem.encode()[: _MAX_FLAT_BYTES - 40].decode(errors="ignore")
        stem = f"{head}-{digest}"
    return f"{stem}.{suffix.lower()}"


def _unique(flat: str, taken: set[str]) -> str:
    """``flat``, or ``stem-2.ext``, ``stem-3.ext``, ... the first not taken (case ignored)."""
    stem, _, suffix = flat.rpartition(".")
    candidate, n = flat, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{stem}-{n}.{suffix}"
    taken.add(candidate.lower())
    return candidate


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """The member's bytes, decompressed in chunks, at most ``budget`` of them.

    Raises:
        CtxlabError: damaged data, a bad CRC, a size header that does not match the data, or
            more than ``budget`` bytes (the caller's total cap).
    """
    name = shown_name(info.filename)
    chunks: list[bytes] = []
    size = 0
    try:
        with archive.open(info) as source:
            while chunk := source.read(min(_CHUNK, budget + 1 - size)):
                size += len(chunk)
                chunks.append(chunk)
                if size > budget:
                    raise _OverBudget
    except _OverBudget:
        raise
    except zipfile.BadZipFile as exc:
        if "CRC" in str(exc):
            raise CtxlabError(
                f"zip member {name}: its data does not match its CRC (the zip is damaged)"
            ) from None
        raise CtxlabError(f"zip member {name} is damaged ({exc})") from None
    except EOFError:
        raise CtxlabError(
            f"zip member {name} is cut short: its size header says {info.file_size:,} bytes "
            "(the zip is damaged)"
        ) from None
    except (zlib.error, lzma.LZMAError, OSError, ValueError, RuntimeError) as exc:
        # bz2 reports bad data as OSError; NotImplementedError (a RuntimeError) is a header
        # feature zipfile lacks, such as patched data (flag bit 5).
        raise CtxlabError(f"zip member {name} is damaged ({type(exc).__name__}: {exc})") from None
    if size != info.file_size:
        raise CtxlabError(
            f"zip member {name}: its size header says {info.file_size:,} bytes but it holds "
            f"{size:,} (the zip is damaged)"
        )
    return b"".join(chunks)


class _OverBudget(Exception):
    """More decompressed bytes than the zip's total cap."""


def extract_chats(data: bytes, target: Path, limits: ZipLimits | None = None) -> list[Path]:
    """Write the chat files of a zip into ``target`` (flat, unique, safe names); their paths.

    Only ``.json``/``.jsonl``/``.ndjson`` members are read, and every one of them is written:
    folders inside the zip are kept in the name (``a/b.json`` -> ``a__b.json``), a name already
    used gets a numbered suffix, and nothing is written outside ``target``.

    Raises:
        CtxlabError: one line naming the member (or the upload) for every defect: not a zip,
            no chat file, over the limits of ``limits`` (entries, chat files, uncompressed
            bytes, name length), encrypted, unsupported compression, bad CRC, a lying size
            header, damaged data.
    """
    limits = limits or ZipLimits()
    archive = _open(data, limits)
    members = [m for m in archive.infolist() if not m.is_dir() and _is_chat(m.filename)]
    if not members:
        raise CtxlabError("the zip holds no .json or .jsonl chat file")
    if len(members) > limits.files:
        raise CtxlabError(
            f"the zip holds {len(members):,} chat files; the page takes {limits.files:,} "
            "(use ctxlab eval for large corpora)"
        )
    for m in members:
        _check_member(m, limits)
    target.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    written = []
    left = limits.total_bytes
    for m in members:
        try:
            payload = _read(archive, m, left)
        except _OverBudget:
            raise CtxlabError(
                f"the zip's chats are over {limits.total_bytes / 1e6:g} MB uncompressed "
                f"(reached at member {shown_name(m.filename)}); use ctxlab eval for large "
                "corpora"
            ) from None
        left -= len(payload)
        path = target / _unique(_flat_name(m.filename), taken)
        path.write_bytes(payload)
        written.append(path)
    return written
