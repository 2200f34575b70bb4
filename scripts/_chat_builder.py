"""A tiny builder for the hand-scripted sample chats (used by make_sample_chats.py).

Every message gets a stable id (``<prefix>-<n>``), every tool call a deterministic
``call_...`` id, and every tool call is answered right after the assistant message that made it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

WRITTEN = "written for ctxlab (scripts/make_sample_chats.py)"
"""The ``source`` of every hand-scripted sample."""

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def call_id(seed: str) -> str:
    """An OpenAI-looking call id (``call_`` + 24 base62 chars) derived from ``seed``."""
    number = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:18], "big")
    chars = []
    for _ in range(24):
        number, rest = divmod(number, 62)
        chars.append(_ALPHABET[rest])
    return "call_" + "".join(chars)


@dataclass
class Call:
    """One tool call and the text its tool returned."""

    name: str
    args: dict[str, Any]
    result: str


@dataclass
class ChatBuilder:
    prefix: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    _calls: int = 0

    def _id(self) -> str:
        return f"{self.prefix}-{len(self.messages) + 1:03d}"

    def add(self, role: str, content: str | None, **extra: Any) -> str:
        message: dict[str, Any] = {"id": self._id(), "role": role, "content": content}
        message.update(extra)
        self.messages.append(message)
        return str(message["id"])

    def system(self, text: str) -> str:
        return self.add("system", text)

    def user(self, text: str) -> str:
        return self.add("user", text)

    def assistant(self, text: str) -> str:
        return self.add("assistant", text)

    def tools(self, text: str | None, *calls: Call) -> list[str]:
        """An assistant message making ``calls`` (in parallel), then one tool message per call."""
        ids = []
        for _ in calls:
            self._calls += 1
            ids.append(call_id(f"{self.prefix}/{self._calls}"))
        self.add(
            "assistant",
            text,
            tool_calls=[
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args)},
                }
                for cid, c in zip(ids, calls, strict=True)
            ],
        )
        return [
            self.add("tool", c.result, tool_call_id=cid) for cid, c in zip(ids, calls, strict=True)
        ]

    def document(self, title: str, description: str, source: str = WRITTEN) -> dict[str, Any]:
        return {
            "title": title,
            "description": description,
            "source": source,
            "license": "MIT",
            "messages": self.messages,
        }
