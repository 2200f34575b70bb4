"""An HTTP client for the ``openai`` client whose every connection obeys an address policy.

The check happens where the socket is opened: the host is resolved once, every address is
judged by :func:`ctxlab.hosting.addresses_for`, and the socket connects to a checked address
(TLS still verifies the certificate for the host name). A name that answers a public address
to an early check and a private one later (DNS rebinding) is refused at the connection
itself; a redirect is not followed; environment proxies are not used (a proxy would resolve the
name where it cannot be checked).

Built on the HTTP library the installed ``openai`` is built on (``httpx2`` / ``httpcore2``,
or ``httpx`` / ``httpcore`` for older releases); loaded only by
:mod:`ctxlab.summarizers.openai_compat`.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterable
from typing import Any

import openai

from ctxlab.errors import SummarizerError
from ctxlab.hosting import AddressPolicy, Resolver, addresses_for, system_resolver

__all__ = ["guarded_http_client", "refusal_in"]


def _libraries() -> tuple[Any, Any]:
    """The ``httpx``-like and ``httpcore``-like modules the installed ``openai`` uses."""
    client_base = openai.DefaultHttpxClient.__mro__[1]
    httpx_name = client_base.__module__.split(".", 1)[0]
    httpx_lib = importlib.import_module(httpx_name)
    return httpx_lib, importlib.import_module(httpx_name.replace("httpx", "httpcore", 1))


def guarded_http_client(
    policy: AddressPolicy, timeout: float, resolve: Resolver = system_resolver
) -> Any:
    """An ``openai.DefaultHttpxClient`` that connects only where ``policy`` allows."""
    httpx_lib, httpcore_lib = _libraries()

    class AddressRefused(httpcore_lib.ConnectError):  # type: ignore[misc,name-defined]
        """A connection the policy refuses; ``refusal`` is the sentence for the user."""

        def __init__(self, refusal: str) -> None:
            super().__init__(refusal)
            self.refusal = refusal

    class GuardedBackend(httpcore_lib.NetworkBackend):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self._inner = httpcore_lib.SyncBackend()

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> Any:
            try:
                checked = addresses_for(host, port, policy, resolve)
            except SummarizerError as exc:
                raise AddressRefused(str(exc)) from None
            failure: Exception | None = None
            for address in checked:
                try:
                    return self._inner.connect_tcp(
                        address, port, timeout, local_address, socket_options
                    )
                except (httpcore_lib.ConnectError, httpcore_lib.ConnectTimeout) as exc:
                    failure = exc
            assert failure is not None  # addresses_for returns at least one address
            raise failure

        def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
            raise AddressRefused("Unix sockets are not called")

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    transport = httpx_lib.HTTPTransport(trust_env=False)
    # HTTPTransport takes no network backend of its own: give its pool the guarded one.
    transport._pool._network_backend = GuardedBackend()
    return _ClosingClient(
        transport=transport, trust_env=False, follow_redirects=False, timeout=timeout
    )


class _ClosingClient(openai.DefaultHttpxClient):
    """Closes its connections when dropped, as the ``openai`` client's own default does."""

    def __del__(self) -> None:
        if not self.is_closed:
            # At interpreter shutdown there may be nothing left to close cleanly.
            with contextlib.suppress(Exception):
                self.close()


def refusal_in(exc: BaseException) -> str | None:
    """The policy's refusal behind a connection error raised by :func:`guarded_http_client`'s
    client (the ``openai`` and HTTP layers wrap it), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        refusal = getattr(current, "refusal", None)
        if isinstance(refusal, str):
            return refusal
        current = current.__cause__ or current.__context__
    return None
