"""Turning what :func:`~ctxlab.formats.load_chat` is given into bytes, a parsed value, JSONL
lines or a folder.

Invariant: a ``str`` is a path only if it names an existing file or folder and does not start
like JSON text; bytes are never a path (the app passes pasted text as bytes, so nothing a
visitor types reads a server file); everything that cannot be read raises
:class:`ChatFormatError` naming the line (and column) or the reason.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import orjson

from ctxlab.formats._common import _fail


@dataclasses.dataclass(frozen=True, slots=True)
class _Source:
    """A source made ready: raw bytes (``data``), an already-parsed ``value``, or a folder.

    ``path`` is the file or folder read, when the source was a path (a Claude Code session's
    sub-agent files are found beside it); ``data`` and ``value`` are both None for a folder.
    """

    data: bytes | None
    value: Any
    name: str | None
    path: Path | None = None


def _read_source(source: object, name: str | None) -> _Source:
    """The source as bytes to parse or as an already-parsed value.

    A str is a path only if it names an existing file and does not start like JSON text.
    """
    if isinstance(source, os.PathLike):
        return _read_file(Path(source), name)
    if isinstance(source, bytes | bytearray | memoryview):
        return _Source(bytes(source), None, name)
    if isinstance(source, str):
        if source.lstrip()[:1] not in ("[", "{") and _is_path_like(source):
            if _is_file(source) or _is_dir(source):
                return _read_file(Path(source), name)
            try:
                orjson.loads(source)
            except orjson.JSONDecodeError:
                _fail(None, f"{source!r} is neither an existing file nor JSON text")
        try:
            return _Source(source.encode(), None, name)
        except UnicodeEncodeError as exc:
            _fail(None, f"the text holds an unpaired surrogate at character {exc.start}")
    if isinstance(source, list | dict):
        return _Source(None, source, name)
    _fail(None, f"expected a path, bytes, JSON text, a list or a dict, got {type(source).__name__}")


def _is_path_like(text: str) -> bool:
    """One short line of text: it may name a file."""
    return bool(text.strip()) and "\n" not in text and len(text) <= 4096


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _is_dir(text: str) -> bool:
    try:
        return Path(text).is_dir()
    except (OSError, ValueError):
        return False


def _read_file(path: Path, name: str | None) -> _Source:
    """A file's bytes, or a folder (read later by the format that lists its files)."""
    try:
        if path.is_dir():
            return _Source(None, None, name or path.name, path)
        data = path.read_bytes()
    except OSError as exc:
        _fail(None, f"cannot read {str(path)!r}: {exc.strerror or exc}")
    return _Source(data, None, name or path.name, path)


def _strip_bom(data: bytes) -> bytes:
    """``data`` without a UTF-8 byte order mark; UTF-16/32 text is an error."""
    if data[:3] == b"\xef\xbb\xbf":
        return data[3:]
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:2]:
        _fail(None, "not UTF-8 text: it looks like UTF-16 or UTF-32; save the file as UTF-8")
    return data


def _parse_json(data: bytes, line: int | None = None) -> Any:
    """Parse JSON bytes; errors name the line and column (``line`` for one JSONL line)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        _utf8_check(data, line)
        lineno = line if line is not None else exc.lineno
        _fail(f"line {lineno}", f"invalid JSON ({exc.msg} at column {exc.colno})")


def _utf8_check(data: bytes, line: int | None) -> None:
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        lineno = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        _fail(
            f"line {lineno}",
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {exc.start - start + 1})",
        )


def _jsonl_lines(data: bytes) -> list[tuple[int, bytes]]:
    """The non-blank lines of JSONL text with their 1-based numbers."""
    return [(n, line) for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def _is_jsonl(data: bytes) -> bool:
    """Whether ``data`` (not one JSON document) is JSONL.

    It is when its first line is a JSON object and more lines follow; only the head is read.
    """
    head = [line for line in data.split(b"\n", 64) if line.strip()]
    if len(head) < 2:
        return False
    try:
        return isinstance(orjson.loads(head[0]), dict)
    except orjson.JSONDecodeError:
        return False


def _is_cut_off(raw: bytes) -> bool:
    """Whether ``raw`` is the start of a JSON text cut short, not a malformed (or whole) one.

    A write stopped mid-line leaves a prefix of valid JSON, perhaps ending inside a multi-byte
    UTF-8 character: the parser runs out of input. ``{"a": 1} x`` or ``{"a" "b"}`` is damage.
    """
    try:
        text = raw.decode()
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            return False
        text = raw[: exc.start].decode()
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return exc.pos >= len(text.rstrip())  # pos counts characters
    return False


def _cut_off_warning(n: int, name: str | None) -> str:
    where = f"{name}: line {n}" if name else f"line {n}"
    return f"{where}: the last line is cut off (not complete JSON); skipped it"


def _complete_lines(
    lines: tuple[tuple[int, bytes], ...], name: str | None = None
) -> tuple[tuple[tuple[int, bytes], ...], tuple[str, ...]]:
    """``lines`` without a last line cut off mid-write, and the warning naming it.

    Only the last line is checked (a reader that parses lines lazily still learns whether its
    file ends cleanly); a file of one line keeps it, so its error names what is wrong, and so
    does a malformed last line (one that is not a prefix of JSON).
    """
    if len(lines) < 2:
        return lines, ()
    n, raw = lines[-1]
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        if _is_cut_off(raw):
            return lines[:-1], (_cut_off_warning(n, name),)
    return lines, ()


def _parse_lines_lenient(
    lines: tuple[tuple[int, bytes], ...], name: str | None = None
) -> tuple[list[tuple[int, Any]], tuple[str, ...]]:
    """``(line number, value)`` of each line, tolerating a last line cut off mid-write.

    A program that crashes (or is killed) leaves its log's last line unfinished: that line is
    skipped with a warning naming the file (``name``) and the line. A bad line anywhere else,
    or a last line that is malformed rather than cut short, is an error (the file is damaged).
    """
    complete, warnings = _complete_lines(lines, name)
    return [(n, _parse_json(raw, n)) for n, raw in complete], warnings
