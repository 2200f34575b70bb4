"""Summarizers that call nothing: the scripted test double and the stand-ins the engine uses.

* :class:`ScriptedSummarizer` returns given texts in order and records every request: the
  canonical test double, also used by the Learn page.
* :class:`PreviewSummarizer` records the exact request and answers with :data:`PLACEHOLDER`, so
  a page can show what would be sent before anyone pays for a call.
* :class:`RecordingSummarizer` passes requests on and keeps every response (replay counts and
  costs them).
* :class:`NoSummarizer` stands in where a summarizer must not be called; calling it is an error.
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxlab.errors import SummarizerError
from ctxlab.summarizers.base import Summarizer, SummaryRequest, SummaryResponse, approx_tokens

__all__ = [
    "PLACEHOLDER",
    "NoSummarizer",
    "PreviewSummarizer",
    "RecordingSummarizer",
    "ScriptedSummarizer",
]

PLACEHOLDER = "(summary not generated yet: press “Run summarizer” to call the endpoint)"
"""The text a :class:`PreviewSummarizer` answers with."""


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
            input_tokens=approx_tokens(m["content"] for m in request.messages),
            output_tokens=approx_tokens([item]),
            model=request.model or self.model,
            finish_reason="stop",
        )


class PreviewSummarizer:
    """Records the exact request and answers with :data:`PLACEHOLDER`; never calls anything."""

    name = "preview"

    def __init__(self, model: str = "") -> None:
        self.model = model
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.requests.append(request)
        return SummaryResponse(PLACEHOLDER, 0, 0, self.model or "preview")


class RecordingSummarizer:
    """Passes requests to ``inner`` and keeps every response in :attr:`responses`, in order."""

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.responses: list[SummaryResponse] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        response = self.inner.summarize(request)
        self.responses.append(response)
        return response


class NoSummarizer:
    """Stands in where no summary may be asked for; :meth:`summarize` raises SummarizerError."""

    name = "none"
    model = ""

    def __init__(self, why: str = "a summary was asked for where none may be") -> None:
        self.why = why

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        raise SummarizerError(f"internal: {self.why}")
