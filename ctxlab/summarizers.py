"""Summarizers: the protocol, the request/response values that cross it, and implementations.

A :class:`SummaryRequest` is the exact request a summarizer receives; the app shows it verbatim
and it is the very object sent, so there is no second rendering. Implementations:

* :class:`OfflineSummarizer` — deterministic, extractive, no network; says so in its first line.
* :class:`ScriptedSummarizer` — returns given texts in order and records every request: the
  canonical test double, also used by the Learn page.
* :class:`OpenAISummarizer` — any OpenAI-compatible Chat Completions server through the
  ``openai`` client, with bounded retries, one :class:`~ctxlab.errors.SummarizerError` per
  failure saying what to check, and a response cache (:class:`SummaryCache`) so the same request
  is never paid twice.

Every implementation raises :class:`~ctxlab.errors.SummarizerError` and nothing else when it
fails; no error message ever holds an API key.
"""

from __future__ import annotations

import dataclasses
import email.utils
import hashlib
import json
import math
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

import openai
import orjson

from ctxlab.errors import SummarizerError
from ctxlab.redaction import REDACTED, redact_patterns
from ctxlab.tokens import ApproxCounter, TokenCounter

__all__ = [
    "NO_KEY_NEEDED",
    "OfflineSummarizer",
    "OpenAISummarizer",
    "ScriptedSummarizer",
    "Summarizer",
    "SummaryCache",
    "SummaryRequest",
    "SummaryResponse",
    "output_cap_field",
    "shared_cache",
]


# Reasoning models (o1, o3, o4, gpt-5 families) reject max_tokens and take this instead.
_COMPLETION_TOKENS_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def output_cap_field(model: str) -> str:
    """The Chat Completions field that caps output tokens for ``model``.

    >>> output_cap_field("gpt-4o-mini"), output_cap_field("o3-mini")
    ('max_tokens', 'max_completion_tokens')
    """
    base = model.rsplit("/", 1)[-1]
    return "max_completion_tokens" if base.startswith(_COMPLETION_TOKENS_PREFIXES) else "max_tokens"


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """Exactly what is sent to a summarizer.

    Attributes:
        messages: chat messages as sent (role/content dicts): the system prompt, then the
            transcript of the folded messages (and the previous summary, when updating one).
        model: the model asked for ("" lets the summarizer use its own default).
        max_tokens: cap on the summary's output tokens, or None.
        redactions: how many spans each redaction rule masked (rule name -> count); shown next
            to the transcript, never sent.
    """

    messages: tuple[Mapping[str, str], ...]
    model: str = ""
    max_tokens: int | None = None
    redactions: Mapping[str, int] = field(default_factory=dict, compare=False)

    @property
    def system_prompt(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")

    @property
    def transcript(self) -> str:
        """The user-side text (everything but the system prompt), as sent."""
        return "\n\n".join(m["content"] for m in self.messages if m["role"] != "system")

    def body(self, model: str | None = None) -> dict[str, Any]:
        """The Chat Completions request body, as JSON-ready data."""
        out: dict[str, Any] = {
            "model": model or self.model,
            "messages": [dict(m) for m in self.messages],
        }
        if self.max_tokens is not None:
            out[output_cap_field(out["model"])] = self.max_tokens
        return out

    def cache_key(self, model: str | None = None) -> str:
        """sha256 of the canonical body: equal requests share one cached response."""
        blob = orjson.dumps(self.body(model), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(blob).hexdigest()


@dataclass(frozen=True, slots=True)
class SummaryResponse:
    """A summary and what it cost."""

    text: str
    input_tokens: int
    output_tokens: int
    model: str
    cached: bool = False
    finish_reason: str | None = None


@runtime_checkable
class Summarizer(Protocol):
    """Anything that turns a :class:`SummaryRequest` into a :class:`SummaryResponse`.

    Implementations raise ``ctxlab.SummarizerError`` (and nothing else) when they fail.
    """

    name: str
    model: str

    def summarize(self, request: SummaryRequest) -> SummaryResponse: ...


def _approx_tokens(texts: Iterable[str]) -> int:
    return sum(math.ceil(len(t) / 4) for t in texts)


# -- offline -----------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[\"'(`])")
_LABEL = re.compile(r"^([A-Z][^:\n]{0,60}):\s+(.*)$", re.S)
_IDENTIFIER = re.compile(
    r"`[^`]+`|\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*\b|[\w.-]*/[\w./-]+|\b\w+\.(?:py|js|ts|json|md|"
    r"toml|yaml|yml|txt|csv|rs|go|sql|sh)\b|#\d+|\b[A-Z]{2,}[-_]?\d+\b"
)
_DECISION = re.compile(
    r"\b(?:decid\w*|agree\w*|chose|choose|will|must|should|need\w*|todo|pending|next|plan\w*|"
    r"fix\w*|error\w*|fail\w*|bug|blocked|done|deadline|remember|prefer\w*|open)\b",
    re.I,
)
_ONLY_MARKERS = re.compile(r"^(?:\s|\[REDACTED[^\]]*\]|[.,;:()-])*$")


@dataclass(frozen=True, slots=True)
class _Sentence:
    index: int
    text: str
    score: int


def _sentences(transcript: str) -> list[_Sentence]:
    """Candidate sentences of a transcript with their scores; headings and duplicates dropped."""
    out: list[_Sentence] = []
    seen: set[str] = set()
    for raw_line in transcript.splitlines():
        line = raw_line.strip()
        bullet = line.startswith("- ")
        line = line.removeprefix("- ").strip()
        if not line or line.endswith(":") or line.startswith(OfflineSummarizer.HEADER.strip()):
            continue
        match = _LABEL.match(line)
        label, body = (match.group(1), match.group(2)) if match else ("", line)
        for piece in _SENTENCE_END.split(body):
            piece = piece.strip()
            if not piece or _ONLY_MARKERS.match(piece):
                continue
            text = f"{label}: {piece}" if label else piece
            if len(text) > 300:
                text = text[:299] + "…"
            key = " ".join(text.lower().split())
            if key in seen:
                continue
            seen.add(key)
            score = (
                2 * bool(re.search(r"\d", piece))
                + 2 * bool(_IDENTIFIER.search(piece))
                + 2 * bool(_DECISION.search(piece))
                + bool(piece.endswith("?"))
                + 3 * bullet  # a line of the previous summary being updated
            )
            out.append(_Sentence(len(out), text, score))
    return out


class OfflineSummarizer:
    """A deterministic extractive summarizer: no network, no LLM, and it says so.

    It keeps the sentences of the transcript most likely to matter later — those holding
    numbers, identifiers (file paths, snake_case names, ticket ids), decisions, errors and open
    tasks, and every line of a previous summary being updated — in their original order, under a
    first line that begins with :attr:`HEADER`. The result never exceeds ``max_tokens`` as
    counted by ``counter`` (an approximate characters/4 count unless one is given).

    Args:
        counter: what ``max_tokens`` is measured with.
        max_sentences: most sentences kept when there is no token cap.
    """

    name = "offline"
    model = "offline-extractive"
    HEADER = "Extractive summary (offline, no LLM): "

    def __init__(self, counter: TokenCounter | None = None, max_sentences: int = 40) -> None:
        self.counter: TokenCounter = counter if counter is not None else ApproxCounter()
        self.max_sentences = max_sentences

    def _render(self, chosen: list[_Sentence], total: int) -> str:
        header = (
            f"{self.HEADER}{len(chosen)} of {total} sentences kept verbatim, chosen for numbers, "
            "identifiers, decisions and open tasks."
        )
        ordered = sorted(chosen, key=lambda s: s.index)
        return "\n".join([header, *(f"- {s.text}" for s in ordered)])

    def _fit(self, text: str, limit: int) -> str:
        """The longest prefix of ``text`` within ``limit`` tokens (binary search on characters)."""
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.counter.count_text(text[:mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        candidates = _sentences(request.transcript)
        by_priority = sorted(candidates, key=lambda s: (-s.score, s.index))
        limit = request.max_tokens
        chosen: list[_Sentence] = []
        for sentence in by_priority:
            if len(chosen) >= self.max_sentences:
                break
            if limit is not None:
                trial = self._render([*chosen, sentence], len(candidates))
                if self.counter.count_text(trial) > limit:
                    continue
            chosen.append(sentence)
        text = self._render(chosen, len(candidates))
        if limit is not None and self.counter.count_text(text) > limit:
            text = self._fit(text, limit)
        return SummaryResponse(
            text=text,
            input_tokens=sum(self.counter.count_text(m["content"]) for m in request.messages),
            output_tokens=self.counter.count_text(text),
            model=self.model,
            finish_reason="stop",
        )


# -- scripted (the test double) -------------------------------------------------------------


class ScriptedSummarizer:
    """Returns the given texts in order and records every request in :attr:`requests`.

    An item that is an exception is raised instead (to script a failure). When the texts run
    out, it raises :class:`~ctxlab.errors.SummarizerError`.

    >>> s = ScriptedSummarizer(["first", "second"])
    >>> s.summarize(SummaryRequest(({"role": "user", "content": "hi"},))).text
    'first'
    >>> len(s.requests)
    1
    """

    name = "scripted"

    def __init__(self, texts: Iterable[str | BaseException], model: str = "scripted") -> None:
        self._texts = list(texts)
        self.model = model
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.requests.append(request)
        if not self._texts:
            raise SummarizerError(
                f"ScriptedSummarizer has no text left for request #{len(self.requests)}"
            )
        item = self._texts.pop(0)
        if isinstance(item, BaseException):
            raise item
        return SummaryResponse(
            text=item,
            input_tokens=_approx_tokens(m["content"] for m in request.messages),
            output_tokens=_approx_tokens([item]),
            model=request.model or self.model,
            finish_reason="stop",
        )


# -- cache -----------------------------------------------------------------------------------

_KEY = re.compile(r"[0-9a-f]{64}")


class SummaryCache:
    """Summaries by request key, in memory and optionally as JSON files in ``directory``.

    Thread-safe: one instance may serve every session of the app. Disk entries are written
    atomically (a temporary file renamed into place); an entry that cannot be read (corrupted,
    truncated, wrong shape) is ignored and rewritten by the next :meth:`put`. Disk errors never
    fail a summary: the cache is an optimisation.

    Attributes:
        hits / misses: lookups served / not served, for tests and the UI.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else None
        self._memory: dict[str, SummaryResponse] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._memory)

    def key_lock(self, key: str) -> threading.Lock:
        """A lock per key, so concurrent callers of one request make one call (single flight)."""
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def _path(self, key: str) -> Path | None:
        if self.directory is None:
            return None
        if not _KEY.fullmatch(key):
            raise ValueError("cache keys are sha256 hex digests")
        return self.directory / f"{key}.json"

    def get(self, key: str) -> SummaryResponse | None:
        """The cached response (``cached=True``), or None."""
        path = self._path(key)
        with self._lock:
            found = self._memory.get(key)
            if found is None and path is not None:
                found = _read_entry(path)
                if found is not None:
                    self._memory[key] = found
            if found is None:
                self.misses += 1
                return None
            self.hits += 1
            return dataclasses.replace(found, cached=True)

    def peek(self, key: str) -> bool:
        """Whether ``key`` is cached (memory or a readable disk entry); counts nothing."""
        path = self._path(key)
        with self._lock:
            if key in self._memory:
                return True
            found = _read_entry(path) if path is not None else None
            if found is not None:
                self._memory[key] = found
            return found is not None

    def put(self, key: str, response: SummaryResponse) -> None:
        """Store ``response`` under ``key`` (in memory, and on disk when configured)."""
        path = self._path(key)
        stored = dataclasses.replace(response, cached=False)
        with self._lock:
            self._memory[key] = stored
            if path is not None:
                _write_entry(path, stored)

    def clear(self) -> None:
        """Forget the in-memory entries (disk files stay)."""
        with self._lock:
            self._memory.clear()


def _read_entry(path: Path) -> SummaryResponse | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        response = SummaryResponse(
            text=data["text"],
            input_tokens=data["input_tokens"],
            output_tokens=data["output_tokens"],
            model=data["model"],
            finish_reason=data.get("finish_reason"),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    fields_ok = (
        isinstance(response.text, str)
        and bool(response.text)
        and isinstance(response.input_tokens, int)
        and isinstance(response.output_tokens, int)
        and isinstance(response.model, str)
    )
    return response if fields_ok else None


def _write_entry(path: Path, response: SummaryResponse) -> None:
    payload = {
        "text": response.text,
        "input_tokens": response.input_tokens,
        "output_tokens": response.output_tokens,
        "model": response.model,
        "finish_reason": response.finish_reason,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


_SHARED: dict[str | None, SummaryCache] = {}
_SHARED_LOCK = threading.Lock()


def shared_cache(directory: str | os.PathLike[str] | None = None) -> SummaryCache:
    """The process-wide cache for ``directory`` (None: memory only), shared by every summarizer."""
    key = None if directory is None else str(Path(directory).resolve())
    with _SHARED_LOCK:
        cache = _SHARED.get(key)
        if cache is None:
            cache = SummaryCache(directory)
            _SHARED[key] = cache
        return cache


# -- OpenAI-compatible -----------------------------------------------------------------------

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

    Responses are cached by request, model and endpoint in ``cache`` (by default the
    process-wide :func:`shared_cache` for ``cache_dir``), so the same request is paid once.

    Args:
        model: the model asked for when a request names none.
        base_url: the API root (usually ending in ``/v1``); None for OpenAI.
        api_key: the key; None reads ``OPENAI_API_KEY``.
        timeout: seconds to wait for one answer.
        max_retries: retries after the first attempt (so at most ``max_retries + 1`` requests).
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
    ) -> None:
        if not model or not model.strip():
            raise SummarizerError("no model name: choose the summarizer model (e.g. gpt-4o-mini)")
        if max_retries < 0 or timeout <= 0:
            raise SummarizerError("max_retries must be >= 0 and timeout > 0")
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
        self._sleep = sleep
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
                    base_url=self.base_url, api_key=self._key, timeout=self.timeout, max_retries=0
                )
            return self._client

    def _complete(self, body: dict[str, Any]) -> SummaryResponse:
        client = self._get_client()
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            self.http_requests += 1
            try:
                raw = client.chat.completions.with_raw_response.create(**body)
            except openai.APITimeoutError:
                raise SummarizerError(
                    f"no answer from {self.where} within {self.timeout:g} s: the server may be "
                    "overloaded or the model slow; raise the timeout or lower summary_max_tokens"
                ) from None
            except openai.APIConnectionError:
                if attempt < attempts:
                    self._sleep(self._backoff(attempt))
                    continue
                raise SummarizerError(
                    f"cannot reach {self.where} (connection failed {attempts} times): check that "
                    "the server is running and that the base URL is right"
                ) from None
            except openai.APIStatusError as exc:
                if self._retryable(exc) and attempt < attempts:
                    self._sleep(self._wait_after(exc, attempt))
                    continue
                raise self._status_error(exc, body, attempt) from None
            return self._parse(raw.status_code, raw.text, body)
        raise AssertionError("unreachable")  # pragma: no cover

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
        said = f" (the server said: {self._scrub(detail)})" if detail.strip() else ""
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
            start = self._scrub(text, 60)
            raise SummarizerError(
                not_cc.format(why=f"HTTP {status}, not JSON; it begins {start!r}")
            ) from None
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
