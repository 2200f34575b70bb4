"""Connections of the summarizer's HTTP client that obey an address policy.

The check happens where the socket is opened: the host is resolved once, every address is
judged by :func:`ctxlab.hosting.addresses_for`, and the socket connects to a checked address
(TLS still verifies the certificate for the host name). A name that answers a public address
to an early check and a private one later (DNS rebinding) is refused at the connection itself.
The client using it follows no redirect and no environment proxy (a proxy would resolve the
name where it cannot be checked): see ``OpenAISummarizer._http_client``.

Only :mod:`ctxlab.summarizers.openai_compat` imports this module (``httpx2`` and ``httpcore2``
come with the ``openai`` client).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2

from ctxlab.errors import SummarizerError
from ctxlab.hosting import AddressPolicy, Resolver, addresses_for, system_resolver

__all__ = ["AddressRefused", "GuardedBackend", "guard", "refusal_in"]


class AddressRefused(httpcore2.ConnectError):
    """A connection the policy refuses; ``refusal`` is the sentence for the user."""

    def __init__(self, refusal: str) -> None:
        super().__init__(refusal)
        self.refusal = refusal


class GuardedBackend(httpcore2.NetworkBackend):
    """Opens TCP connections only to addresses ``policy`` allows, pinned to the checked ones."""

    def __init__(
        self,
        policy: AddressPolicy,
        inner: httpcore2.NetworkBackend | None = None,
        resolve: Resolver = system_resolver,
    ) -> None:
        self._policy = policy
        self._inner = inner if inner is not None else httpcore2.SyncBackend()
        self._resolve = resolve

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        try:
            checked = addresses_for(host, port, self._policy, self._resolve)
        except SummarizerError as exc:
            raise AddressRefused(str(exc)) from None
        failure: Exception | None = None
        for address in checked:
            try:
                return self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # addresses_for returns at least one address
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        raise AddressRefused("Unix sockets are not called")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def guard(
    transport: httpx2.BaseTransport, policy: AddressPolicy, resolve: Resolver = system_resolver
) -> None:
    """Put :class:`GuardedBackend` under ``transport``'s sockets (below any backend that
    already wraps them, such as the call-bounding one, so both apply)."""
    direct: Any = transport  # an httpx2.HTTPTransport (or a subclass): its connection pool
    pool: Any = direct._pool
    outer: Any = pool._network_backend
    if hasattr(outer, "_inner"):  # a wrapping backend (bounded_http): guard what it wraps
        outer._inner = GuardedBackend(policy, outer._inner, resolve)
    else:
        pool._network_backend = GuardedBackend(policy, outer, resolve)


def refusal_in(exc: BaseException) -> str | None:
    """The policy's refusal behind a connection error (the ``openai`` and HTTP layers wrap
    :class:`AddressRefused`), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        refusal = getattr(current, "refusal", None)
        if isinstance(refusal, str):
            return refusal
        current = current.__cause__ or current.__context__
    return None
