"""Whether any installed package can declare entry points of a group, without importlib.metadata.

``importlib.metadata.entry_points()`` costs a command that starts and exits about 30 ms here:
importing ``importlib.metadata`` (email, zipfile, csv, ...) and reading every installed
distribution's metadata. Most groups ctxlab asks about (``ctxlab.formats``) are declared by no
installed package at all. :func:`may_declare` answers "could one be?" with a directory listing per
``sys.path`` entry and a substring test on each ``entry_points.txt``; only a yes pays for
``importlib.metadata``.

Invariant: :func:`may_declare` returns False only when ``importlib.metadata.entry_points(group=g)``
would return nothing. It looks where ``importlib.metadata``'s path finder looks (the
``*.dist-info`` and ``*.egg-info`` folders of each ``sys.path`` directory; ``entry_points.txt``
names a group as ``[group]`` on a line of its own, so a file without the group's name declares
none) and says yes to anything it does not read the same way: a ``sys.path`` entry that is a file
(a zip) or an ``.egg``, an entry that is not a string, or another finder on ``sys.meta_path`` that
can list distributions.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder

__all__ = ["may_declare"]

_METADATA_SUFFIXES = (".dist-info", ".egg-info")


def may_declare(group: str) -> bool:
    """Whether an installed distribution might declare entry points in ``group`` (see the
    module's invariant: False is certain, True means "ask importlib.metadata")."""
    for finder in sys.meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            return True  # distributions we cannot see by listing folders
    needle = group.encode()
    for entry in sys.path:
        if not isinstance(entry, str):
            return True
        if entry.lower().endswith(".egg") or os.path.isfile(entry):
            return True  # an egg or a zip: importlib.metadata reads inside it
        try:
            children = os.scandir(entry or ".")
        except OSError:
            continue  # not a folder (e.g. a path hook's marker): importlib.metadata finds none
        try:
            with children:
                if any(_declares(child, needle) for child in children):
                    return True
        except OSError:
            return True  # a listing that failed half-way: let importlib.metadata look
    return False


def _declares(child: os.DirEntry[str], needle: bytes) -> bool:
    """Whether ``child`` is package metadata whose ``entry_points.txt`` mentions ``needle``."""
    if not child.name.lower().endswith(_METADATA_SUFFIXES):
        return False
    try:
        with open(os.path.join(child.path, "entry_points.txt"), "rb") as handle:
            return needle in handle.read()
    except OSError:
        return False  # no entry points (or an .egg-info file, which holds none)
