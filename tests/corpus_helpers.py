"""Per-source functions for fault tests of ctxlab.corpus (importable by pool worker processes).

Each wraps the real :func:`ctxlab.corpus.work.evaluate_source`. Pool workers are forked from a
forkserver started once per test session, so they do not see environment variables set later:
the pool helpers decide from the source's file name, the in-process one from the environment.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from ctxlab.corpus.work import SourceOutcome, Task, evaluate_source

STOP_AFTER = "CTXLAB_TEST_STOP_AFTER"  # "N:how": after N sources, raise KeyboardInterrupt / kill


def kill_once_per_source(task: Task) -> SourceOutcome:
    """SIGKILL this worker the first time it gets a file named ``kill_once*``.

    The first visit leaves ``<file>.killed`` beside it, which the test checks.
    """
    path = Path(str(task.source.path))
    marker = path.with_name(path.name + ".killed")
    if path.name.startswith("kill_once") and not marker.exists():
        marker.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return evaluate_source(task)


def kill_always(task: Task) -> SourceOutcome:
    """SIGKILL this worker every time it gets a file named ``kill_always*``."""
    if Path(str(task.source.path)).name.startswith("kill_always"):
        os.kill(os.getpid(), signal.SIGKILL)
    return evaluate_source(task)


_seen = 0


def stop_after(task: Task) -> SourceOutcome:
    """After ``N`` sources, interrupt (``N:interrupt``) or SIGKILL this process (``N:kill``)."""
    global _seen
    limit, _, how = os.environ[STOP_AFTER].partition(":")
    if _seen >= int(limit):
        if how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise KeyboardInterrupt
    _seen += 1
    return evaluate_source(task)


def buggy(task: Task) -> SourceOutcome:
    """Raise an unexpected exception (a bug) on ``hostile_content.json``."""
    if task.source.label == "hostile_content.json":
        raise ZeroDivisionError("a bug in the per-source function")
    return evaluate_source(task)


def slow(task: Task) -> SourceOutcome:
    """Evaluate, then leave ``<file>.done`` beside the file and wait a little (Ctrl-C tests)."""
    import time

    outcome = evaluate_source(task)
    path = Path(str(task.source.path))
    path.with_name(path.name + ".done").write_text("x")
    time.sleep(0.3)
    return outcome
