"""What ``ctxlab show`` printed for a chat file, kept so that showing it again parses nothing.

Parsing the 100k-message chat (96 MB) costs about half a second before a single count is read,
so a second ``ctxlab show`` of an unchanged file prints what the first printed, from the
persistent count store of the counter's tokenizer (:mod:`ctxlab.count_store`, the same file, the
same bound and least-recently-used order, verified on read the same way).

The entry's key is a BLAKE2b digest of everything the output depends on: the file's content
(:func:`file_digest`), the command's options (model, format, conversation, JSONL mode), the
tokenizer's namespace, the code that printed it (:func:`code_identity`: the size and
modification time of every module of the package, so an edited or upgraded ctxlab never prints
a stale table) and the ``CTXLAB_*`` environment. Nothing else is read: a chat folder, a sample
name, ``--provider-count`` (which asks a server), a counter without a namespace (estimates,
other tokenizer families), and any show while an installed package may declare chat-format
plug-ins (whose code the key does not cover) are never cached.

The file's content digest costs about a tenth of a second for 96 MB, so it is itself kept under
the file's identity as the system reports it (:func:`_stat_identity`: path, device, inode,
size, modification and status-change times, as git's index does): any write changes the
status-change time, which no program can set. An identity is recorded only once the file has
not changed for :data:`SETTLED_S` seconds, so that a write within the clock's resolution of the
recording cannot go unnoticed (git's "racy" case); until then the file is hashed each time.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ctxlab.count_store import CountStore, store_for

__all__ = ["SETTLED_S", "ShowEntry", "code_identity", "file_digest", "show_entry"]

SETTLED_S = 2.0
"""Seconds a file must have been left unchanged before its identity stands for its digest."""

_DIGEST_BYTES = 16
_CHUNK = 1 << 20


def _stat_identity(path: Path, stat: os.stat_result) -> bytes:
    fields = (
        str(path.resolve()),
        stat.st_dev,
        stat.st_ino,
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ctime_ns,
    )
    digest = hashlib.blake2b(repr(fields).encode(), digest_size=_DIGEST_BYTES, person=b"stat")
    return b"stat:" + digest.digest()


def _hash_file(path: Path) -> bytes:
    digest = hashlib.blake2b(digest_size=_DIGEST_BYTES, person=b"ctxlab-file")
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.digest()


def file_digest(path: Path, store: CountStore | None) -> bytes:
    """A 128-bit BLAKE2b digest of the file's bytes, read from ``store`` when the file's
    identity was recorded there (see the module docstring).

    Raises:
        OSError: the file cannot be read.
    """
    stat = path.stat()
    identity = _stat_identity(path, stat)
    if store is not None:
        known = store.get_blob(identity)
        if known is not None and len(known) == _DIGEST_BYTES:
            return known
    digest = _hash_file(path)
    if store is not None and time.time() - stat.st_ctime >= SETTLED_S:
        after = path.stat()
        if _stat_identity(path, after) == identity:  # unchanged while it was read
            store.put_blob(identity, digest)
    return digest


def code_identity() -> bytes:
    """A digest of the size and modification time of each of ctxlab's modules and data files
    (the model catalog, which a user may edit; about a millisecond): what printed an entry must
    be what would print it now."""
    import ctxlab

    package = Path(ctxlab.__file__).parent
    stamps: list[tuple[str, int, int]] = []
    for folder, subfolders, files in os.walk(package):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".toml")):
                stat = os.stat(os.path.join(folder, name))
                stamps.append((os.path.join(folder, name), stat.st_size, stat.st_mtime_ns))
    # Not ``ctxlab.__version__``: it reads the installed metadata (importlib.metadata, ~30 ms);
    # an upgrade rewrites the modules, which the stamps see.
    fields = (sys.version_info[:2], stamps)
    return hashlib.blake2b(repr(fields).encode(), digest_size=_DIGEST_BYTES).digest()


def _format_plugins_may_exist() -> bool:
    """Whether an installed package may add chat formats (entry points): their code is not in
    :func:`code_identity`, so nothing is cached while one might be there."""
    from ctxlab._entry_points import may_declare
    from ctxlab.formats._registry import ENTRY_POINT_GROUP

    return may_declare(ENTRY_POINT_GROUP)


@dataclass(frozen=True)
class ShowEntry:
    """Where a ``ctxlab show`` output is kept, and what was kept (None: nothing yet)."""

    store: CountStore
    key: bytes
    text: str | None

    def save(self, text: str) -> None:
        self.store.put_blob(self.key, text.encode("utf-8", "surrogatepass"))


def show_entry(
    chat: str, options: tuple[str, ...], namespace: str | None, *, provider_count: bool
) -> ShowEntry | None:
    """The entry of ``ctxlab show CHAT`` with ``options`` (None: not cached, see the module
    docstring, or the store is off)."""
    if provider_count or namespace is None or _format_plugins_may_exist():
        return None
    path = Path(chat)
    if not path.is_file():
        return None
    store = store_for(namespace)
    if store is None:
        return None
    try:
        content = file_digest(path, store)
    except OSError:
        return None
    environment = sorted(
        (k, v)
        for k, v in os.environ.items()
        if k.startswith("CTXLAB_") and k not in {"CTXLAB_CACHE_DIR", "CTXLAB_COUNT_STORE_MB"}
    )
    fields = (content.hex(), options, namespace, code_identity().hex(), environment)
    digest = hashlib.blake2b(repr(fields).encode(), digest_size=_DIGEST_BYTES, person=b"show")
    key = b"show:" + digest.digest()
    found = store.get_blob(key)
    text = None
    if found is not None:
        try:
            text = found.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            text = None
    return ShowEntry(store, key, text)
