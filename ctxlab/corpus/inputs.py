"""Where a fleet run's conversations come from: chat files, or a table of conversations.

A corpus is one of:

* a folder (searched recursively) or a glob of chat files in any format
  :func:`~ctxlab.formats.load_chat` reads; each file is one :class:`Source`, and a
  multi-conversation file expands to one conversation each
  (:func:`~ctxlab.formats.list_conversations`);
* a table with one conversation per row: a ``.parquet`` file, or a JSONL file whose first line is
  an object holding the conversation column (``messages`` unless told otherwise). Each row is one
  :class:`Source` carrying its conversation inline.

A source's ``key`` is the SHA-256 of its bytes (the file, or the row's cell as JSON), so the same
content under two names is one conversation, and an edited file is a new one. Sources are
yielded lazily; only the list of file names is held in memory.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ctxlab.errors import CtxlabError
from ctxlab.formats import list_conversations, load_chat
from ctxlab.model import Message

__all__ = [
    "CHAT_SUFFIXES",
    "Corpus",
    "LoadedConversation",
    "Source",
    "is_table",
    "load_source",
    "open_corpus",
    "row_source",
]

CHAT_SUFFIXES = (".json", ".jsonl", ".ndjson")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Source:
    """One unit read by a worker: a chat file, or one row of a table (``payload`` inline)."""

    label: str  # what error rows and the Fleet page show: a path, or "table.jsonl:12"
    key: str  # sha256 hex of the bytes
    path: str | None = None
    payload: bytes | None = None


@dataclass(frozen=True, slots=True)
class LoadedConversation:
    """One conversation of a source: its key (content hash), id within the source, messages."""

    key: str
    conversation: str
    title: str
    messages: tuple[Message, ...]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Corpus:
    """A resolved corpus: the files to read, or one table and its conversation column."""

    root: str
    files: tuple[str, ...] = ()
    table: str | None = None
    column: str = "messages"

    def __len__(self) -> int:
        """Number of sources (files, or table rows)."""
        if self.table is None:
            return len(self.files)
        if self.table.endswith(".parquet"):
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(self.table).metadata.num_rows)
        with open(self.table, "rb") as fh:
            return sum(1 for line in fh if line.strip())

    def sources(self, *, carry_bytes: bool = False) -> Iterator[Source]:
        """Every source, hashed as it is read (files one at a time, tables row by row).

        With ``carry_bytes`` a file's bytes travel in the source (``payload``), for workers
        that cannot read the driver's files (a Ray cluster).
        """
        if self.table is None:
            for path in self.files:
                label = os.path.relpath(path, self.root) if os.path.isdir(self.root) else path
                try:
                    data = Path(path).read_bytes()
                except OSError:  # the worker reads it again and records why it failed
                    yield Source(label, _sha(f"unreadable:{path}".encode()), path=path)
                    continue
                yield Source(label, _sha(data), path=path, payload=data if carry_bytes else None)
        elif self.table.endswith(".parquet"):
            yield from self._parquet_rows(self.table)
        else:
            yield from self._jsonl_rows(self.table)

    def _jsonl_rows(self, table: str) -> Iterator[Source]:
        name = os.path.basename(table)
        with open(table, "rb") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                label = f"{name}:{number}"
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    yield Source(label, _sha(line), payload=_bad_row(f"line {number}: {exc}"))
                    continue
                yield self._row_source(label, row, number)

    def _parquet_rows(self, table: str) -> Iterator[Source]:
        import pyarrow.parquet as pq

        name = os.path.basename(table)
        number = 0
        for batch in pq.ParquetFile(table).iter_batches(batch_size=256):
            for row in batch.to_pylist():
                number += 1
                yield self._row_source(f"{name}:{number}", row, number)

    def _row_source(self, label: str, row: Any, number: int) -> Source:
        return row_source(label, row, number, self.column)


def row_source(label: str, row: Any, number: int, column: str) -> Source:
    """The source of one table row: its ``column`` cell as JSON bytes (or an error payload)."""
    if not isinstance(row, dict) or column not in row:
        payload = _bad_row(f"row {number} has no column {column!r}")
        return Source(label, _sha(orjson.dumps(row, default=str)), payload=payload)
    cell = row[column]
    data = cell.encode() if isinstance(cell, str) else orjson.dumps(cell, default=str)
    return Source(label, _sha(data), payload=data)


_BAD_ROW = b"\x00ctxlab-bad-row\x00"


def _bad_row(reason: str) -> bytes:
    """A payload that :func:`load_source` reports as unreadable with ``reason``."""
    return _BAD_ROW + reason.encode()


def _is_table_jsonl(path: str, column: str) -> bool:
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                try:
                    first = orjson.loads(line)
                except orjson.JSONDecodeError:
                    return False
                return isinstance(first, dict) and column in first and "role" not in first
    return False


def is_table(corpus: str | os.PathLike[str], *, column: str = "messages") -> bool:
    """True for a table of conversations: ``.parquet``, or JSONL whose first row has ``column``.

    A URI (``s3://...``, ``gs://...``) counts by its extension alone (``.parquet``,
    ``.jsonl``): only Ray's readers open those.
    """
    text = os.fspath(corpus)
    if "://" in text:
        return text.endswith((".parquet", ".jsonl", ".ndjson"))
    if not os.path.isfile(text):
        return False
    return text.endswith(".parquet") or (
        text.endswith((".jsonl", ".ndjson")) and _is_table_jsonl(text, column)
    )


def open_corpus(corpus: str | os.PathLike[str], *, column: str = "messages") -> Corpus:
    """Resolve a folder, glob, chat file or table into a :class:`Corpus`.

    A single ``.parquet`` file, or a JSONL file whose first row holds ``column`` (and is not
    itself a message), is a table; any other file is one chat file.

    Raises:
        CtxlabError: nothing matches ``corpus``.
    """
    text = os.fspath(corpus)
    if os.path.isdir(text):
        files = sorted(
            str(p)
            for p in Path(text).rglob("*")
            if p.is_file() and p.suffix.lower() in CHAT_SUFFIXES and not p.name.startswith(".")
        )
        return Corpus(text, tuple(files), column=column)
    if os.path.isfile(text):
        if text.endswith(".parquet") or (
            text.endswith((".jsonl", ".ndjson")) and _is_table_jsonl(text, column)
        ):
            return Corpus(text, table=text, column=column)
        return Corpus(os.path.dirname(text) or ".", (text,), column=column)
    if _GLOB_CHARS & set(text):
        files = sorted(p for p in glob.glob(text, recursive=True) if os.path.isfile(p))
        if files:
            root = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in files])
            return Corpus(root, tuple(os.path.abspath(p) for p in files), column=column)
    raise CtxlabError(f"no chat files found at {text}")


def load_source(source: Source) -> Iterator[LoadedConversation]:
    """The conversations of ``source``, in file order.

    Raises:
        ChatFormatError / OSError: the source cannot be read (the caller records an error row).
    """
    if source.payload is not None and source.payload.startswith(_BAD_ROW):
        raise CtxlabError(source.payload[len(_BAD_ROW) :].decode())
    name = source.label
    data = source.payload if source.payload is not None else Path(str(source.path)).read_bytes()
    listed = list_conversations(data, name=name)
    if len(listed) <= 1:
        conversation, title = listed[0] if listed else ("0", "")
        yield LoadedConversation(source.key, conversation, title, load_chat(data, name=name))
        return
    # A JSON document (a ChatGPT export, a ShareGPT list) is parsed once, not once per
    # conversation; JSONL does not parse as one document and goes to the loader as bytes.
    parsed: Any = data
    with contextlib.suppress(orjson.JSONDecodeError):
        parsed = orjson.loads(data)
    for conversation, title in listed:
        key = _sha(f"{source.key}\x00{conversation}".encode())
        messages = load_chat(parsed, conversation=conversation, name=name)
        yield LoadedConversation(key, conversation, title, messages)
