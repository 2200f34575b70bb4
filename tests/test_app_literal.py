"""Issue 22: text from a chat file reaches no error, warning, note or caption as Markdown.

A pasted document whose keys are Markdown/HTML probes, and a chat whose message and tool-call
ids are, are loaded on each page; every error, warning, info and caption is then parsed as
CommonMark (markdown-it-py) and must hold no link, image or HTML, no bare URL, e-mail or
``www.`` outside a code span (GitHub autolinks), no ``:material/`` (Streamlit's icon rewrite)
and no unescaped ``:red[`` / ``$``, while the probe is still shown, character for character.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from app_support import PLAYGROUND, page, param_widget
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from ctxlab.ui.text import literal_text

PIXEL = "![p](http://127.0.0.1:9/pixel.png)"
PROBES = [
    PIXEL,
    "[login](https://evil.example)",
    "<img src=x onerror=alert(1)>",
    ":red[x]",
    "$x$",
    "https://bare.example/path",
    ":material/home:",
]
FORMULAS = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)"]
PARSER = MarkdownIt("commonmark")
PAGES = [PLAYGROUND, "pages/1_Compare.py", "pages/2_Replay.py", "pages/3_Tune.py"]


def _hostile_chat() -> list[dict[str, object]]:
    """Ids that are probes; a sliding window of 3 leaves the tool result without its call, so
    the validator quotes the call's id."""
    call = PIXEL
    return [
        {"id": PROBES[1], "role": "system", "content": "s"},
        {"id": FORMULAS[0], "role": "user", "content": "q"},
        {
            "id": FORMULAS[1],
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": call, "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"id": FORMULAS[2], "role": "tool", "tool_call_id": call, "content": "r"},
        {"id": FORMULAS[3], "role": "user", "content": "q2 " + " ".join(PROBES)},
        {"id": ":red[x]", "role": "assistant", "content": "done"},
    ]


def _paste(at: AppTest, text: str) -> None:
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    at.sidebar.text_area(key="ctx.paste").input(text).run()
    at.sidebar.button(key="ctx.paste_load").click().run()
    assert not at.exception


def _notices(at: AppTest) -> list[str]:
    kinds = ("error", "warning", "info", "success", "caption")
    return [element.value for kind in kinds for element in at.get(kind)]


def _assert_literal(markdown: str) -> None:
    tokens = PARSER.parse(markdown)
    inline = [c for t in tokens if t.type == "inline" for c in t.children or []]
    types = {t.type for t in tokens} | {c.type for c in inline}
    assert not types & {"link_open", "image", "html_inline", "html_block"}, markdown
    for child in inline:
        if child.type == "text":
            assert not re.search(r"://|@|www\.", child.content, re.IGNORECASE), markdown
            assert ":red[" not in child.content or "\\:red" in markdown, markdown
    assert ":material/home" not in markdown, markdown
    assert not re.search(r"(?<!\\)\$x", markdown), markdown


def test_a_pasted_document_with_hostile_keys_shows_them_literally() -> None:
    at = page(PLAYGROUND)
    at.run()
    _paste(at, json.dumps({probe: 1 for probe in PROBES}))
    errors = [e.value for e in at.sidebar.error]
    assert errors, "the unknown document is reported"
    for value in _notices(at):
        _assert_literal(value)
    shown = literal_text(errors[0])
    for probe in PROBES:
        assert probe in shown


@pytest.mark.parametrize("path", PAGES)
def test_hostile_ids_show_literally_in_every_notice_of_every_page(path: str) -> None:
    at = page(path, strategy="sliding-window")
    at.run()
    _paste(at, json.dumps(_hostile_chat()))
    if path != "pages/3_Tune.py":
        param_widget(at, "window").set_value(3).run()
        assert not at.exception
    notices = _notices(at)
    assert notices
    for value in notices:
        _assert_literal(value)


def test_the_decisions_csv_neutralises_formula_ids_and_keeps_numbers() -> None:
    from ctxlab.counted import CountedChat
    from ctxlab.formats import load_chat
    from ctxlab.strategies import build_strategy
    from ctxlab.tokens import get_counter
    from ctxlab.ui.render import decisions_csv

    messages = load_chat(json.dumps(_hostile_chat()))
    counter = get_counter("gpt-4o")
    counted: CountedChat = counter.counted(messages)
    result = build_strategy("sliding-window", {"window": 3}).apply(messages, counter)
    rows = list(csv.DictReader(io.StringIO(decisions_csv(counted, result.decisions))))
    assert [row["id"] for row in rows[1:5]] == ["'" + f for f in FORMULAS]
    assert all(row["tokens"].isdigit() for row in rows)
    assert rows[0]["id"] == PROBES[1]  # not a formula: unchanged
