"""Summarizers: the protocol, the request/response values that cross it, and implementations.

* :mod:`~ctxlab.summarizers.base` — :class:`Summarizer`, :class:`SummaryRequest`,
  :class:`SummaryResponse`.
* :mod:`~ctxlab.summarizers.offline` — :class:`OfflineSummarizer`: deterministic, extractive,
  no network; says so in its first line.
* :mod:`~ctxlab.summarizers.scripted` — :class:`ScriptedSummarizer` (the canonical test double)
  and the stand-ins that call nothing: :class:`PreviewSummarizer`, :class:`RecordingSummarizer`,
  :class:`NoSummarizer`.
* :mod:`~ctxlab.summarizers.cache` — :class:`SummaryCache` and the process-wide
  :func:`shared_cache`.
* :mod:`~ctxlab.summarizers.openai_compat` — :class:`OpenAISummarizer`, any OpenAI-compatible
  server. It is the only module that imports ``openai``, and it is loaded on first use of its
  names here (``ctxlab.summarizers.OpenAISummarizer``), never by importing this package.

Every implementation raises :class:`~ctxlab.errors.SummarizerError` and nothing else when it
fails; no error message ever holds an API key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab._lazy import lazy_names
from ctxlab.summarizers.base import Summarizer, SummaryRequest, SummaryResponse, output_cap_field
from ctxlab.summarizers.cache import SummaryCache, shared_cache
from ctxlab.summarizers.offline import OfflineSummarizer
from ctxlab.summarizers.scripted import (
    PLACEHOLDER,
    NoSummarizer,
    PreviewSummarizer,
    RecordingSummarizer,
    ScriptedSummarizer,
)

if TYPE_CHECKING:
    from ctxlab.summarizers.openai_compat import NO_KEY_NEEDED, OpenAISummarizer

__all__ = [
    "NO_KEY_NEEDED",
    "PLACEHOLDER",
    "NoSummarizer",
    "OfflineSummarizer",
    "OpenAISummarizer",
    "PreviewSummarizer",
    "RecordingSummarizer",
    "ScriptedSummarizer",
    "Summarizer",
    "SummaryCache",
    "SummaryRequest",
    "SummaryResponse",
    "output_cap_field",
    "shared_cache",
]

# openai_compat is the only module that imports ``openai``: it loads when its names are used.
_LAZY = {name: f"{__name__}.openai_compat" for name in ("NO_KEY_NEEDED", "OpenAISummarizer")}


__getattr__, __dir__ = lazy_names(__name__, globals(), _LAZY, __all__)
