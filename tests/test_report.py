"""The downloadable report: self-contained, inert chat text, the set-up, decisions and metrics."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from chatgen import assistant, system, user

from ctxlab import load_chat
from ctxlab.replay import replay
from ctxlab.strategies import build_strategy, get_strategy_class, parameters
from ctxlab.tokens import TokenCounter
from ctxlab.ui import report

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "sample_chats" / "hostile_content.json"
CODING = ROOT / "sample_chats" / "coding_agent_session.json"
SAFE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "p",
    "b",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "div",
    "script",
}


class _Page(HTMLParser):
    """Tags with their attributes, the text outside scripts and styles, and the data tables."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._in: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in.append(tag)
        if tag == "table" and dict(attrs).get("class") == "data":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] in ("script", "style"):
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module")
def hostile_html(counter: TokenCounter) -> str:
    messages = load_chat(HOSTILE)
    counted = counter.counted(messages)
    strategy = build_strategy("window-drop", {"budget": counted.total // 2})
    result = strategy.apply(messages, counter)
    return report.report_html(
        report.playground_report("<b>hostile</b> chat", "gpt-4o", counted, strategy, result)
    )


def test_report_is_self_contained(hostile_html: str) -> None:
    page = parse(hostile_html)
    assert 'src="http' not in hostile_html and "src='http" not in hostile_html
    assert "<link" not in hostile_html.lower()
    assert "@import" not in hostile_html and "@font-face" not in hostile_html
    scripts = [attrs for tag, attrs in page.tags if tag == "script"]
    assert scripts and all("src" not in attrs for attrs in scripts)
    # plotly.js is inlined exactly once, whatever the number of charts
    assert hostile_html.count("plotly.js v") == 1
    csp = next(a for t, a in page.tags if t == "meta" and a.get("http-equiv"))
    assert "default-src 'none'" in str(csp.get("content"))


def test_hostile_chat_text_is_escaped(hostile_html: str) -> None:
    raw = json.loads(HOSTILE.read_text(encoding="utf-8"))["messages"]
    page = parse(hostile_html)
    # Only the report's own tags exist: no element the chat's markup could have created.
    assert {tag for tag, _ in page.tags} <= SAFE_TAGS
    for _, attrs in page.tags:
        assert not any(name.startswith("on") for name in attrs)
    text = "".join(page.text)
    # The chat name and the hostile markup appear as text, escaped in the source.
    assert "<b>hostile</b> chat" in text
    assert "&lt;b&gt;hostile&lt;/b&gt; chat" in hostile_html
    probe = next(m["content"] for m in raw if m["content"].startswith("<script>"))
    assert " ".join(probe.split())[:60] in text
    assert probe[:25] not in hostile_html
    for message in raw:
        assert message["id"] in text


def test_report_holds_parameters_metrics_and_every_decision(counter: TokenCounter) -> None:
    raw = json.loads(CODING.read_text(encoding="utf-8"))["messages"]
    messages = load_chat(CODING)
    counted = counter.counted(messages)
    strategy = build_strategy("window-drop", {"budget": 12_345})
    result = strategy.apply(messages, counter)
    html = report.report_html(
        report.playground_report("coding", "gpt-4o", counted, strategy, result)
    )
    page = parse(html)
    text = " ".join(page.text)
    label = parameters(get_strategy_class("window-drop"))[0].spec.label
    assert label in text and "12,345" in text
    assert get_strategy_class("window-drop").title in text
    assert f"{result.tokens_after:,} of {result.tokens_before:,}" in text
    decisions = page.tables[0]
    assert decisions[0][:5] == ["#", "round", "role", "tokens", "decision"]
    body = decisions[1:]
    assert len(body) == len(raw)  # a short chat: every message, no gap row
    assert [row[5] for row in body] == [m["id"] for m in raw]
    assert [row[2] for row in body] == [m["role"] for m in raw]
    assert [row[4] for row in body] == [result.decisions[m["id"]].value for m in raw]
    assert "dropped" in {row[4] for row in body} and "kept" in {row[4] for row in body}


def test_long_chats_keep_first_and_last_rows_with_a_note(counter: TokenCounter) -> None:
    n = report.TABLE_HEAD + report.TABLE_TAIL + 321
    messages = [system("sys")]
    for i in range(n // 2):
        messages += [user(f"question {i}", f"u{i}"), assistant(f"answer {i}", f"a{i}")]
    counted = counter.counted(messages)
    strategy = build_strategy("sliding-window", {"window": 10})
    result = strategy.apply(messages, counter)
    html = report.report_html(report.playground_report("long", "gpt-4o", counted, strategy, result))
    rows = parse(html).tables[0][1:]
    gap = [r for r in rows if len(r) == 1]
    assert len(gap) == 1
    left_out = len(messages) - report.TABLE_HEAD - report.TABLE_TAIL
    assert f"{left_out:,} rows left out" in gap[0][0]
    ids = [r[5] for r in rows if len(r) > 1]
    expected = [m.id for m in messages]
    assert ids == expected[: report.TABLE_HEAD] + expected[-report.TABLE_TAIL :]


def test_compare_report_lines_up_round_maps_and_lists_every_configuration(
    counter: TokenCounter,
) -> None:
    messages = load_chat(CODING)
    counted = counter.counted(messages)
    configs = []
    for name, values in (("window-drop", {"budget": 9000}), ("sliding-window", {"window": 30})):
        strategy = build_strategy(name, values)
        configs.append(
            (f"{get_strategy_class(name).title}", strategy, strategy.apply(messages, counter))
        )
    metrics = pd.DataFrame(
        {"configuration": [c[0] for c in configs], "cost per call": ["$1.00", "$2.00"]}
    )
    html = report.report_html(
        report.compare_report("coding", "gpt-4o", counted, configs, metrics, notes=("stand-in",))
    )
    text = " ".join(parse(html).text)
    for label, _, _ in configs:
        assert label in text
    assert "$2.00" in text and "stand-in" in text
    ranges = re.findall(r'"range":\[0(?:\.0)?,([0-9.]+)\]', html)
    assert len(ranges) == 2 and {float(r) for r in ranges} == {float(counted.prefix[-1])}


def test_replay_report_has_session_totals_and_the_last_call(counter: TokenCounter) -> None:
    messages = load_chat(CODING)
    strategy = build_strategy("window-drop", {"budget": 8000})
    rep = replay(messages, strategy, counter, model="gpt-4o")
    html = report.report_html(
        report.replay_report(
            "coding", "gpt-4o", strategy, rep, 8000, last=report.last_call(rep, counter, messages)
        )
    )
    page = parse(html)
    text = " ".join(page.text)
    assert f"{len(rep):,}" in text and "Cumulative cost with prompt cache" in text
    calls, last = page.tables
    assert len(calls) - 1 == len(rep)
    assert len(last) - 1 == rep.rows[-1].message_index


def test_the_report_builder_needs_no_streamlit() -> None:
    code = (
        "import sys, ctxlab.ui.report; "
        "assert 'streamlit' not in sys.modules, 'streamlit was imported'"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_report_names_the_conversation_and_keeps_short_cells_whole(
    counter: TokenCounter,
) -> None:
    messages = load_chat(CODING)
    counted = counter.counted(messages)
    strategy = build_strategy("window-drop", {"budget": 9000})
    result = strategy.apply(messages, counter)
    made = report.playground_report(
        "session.jsonl", "gpt-4o", counted, strategy, result, conversation="2 (fix the tests)"
    )
    html = report.report_html(made)
    assert made.conversation == "2 (fix the tests)"
    assert "on session.jsonl, conversation 2 (fix the tests)" in made.title
    assert "conversation: <b>2 (fix the tests)</b>" in html
    # without one, the report says nothing about conversations
    plain = report.report_html(report.playground_report("c", "gpt-4o", counted, strategy, result))
    assert "conversation" not in plain.split("<h2>")[0].lower()
    # "#", "role" and costs are short cells (never broken); long text cells wrap; every
    # table scrolls inside the page instead of running off it
    assert '<td class="n">10</td>' in html
    assert "<td>assistant</td>" in html
    assert "<td class='t'>" in html
    assert html.count("<div class='scroll'><table class='data'>") == html.count(
        "<table class='data'>"
    )
    assert "table.data td { white-space: nowrap; }" in html
