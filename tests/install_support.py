"""Installation-test helpers: free ports, plain HTTP, a server that is always stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_get(url: str, timeout: float = 30.0) -> tuple[int, str]:
    """Status and body of a GET (error statuses returned, not raised)."""
    try:
        with _NO_PROXY.open(url, timeout=timeout) as reply:
            return int(reply.status), reply.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read().decode("utf-8", "replace")


@contextlib.contextmanager
def serving(
    command: Sequence[str],
    *,
    cwd: Path,
    port: int,
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
) -> Iterator[str]:
    """Run ``command`` in its own process group until ``/_stcore/health`` answers ``ok``.

    Yields the base URL; on exit the whole process group is stopped (TERM, then KILL).
    Fails with the log's tail when the server dies or never becomes healthy.
    """
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited ({proc.returncode}):\n{_tail(log)}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no health after {timeout:g} s:\n{_tail(log)}")
            with contextlib.suppress(OSError):
                if http_get(f"{base}/_stcore/health", timeout=2) == (200, "ok"):
                    break
            time.sleep(0.5)
        yield base
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)


def _tail(log: Path, lines: int = 40) -> str:
    text = log.read_text(encoding="utf-8", errors="replace")
    return "\n".join(line for line in text.splitlines() if "is ignored" not in line)[-4000:]
