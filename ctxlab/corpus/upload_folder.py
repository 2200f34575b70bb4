"""A private temporary folder for one upload, removed with the object that owns it.

An :class:`UploadFolder` is created with :func:`tempfile.mkdtemp` (mode 0700, a random name, so
no other user of the machine can read it or guess it) under a name that carries this process's
id: ``ctxlab-upload-<pid>-<random>``. It is removed

* when the object is garbage-collected (the Fleet page keeps it in the viewer's session state,
  so it goes when Streamlit discards the session, or when the viewer evaluates another zip);
* when the interpreter exits normally (``weakref.finalize`` runs its callbacks at exit);
* after a crash or a ``kill -9``, by :func:`sweep_stale`, which the next server calls once at
  start-up: it removes the upload folders of processes that no longer run (and, should a
  process id have been reused, any older than ``max_age`` seconds: a day by default).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import time
import weakref
from pathlib import Path

__all__ = ["PREFIX", "UploadFolder", "sweep_stale"]

PREFIX = "ctxlab-upload-"


class UploadFolder:
    """A fresh private folder; ``path`` exists until this object is collected or :meth:`remove`."""

    def __init__(self, parent: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent))
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.path), True)

    def remove(self) -> None:
        """Delete the folder now (idempotent)."""
        self._finalizer()

    @property
    def removed(self) -> bool:
        return not self._finalizer.alive


def _owner_pid(name: str) -> int | None:
    pid, _, _ = name[len(PREFIX) :].partition("-")
    return int(pid) if pid.isdigit() else None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def sweep_stale(
    max_age: float = 86_400.0, parent: str | os.PathLike[str] | None = None
) -> list[Path]:
    """Remove upload folders left by dead processes, or older than ``max_age`` seconds.

    Only folders of this user, named :data:`PREFIX`..., and real directories (not symlinks) are
    touched; this process's own live folders are kept unless older than ``max_age``.

    Returns:
        The folders removed.
    """
    root = Path(parent if parent is not None else tempfile.gettempdir())
    removed = []
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if not entry.name.startswith(PREFIX):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            pid = _owner_pid(entry.name)
            dead = pid is None or (pid != os.getpid() and not _running(pid))
            if dead or now - info.st_mtime > max_age:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
    return removed
