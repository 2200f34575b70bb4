"""Safe text: chat content made inert and visible before any widget, table or hover shows it.

Chat text is untrusted. The app shows it only through ``st.text``, ``st.code``, ``st.dataframe``
and ``st.json`` (never Markdown or HTML), and every string a user reads first goes through
:func:`visible`, so zero-width and bidirectional control characters appear as escapes instead
of silently reordering or hiding text. Plotly renders hover text as HTML-ish markup, so hover
strings also go through :func:`hover_safe`. The one HTML view, :func:`highlighted_html`, escapes
every character of the text and adds only its own ``<mark>`` tags. Where Streamlit only takes
Markdown (``st.error``, ``st.caption``, widget labels), :func:`markdown_literal` turns the text
into Markdown that shows exactly that text and nothing else.
"""

from __future__ import annotations

import html
import re

from ctxlab.visible import INVISIBLE, visible

__all__ = [
    "INVISIBLE",
    "highlighted_html",
    "hover_safe",
    "literal_text",
    "markdown_literal",
    "visible",
]


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


# Every ASCII punctuation character: CommonMark lets a backslash escape each of them, and together
# they are every character that can start Markdown syntax (links, images, HTML, emphasis, code,
# headings, lists, tables, Streamlit's ``:red[...]`` / ``:material/...:`` directives, ``$`` math).
_ASCII_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# GitHub's autolink-literal extension (which Streamlit's Markdown uses) turns bare
# ``http(s)://...``, ``www....`` and ``name@host.tld`` into links after escapes are resolved, so
# backslashes cannot stop it; a word holding one of these goes into a code span instead.
_AUTOLINK_PRONE = re.compile(r"://|@|www\.", re.IGNORECASE)
_WORDS = re.compile(r"(\s+)")
_LINE_INDENT = re.compile(r"(^|\n)([ \t]+)(?=[^ \t\n])")


def _code_span(word: str) -> str:
    """``word`` (no whitespace) as an inline code span: literal, whatever it holds."""
    fence = "`" * (max((len(run) for run in re.findall("`+", word)), default=0) + 1)
    # CommonMark strips one space on each side of a code span's content, so the padding lets the
    # content begin or end with a backtick without being read as part of the fence.
    return f"{fence} {word} {fence}"


def _indent_as_text(match: re.Match[str]) -> str:
    # Character references never count as indentation, so a line that starts with four spaces
    # stays text instead of becoming a code block.
    return match.group(1) + match.group(2).replace("\t", "&#9;").replace(" ", "&#32;")


def markdown_literal(text: str) -> str:
    r"""Markdown that Streamlit renders as exactly ``text`` made :func:`visible`: no link, image,
    autolink, HTML, heading, list, table, emphasis, colour directive, icon, emoji or math.

    Words holding ``://``, ``@`` or ``www.`` become code spans (GitHub's autolinks, which
    Streamlit's Markdown uses, ignore backslash escapes); every other ASCII punctuation character
    is backslash-escaped (CommonMark allows that for each of them); a newline becomes a hard line
    break and a line's indentation stays text.

    >>> print(markdown_literal("![x](img.png) :red[a] $x$"))
    \!\[x\]\(img\.png\) \:red\[a\] \$x\$
    >>> print(markdown_literal("see https://t.invalid/p"))
    see ` https://t.invalid/p `
    """
    parts: list[str] = []
    for piece in _WORDS.split(visible(text)):
        if not piece:
            continue
        if piece.isspace():
            parts.append(piece.replace("\n", "  \n"))
        else:
            parts.append(_word(piece))
    return _LINE_INDENT.sub(_indent_as_text, "".join(parts))


def _word(word: str) -> str:
    # Streamlit rewrites every ``:material/`` in the source to ``:material_`` before parsing,
    # code spans included; an escaped slash between the pieces keeps the text as written.
    head, icon, tail = word.partition(_ICON_PREFIX)
    if icon:
        return _word(head + _ICON_PREFIX[:-1]) + "\\/" + (_word(tail) if tail else "")
    if _AUTOLINK_PRONE.search(word):
        return _code_span(word)
    return _ASCII_PUNCTUATION.sub(r"\\\1", word)


_ICON_PREFIX = ":material/"


def literal_text(markdown: str) -> str:
    r"""The text a reader sees for Markdown made by :func:`markdown_literal` (its inverse, up to
    :func:`visible`): what tests compare with the text that went in.

    >>> literal_text(markdown_literal("a.b https://t.invalid `x`\n  y"))
    'a.b https://t.invalid `x`\n  y'
    """
    out: list[str] = []
    position = 0
    for match in _LITERAL_PIECE.finditer(markdown):
        out.append(markdown[position : match.start()])
        if match.group("escaped") is not None:
            out.append(match.group("escaped"))
        elif match.group("code") is not None:
            out.append(match.group("code"))
        elif match.group("ref") is not None:
            out.append(chr(int(match.group("ref"))))
        else:
            out.append("\n")
        position = match.end()
    out.append(markdown[position:])
    return "".join(out)


_LITERAL_PIECE = re.compile(
    r"\\(?P<escaped>[!-/:-@\[-`{-~])"
    r"|(?P<fence>`+) (?P<code>\S+?) (?P=fence)(?!`)"
    r"|&#(?P<ref>9|32);"
    r"|  \n"
)
