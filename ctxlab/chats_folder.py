"""The server's chats folder: large chats the app opens by name, never by a typed path.

A file ``NAME.json`` or ``NAME.jsonl`` directly inside the folder named by the environment
variable :data:`CHATS_DIR_ENV` (default: the ``sample_chats/`` folder of this checkout) opens
with ``?chat=NAME``, exactly like a sample. This is how a chat too large to upload comfortably
(the 100,000-message generated chat is about 100 MB) reaches the app.

Invariant: a name is a bare file stem. Names holding a path separator, ``..``, a leading dot or
a control character are refused before any file-system access, and a listed file is always a
regular file whose resolved path lies inside the folder (a symlink pointing elsewhere is not
listed), so nothing typed into the page can read outside the folder.

This module does no Streamlit and never parses a chat: listing reads directory entries only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ctxlab.errors import CtxlabError, UnknownNameError

__all__ = [
    "CHATS_DIR_ENV",
    "EXTENSIONS",
    "FolderChat",
    "chats_dir",
    "check_chat_name",
    "folder_chat",
    "list_folder_chats",
]

CHATS_DIR_ENV = "CTXLAB_CHATS_DIR"
"""Environment variable naming the server's chats folder."""

EXTENSIONS = (".json", ".jsonl")
"""File endings the folder is searched for, in this order of preference for one name."""


@dataclass(frozen=True, slots=True)
class FolderChat:
    """One chat file of the folder: its name (file stem), path and size in bytes."""

    name: str
    path: Path
    size: int

    @property
    def size_mb(self) -> float:
        return self.size / 1024 / 1024


def chats_dir() -> Path:
    """The folder named by ``CTXLAB_CHATS_DIR``, else the shipped ``sample_chats/`` (the
    repository's ``sample_chats/`` links to the same folder)."""
    override = os.environ.get(CHATS_DIR_ENV)
    if override:
        return Path(override)
    from ctxlab.samples import samples_dir

    return samples_dir()


def _demo_corpus() -> list[Path]:
    """The shipped fleet corpus's chats, searched after the default folder so that the Fleet
    page's links to its demo conversations open (not when ``CTXLAB_CHATS_DIR`` is set)."""
    if os.environ.get(CHATS_DIR_ENV):
        return []
    from ctxlab.samples import samples_dir

    return [samples_dir() / "fleet" / "chats"]


def check_chat_name(name: str) -> str:
    """``name`` when it is a bare file stem that may name a chat of the folder.

    >>> check_chat_name("large_agent_100k")
    'large_agent_100k'

    Raises:
        CtxlabError: the name is empty, too long, or holds a path separator, ``..``, a leading
            dot or a control character.
    """
    problem = None
    if not name or not name.strip():
        problem = "it is empty"
    elif len(name) > 200:
        problem = "it is longer than 200 characters"
    elif "/" in name or "\\" in name or os.sep in name or (os.altsep and os.altsep in name):
        problem = "it holds a path separator"
    elif ".." in name:
        problem = "it holds '..'"
    elif name.startswith("."):
        problem = "it starts with a dot"
    elif any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        problem = "it holds a control character"
    if problem is not None:
        raise CtxlabError(
            f"chat name {name[:80]!r} is refused ({problem}): a chat of the server's chats "
            f"folder is named by its file name without .json / .jsonl"
        )
    return name


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def _entry(path: Path, folder: Path) -> FolderChat | None:
    """The chat at ``path`` when it is a regular file inside ``folder``; None otherwise."""
    try:
        if not path.is_file() or not _inside(path, folder):
            return None
        return FolderChat(path.name.rsplit(".", 1)[0], path, path.stat().st_size)
    except OSError:
        return None


def list_folder_chats(folder: Path | None = None) -> list[FolderChat]:
    """Every ``*.json`` / ``*.jsonl`` file directly inside the folder, by name.

    A name found with both endings is listed once, with ``.json``. A missing folder lists
    nothing. Files whose stem is not a valid name (see :func:`check_chat_name`) are skipped.
    """
    folder = chats_dir() if folder is None else folder
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    found: dict[str, FolderChat] = {}
    for ext in EXTENSIONS:
        for path in entries:
            if not path.name.endswith(ext):
                continue
            stem = path.name[: -len(ext)]
            try:
                check_chat_name(stem)
            except CtxlabError:
                continue
            if stem in found:
                continue
            chat = _entry(path, folder)
            if chat is not None:
                found[stem] = chat
    return sorted(found.values(), key=lambda c: c.name)


def folder_chat(name: str, folder: Path | None = None) -> FolderChat:
    """The chat of the folder called ``name``.

    Raises:
        CtxlabError: ``name`` is not a valid chat name (see :func:`check_chat_name`).
        UnknownNameError: no ``name.json`` / ``name.jsonl`` is in the folder.
    """
    check_chat_name(name)
    folders = [folder] if folder is not None else [chats_dir(), *_demo_corpus()]
    for where in folders:
        for ext in EXTENSIONS:
            chat = _entry(where / f"{name}{ext}", where)
            if chat is not None:
                return chat
    raise UnknownNameError(
        f"no chat called {name!r} in the server's chats folder ({CHATS_DIR_ENV}): "
        f"expected {name}.json or {name}.jsonl there"
    )
