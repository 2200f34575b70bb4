"""Summaries from any OpenAI-compatible Chat Completions server, through the ``openai`` client.

The only module of ctxlab that imports ``openai``; ``ctxlab.summarizers`` loads it when
:class:`OpenAISummarizer` is first asked for, so reading, counting and trimming never pay for
the client's import.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import math
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import httpx2
import openai

from ctxlab.errors import SummarizerError
from ctxlab.hosting import AddressPolicy
from ctxlab.redaction import REDACTED, redact_patterns
from ctxlab.summarizers.base import SummaryRequest, SummaryResponse, output_cap_field
from ctxlab.summarizers.bounded_http import (
    CallBounds,
    CallState,
    bounded_transport,
    format_size,
)
from ctxlab.summarizers.cache import SummaryCache, shared_cache

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "NO_KEY_NEEDED", "OpenAISummarizer"]

DEFAULT_MAX_RESPONSE_BYTES = 1_000_000
"""The largest answer read from a server (a summary is a few KB; 1 MB leaves ample room)."""

# Every call's deadline and byte budget, per thread, for the sockets of every client.
_BOUNDS = CallBounds()

NO_KEY_NEEDED = "not-needed"
"""The placeholder key sent to a ``base_url`` server when no key is configured."""


class OpenAISummarizer:
    """Summaries from any OpenAI-compatible Chat Completions server, through ``openai``.

    The key comes from ``api_key`` or ``OPENAI_API_KEY``; a ``base_url`` server (vLLM, Ollama,
    llama.cpp, ...) may need none, and then a placeholder is sent. The client makes no retries of
    its own: this class retries rate limits (429, honouring ``Retry-After`` up to ``max_wait``),
    server errors (5xx) and failed connections up to ``max_retries`` times with exponential
    backoff, and never retries 400/401/403/404 or a timeout. Every failure raises one
    :class:`~ctxlab.errors.SummarizerError` saying what to check; the key never appears in it.

    A call is bounded as a whole: ``timeout`` covers connecting, every retry and its wait, and
    reading the whole answer (a server trickling bytes cannot hold it longer), and an answer
    over ``max_response_bytes`` is abandoned unread. Both failures name the limit.

    Responses are cached by request, model and endpoint in ``cache`` (by default the
    process-wide :func:`shared_cache` for ``cache_dir``), so the same request is paid once.

    Args:
        model: the model asked for when a request names none.
        base_url: the API root (usually ending in ``/v1``); None for OpenAI.
        api_key: the key; None reads ``OPENAI_API_KEY``.
        timeout: seconds one call may take in all (connect, retries, waits, the whole answer).
        max_retries: retries after the first attempt (so at most ``max_retries + 1`` requests).
        max_response_bytes: the largest answer read (bytes on the wire and once decoded).
        cache_dir: also keep responses as JSON files here.
        cache: the cache to use (overrides ``cache_dir``); ``use_cache=False`` disables caching.
        backoff: first retry delay in seconds, doubled each retry; ``max_wait`` caps any wait.
        sleep: how to wait (tests pass a recorder).

    Raises:
        SummarizerError: no model name. A missing key (and no ``base_url``) is reported by the
            first :meth:`summarize` that needs the network, so a cached summary still serves.
    """

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
        cache_dir: str | os.PathLike[str] | None = None,
        *,
        cache: SummaryCache | None = None,
        use_cache: bool = True,
        backoff: float = 0.5,
        max_wait: float = 20.0,
        sleep: Callable[[float], None] = time.sleep,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        address_policy: AddressPolicy | None = None,
        quote_replies: bool = True,
    ) -> None:
        if not model or not model.strip():
            raise SummarizerError("no model name: choose the summarizer model (e.g. gpt-4o-mini)")
        if max_retries < 0 or timeout <= 0 or max_response_bytes <= 0:
            raise SummarizerError(
                "max_retries must be >= 0, timeout > 0 and max_response_bytes > 0"
            )
        base_url = (base_url or "").strip() or None
        key = (api_key or os.environ.get("OPENAI_API_KEY") or "").strip()
        if not key and base_url:
            key = NO_KEY_NEEDED
        self.model = model.strip()
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.max_response_bytes = max_response_bytes
        self._sleep = sleep
        self.address_policy = address_policy
        self.quote_replies = quote_replies
        self._key = key
        self._secret = key if key != NO_KEY_NEEDED else None
        self.cache: SummaryCache | None = (
            (cache if cache is not None else shared_cache(cache_dir)) if use_cache else None
        )
        self.where = _endpoint(base_url)
        self.http_requests = 0  # requests actually sent (cache hits send none)
        self._client: openai.OpenAI | None = None
        self._client_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAISummarizer(model={self.model!r}, endpoint={self.where!r})"

    def cache_key(self, request: SummaryRequest) -> str:
        """The cache key of ``request``: its body for the effective model, and the endpoint."""
        model = request.model or self.model
        endpoint = self.base_url or "https://api.openai.com/v1"
        return hashlib.sha256(f"{endpoint}\n{request.cache_key(model)}".encode()).hexdigest()

    def is_cached(self, request: SummaryRequest) -> bool:
        """Whether :meth:`summarize` would answer ``request`` from the cache (no call, no cost)."""
        if self.cache is None:
            return False
        return self.cache.peek(self.cache_key(request))

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        """Send ``request`` (its :meth:`SummaryRequest.body`, unchanged) or answer from cache.

        Raises:
            SummarizerError: no key (and no ``base_url``), or the call failed; see the class.
        """
        key = self.cache_key(request)
        if self.cache is None:
            return self._complete(request.body(request.model or self.model))
        # Two sessions asking the same request at once: the second waits for the first's answer
        # instead of paying for it again.
        with self.cache.key_lock(key):
            hit = self.cache.get(key)
            if hit is not None:
                return hit
            response = self._complete(request.body(request.model or self.model))
            self.cache.put(key, response)
        return response

    # -- the call, with bounded retries ------------------------------------------------------

    def _get_client(self) -> openai.OpenAI:
        if not self._key:
            raise SummarizerError(
                "no OpenAI API key: set the OPENAI_API_KEY environment variable or enter a key "
                "(a local OpenAI-compatible server needs only its base URL)"
            )
        with self._client_lock:
            if self._client is None:
                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self._key,
                    timeout=self.timeout,
                    max_retries=0,
                    http_client=self._http_client(),
                )
            return self._client

    def _http_client(self) -> _HttpClient:
        transport = bounded_transport(_BOUNDS)
        if self.address_policy is None:
            return _HttpClient(transport=transport)
        from ctxlab.summarizers.guarded_http import guard

        # Every connection checked and pinned where it is opened; no proxy, no redirect.
        guard(transport, self.address_policy)
        return _HttpClient(transport=transport, trust_env=False, follow_redirects=False)

    def _complete(self, body: dict[str, Any]) -> SummaryResponse:
        client = self._get_client()
        attempts = self.max_retries + 1
        with _BOUNDS.call(self.timeout, self.max_response_bytes) as call:
            for attempt in range(1, attempts + 1):
                if call.expired:
                    raise self._deadline_error(attempt - 1)
                self.http_requests += 1
                try:
                    status, text = self._send(client, body, call)
                except openai.APIStatusError as exc:
                    self._raise_if_out_of_bounds(call, attempt)
                    retry = self._retryable(exc) and attempt < attempts
                    if retry and self._waited(self._wait_after(exc, attempt), call):
                        continue
                    raise self._status_error(exc, body, attempt) from None
                except (openai.APIConnectionError, httpx2.TransportError) as exc:
                    # APITimeoutError is an APIConnectionError; a timeout is the deadline.
                    self._raise_if_out_of_bounds(call, attempt)
                    if self.address_policy is not None:
                        from ctxlab.summarizers.guarded_http import refusal_in

                        if (refusal := refusal_in(exc)) is not None:
                            raise SummarizerError(refusal) from None
                    timed_out = (openai.APITimeoutError, httpx2.TimeoutException)
                    if isinstance(exc, timed_out):
                        raise self._deadline_error(attempt - 1) from None
                    if attempt < attempts and self._waited(self._backoff(attempt), call):
                        continue
                    raise SummarizerError(
                        f"cannot reach {self.where} (connection failed {attempt} times): check "
                        "that the server is running and that the base URL is right"
                    ) from None
                return self._parse(status, text, body)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(
        self, client: openai.OpenAI, body: dict[str, Any], call: CallState
    ) -> tuple[int, str]:
        """One request; the answer read chunk by chunk within the call's time and byte budget.

        Bytes are counted twice: on the wire (by the bounded transport) and once decoded here,
        so a compressed answer cannot grow past the cap either.
        """
        create = client.chat.completions.with_streaming_response.create
        # identity: the server should not compress; if it does anyway, the decoded count holds.
        headers = {"Accept-Encoding": "identity"}
        with create(**body, timeout=call.remaining(), extra_headers=headers) as raw:
            chunks: list[bytes] = []
            size = 0
            for chunk in raw.iter_bytes():
                size += len(chunk)
                if size > call.max_bytes:
                    call.over_size = True
                    raise httpx2.ReadError("the answer is over the size cap")
                if call.expired:
                    raise httpx2.ReadTimeout("the call's deadline has passed")
                chunks.append(chunk)
            return raw.status_code, b"".join(chunks).decode("utf-8", "replace")

    def _raise_if_out_of_bounds(self, call: CallState, attempt: int) -> None:
        if call.over_size:
            raise SummarizerError(
                f"the answer from {self.where} is over {format_size(call.max_bytes)}; it was "
                "abandoned unread (a summary is a few KB): check the base URL and the model, "
                "or raise the response size limit"
            ) from None
        if call.expired:
            raise self._deadline_error(attempt - 1) from None

    def _deadline_error(self, retried: int) -> SummarizerError:
        retries = f" ({retried} retries included)" if retried else ""
        return SummarizerError(
            f"no complete answer from {self.where} within {self.timeout:g} s{retries}: the "
            "server may be overloaded, the model slow, or the answer arriving too slowly; raise "
            "the timeout or lower summary_max_tokens"
        )

    def _waited(self, seconds: float, call: CallState) -> bool:
        """Wait before a retry; False (no wait) when the retry could not start before the
        deadline, so the caller reports the failure it has instead."""
        if seconds >= call.remaining():
            return False
        self._sleep(seconds)
        return True

    def _retryable(self, exc: openai.APIStatusError) -> bool:
        status = exc.status_code
        if status == 429:
            return _error_code(exc) != "insufficient_quota"
        return status >= 500

    def _backoff(self, attempt: int) -> float:
        return float(min(self.max_wait, self.backoff * 2 ** (attempt - 1)))

    def _wait_after(self, exc: openai.APIStatusError, attempt: int) -> float:
        """Seconds to wait: ``Retry-After`` (seconds or a date) if sent, capped; else backoff."""
        headers = exc.response.headers
        wait: float | None = None
        if (ms := headers.get("retry-after-ms")) is not None:
            try:
                wait = float(ms) / 1000
            except ValueError:
                wait = None
        if wait is None and (value := headers.get("retry-after")) is not None:
            try:
                wait = float(value)
            except ValueError:
                try:
                    when = email.utils.parsedate_to_datetime(value)
                    wait = (when - datetime.now(UTC)).total_seconds()
                except (TypeError, ValueError):
                    wait = None
        if wait is None or math.isnan(wait):
            return self._backoff(attempt)
        return float(min(max(wait, 0.0), self.max_wait))

    def _scrub(self, text: str, limit: int = 200) -> str:
        """Server text made safe for an error message: no key, no credential, bounded length."""
        if self._secret:
            text = text.replace(self._secret, REDACTED)
        text = " ".join(redact_patterns(text).text.split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def _status_error(
        self, exc: openai.APIStatusError, body: Mapping[str, Any], attempts: int
    ) -> SummarizerError:
        status = exc.status_code
        model = body.get("model", self.model)
        detail = ""
        payload = exc.body
        if isinstance(payload, Mapping) and isinstance(payload.get("message"), str):
            detail = payload["message"]
        elif isinstance(payload, str):
            detail = payload
        quoted = detail.strip() and self.quote_replies
        said = f" (the server said: {self._scrub(detail)})" if quoted else ""
        where = self.where
        retried = attempts - 1
        if status == 401:
            text = (
                f"{where} rejected the API key (HTTP 401): check OPENAI_API_KEY or the key you "
                f"entered, and that it belongs to this server{said}"
            )
        elif status == 403:
            text = (
                f"{where} refused access (HTTP 403): check that the key's project may use model "
                f"{model!r} and that the key has the needed permissions{said}"
            )
        elif status == 404:
            text = (
                f"{where} does not know model {model!r} or this endpoint (HTTP 404): check the "
                f"model name and the base URL (usually ending in /v1){said}"
            )
        elif status == 429 and _error_code(exc) == "insufficient_quota":
            text = (
                f"{where} says the quota is used up (HTTP 429 insufficient_quota): check the "
                f"plan and billing of the key; retrying will not help{said}"
            )
        elif status == 429:
            text = (
                f"rate limited by {where} (HTTP 429); retried {retried} times: wait a minute and "
                f"try again, or raise the rate limit of the key{said}"
            )
        elif status >= 500:
            text = (
                f"server error at {where} (HTTP {status}); retried {retried} times: the server "
                f"is failing or overloaded, try again later{said}"
            )
        elif status == 400:
            text = (
                f"{where} refused the request (HTTP 400): check summary_max_tokens and that the "
                f"transcript fits the model's context window{said}"
            )
        else:
            text = f"{where} answered HTTP {status}: check the base URL and the model{said}"
        return SummarizerError(text)

    def _parse(self, status: int, text: str, body: Mapping[str, Any]) -> SummaryResponse:
        not_cc = (
            f"the reply of {self.where} is not a Chat Completions response"
            " ({why}): check that the base URL points at an OpenAI-compatible API (usually "
            "ending in /v1)"
        )
        try:
            data = json.loads(text)
        except ValueError:
            start = f"; it begins {self._scrub(text, 60)!r}" if self.quote_replies else ""
            raise SummarizerError(not_cc.format(why=f"HTTP {status}, not JSON{start}")) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise SummarizerError(not_cc.format(why="no choices"))
        choice = choices[0]
        if choice.get("finish_reason") == "length":
            field = output_cap_field(str(body.get("model", "")))
            cap = body.get(field)
            limit = f"{field}={cap}" if cap is not None else "the model's output limit"
            raise SummarizerError(
                f"the summary was cut at {limit} (finish_reason 'length'): raise "
                "summary_max_tokens (or leave it empty) and summarize again"
            )
        message = choice.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise SummarizerError(not_cc.format(why="no message content"))
        if not content.strip():
            raise SummarizerError(
                f"{self.where} returned an empty summary: try another model or a clearer "
                "summary prompt"
            )
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return SummaryResponse(
            text=content.strip(),
            input_tokens=_int(usage.get("prompt_tokens")),
            output_tokens=_int(usage.get("completion_tokens")),
            model=str(data.get("model") or body.get("model") or self.model),
            finish_reason=str(choice.get("finish_reason") or "") or None,
        )


class _HttpClient(openai.DefaultHttpxClient):
    """The client's HTTP connections, closed when the summarizer goes (as openai's own are)."""

    def __del__(self) -> None:
        if not self.is_closed:
            with contextlib.suppress(Exception):  # at interpreter shutdown: nothing to tell
                self.close()


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _error_code(exc: openai.APIStatusError) -> str | None:
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        return code
    payload = exc.body
    if isinstance(payload, Mapping):
        for key in ("code", "type"):
            if isinstance(payload.get(key), str):
                return str(payload[key])
    return None


def _endpoint(base_url: str | None) -> str:
    """``host:port`` of the server, for messages (never a path, query or credentials)."""
    if not base_url:
        return "api.openai.com:443"
    try:
        parts = urlsplit(base_url)
        host = parts.hostname or "?"
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "the configured base URL"
    return f"{host}:{port}"
