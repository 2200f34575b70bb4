"""HTTP for summarizer calls: one deadline per call and a cap on the bytes of its answer.

httpx's timeouts bound each socket operation, not a call: a server that sends a byte every few
tenths of a second keeps a call alive for as long as it likes, and nothing bounds how much it
sends. Here a call opens a :class:`CallState` (its deadline and byte budget) for the current
thread; the network backend under the HTTP client clamps every connect, read and write to the
time the call has left and counts every byte received, failing the operation as soon as either
runs out. The caller then tells the two apart with :attr:`CallState.expired` and
:attr:`CallState.over_size`.

Only :mod:`ctxlab.summarizers.openai_compat` and :mod:`ctxlab.provider_count` (when it sends a
count) import this module (``httpx2`` and ``httpcore2`` come with the ``openai`` client).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

__all__ = ["CallBounds", "CallState", "bounded_transport", "format_size"]


@dataclass
class CallState:
    """The deadline (``time.monotonic()`` seconds) and byte budget of one call in progress."""

    deadline: float
    max_bytes: int
    received: int = 0
    over_size: bool = False

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def add(self, n: int) -> None:
        """Count ``n`` bytes received; over the budget, mark it and fail the read."""
        self.received += n
        if self.received > self.max_bytes:
            self.over_size = True
            raise httpcore2.ReadError(f"the answer is over {format_size(self.max_bytes)}")


class CallBounds:
    """The call in progress on each thread (a client is shared between threads)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def call(self, seconds: float, max_bytes: int) -> Iterator[CallState]:
        """Bound everything this thread sends and receives until the block ends."""
        state = CallState(time.monotonic() + seconds, max_bytes)
        previous = getattr(self._local, "state", None)
        self._local.state = state
        try:
            yield state
        finally:
            self._local.state = previous

    def current(self) -> CallState | None:
        state: CallState | None = getattr(self._local, "state", None)
        return state

    def clamp(self, timeout: float | None, expired: type[Exception]) -> float | None:
        """``timeout`` shortened to the time the call has left; ``expired`` when none is."""
        state = self.current()
        if state is None:
            return timeout
        remaining = state.remaining()
        if remaining <= 0:
            raise expired("the call's deadline has passed")
        return remaining if timeout is None else min(timeout, remaining)

    def count(self, n: int) -> None:
        state = self.current()
        if state is not None:
            state.add(n)


class _BoundedStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream, bounds: CallBounds) -> None:
        self._inner = inner
        self._bounds = bounds

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self._inner.read(max_bytes, self._bounds.clamp(timeout, httpcore2.ReadTimeout))
        self._bounds.count(len(data))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._bounds.clamp(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        clamped = self._bounds.clamp(timeout, httpcore2.ConnectTimeout)
        return _BoundedStream(
            self._inner.start_tls(ssl_context, server_hostname, clamped), self._bounds
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore2.NetworkBackend):
    def __init__(self, bounds: CallBounds) -> None:
        self._inner = httpcore2.SyncBackend()
        self._bounds = bounds

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        clamped = self._bounds.clamp(timeout, httpcore2.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, clamped, local_address, socket_options)
        return _BoundedStream(stream, self._bounds)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        clamped = self._bounds.clamp(timeout, httpcore2.ConnectTimeout)
        stream = self._inner.connect_unix_socket(path, clamped, socket_options)
        return _BoundedStream(stream, self._bounds)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _BoundedTransport(httpx2.HTTPTransport):
    """httpx's own transport over a connection pool whose sockets obey :class:`CallBounds`."""

    def __init__(self, bounds: CallBounds) -> None:
        super().__init__()
        # The pool httpx builds for a direct connection, with the bounded backend under it.
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(),
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=_BoundedBackend(bounds),
        )


def bounded_transport(bounds: CallBounds) -> httpx2.BaseTransport:
    """A transport whose every socket operation is bounded by the thread's current call."""
    return _BoundedTransport(bounds)


def format_size(n: int) -> str:
    """``1 MB``, ``64 KB``, ``900 bytes`` (decimal units, as a user reads them)."""
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"
