"""The format registry: every chat format, built-in or not, enters it the same way.

A format is one module of this package (or of a third party, through the ``ctxlab.formats``
entry-point group) that calls :func:`register` with a :class:`ChatFormat`: its name, a cheap
``sniff`` of a parsed JSON value and/or of a JSONL file's first line, a ``read`` and, for files
holding several conversations, ``conversations``. :func:`discover` imports them once; the
loader, :data:`~ctxlab.formats.FORMATS`, the CLI's ``--format`` and its help only read the
registry, so adding a format is one new module.

Auto-detection asks the sniffers in ``order`` (lower first); the first that says yes reads
the file. A shape ctxlab recognises but does not read (:mod:`ctxlab.formats._shapes`) is
refused by name before any sniffer is asked. When no format reads a file, :func:`unknown_shape`
names the keys found, the closest formats (by the keys each format is known by) and every
supported format.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ctxlab.formats._common import _at, _fail, _kind
from ctxlab.formats._shapes import recognise, refusal
from ctxlab.formats._values import LoadedChat

__all__ = [
    "ChatFormat",
    "Document",
    "ReadOptions",
    "discover",
    "discover_builtins",
    "format_names",
    "get_format",
    "register",
]

ENTRY_POINT_GROUP = "ctxlab.formats"
"""Third-party formats: an entry point in this group names a module that calls register()."""


@dataclasses.dataclass(frozen=True, slots=True)
class Document:
    """A source made ready for a format's ``read``.

    Exactly one of these holds the content: ``value`` (a parsed JSON document), ``lines`` (the
    non-blank lines of a JSONL file, ``(1-based line number, raw bytes)``; ``jsonl`` is True) or
    ``path`` of a folder or of an SQLite database, which the format reads from disk (``folder``
    is True; ``sniff_folder`` decides which format it is). ``trusted`` says ``value`` came from
    ctxlab's own parser (so its values are JSON by construction); ``path`` is the file read, when
    known;
    ``name`` is the name errors and warnings give it (the file name, an upload's name).
    """

    value: Any = None
    lines: tuple[tuple[int, bytes], ...] = ()
    jsonl: bool = False
    trusted: bool = True
    path: Path | None = None
    folder: bool = False
    name: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ReadOptions:
    """What the caller asked for: which conversation, and how to read plain JSONL."""

    conversation: int | str | None = None
    jsonl_mode: str = "auto"


@dataclasses.dataclass(frozen=True, slots=True)
class ChatFormat:
    """One chat format.

    Attributes:
        name: the kebab-case name ``load_chat(fmt=...)`` and ``--format`` take.
        title: one line saying what files these are, for help texts and the README.
        read: the reader; raises ChatFormatError (naming the place) and nothing else.
        sniff: whether a parsed JSON value is this format; looks at the top level only, never
            raises. None when the format is never a single JSON document.
        sniff_line: the same for the parsed first line of a JSONL file.
        sniff_folder: the same for a folder (or a database file, see :class:`Document`).
        conversations: ``[(id, title)]`` of a file holding several conversations; None when a
            file holds one (its title is then the start of the first user message).
        marks: keys this format is known by, to name the closest formats when none matches.
        jsonl: bytes read with this format given explicitly are JSONL.
        order: detection order (lower first); specific shapes before general ones.
        shown: position in :data:`~ctxlab.formats.FORMATS` and help texts (lower first).
    """

    name: str
    title: str
    read: Callable[[Document, ReadOptions], LoadedChat]
    sniff: Callable[[Any], bool] | None = None
    sniff_line: Callable[[Any], bool] | None = None
    sniff_folder: Callable[[Path], bool] | None = None
    conversations: Callable[[Document], list[tuple[str, str]]] | None = None
    marks: frozenset[str] = frozenset()
    jsonl: bool = False
    order: int = 100
    shown: int = 100


_REGISTRY: dict[str, ChatFormat] = {}
_BUILTINS_LOADED = False
_PLUGINS_LOADED = False
_LOCK = threading.RLock()


def register(fmt: ChatFormat) -> ChatFormat:
    """Add a format under its name; a name is taken once (re-registering the same is a no-op)."""
    existing = _REGISTRY.get(fmt.name)
    if existing is not None and existing.read is not fmt.read:
        raise ValueError(f"format name {fmt.name!r} is already taken")
    _REGISTRY[fmt.name] = fmt
    return fmt


def discover_builtins() -> None:
    """Import every format module of this package (once); cheap, done on import."""
    global _BUILTINS_LOADED
    with _LOCK:
        if _BUILTINS_LOADED:
            return
        import ctxlab.formats as package

        # A plain directory listing: pkgutil would import zipimport machinery at import time.
        names = sorted(
            entry.name.removesuffix(".py")
            for folder in package.__path__
            for entry in os.scandir(folder)
            if entry.name.endswith(".py") and not entry.name.startswith("_")
        )
        for name in names:
            importlib.import_module(f"{package.__name__}.{name}")
        _BUILTINS_LOADED = True


def discover() -> None:
    """The built-in formats, then the entry points' (once, on first use: scanning installed
    packages costs tens of milliseconds, which ``import ctxlab`` does not pay; and
    ``importlib.metadata`` is not even imported when no installed package's entry points name
    the group, see :func:`ctxlab._entry_points.may_declare`)."""
    global _PLUGINS_LOADED
    discover_builtins()
    with _LOCK:
        if _PLUGINS_LOADED:
            return
        _PLUGINS_LOADED = True
        from ctxlab._entry_points import may_declare

        if not may_declare(ENTRY_POINT_GROUP):
            return
        from importlib.metadata import entry_points

        for entry in entry_points(group=ENTRY_POINT_GROUP):
            entry.load()


def registered() -> list[ChatFormat]:
    """Every format, in detection order (then name)."""
    discover()
    return sorted(_REGISTRY.values(), key=lambda f: (f.order, f.name))


def format_names() -> tuple[str, ...]:
    """The names ``load_chat(fmt=...)`` accepts besides ``auto``, in the order shown to users."""
    return tuple(f.name for f in sorted(registered(), key=lambda f: (f.shown, f.name)))


def get_format(name: str) -> ChatFormat:
    """The format called ``name``, or a ChatFormatError listing the known ones."""
    discover()
    found = _REGISTRY.get(name)
    if found is None:
        _fail(None, f"unknown format {name!r}; expected auto or one of {', '.join(format_names())}")
    return found


def sniff_value(value: Any) -> ChatFormat | None:
    """The first format whose ``sniff`` accepts a parsed JSON value; None for a recognised
    shape no format reads (see :mod:`ctxlab.formats._shapes`), which the catch-all formats
    would otherwise take."""
    if recognise(value) is not None:
        return None
    for fmt in registered():
        if fmt.sniff is not None and fmt.sniff(value):
            return fmt
    return None


def sniff_line(first: Any) -> ChatFormat | None:
    """The first format whose ``sniff_line`` accepts a JSONL file's parsed first line (None for
    a recognised shape no format reads)."""
    if recognise(first, lines=True) is not None:
        return None
    for fmt in registered():
        if fmt.sniff_line is not None and fmt.sniff_line(first):
            return fmt
    return None


def sniff_folder(path: Path) -> ChatFormat | None:
    """The first format whose ``sniff_folder`` accepts a folder."""
    for fmt in registered():
        if fmt.sniff_folder is not None and fmt.sniff_folder(path):
            return fmt
    return None


def closest(keys: Sequence[str], *, lines: bool) -> list[str]:
    """Formats that share the most keys with ``keys`` (at most three, best first)."""
    found = set(keys)
    scored = []
    for fmt in registered():
        if (fmt.sniff_line is None) if lines else (fmt.sniff is None):
            continue
        shared = sorted(found & fmt.marks)
        if shared:
            scored.append((-len(shared), fmt.order, fmt.name, shared))
    scored.sort()
    return [f"{name} (shares {', '.join(shared)})" for _, _, name, shared in scored[:3]]


def unknown_shape(value: object, where: str, *, lines: bool = False) -> NoReturn:
    """Fail: no format recognises ``value`` (a parsed document, or a JSONL file's first line).

    A recognised shape (a stream-chunk array, another app's export, a config file) is named
    with what to load instead; otherwise the message names the keys found, the closest formats
    and every supported format.
    """
    known = recognise(value, lines=lines)
    if known is not None:
        shape, path = known
        _fail(_at(where, path.removeprefix("$")), refusal(shape))
    supported = ", ".join(f.name for f in registered() if (f.sniff_line if lines else f.sniff))
    what = "a JSONL line" if lines else "a chat"
    item = value[0] if isinstance(value, list) and value else value
    if isinstance(item, dict):
        keys = [str(k) for k in item]
        shown = ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "") if keys else "none"
        near = closest(keys, lines=lines)
        hint = f"closest: {'; '.join(near)}" if near else "no supported format uses these keys"
        inside = " (in the first item)" if item is not value else ""
        _fail(
            where,
            f"not {what} in any supported format; found keys{inside}: {shown}; {hint}. "
            f"Supported: {supported}",
        )
    _fail(
        where,
        f'expected a list of messages or an object with "messages", got {_kind(value)} '
        f"(supported: {supported})",
    )
