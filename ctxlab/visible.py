"""Untrusted text made visible: every character that hides, reorders or controls shown as an escape.

Chat files, file names, URL values and summarizer replies are untrusted. Before the app or the
``ctxlab`` command shows any of it, :func:`visible` replaces each character that a screen or a
terminal would act on instead of showing (C0 and C1 controls such as ESC, which starts terminal
escape sequences, DEL, zero-width characters, bidirectional embeddings, overrides and isolates,
the BOM, lone surrogates) with ``\\uXXXX``. Newline and tab stay: they are layout.
"""

from __future__ import annotations

import re

__all__ = ["INVISIBLE", "visible"]

# Zero-width, directional marks and embeddings/overrides/isolates, the BOM, the soft hyphen, C0
# controls except tab and newline, DEL and C1 controls, and lone surrogates (which no output
# encoding can write).
INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad"
    "\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str) -> str:
    """``text`` with every invisible or controlling character shown as ``\\uXXXX``.

    Everything else is left exactly as it is; the result is for display only.

    >>> visible("abc\u202edef\u200b")
    'abc\\\\u202edef\\\\u200b'
    >>> visible("\x1b[31mred\x1b[0m")
    '\\\\u001b[31mred\\\\u001b[0m'
    """
    return INVISIBLE.sub(_escape, text)
