"""ctxlab.ui.text.markdown_literal: untrusted text through Markdown shows as exactly that text.

A CommonMark parser (markdown-it-py) checks the structure: the only nodes are paragraphs, text,
code spans and line breaks, and the text they show is the input. What CommonMark cannot model
(Streamlit's GitHub autolinks, ``:material/`` rewrite, directives, math) is checked on the
string itself: no bare URL, e-mail or ``www.`` outside a code span, no unescaped punctuation.
The real browser check is tests/browser/test_hostile_content.py.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ctxlab.ui.text import literal_text, markdown_literal, visible

PARSER = MarkdownIt("commonmark").enable(["table", "strikethrough"])
ALLOWED_BLOCKS = {"paragraph_open", "paragraph_close", "inline"}
ALLOWED_INLINE = {"text", "code_inline", "hardbreak", "softbreak"}
HOSTILE = [
    "![p](http://127.0.0.1:9/pixel.png)",
    "[login](https://evil.example)",
    "<img src=x onerror=alert(1)>",
    ":red[x]",
    "$x$",
    "$$\\frac{1}{0}$$",
    "see https://evil.example/path and www.evil.example",
    "write to foo@bar.example",
    ":smile: :+1: :material/home:",
    "# heading",
    "a|b\n-|-\n1|2",
    "    indented code\n\n1. list\n- item\n> quote",
    "<https://auto.example>",
    "x://:material/home::red[y]",
    "`` tick``s `",
    "&amp; &#65;",
    '=HYPERLINK("http://x","y")',
    "invoice_\u202egpj.exe pass\u200bword",
]
PIECES = st.sampled_from(
    [
        *"[]()!<>:`*_#$-+=|~\\@./&;",
        *(" ", "  ", "\n", "\t", "    ", "1.", "a", "b", "é", "\u202e"),
        *("http://", "HTTPS://", "www.", ":material/", ":red[", "mailto:", "&#65;", "```", "<!--"),
    ]
)
TEXTS = st.one_of(st.text(), st.lists(PIECES, max_size=40).map("".join))


def _inline(markdown: str) -> list[Token]:
    """The inline tokens of every paragraph, a line break between two paragraphs."""
    tokens = PARSER.parse(markdown)
    assert {t.type for t in tokens} <= ALLOWED_BLOCKS, [t.type for t in tokens]
    children: list[Token] = []
    for token in tokens:
        if token.type == "inline":
            if children:
                children.append(Token("softbreak", "br", 0))
            children.extend(token.children or [])
    assert {c.type for c in children} <= ALLOWED_INLINE, [c.type for c in children]
    return children


def _shown(children: list[Token]) -> str:
    return "".join("\n" if c.type.endswith("break") else c.content for c in children)


def _words(text: str) -> str:
    return " ".join(text.split())


def _outside_code_spans(markdown: str) -> str:
    return re.sub(r"(`+) \S+? \1(?!`)", " ", markdown)


@given(TEXTS)
def test_markdown_literal_yields_only_text_and_shows_the_input(text: str) -> None:
    markdown = markdown_literal(text)
    children = _inline(markdown)
    # Whitespace aside (HTML collapses it, and Markdown drops a paragraph's trailing spaces),
    # the reader sees the input made visible, character for character.
    assert _words(_shown(children)) == _words(visible(text))
    assert literal_text(markdown) == visible(text)


@given(TEXTS)
def test_markdown_literal_leaves_streamlit_no_syntax_outside_code_spans(text: str) -> None:
    markdown = markdown_literal(text)
    assert ":material/" not in markdown  # Streamlit rewrites it before parsing, code included
    for child in _inline(markdown):
        if child.type == "text":  # GitHub autolinks fire on text, after escapes are resolved
            assert not re.search(r"://|@|www\.", child.content, re.IGNORECASE), child.content
    outside = _outside_code_spans(markdown)
    bare = re.sub(r"\\[!-/:-@\[-`{-~]|&#(?:9|32);", "", outside)
    assert not re.search(r"[!-/:-@\[-`{-~]", bare), bare


def test_each_hostile_probe_is_text_with_urls_in_code_spans() -> None:
    for text in HOSTILE:
        markdown = markdown_literal(text)
        children = _inline(markdown)
        assert _words(_shown(children)) == _words(visible(text)), text
    url = _inline(markdown_literal("![p](http://127.0.0.1:9/pixel.png)"))
    assert [(c.type, c.content) for c in url] == [
        ("code_inline", "![p](http://127.0.0.1:9/pixel.png)")
    ]


def test_a_line_break_stays_a_line_break_and_indentation_stays_text() -> None:
    children = _inline(markdown_literal("first\n    second"))
    assert _shown(children) == "first\n    second"


def test_invisible_characters_are_shown_as_escapes() -> None:
    assert literal_text(markdown_literal("a\u202eb\x1b[31m")) == "a\\u202eb\\u001b[31m"
