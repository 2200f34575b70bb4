"""The offline summarizer: deterministic, extractive, no network, and it says so.

Its first line begins with :attr:`OfflineSummarizer.HEADER`, so nobody mistakes its output for
an LLM's; its output never exceeds the request's ``max_tokens``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxlab.summarizers.base import SummaryRequest, SummaryResponse
from ctxlab.tokens import ApproxCounter, TokenCounter

__all__ = ["OfflineSummarizer"]

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
