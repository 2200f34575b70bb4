"""Count a chat with the provider: Anthropic's and Google's token-counting endpoints.

ctxlab's count of a Claude or Gemini chat is an approximation (neither tokenizer is public).
Both providers count a request for free: Anthropic ``POST /v1/messages/count_tokens`` and the
Gemini API ``POST /v1beta/models/{model}:countTokens``. This module builds the exact body each
takes for a chat (:func:`count_request`), sends it when asked (:func:`count_with_provider`) and
says where ctxlab's count stands against the answer (:func:`comparison`).

Sending the chat is an explicit choice of the user (a button in the app, ``--provider-count``
in the CLI); nothing here runs by itself. The rules are the summarizer's:

* **Redaction** applies when the user has it on (:class:`~ctxlab.redaction.RedactionPolicy`):
  masked roles' bodies become ``[REDACTED]`` and credential-looking spans are masked before the
  body is built, so what is masked never leaves the process (the count then covers the masked
  text, which the caller says).
* **Keys** travel in a header only (``x-api-key``; ``x-goog-api-key``, never Google's ``?key=``
  URL parameter) and never appear in a URL, an error message, a log or a cache key. The
  server's own key is used only when the operator runs ctxlab for themselves
  (``CTXLAB_PROFILE=local``, :func:`choose_count_key`); a hosted playground counts with the
  visitor's key or not at all.
* **Endpoints** are the official APIs, or the operator's ``ANTHROPIC_BASE_URL`` /
  ``GOOGLE_GEMINI_BASE_URL`` (the variables the providers' own SDKs read); a visitor cannot
  point a count elsewhere. Redirects are not followed (a custom key header would follow them).
* **Errors** are one :class:`~ctxlab.errors.ProviderCountError` line naming the endpoint and
  what it said ("Anthropic's count_tokens refused the request: 401 invalid x-api-key"), the
  key masked; ctxlab's own count stands.

Counts are cached per (provider, model, request digest) for the process (:data:`COUNTS`), so
showing a count again sends nothing.

``httpx2`` (it comes with the ``openai`` client) is imported only when a count is sent.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from ctxlab.caches import BoundedCache
from ctxlab.catalog import CATALOG
from ctxlab.errors import ProviderCountError, SummarizerError
from ctxlab.model import Message, Role
from ctxlab.redaction import REDACTED, RedactionPolicy, merge_counts, redact_patterns

if TYPE_CHECKING:
    from ctxlab.formats import ToolDefinition

__all__ = [
    "ANTHROPIC_VERSION",
    "BASE_URL_ENV",
    "COUNTS",
    "ENDPOINT_NAMES",
    "KEY_ENV",
    "OFFICIAL_BASE_URLS",
    "PROVIDERS",
    "CountKey",
    "CountRequest",
    "ProviderCount",
    "anthropic_body",
    "api_model",
    "choose_count_key",
    "comparison",
    "count_request",
    "count_with_provider",
    "endpoint_of",
    "gemini_body",
    "key_from_env",
    "provider_of",
]

Provider = Literal["anthropic", "gemini"]
PROVIDERS: tuple[Provider, ...] = ("anthropic", "gemini")

ANTHROPIC_VERSION = "2023-06-01"
"""The ``anthropic-version`` header sent (the Messages API's current version)."""

OFFICIAL_BASE_URLS: Mapping[str, str] = {
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
BASE_URL_ENV: Mapping[str, str] = {
    "anthropic": "ANTHROPIC_BASE_URL",
    "gemini": "GOOGLE_GEMINI_BASE_URL",
}
"""The operator's override of each provider's API root (the providers' SDKs read the same)."""
KEY_ENV: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
"""Where a key is read from the environment, first found wins (as the providers' SDKs do)."""
ENDPOINT_NAMES: Mapping[str, str] = {
    "anthropic": "Anthropic's count_tokens",
    "gemini": "Gemini's countTokens",
}
_TITLES: Mapping[str, str] = {"anthropic": "Anthropic", "gemini": "Gemini"}

# The catalog's short names that are not model ids of the API; the API's alias is sent instead.
_ANTHROPIC_ALIASES: Mapping[str, str] = {
    "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0",
    "claude-3-7-sonnet": "claude-3-7-sonnet-latest",
    "claude-3-5-haiku": "claude-3-5-haiku-latest",
}

TIMEOUT_S = 30.0
"""One count's whole deadline: connecting, sending the chat and reading the answer."""
MAX_ANSWER_BYTES = 64_000
"""The largest answer read (a count is a few dozen bytes; an error page a few KB)."""


# -- which provider and model ----------------------------------------------------------------


def provider_of(model: str) -> Provider | None:
    """``anthropic`` or ``gemini`` when ``model`` is served by a counting endpoint, else None.

    >>> provider_of("claude-sonnet-4-5"), provider_of("gemini-2.5-pro"), provider_of("gpt-4o")
    ('anthropic', 'gemini', None)
    """
    info = CATALOG.get(model)
    name = model.strip().lower()
    provider = info.provider if info is not None else ""
    if provider == "anthropic" or (info is None and name.startswith("claude-")):
        return "anthropic"
    if provider == "gemini" or (info is None and name.startswith("gemini-")):
        return "gemini"
    return None


def api_model(model: str) -> str:
    """The model id sent to the provider: the name as given, or the API's alias of a catalog
    short name that is not an id itself (``claude-3-7-sonnet`` -> ``claude-3-7-sonnet-latest``).
    """
    name = model.strip()
    return _ANTHROPIC_ALIASES.get(name, name)


# -- the request bodies -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CountRequest:
    """The exact body one provider's counting endpoint receives for a chat.

    Attributes:
        provider: ``anthropic`` or ``gemini``.
        model: the model id sent (see :func:`api_model`).
        path: the endpoint's path under the API root (``/v1/messages/count_tokens``).
        body: the JSON body, redaction applied.
        redactions: spans masked per rule (``role:<role>`` per message for role redaction).
        digest: SHA-256 of the provider, model and body: what the cache keys on.
    """

    provider: Provider
    model: str
    path: str
    body: Mapping[str, Any]
    redactions: Mapping[str, int] = field(default_factory=dict)
    digest: str = ""

    @property
    def title(self) -> str:
        """``Anthropic`` or ``Gemini``."""
        return _TITLES[self.provider]

    @property
    def endpoint_name(self) -> str:
        """``Anthropic's count_tokens`` or ``Gemini's countTokens``, for sentences."""
        return ENDPOINT_NAMES[self.provider]

    def body_json(self) -> str:
        """The body as sent (compact JSON, UTF-8 kept)."""
        return json.dumps(self.body, ensure_ascii=False, separators=(",", ":"))


class _Masker:
    """Applies a :class:`RedactionPolicy` to the texts of one request and counts what it masks."""

    def __init__(self, policy: RedactionPolicy | None) -> None:
        self.policy = policy or RedactionPolicy(frozenset(), False)
        self.counts: dict[str, int] = {}

    def text(self, text: str) -> str:
        if not self.policy.patterns or not text:
            return text
        masked = redact_patterns(text)
        if masked.counts:
            self.counts = merge_counts(self.counts, masked.counts)
        return masked.text

    def content(self, message: Message) -> str:
        """The message's text: :data:`REDACTED` for a masked role, else pattern-masked."""
        if message.role in self.policy.roles:
            key = f"role:{message.role.value}"
            self.counts = merge_counts(self.counts, {key: 1})
            return REDACTED
        return self.text(message.content)

    def arguments(self, raw: str) -> dict[str, Any]:
        """A tool call's arguments as the JSON object both APIs require.

        Arguments that are not a JSON object (invalid JSON, a list, a string) travel as
        ``{"arguments": <the text>}`` so their tokens are still counted. With tool results
        masked, arguments are masked too (the summarizer's rule).
        """
        if self.policy.redacts_tool_arguments and raw:
            return {"arguments": REDACTED}
        masked = self.text(raw)
        if not masked.strip():
            return {}
        try:
            value = json.loads(masked)
        except ValueError:
            return {"arguments": masked}
        return value if isinstance(value, dict) else {"arguments": masked}


def _call_ids(messages: Sequence[Message]) -> tuple[dict[int, list[str]], dict[int, str]]:
    """Ids for every tool call and the call each tool result answers.

    Legacy id-less calls (OpenAI ``function_call``) get ``call_<message>_<call>``; an id-less
    result answers the latest call of its name (or the latest call) before it. Returns the ids
    per assistant message position and the answered id per result position.
    """
    calls: dict[int, list[str]] = {}
    answers: dict[int, str] = {}
    names: dict[str, str] = {}
    latest = ""
    for i, message in enumerate(messages):
        if message.tool_calls:
            ids = []
            for j, call in enumerate(message.tool_calls):
                call_id = call.id or f"call_{i}_{j}"
                ids.append(call_id)
                names[call.name] = call_id
                latest = call_id
            calls[i] = ids
        elif message.role.is_tool_result:
            answers[i] = message.tool_call_id or names.get(message.name or "", latest) or f"r{i}"
    return calls, answers


def _call_names(messages: Sequence[Message]) -> dict[str, str]:
    out: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.id:
                out[call.id] = call.name
    return out


def anthropic_body(
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    model: str,
    redaction: RedactionPolicy | None = None,
) -> tuple[dict[str, Any], dict[str, int]]:
    """The ``/v1/messages/count_tokens`` body for ``messages`` and ``tools``, and the spans
    redaction masked.

    Shape: ``{"model", "system"?, "messages", "tools"?}``. System and developer messages form
    ``system`` (text blocks, in order: the Messages API has no system turn); tool results are
    ``tool_result`` blocks of a user turn, tool calls ``tool_use`` blocks of an assistant turn
    (arguments as the ``input`` object); consecutive messages of one role share a turn (as the
    API combines them anyway). Empty texts are left out (the API refuses empty text blocks).
    Tools are ``{name, description, input_schema}``; server tools keep their ``type``.
    """
    mask = _Masker(redaction)
    calls, answers = _call_ids(messages)
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for i, message in enumerate(messages):
        text = mask.content(message)
        if message.role.is_instruction:
            if text:
                system.append({"type": "text", "text": text})
        elif message.role.is_tool_result:
            add(
                "user",
                [{"type": "tool_result", "tool_use_id": answers[i], "content": text}],
            )
        else:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            for call, call_id in zip(message.tool_calls, calls.get(i, ()), strict=True):
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": call.name,
                        "input": mask.arguments(call.arguments),
                    }
                )
            add("assistant" if message.role is Role.ASSISTANT else "user", blocks)
    body: dict[str, Any] = {"model": api_model(model)}
    if system:
        body["system"] = system
    body["messages"] = turns
    if tools:
        body["tools"] = [_anthropic_tool(tool, mask) for tool in tools]
    return body, mask.counts


def _anthropic_tool(tool: ToolDefinition, mask: _Masker) -> dict[str, Any]:
    schema = tool.schema()
    if tool.kind not in ("function", "custom"):  # a server tool: its own keys, as read
        return {"type": tool.kind, "name": tool.name, **schema}
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = mask.text(tool.description)
    if tool.kind == "custom" or schema.get("type") != "object":
        # A free-form (custom) tool or a schema that is not an object: the API takes object
        # schemas only, so the schema travels inside one (its tokens still counted).
        schema = {"type": "object", "properties": {"input": schema or {"type": "string"}}}
    out["input_schema"] = schema
    return out


def gemini_body(
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    model: str,
    redaction: RedactionPolicy | None = None,
) -> tuple[dict[str, Any], dict[str, int]]:
    """The ``models/{model}:countTokens`` body for ``messages`` and ``tools``, and the spans
    redaction masked.

    Shape: ``{"generateContentRequest": {"model": "models/<id>", "contents",
    "systemInstruction"?, "tools"?}}`` (plain ``contents`` would leave the system instruction
    and the tools uncounted). Roles are ``user`` and ``model``; tool calls are ``functionCall``
    parts (``args`` an object), tool results ``functionResponse`` parts of a user turn
    (``response`` the result's JSON object, else ``{"result": <text>}``); consecutive messages
    of one role share a turn. Tools are one ``functionDeclarations`` list with each schema as
    ``parametersJsonSchema`` (full JSON Schema, no conversion to Gemini's OpenAPI subset).
    """
    mask = _Masker(redaction)
    names = _call_names(messages)
    system: list[dict[str, Any]] = []
    contents: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})

    for message in messages:
        text = mask.content(message)
        if message.role.is_instruction:
            if text:
                system.append({"text": text})
        elif message.role.is_tool_result:
            name = names.get(message.tool_call_id or "") or message.name or "tool"
            add("user", [{"functionResponse": {"name": name, "response": _response(text)}}])
        else:
            parts: list[dict[str, Any]] = [{"text": text}] if text else []
            for call in message.tool_calls:
                parts.append(
                    {"functionCall": {"name": call.name, "args": mask.arguments(call.arguments)}}
                )
            add("model" if message.role is Role.ASSISTANT else "user", parts)
    request: dict[str, Any] = {"model": f"models/{api_model(model)}", "contents": contents}
    if system:
        request["systemInstruction"] = {"parts": system}
    if tools:
        request["tools"] = [{"functionDeclarations": [_gemini_tool(t, mask) for t in tools]}]
    return {"generateContentRequest": request}, mask.counts


def _response(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {"result": text}
    return value if isinstance(value, dict) else {"result": text}


def _gemini_tool(tool: ToolDefinition, mask: _Masker) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = mask.text(tool.description)
    schema = tool.schema()
    if schema:
        out["parametersJsonSchema"] = schema
    return out


def count_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition] = (),
    redaction: RedactionPolicy | None = None,
) -> CountRequest:
    """The request that counts ``messages`` (and ``tools``) with ``model``'s provider.

    Raises:
        ProviderCountError: ``model`` is not served by Anthropic or Gemini (nothing to ask).
    """
    provider = provider_of(model)
    if provider is None:
        raise ProviderCountError(
            f"{model[:80]} is not an Anthropic or Gemini model: only those providers count "
            "tokens for free (pick a claude-* or gemini-* model)"
        )
    if provider == "anthropic":
        body, masked = anthropic_body(messages, tools, model, redaction)
        path = "/v1/messages/count_tokens"
    else:
        body, masked = gemini_body(messages, tools, model, redaction)
        # Quoted: a model name never adds a path segment or a query to the URL.
        path = f"/v1beta/models/{quote(api_model(model), safe='-._')}:countTokens"
    text = json.dumps(
        {"provider": provider, "path": path, "body": body},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    digest = hashlib.sha256(text.encode()).hexdigest()
    return CountRequest(provider, api_model(model), path, body, masked, digest)


# -- keys and endpoints ------------------------------------------------------------------------


def key_from_env(provider: str, env: Mapping[str, str] | None = None) -> str:
    """The provider's key from :data:`KEY_ENV` (``ANTHROPIC_API_KEY``; ``GEMINI_API_KEY``,
    then ``GOOGLE_API_KEY``), or ""."""
    env = os.environ if env is None else env
    for name in KEY_ENV.get(provider, ()):
        value = str(env.get(name) or "").strip()
        if value:
            return value
    return ""


def endpoint_of(provider: str, env: Mapping[str, str] | None = None) -> str:
    """The API root counts go to: the operator's :data:`BASE_URL_ENV` variable, else the
    official API, in ctxlab's normal form (:func:`ctxlab.hosting.parse_base_url`).

    Raises:
        ProviderCountError: the operator's variable is not a base URL ctxlab calls.
    """
    from ctxlab.hosting import parse_base_url

    env = os.environ if env is None else env
    name = BASE_URL_ENV[provider]
    configured = str(env.get(name) or "").strip()
    try:
        return parse_base_url(configured or OFFICIAL_BASE_URLS[provider]).url
    except SummarizerError as exc:
        raise ProviderCountError(f"{name}: {exc}") from None


@dataclass(frozen=True, slots=True)
class CountKey:
    """The key a count may use, and why (``key`` is never shown, not even in ``repr``).

    ``source``: ``visitor`` (typed in this session), ``server`` (the environment's or
    secrets.toml's, local profile only), ``none`` (no key anywhere) or ``refused`` (the server
    holds one but this is not the local profile).
    """

    provider: str
    source: Literal["visitor", "server", "none", "refused"]
    key: str = field(default="", repr=False, compare=False)

    @property
    def usable(self) -> bool:
        return bool(self.key)

    def describe(self) -> str:
        """One line: which key a count would use, or why none."""
        title = _TITLES.get(self.provider, self.provider)
        names = " or ".join(KEY_ENV.get(self.provider, ()))
        if self.source == "visitor":
            return f"Key: your {title} key (entered in this session)."
        if self.source == "server":
            return f"Key: the server's {title} key ({names})."
        if self.source == "refused":
            return (
                f"This server holds a {title} key, but it is only used when the operator runs "
                "ctxlab for themselves (CTXLAB_PROFILE=local): enter your own key to count."
            )
        return f"No {title} key: enter yours (or set {names} where the app runs)."


def choose_count_key(
    provider: str,
    visitor_key: str = "",
    *,
    env: Mapping[str, str] | None = None,
    secrets: Mapping[str, object] | None = None,
) -> CountKey:
    """Which key a count with ``provider`` may use.

    A key the visitor typed is theirs. The server's key (:data:`KEY_ENV`, from
    ``.streamlit/secrets.toml`` first, then the environment) counts only with
    ``CTXLAB_PROFILE=local``: a playground served to others must not spend the operator's key
    on its visitors' chats, and holding a key is what makes a server hosted by default
    (:mod:`ctxlab.hosting`), so anything but an explicit ``local`` keeps it back.
    """
    from ctxlab.hosting import PROFILE_ENV

    env = os.environ if env is None else env
    visitor_key = visitor_key.strip()
    if visitor_key:
        return CountKey(provider, "visitor", visitor_key)
    merged: dict[str, str] = dict(env)
    for name, value in (secrets or {}).items():
        if value is not None and str(value).strip():
            merged[name] = str(value)
    server_key = key_from_env(provider, merged)
    if not server_key:
        return CountKey(provider, "none")
    if str(merged.get(PROFILE_ENV) or "").strip().lower() != "local":
        return CountKey(provider, "refused")
    return CountKey(provider, "server", server_key)


# -- sending -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProviderCount:
    """The provider's count of one request.

    Attributes:
        provider: ``anthropic`` or ``gemini``.
        model: the model id the count is for.
        tokens: the provider's input-token count (``input_tokens`` / ``totalTokens``).
        digest: the request's digest (:attr:`CountRequest.digest`).
        cached: True when answered from :data:`COUNTS` (nothing was sent).
    """

    provider: str
    model: str
    tokens: int
    digest: str
    cached: bool = False


COUNTS: BoundedCache[tuple[str, str, str], int] = BoundedCache(max_entries=4096)
"""The provider's count per (provider, model, digest of endpoint and request), for the process."""


def cached_count(request: CountRequest, endpoint: str) -> ProviderCount | None:
    """The count of ``request`` at ``endpoint`` already known (nothing is sent), or None."""
    tokens = COUNTS.get(_cache_key(request, endpoint))
    if tokens is None:
        return None
    return ProviderCount(request.provider, request.model, tokens, request.digest, cached=True)


def _cache_key(request: CountRequest, endpoint: str) -> tuple[str, str, str]:
    where = hashlib.sha256(f"{endpoint}\n{request.digest}".encode()).hexdigest()
    return (request.provider, request.model, where)


def count_with_provider(
    request: CountRequest,
    api_key: str,
    *,
    endpoint: str | None = None,
    timeout: float = TIMEOUT_S,
) -> ProviderCount:
    """Send ``request`` to its provider's counting endpoint, or answer from :data:`COUNTS`.

    Args:
        request: from :func:`count_request`.
        api_key: sent in the provider's key header only.
        endpoint: the API root (default :func:`endpoint_of` the provider).
        timeout: seconds the whole call may take.

    Raises:
        ProviderCountError: no key, or the call failed (one line; the key never in it).
    """
    root = endpoint if endpoint is not None else endpoint_of(request.provider)
    known = cached_count(request, root)
    if known is not None:
        return known
    if not api_key.strip():
        names = " or ".join(KEY_ENV[request.provider])
        raise ProviderCountError(
            f"no {request.title} API key (set {names}, or enter one in the app): nothing was sent"
        )
    tokens = _send(request, api_key.strip(), root, timeout)
    COUNTS.put(_cache_key(request, root), tokens)
    return ProviderCount(request.provider, request.model, tokens, request.digest)


def _headers(request: CountRequest, api_key: str) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept-encoding": "identity"}
    if request.provider == "anthropic":
        headers["x-api-key"] = api_key
        headers["anthropic-version"] = ANTHROPIC_VERSION
    else:
        headers["x-goog-api-key"] = api_key  # a header, never Google's ?key= URL parameter
    return headers


def _send(request: CountRequest, api_key: str, root: str, timeout: float) -> int:
    import httpx2

    from ctxlab.summarizers.bounded_http import CallBounds, bounded_transport, format_size

    where = request.endpoint_name
    scrub = _Scrubber(api_key)
    bounds = CallBounds()
    content = request.body_json().encode()
    with (
        bounds.call(timeout, MAX_ANSWER_BYTES) as call,
        httpx2.Client(
            transport=bounded_transport(bounds), follow_redirects=False, timeout=timeout
        ) as client,
    ):
        try:
            response = client.post(
                root + request.path, content=content, headers=_headers(request, api_key)
            )
            status, text = response.status_code, response.text
        except httpx2.TransportError as exc:
            if call.over_size:
                raise ProviderCountError(
                    f"{where} answered more than {format_size(MAX_ANSWER_BYTES)} (a count is a "
                    "few bytes): check the base URL"
                ) from None
            if call.expired or isinstance(exc, httpx2.TimeoutException):
                raise ProviderCountError(
                    f"{where} did not answer within {timeout:g} s: try again later"
                ) from None
            raise ProviderCountError(
                f"cannot reach {where} at {_origin(root)}: check the network and the base URL"
            ) from None
    return _parse(request, status, text, scrub)


def _origin(root: str) -> str:
    from ctxlab.hosting import parse_base_url

    return parse_base_url(root).origin


class _Scrubber:
    """Server text made safe for a one-line message: no key, no credential, bounded."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, text: str, limit: int = 160) -> str:
        if self.key:
            text = text.replace(self.key, REDACTED)
        text = " ".join(redact_patterns(text).text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_detail(data: Any) -> str:
    """The provider's error sentence: Anthropic ``{"error": {"type", "message"}}``, Google
    ``{"error": {"code", "message", "status"}}``."""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return ""


def _parse(request: CountRequest, status: int, text: str, scrub: _Scrubber) -> int:
    where = request.endpoint_name
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        data = None
    if status != 200:
        detail = scrub(_error_detail(data)) if data is not None else ""
        said = f" {detail}" if detail else ""
        if status == 429:
            raise ProviderCountError(
                f"{where} is rate limiting this key: 429{said}; try again in a minute"
            )
        if status >= 500:
            raise ProviderCountError(f"{where} failed: {status}{said}; try again later")
        if 300 <= status < 400:
            raise ProviderCountError(
                f"{where} answered a redirect ({status}), which is not followed (the key would "
                "go with it): check the base URL"
            )
        raise ProviderCountError(f"{where} refused the request: {status}{said}")
    field_name = "input_tokens" if request.provider == "anthropic" else "totalTokens"
    tokens = data.get(field_name) if isinstance(data, dict) else None
    if isinstance(tokens, str) and tokens.isdigit():  # proto3 JSON may spell an int64 as text
        tokens = int(tokens)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        start = scrub(text, 40)
        begins = f"; it begins {start!r}" if start else ""
        raise ProviderCountError(
            f"{where} answered without a token count (no {field_name}){begins}: check the base URL"
        )
    return tokens


# -- the comparison -----------------------------------------------------------------------------


def comparison(count: ProviderCount, ctxlab_tokens: int, *, exact: bool) -> str:
    """One sentence: the provider's count beside ctxlab's, and how far ctxlab's is off.

    >>> comparison(ProviderCount("anthropic", "m", 41_230, ""), 38_900, exact=False)
    "Anthropic counts 41,230 tokens; ctxlab's approximate count is 38,900 (5.7% low)."
    """
    title = _TITLES.get(count.provider, count.provider)
    kind = "count" if exact else "approximate count"
    head = f"{title} counts {count.tokens:,} tokens; ctxlab's {kind} is {ctxlab_tokens:,}"
    if ctxlab_tokens == count.tokens:
        return f"{head} (the same)."
    share = abs(ctxlab_tokens - count.tokens) / count.tokens if count.tokens else 1.0
    side = "low" if ctxlab_tokens < count.tokens else "high"
    return f"{head} ({share:.1%} {side})."
