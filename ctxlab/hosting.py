"""The hosting model: what a visitor of a shared playground may make the server do.

A playground served to a team holds things that are the operator's, not the visitors': the
operator's API key, the server's network position (it can reach internal addresses a visitor
cannot) and its files. This module states the rules as pure functions over
:class:`HostingSettings`, read from the environment and ``.streamlit/secrets.toml``:

- **The server's key goes only to the endpoints the operator listed**
  (``CTXLAB_KEY_ENDPOINTS``; by default the official OpenAI API). A visitor who types another
  base URL must bring their own key for it (:func:`choose_key`).
- **Private, loopback, link-local, multicast, reserved and unspecified addresses are never
  called** unless the operator allows them (``CTXLAB_ALLOW_PRIVATE_ENDPOINTS=1``); only
  ``http`` and ``https`` are called at all (:func:`check_address`, :func:`addresses_for`). The
  summarizer checks every address where it connects and connects to the address it checked,
  so a name that resolves elsewhere the second time (DNS rebinding) gains nothing.
- **Files are read only from the configured folders** (``CTXLAB_CHATS_DIR``,
  ``CTXLAB_RESULTS_DIR``, ``CTXLAB_SAMPLES_DIR``) and only by name; pasted text is only text.

The **hosted** profile applies these rules; it is the default whenever the server holds a key.
``CTXLAB_PROFILE=local`` opts out (one person running the app for themselves: their key may go
to any endpoint they type, private addresses such as a local Ollama are allowed, and replies of
failing endpoints are quoted in errors). ``CTXLAB_PROFILE=hosted`` applies the rules to a server
without a key too.

Invariant: a base URL is compared and called in one normal form (:func:`parse_base_url`): lower
case scheme and host, IDNA (UTS 46) host, canonical IP spelling, explicit port, a path of plain
segments without a trailing slash; user names, passwords, queries, fragments, backslashes,
control characters and dot segments are refused. The URL the client is given is the normal form
itself, so what was checked is what is called.

No Streamlit, no network client: ``socket`` resolves names, injected by tests.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from ctxlab.errors import SummarizerError

__all__ = [
    "ALLOW_PRIVATE_ENV",
    "DEFAULT_KEY_MODELS",
    "KEY_ENDPOINTS_ENV",
    "KEY_MODELS_ENV",
    "OFFICIAL_ENDPOINT",
    "PROFILES",
    "PROFILE_ENV",
    "SETTING_NAMES",
    "AddressPolicy",
    "Endpoint",
    "HostingSettings",
    "KeyChoice",
    "Resolver",
    "address_policy",
    "addresses_for",
    "check_address",
    "choose_key",
    "literal_address_refusal",
    "parse_base_url",
    "read_settings",
    "refusal_of_address",
    "system_resolver",
]

PROFILE_ENV = "CTXLAB_PROFILE"
"""``hosted`` or ``local``; unset: hosted when the server holds a key, else local."""
KEY_ENDPOINTS_ENV = "CTXLAB_KEY_ENDPOINTS"
"""Comma-separated base URLs the server's key may be sent to (default: the official API)."""
ALLOW_PRIVATE_ENV = "CTXLAB_ALLOW_PRIVATE_ENDPOINTS"
"""``1`` lets the hosted profile call private, loopback and link-local addresses."""
KEY_MODELS_ENV = "CTXLAB_KEY_MODELS"
"""Comma-separated models the server's key may be used with (``*``: any model)."""
DEFAULT_KEY_MODELS = ("gpt-4o-mini", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-5-mini", "gpt-5-nano")
"""The small models a summary costs cents with: a visitor cannot run the operator's bill up with
the most expensive model unless the operator lists it."""
PROFILES = ("hosted", "local")
OFFICIAL_ENDPOINT = "https://api.openai.com/v1"
SETTING_NAMES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    PROFILE_ENV,
    KEY_ENDPOINTS_ENV,
    ALLOW_PRIVATE_ENV,
    KEY_MODELS_ENV,
    "CTXLAB_CHATS_DIR",
    "CTXLAB_RESULTS_DIR",
    "CTXLAB_SAMPLES_DIR",
)
"""Every setting read, from ``.streamlit/secrets.toml`` (root level) first, then the environment."""

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")
_MAX_URL = 2048
_PATH_SEGMENT = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@-]+")
_HOST = re.compile(r"[a-z0-9._-]+")
_DEFAULT_PORTS = {"http": 80, "https": 443}

Resolver = Callable[[str, int], Sequence[str]]
"""``(host, port) -> IP addresses``; :func:`system_resolver` asks the operating system."""


# -- base URLs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A base URL in normal form (see the module invariant); equal endpoints are the same API."""

    scheme: str
    host: str
    port: int
    path: str

    @property
    def url(self) -> str:
        """The normal form, as given to the client (the port only when not the default)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if _DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path}"

    @property
    def origin(self) -> str:
        """``host`` or ``host:port`` (no default port), for messages."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if _DEFAULT_PORTS[self.scheme] == self.port else f"{host}:{self.port}"

    @property
    def where(self) -> str:
        """``host[:port]/path``: the endpoint as a visitor reads it."""
        return self.origin + self.path


def parse_base_url(text: str) -> Endpoint:
    """``text`` as an :class:`Endpoint`, or a refusal saying what is wrong with it.

    >>> parse_base_url("HTTPS://API.OpenAI.com:443/v1/").url
    'https://api.openai.com/v1'
    >>> parse_base_url("http://0x7f.1:8000/v1").url
    'http://127.0.0.1:8000/v1'

    Raises:
        SummarizerError: not an http(s) URL, or it holds a user name or password, a query, a
            fragment, a backslash, a control character, a dot segment or an invalid host.
    """
    raw = text.strip()
    shown = raw[:80]
    if not raw:
        raise SummarizerError("the base URL is empty")
    if len(raw) > _MAX_URL:
        raise SummarizerError(f"the base URL is longer than {_MAX_URL} characters")

    def refuse(why: str) -> SummarizerError:
        return SummarizerError(f"base URL {shown!r} is refused: {why}")

    if any(ord(ch) < 33 or ord(ch) == 127 for ch in raw):
        raise refuse("it holds a space or a control character")
    if "\\" in raw:
        raise refuse("it holds a backslash")
    try:
        parts = urlsplit(raw)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            raise refuse("only http:// and https:// endpoints are called")
        if "@" in parts.netloc:
            raise refuse("a base URL may not hold a user name or password")
        if "?" in raw or "#" in raw:
            raise refuse("a base URL may not hold a query (?) or a fragment (#)")
        port = parts.port
        host = parts.hostname or ""
    except ValueError:
        raise refuse("it is not a valid URL (check the host and the port)") from None
    if port == 0:
        raise refuse("port 0 cannot be called")
    return Endpoint(
        scheme,
        _normal_host(host, refuse),
        port or _DEFAULT_PORTS[scheme],
        _normal_path(parts.path, refuse),
    )


def _normal_host(host: str, refuse: Callable[[str], SummarizerError]) -> str:
    if not host:
        raise refuse("it names no host")
    if "%" in host:
        raise refuse("the host holds a '%' (an escaped name or an IPv6 zone)")
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host).compressed
        except ValueError:
            raise refuse("the host is not a valid IPv6 address") from None
    host = host[:-1] if host.endswith(".") else host
    numeric = _numeric_ipv4(host)
    if numeric is not None:
        return numeric
    try:
        import idna

        ascii_host = idna.encode(host, uts46=True).decode("ascii")
    except (UnicodeError, ValueError):  # idna.IDNAError is a UnicodeError
        raise refuse("the host is not a valid internet name") from None
    if not _HOST.fullmatch(ascii_host):
        raise refuse("the host is not a valid internet name")
    return ascii_host


def _numeric_ipv4(host: str) -> str | None:
    """The dotted-quad form of a host the C library reads as an IPv4 address (``127.1``,
    ``2130706433``, ``0x7f.0.0.1``, ``0177.0.0.1``), else None."""
    labels = host.split(".")
    if not all(re.fullmatch(r"0[xX][0-9a-fA-F]*|[0-9]+", label) for label in labels):
        return None
    try:
        return socket.inet_ntoa(socket.inet_aton(host))
    except OSError:
        return None


def _normal_path(path: str, refuse: Callable[[str], SummarizerError]) -> str:
    decoded = unquote(path, errors="strict") if "%" in path else path
    segments = decoded.split("/")
    if segments and segments[0] == "":
        segments = segments[1:]
    while segments and segments[-1] == "":
        segments.pop()
    for segment in segments:
        if segment in ("", ".", ".."):
            raise refuse("its path holds an empty, '.' or '..' segment")
        if not _PATH_SEGMENT.fullmatch(segment):
            raise refuse("its path may hold only letters, digits and -._~!$&'()*+,;=:@")
    return "".join(f"/{s}" for s in segments)


# -- settings --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostingSettings:
    """What the operator configured. ``server_key`` is never shown (not in ``repr``)."""

    profile: Literal["hosted", "local"]
    key_endpoints: tuple[Endpoint, ...]
    allow_private: bool
    chats_dir: Path
    results_dir: Path
    samples_dir: Path
    server_key: str = field(default="", repr=False, compare=False)
    key_models: tuple[str, ...] | None = DEFAULT_KEY_MODELS
    """The models the server's key may be used with in the hosted profile (None: any)."""
    default_endpoint: Endpoint = field(default_factory=lambda: parse_base_url(OFFICIAL_ENDPOINT))
    problems: tuple[str, ...] = ()
    """Settings that could not be read; each was replaced by its safe default."""

    @property
    def hosted(self) -> bool:
        return self.profile == "hosted"

    @property
    def has_server_key(self) -> bool:
        return bool(self.server_key)

    def key_may_go_to(self, endpoint: Endpoint) -> bool:
        """Whether the server's key may be sent to ``endpoint`` (any, in the local profile)."""
        return not self.hosted or endpoint in self.key_endpoints

    def key_may_pay_for(self, model: str) -> bool:
        """Whether the server's key may be used with ``model`` (any, in the local profile)."""
        return not self.hosted or self.key_models is None or model.strip() in self.key_models


def read_settings(
    env: Mapping[str, str], secrets: Mapping[str, object] | None = None
) -> HostingSettings:
    """The hosting settings from ``secrets`` (``.streamlit/secrets.toml``, root level), then
    ``env``. A value that cannot be read becomes its safe default and a line in ``problems``:
    an unknown profile is ``hosted``, an unreadable endpoint is left out, an unreadable
    ``CTXLAB_ALLOW_PRIVATE_ENDPOINTS`` is off.
    """
    secrets = secrets or {}

    def get(name: str) -> str:
        value = secrets.get(name)
        if value is None or str(value).strip() == "":
            value = env.get(name, "")
        return str(value).strip()

    problems: list[str] = []
    key = get("OPENAI_API_KEY")
    profile_text = get(PROFILE_ENV).lower()
    profile: Literal["hosted", "local"]
    if profile_text == "local":
        profile = "local"
    elif profile_text in ("hosted", ""):
        profile = "hosted" if (profile_text == "hosted" or key) else "local"
    else:
        profile = "hosted"
        problems.append(
            f"{PROFILE_ENV}={profile_text[:40]!r} is not one of {', '.join(PROFILES)}: "
            "the hosted profile applies"
        )
    default = parse_base_url(OFFICIAL_ENDPOINT)
    if base := get("OPENAI_BASE_URL"):
        try:
            default = parse_base_url(base)
        except SummarizerError as exc:
            problems.append(f"OPENAI_BASE_URL: {exc}")
    endpoints: list[Endpoint] = []
    listed = get(KEY_ENDPOINTS_ENV)
    for item in listed.split(",") if listed else [OFFICIAL_ENDPOINT, default.url]:
        if not item.strip():
            continue
        try:
            endpoint = parse_base_url(item)
        except SummarizerError as exc:
            problems.append(f"{KEY_ENDPOINTS_ENV}: {exc}; left out")
            continue
        if endpoint not in endpoints:
            endpoints.append(endpoint)
    models_text = get(KEY_MODELS_ENV)
    key_models: tuple[str, ...] | None = DEFAULT_KEY_MODELS
    if models_text == "*":
        key_models = None
    elif models_text:
        key_models = tuple(dict.fromkeys(m.strip() for m in models_text.split(",") if m.strip()))
    allow_text = get(ALLOW_PRIVATE_ENV).lower()
    if allow_text in _TRUE:
        allow_private = True
    elif allow_text in _FALSE:
        allow_private = not allow_text and profile == "local"
    else:
        allow_private = False
        problems.append(f"{ALLOW_PRIVATE_ENV}={allow_text[:20]!r} is not 1 or 0: treated as 0")
    samples = _samples_dir(get("CTXLAB_SAMPLES_DIR"))
    chats = Path(get("CTXLAB_CHATS_DIR")) if get("CTXLAB_CHATS_DIR") else samples
    results = (
        Path(get("CTXLAB_RESULTS_DIR"))
        if get("CTXLAB_RESULTS_DIR")
        else samples / "fleet" / "results"
    )
    return HostingSettings(
        profile=profile,
        key_endpoints=tuple(endpoints),
        allow_private=allow_private,
        chats_dir=chats,
        results_dir=results,
        samples_dir=samples,
        server_key=key,
        key_models=key_models,
        default_endpoint=default,
        problems=tuple(problems),
    )


def _samples_dir(configured: str) -> Path:
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent / "sample_chats"


# -- which key -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeyChoice:
    """The key a summarizer call to ``endpoint`` may use, and what the visitor is told.

    ``source`` is ``server`` (the operator's key), ``visitor`` (a key typed in this session),
    ``none`` (no key: nothing to protect, e.g. a local server) or ``refused`` (the server
    holds a key this endpoint may not have, and the visitor typed none).
    """

    endpoint: Endpoint
    source: Literal["server", "visitor", "none", "refused"]
    key: str = field(default="", repr=False, compare=False)
    model: str = ""
    allowed_models: tuple[str, ...] = ()
    """Set when the refusal is for the model: the models the server's key may be used with."""

    @property
    def refusal(self) -> str | None:
        if self.source != "refused":
            return None
        if self.allowed_models:
            return (
                f"the server's key is only used with the models the operator listed "
                f"({', '.join(self.allowed_models)}): pick one of them, or bring your own key "
                f"for {self.model[:80]}"
            )
        return (
            f"this endpoint needs your own key: bring your own key for this endpoint "
            f"({self.endpoint.where}); the server's key is only sent to the endpoints the "
            "operator listed"
        )

    def describe(self) -> str:
        """One line for the visitor: which key a call would use."""
        if self.source == "server":
            return f"Key: the server's key, for {self.endpoint.where}."
        if self.source == "visitor":
            return f"Key: your key (entered in this session), for {self.endpoint.where}."
        if self.source == "none":
            return f"Key: none is sent to {self.endpoint.where}."
        return f"This endpoint needs your own key: {self.endpoint.where}."


def choose_key(
    settings: HostingSettings, base_url: str, visitor_key: str = "", model: str | None = None
) -> KeyChoice:
    """Which key a call to ``base_url`` ("" = the default endpoint) for ``model`` may use.

    A key the visitor typed is theirs to send anywhere. The server's key goes only where
    :meth:`HostingSettings.key_may_go_to` allows, and pays only for the models
    :meth:`HostingSettings.key_may_pay_for` allows (``model`` None: the endpoint alone is
    judged); otherwise the choice is ``refused`` while the server holds a key (so that a
    visitor is never silently served by it).

    Raises:
        SummarizerError: ``base_url`` is not a base URL ctxlab calls (:func:`parse_base_url`).
    """
    endpoint = parse_base_url(base_url) if base_url.strip() else settings.default_endpoint
    visitor_key = visitor_key.strip()
    if visitor_key:
        return KeyChoice(endpoint, "visitor", visitor_key)
    if not settings.has_server_key:
        return KeyChoice(endpoint, "none")
    if not settings.key_may_go_to(endpoint):
        return KeyChoice(endpoint, "refused")
    if model is not None and not settings.key_may_pay_for(model):
        return KeyChoice(endpoint, "refused", model=model, allowed_models=settings.key_models or ())
    return KeyChoice(endpoint, "server", settings.server_key)


# -- which addresses -------------------------------------------------------------------------


def refusal_of_address(address: str) -> str | None:
    """Why ``address`` (an IP address) may not be called, or None when it is public.

    IPv4-mapped, 6to4, Teredo and NAT64 (64:ff9b::/96) IPv6 addresses are judged by the IPv4
    address inside them.

    >>> refusal_of_address("::ffff:127.0.0.1")
    'loopback'
    >>> refusal_of_address("8.8.8.8") is None
    True
    """
    try:
        ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
            address.split("%", 1)[0]
        )
    except ValueError:
        return "not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour
        if inner is None and ip.teredo is not None:
            inner = ip.teredo[1]
        if inner is None and ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            return refusal_of_address(str(inner))
    for kind in ("unspecified", "loopback", "link_local", "multicast", "private", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    if not ip.is_global:
        return "not public"
    return None


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """What the summarizer's connections may reach: with ``allow_private`` anything;
    otherwise public addresses only, except ``trusted`` ``(host, port)`` pairs (the endpoints
    the operator listed, which may well be internal servers)."""

    allow_private: bool
    trusted: frozenset[tuple[str, int]] = frozenset()


def _is_local_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


def literal_address_refusal(endpoint: Endpoint, policy: AddressPolicy) -> str | None:
    """The refusal of an endpoint whose host is an IP address or ``localhost`` (no DNS asked),
    or None (a name: judged where it is resolved, see :func:`addresses_for`)."""
    if policy.allow_private or (endpoint.host, endpoint.port) in policy.trusted:
        return None
    host = endpoint.host
    if _is_local_name(host):
        why: str | None = "loopback"
    else:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return None
        why = refusal_of_address(host)
    if why is None:
        return None
    return _private_refusal(endpoint.origin, f"a {why} address")


def _private_refusal(origin: str, what: str) -> str:
    return (
        f"{origin} is {what}: this server does not call private, loopback, link-local or "
        f"other non-public addresses (the operator can allow them with {ALLOW_PRIVATE_ENV}=1)"
    )


def address_policy(settings: HostingSettings) -> AddressPolicy:
    """The connection rule of ``settings``: trusted are the operator's key endpoints."""
    trusted = frozenset((e.host, e.port) for e in (*settings.key_endpoints,))
    return AddressPolicy(settings.allow_private, trusted)


def system_resolver(host: str, port: int) -> list[str]:
    """Every address the operating system gives for ``host`` (TCP), in its order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def addresses_for(
    host: str, port: int, policy: AddressPolicy, resolve: Resolver = system_resolver
) -> list[str]:
    """The addresses a connection to ``host:port`` may use: resolved once, each checked.

    Connect to one of these (not to ``host`` again): that pins the name to what was checked.
    A name that resolves to any refused address is refused whole, and a name that does not
    resolve gets the same message as a private one, so refusals do not tell a visitor which
    internal names exist.

    Raises:
        SummarizerError: the refusal, naming the host.
    """
    host = host.lower().rstrip(".")
    origin = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        literal = True
    except ValueError:
        literal = False
    trusted = (host, port) in policy.trusted
    if not policy.allow_private and not trusted and _is_local_name(host):
        raise SummarizerError(_private_refusal(origin, "a loopback address"))
    try:
        found = list(dict.fromkeys(resolve(host, port)))
    except (OSError, UnicodeError):
        found = []
    if policy.allow_private or trusted:
        if not found:
            raise SummarizerError(f"cannot resolve {origin}: check the host name")
        return found
    refused = [a for a in found if refusal_of_address(a) is not None]
    if not found or refused:
        if literal and found:
            reason = refusal_of_address(found[0])
            raise SummarizerError(_private_refusal(origin, f"a {reason} address"))
        raise SummarizerError(_private_refusal(origin, "not a public internet address"))
    return found


def check_address(
    endpoint: Endpoint, policy: AddressPolicy, resolve: Resolver = system_resolver
) -> list[str]:
    """:func:`addresses_for` the endpoint's host and port."""
    return addresses_for(endpoint.host, endpoint.port, policy, resolve)
