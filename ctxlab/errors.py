"""The one exception hierarchy of ctxlab.

Every error a user can cause derives from :class:`CtxlabError` and carries a message that says
what is wrong and where, so the CLI can print it on one line and the app can show it without a
traceback::

    CtxlabError
    ├── ChatFormatError     a chat file or value that cannot be read (names the line / JSON path)
    ├── ParameterError      a strategy parameter out of range or of the wrong type
    ├── UnknownNameError    an unknown strategy, model, tokenizer or provider name
    ├── SummarizerError     a summarizer that failed; the history is left unchanged
    ├── ProviderCountError  a provider's token-counting call that failed; ctxlab's count stands
    └── MissingExtraError   a feature whose optional packages are not installed (names the extra)
"""

from __future__ import annotations

__all__ = [
    "ChatFormatError",
    "CtxlabError",
    "MissingExtraError",
    "ParameterError",
    "ProviderCountError",
    "SummarizerError",
    "UnknownNameError",
]


class CtxlabError(Exception):
    """Root of every error ctxlab raises on purpose."""


class ChatFormatError(CtxlabError, ValueError):
    """A chat that cannot be read.

    Args:
        message: what was expected and what was found.
        where: the place, e.g. ``"line 12"`` or ``"$.messages[3].content"``; prefixed to the text.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        self.where = where
        self.reason = message
        super().__init__(f"{where}: {message}" if where else message)


class ParameterError(CtxlabError, ValueError):
    """A strategy parameter that is out of range or of the wrong type."""


class UnknownNameError(CtxlabError, KeyError):
    """A name (strategy, model, tokenizer, provider) that ctxlab does not know."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain sentence.
        return str(self.args[0]) if self.args else ""


class SummarizerError(CtxlabError, RuntimeError):
    """A summarizer call that failed. The message says what to check; it never holds a key."""


class ProviderCountError(CtxlabError, RuntimeError):
    """A provider's token-counting call that failed (:mod:`ctxlab.provider_count`): one line
    naming the provider's endpoint and what it said; it never holds a key. ctxlab's own count
    stands."""


class MissingExtraError(CtxlabError, ImportError):
    """A feature needs an optional extra this installation lacks; the message is the one line
    that says which: ``ctxlab app needs the playground: pip install 'ctxlab[app]'``."""
