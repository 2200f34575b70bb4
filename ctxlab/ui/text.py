"""Safe text: chat content made inert and visible before any widget, table or hover shows it.

Chat text is untrusted. The app shows it only through ``st.text``, ``st.code``, ``st.dataframe``
and ``st.json`` (never Markdown or HTML), and every string a user reads first goes through
:func:`visible`, so zero-width and bidirectional control characters appear as escapes instead
of silently reordering or hiding text. Plotly renders hover text as HTML-ish markup, so hover
strings also go through :func:`hover_safe`. The one HTML view, :func:`highlighted_html`, escapes
every character of the text and adds only its own ``<mark>`` tags.
"""

from __future__ import annotations

import html
import re

__all__ = ["INVISIBLE", "highlighted_html", "hover_safe", "visible"]

# Zero-width, directional marks and embeddings/overrides/isolates, the BOM, and other C0/C1
# control characters except tab and newline.
INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str) -> str:
    """``text`` with every invisible or direction-changing character shown as ``\\uXXXX``.

    Everything else is left exactly as it is; the result is for display only.

    >>> visible("abc\u202edef\u200b")
    'abc\\\\u202edef\\\\u200b'
    """
    return INVISIBLE.sub(_escape, text)


def hover_safe(text: str) -> str:
    """``text`` for a Plotly hover label: :func:`visible`, then ``<``, ``>``, ``&`` escaped.

    >>> hover_safe("<script>x</script>")
    '&lt;script&gt;x&lt;/script&gt;'
    """
    return html.escape(visible(text), quote=False)


def highlighted_html(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` as inert HTML with every match of ``pattern`` wrapped in ``<mark>``.

    Each piece of the text is made :func:`visible` and then HTML-escaped (quotes included), so
    the only markup in the result is the ``<pre>`` and ``<mark>`` tags added here.

    >>> import re
    >>> out = highlighted_html("<b>x</b> [K]", re.compile(r"\\[K\\]"))
    >>> "<b>" in out, "&lt;b&gt;x&lt;/b&gt;" in out, out.count("<mark>[K]</mark>")
    (False, True, 1)
    """
    parts: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        parts.append(f"<span>{html.escape(visible(text[position : match.start()]))}</span>")
        parts.append(f"<mark>{html.escape(visible(match.group()))}</mark>")
        position = match.end()
    if position < len(text):
        parts.append(f"<span>{html.escape(visible(text[position:]))}</span>")
    return f'<pre style="white-space: pre-wrap; margin: 0">{"".join(parts)}</pre>'
