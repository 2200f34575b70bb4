"""A stand-in for Anthropic's and Google's token-counting endpoints, misbehaving on cue.

The server runs in a thread on 127.0.0.1 (a free port) and records every request it receives
(method, path, query string, headers, raw body). It answers each with the next scripted
behaviour, or ``ok`` once the script is used up: ``ok`` answers ``{"input_tokens": N}`` on an
Anthropic path and ``{"totalTokens": N}`` on a Gemini path, N = :attr:`FakeCounting.tokens`.
Other behaviours: ``401`` (each provider's own error shape, its message repeating the key it
was sent, as careless servers do), ``429``, ``500``, ``garbage`` (a 200 that is not JSON),
``no-count`` (a 200 JSON without the count), ``redirect`` (a 307 to another port) and ``slow``
(answers after :attr:`FakeCounting.delay` seconds, longer than a test client's timeout).

Register with ``pytest_plugins = ["fake_counting"]`` (see ``tests/fake_openai.py`` for why).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["BEHAVIOURS", "CountRecord", "FakeCounting", "fake_counting"]

BEHAVIOURS = ("ok", "401", "429", "500", "garbage", "no-count", "redirect", "slow")


@dataclass(frozen=True)
class CountRecord:
    """One request as the server received it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


class FakeCounting:
    def __init__(self) -> None:
        self.requests: list[CountRecord] = []
        self.tokens = 41_230
        self.delay = 5.0
        self._script: list[str] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path, _, query = self.path.partition("?")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake._lock:
                    fake.requests.append(CountRecord("POST", path, query, headers, raw))
                    behaviour = fake._script.pop(0) if fake._script else "ok"
                fake._answer(self, behaviour, path, headers)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def script(self, *behaviours: str) -> None:
        unknown = set(behaviours) - set(BEHAVIOURS)
        assert not unknown, f"unknown behaviours {unknown}"
        with self._lock:
            self._script.extend(behaviours)

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def _answer(
        self, handler: BaseHTTPRequestHandler, behaviour: str, path: str, headers: dict[str, str]
    ) -> None:
        google = path.startswith("/v1beta/")
        key = headers.get("x-goog-api-key" if google else "x-api-key", "")
        if behaviour == "slow":
            self._release.wait(self.delay)
            behaviour = "ok"
        if behaviour == "ok":
            field = "totalTokens" if google else "input_tokens"
            self._send(handler, 200, json.dumps({field: self.tokens}))
        elif behaviour == "401":
            if google:
                error = {"code": 401, "message": f"API key not valid: {key}", "status": "x"}
                self._send(handler, 401, json.dumps({"error": error}))
            else:
                error = {"type": "authentication_error", "message": f"invalid x-api-key {key}"}
                self._send(handler, 401, json.dumps({"type": "error", "error": error}))
        elif behaviour == "429":
            error = {"type": "rate_limit_error", "message": "Number of requests has exceeded"}
            self._send(handler, 429, json.dumps({"type": "error", "error": error}))
        elif behaviour == "500":
            self._send(handler, 500, json.dumps({"error": {"message": "Internal error"}}))
        elif behaviour == "garbage":
            self._send(handler, 200, "<html>surprise</html>", "text/html")
        elif behaviour == "no-count":
            self._send(handler, 200, json.dumps({"tokens": "many"}))
        elif behaviour == "redirect":
            handler.send_response(307)
            handler.send_header("Location", "http://127.0.0.1:9/elsewhere")
            handler.send_header("Content-Length", "0")
            handler.end_headers()

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, text: str, kind: str = "application/json"
    ) -> None:
        data = text.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


@pytest.fixture
def fake_counting() -> Iterator[FakeCounting]:
    server = FakeCounting()
    try:
        yield server
    finally:
        server.close()
