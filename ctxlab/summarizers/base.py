"""The summarizer protocol and the two values that cross it: the request and the response.

A :class:`SummaryRequest` is the exact request a summarizer receives; the app shows it verbatim
and it is the very object sent, so there is no second rendering. Every implementation raises
:class:`~ctxlab.errors.SummarizerError` and nothing else when it fails; no error message ever
holds an API key. This module imports no client library.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import orjson

__all__ = [
    "Summarizer",
    "SummaryRequest",
    "SummaryResponse",
    "approx_tokens",
    "output_cap_field",
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


def approx_tokens(texts: Iterable[str]) -> int:
    """A characters/4 token estimate of ``texts``, for summarizers that count no real tokens.

    >>> approx_tokens(["abcd", "abcde"])
    3
    """
    return sum(math.ceil(len(t) / 4) for t in texts)
