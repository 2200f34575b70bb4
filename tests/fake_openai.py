"""A small OpenAI-compatible Chat Completions server for tests, misbehaving on cue.

The server runs in a thread on 127.0.0.1 (a free port), records every request it receives
(path, headers without ``Authorization``, JSON body) and answers each one with the next scripted
behaviour, or normally once the script is used up::

    def test_retry(fake_openai):
        fake_openai.script("503", "ok")
        ...
        assert len(fake_openai.requests) == 2

Behaviours: ``ok`` (a summary derived from the request), ``401``, ``403``, ``404``, ``429``
(with ``Retry-After: 0``), ``500``, ``503``, ``slow`` (answers after :attr:`FakeOpenAI.delay`
seconds, longer than a test client's timeout), ``non-json``, ``empty-choices``, ``no-content``
``length`` (``finish_reason: "length"``), ``401-echo`` (a 401 whose message repeats the
Authorization header, as careless servers do), ``429-quota`` (``insufficient_quota``) and
``429-long`` (``Retry-After: 120``), ``trickle`` (a 200 whose body arrives one byte every
:attr:`FakeOpenAI.trickle_interval` seconds, for as long as the client listens), ``huge`` (a
valid answer whose summary is :attr:`FakeOpenAI.huge_bytes` long) and ``huge-gzip`` (the same,
gzip-compressed to a few KB on the wire, sent even though the client asked for none).

pytest puts ``tests/`` on ``sys.path``, so a test module registers the fixtures
(``fake_openai``, ``closed_port``) with ``pytest_plugins = ["fake_openai"]`` and imports
:class:`FakeOpenAI` only under ``TYPE_CHECKING`` (importing the module by name first would stop
pytest from loading it as a plugin cleanly); helpers are reachable from the fixture value.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = [
    "BEHAVIOURS",
    "FakeOpenAI",
    "RecordedRequest",
    "closed_port",
    "fake_openai",
    "free_port",
    "summary_for",
]

BEHAVIOURS = (
    "ok",
    "401",
    "403",
    "404",
    "429",
    "500",
    "503",
    "slow",
    "non-json",
    "empty-choices",
    "no-content",
    "length",
    "401-echo",
    "429-quota",
    "429-long",
    "trickle",
    "huge",
    "huge-gzip",
)

_ERRORS = {
    "401": (401, "invalid_api_key", "Incorrect API key provided."),
    "403": (403, "permission_denied", "You are not allowed to use this model."),
    "404": (404, "model_not_found", "The model does not exist."),
    "429": (429, "rate_limit_exceeded", "Rate limit reached."),
    "500": (500, "server_error", "The server had an error."),
    "503": (503, "overloaded", "The engine is currently overloaded."),
}


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    ``authorized`` says a bearer token was present; ``auth_sha256`` is the sha256 hex of the
    whole Authorization header, so a test can check which key was sent without storing it.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    authorized: bool
    auth_sha256: str


def summary_for(body: Any) -> str:
    """The deterministic summary the ``ok`` behaviour returns for a request body."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    return f"Fake summary of {len(user)} characters for model {body.get('model', '?')}."


@dataclass
class FakeOpenAI:
    """The running server: its ``base_url``, the ``requests`` received and the ``script``."""

    host: str
    port: int
    requests: list[RecordedRequest] = field(default_factory=list)
    delay: float = 2.0
    trickle_interval: float = 0.2
    huge_bytes: int = 5_000_000
    _script: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _released: threading.Event = field(default_factory=threading.Event)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def script(self, *behaviours: str) -> None:
        """Answer the next requests with ``behaviours`` in order, then normally."""
        unknown = [b for b in behaviours if b not in BEHAVIOURS]
        if unknown:
            raise ValueError(f"unknown behaviours {unknown}; known: {BEHAVIOURS}")
        with self._lock:
            self._script.extend(behaviours)

    def always(self, behaviour: str, times: int = 50) -> None:
        """Answer the next ``times`` requests with ``behaviour``."""
        self.script(*([behaviour] * times))

    def next_behaviour(self) -> str:
        with self._lock:
            return self._script.pop(0) if self._script else "ok"

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @staticmethod
    def summary_for(body: Any) -> str:
        """The summary the ``ok`` behaviour returns for ``body``."""
        return summary_for(body)


def _completion(body: Any, content: str | None, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", "fake") if isinstance(body, dict) else "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
    }


def _handler_for(server_state: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def _send(
            self, status: int, payload: bytes, content_type: str, extra: dict[str, str]
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def _json(self, status: int, data: Any, extra: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(data).encode(), "application/json", extra or {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            auth = self.headers.get("Authorization", "")
            digest = hashlib.sha256(auth.encode()).hexdigest()
            server_state.record(
                RecordedRequest(
                    "POST", self.path, headers, body, auth.startswith("Bearer "), digest
                )
            )
            behaviour = server_state.next_behaviour()
            if behaviour == "401-echo":
                message = f"Incorrect API key provided: {auth.removeprefix('Bearer ')}."
                self._json(401, {"error": {"message": message, "code": "invalid_api_key"}})
            elif behaviour == "429-quota":
                message = "You exceeded your current quota, please check your plan."
                error = {"message": message, "type": "insufficient_quota"}
                self._json(429, {"error": {**error, "code": "insufficient_quota"}})
            elif behaviour == "429-long":
                error = {"error": {"message": "Slow down.", "code": "rate_limit_exceeded"}}
                self._json(429, error, {"Retry-After": "120"})
            elif behaviour in _ERRORS:
                status, code, message = _ERRORS[behaviour]
                extra = {"Retry-After": "0"} if status == 429 else {}
                error = {"error": {"message": message, "type": code, "code": code}}
                self._json(status, error, extra)
            elif behaviour == "slow":
                server_state._released.wait(server_state.delay)
                self._json(200, _completion(body, summary_for(body)))
            elif behaviour == "trickle":
                self._trickle(body)
            elif behaviour in ("huge", "huge-gzip"):
                payload = json.dumps(_completion(body, "x" * server_state.huge_bytes)).encode()
                if behaviour == "huge":
                    self._send(200, payload, "application/json", {})
                else:
                    packed = gzip.compress(payload)
                    self._send(200, packed, "application/json", {"Content-Encoding": "gzip"})
            elif behaviour == "non-json":
                page = b"<html><body>502 Bad Gateway (nginx)</body></html>"
                self._send(200, page, "text/html", {})
            elif behaviour == "empty-choices":
                self._json(200, {"id": "x", "object": "chat.completion", "choices": []})
            elif behaviour == "no-content":
                self._json(200, _completion(body, None))
            elif behaviour == "length":
                self._json(200, _completion(body, "A summary cut sho", "length"))
            else:
                self._json(200, _completion(body, summary_for(body)))

        def _trickle(self, body: Any) -> None:
            payload = json.dumps(_completion(body, summary_for(body))).encode()
            padded = b" " * 100_000 + payload  # whitespace first: valid JSON, very late
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(padded)))
                self.end_headers()
                self.wfile.flush()
                for k in range(len(padded)):
                    if server_state._released.is_set():
                        return
                    self.wfile.write(padded[k : k + 1])
                    self.wfile.flush()
                    time.sleep(server_state.trickle_interval)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up: the point of the test

        def do_GET(self) -> None:
            self._json(404, {"error": {"message": "not found"}})

    return Handler


def free_port() -> int:
    """A port on 127.0.0.1 with nothing listening (for connection-refused tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens: connections are refused."""
    return free_port()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fresh fake OpenAI server per test; stopped (and slow answers released) afterwards."""
    state = FakeOpenAI("127.0.0.1", 0)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(state))
    server.daemon_threads = True
    server.block_on_close = False
    state.port = server.server_address[1]
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-openai", daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        state._released.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
