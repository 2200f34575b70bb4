"""The downloadable report: one self-contained HTML file for people who were not in the room.

A :class:`Report` is a pure value (title, chat, model and a few :class:`Section` s of facts,
figures, tables and notes); :func:`report_html` turns it into one HTML document, and
``playground_report`` / ``compare_report`` / ``replay_report`` build the Report of each page.
No Streamlit here, so tests call every function directly.

Invariants of :func:`report_html`:

* Self-contained and offline: plotly.js is inlined once (before the first chart), styles are
  inline, and nothing refers to another resource (no ``<link>``, no ``src="http…"``, no web
  font). A Content-Security-Policy meta tag forbids any network request from the page, so even
  a URL inside plotly.js's own code can never be fetched.
* Inert chat text: everything that comes from the chat or the user (chat name, ids, previews,
  parameter text) is made :func:`~ctxlab.ui.text.visible` and then ``html.escape``-d; chart
  hover text is escaped by the figure builders, and Plotly's JSON encodes ``<`` as ``\\u003c``.
* Small: a decisions table longer than :data:`TABLE_HEAD` + :data:`TABLE_TAIL` rows keeps its
  first and last rows and says how many it left out (the page's CSV download has them all).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from ctxlab.counted import CountedChat
from ctxlab.model import Message
from ctxlab.pricing import DEFAULT_PRICES, format_usd
from ctxlab.replay import Replay
from ctxlab.strategies import Decision, Strategy, TrimResult, current_params, parameters
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.text import visible

__all__ = [
    "CSP",
    "TABLE_HEAD",
    "TABLE_TAIL",
    "Report",
    "Section",
    "Table",
    "compare_report",
    "decisions_table",
    "frame_table",
    "last_call",
    "playground_report",
    "replay_report",
    "report_html",
    "strategy_facts",
    "trim_facts",
]

TABLE_HEAD = 100
TABLE_TAIL = 100
"""A table keeps at most this many first and last rows; the rows between are left out."""

CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
    "style-src 'unsafe-inline'; img-src data: blob:; font-src data:"
)
"""The report's Content-Security-Policy: inline code only, no request to anywhere."""

Cell = str | int | float | None
CallView = tuple[CountedChat, Mapping[str, Decision]]
"""A chat (or the prefix one call saw) and the decision of each of its messages."""


@dataclass(frozen=True, slots=True)
class Table:
    """Rows under column names; ``omitted`` rows were left out after row ``split``."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""
    omitted: int = 0
    split: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class Section:
    """One part of a report: facts (label, value), figures, tables and notes, in that order."""

    heading: str
    facts: tuple[tuple[str, str], ...] = ()
    figures: tuple[go.Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Report:
    """What one page showed, for someone who was not there."""

    title: str
    chat: str
    model: str
    sections: tuple[Section, ...]
    created: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    conversation: str | None = None
    """Which conversation of a multi-conversation file the report is about (None: the file
    holds one, or the caller does not know)."""


def _shorten(rows: Sequence[tuple[Cell, ...]]) -> tuple[tuple[tuple[Cell, ...], ...], int]:
    """The rows to keep (first and last) and how many were left out."""
    if len(rows) <= TABLE_HEAD + TABLE_TAIL:
        return tuple(rows), 0
    kept = (*rows[:TABLE_HEAD], *rows[len(rows) - TABLE_TAIL :])
    return tuple(kept), len(rows) - TABLE_HEAD - TABLE_TAIL


def _cell(value: Any) -> Cell:
    if value is None or isinstance(value, str | int | float):
        return value
    if hasattr(value, "item"):  # numpy scalars
        item = value.item()
        if isinstance(item, str | int | float):
            return item
    return str(value)


def frame_table(frame: pd.DataFrame, caption: str = "") -> Table:
    """A :class:`Table` of ``frame`` (first and last rows when it is long)."""
    rows = [tuple(_cell(v) for v in row) for row in frame.itertuples(index=False, name=None)]
    kept, omitted = _shorten(rows)
    return Table(tuple(str(c) for c in frame.columns), kept, caption, omitted, TABLE_HEAD)


def decisions_table(counted: CountedChat, decisions: Mapping[str, Decision]) -> Table:
    """One row per message: position, round, role, tokens, decision, id and a preview.

    Chats longer than :data:`TABLE_HEAD` + :data:`TABLE_TAIL` messages keep their first and last
    rows; only those rows' previews are computed.
    """
    n = len(counted)
    if n <= TABLE_HEAD + TABLE_TAIL:
        picked = list(range(n))
        omitted = 0
    else:
        picked = [*range(TABLE_HEAD), *range(n - TABLE_TAIL, n)]
        omitted = n - TABLE_HEAD - TABLE_TAIL
    rows = []
    for i in picked:
        m = counted.messages[i]
        rows.append(
            (
                i,
                counted.round_containing(i),
                m.role.value,
                counted.counts[i],
                decisions.get(m.id, Decision.KEPT).value,
                m.id,
                m.preview(100),
            )
        )
    return Table(
        ("#", "round", "role", "tokens", "decision", "id", "preview"),
        tuple(rows),
        "Every message of the chat and what the strategy did with it.",
        omitted,
        TABLE_HEAD,
    )


def _value_text(value: Any) -> str:
    if value is None:
        return "off"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,g}"
    if isinstance(value, tuple | list):
        return ", ".join(str(getattr(v, "value", v)) for v in value) or "none"
    text = str(value)
    return text if len(text) <= 600 else f"{text[:600]}… ({len(text):,} characters)"


def strategy_facts(strategy: Strategy) -> tuple[tuple[str, str], ...]:
    """The strategy's name and every parameter, by its label, as people read them."""
    cls = type(strategy)
    values = current_params(strategy)
    facts = [("Strategy", f"{cls.title} ({cls.name})")]
    for info in parameters(cls):
        unit = f" {info.spec.unit}" if info.spec.unit and values.get(info.name) is not None else ""
        facts.append((info.spec.label, _value_text(values.get(info.name)) + unit.replace("_", " ")))
    return tuple(facts)


def trim_facts(result: TrimResult, model: str) -> tuple[tuple[str, str], ...]:
    """Tokens before and after, saved share, messages sent, decision counts, cost per call."""
    before, after = result.tokens_before, result.tokens_after
    counts = result.decision_counts()
    cost = DEFAULT_PRICES.cost(model, after, 0)
    full = DEFAULT_PRICES.cost(model, before, 0)
    return (
        ("Tokens sent", f"{after:,} of {before:,}"),
        ("Saved", f"{(before - after) / before:.1%}" if before else "0.0%"),
        ("Messages sent", f"{len(result.messages):,}"),
        *((d.value.capitalize(), f"{counts[d]:,}") for d in Decision),
        ("Input cost per call", f"{format_usd(cost)} (untrimmed {format_usd(full)})"),
    )


def _facts_html(facts: Sequence[tuple[str, str]]) -> str:
    if not facts:
        return ""
    rows = "".join(
        f"<tr><th>{html.escape(visible(k))}</th><td>{html.escape(visible(v))}</td></tr>"
        for k, v in facts
    )
    return f'<table class="facts">{rows}</table>'


def _cell_html(value: Cell) -> str:
    if value is None:
        return "<td></td>"
    if isinstance(value, bool):
        return f"<td>{value}</td>"
    if isinstance(value, int):
        return f'<td class="n">{value:,}</td>'
    if isinstance(value, float):
        return f'<td class="n">{value:,.4g}</td>'
    text = visible(value)
    # Short values (a role, a decision, an id) never break; long text wraps anywhere.
    wide = " class='t'" if len(text) > LONG_CELL else ""
    return f"<td{wide}>{html.escape(text)}</td>"


LONG_CELL = 24
"""A text cell longer than this wraps; shorter ones stay on one line ("assistant")."""


def _table_html(table: Table) -> str:
    head = "".join(f"<th>{html.escape(visible(c))}</th>" for c in table.columns)
    body: list[str] = []
    for k, row in enumerate(table.rows):
        if table.omitted and k == table.split:
            body.append(
                f'<tr class="gap"><td colspan="{len(table.columns)}">… {table.omitted:,} rows '
                "left out to keep this file small (the page's CSV download holds them all) …"
                "</td></tr>"
            )
        body.append("<tr>" + "".join(_cell_html(v) for v in row) + "</tr>")
    caption = (
        f"<p class='caption'>{html.escape(visible(table.caption))}</p>" if table.caption else ""
    )
    return (
        f"{caption}<div class='scroll'><table class='data'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 1200px; padding: 0 1rem; color: #1f2328; }
h1 { margin-bottom: .2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #d0d7de; }
.meta, .caption { color: #57606a; }
table { border-collapse: collapse; margin: .6rem 0; }
table.facts th { text-align: left; padding: .2rem 1.2rem .2rem 0; font-weight: 600; }
table.facts td { padding: .2rem 0; white-space: pre-wrap; }
.scroll { overflow-x: auto; max-width: 100%; }
table.data { min-width: 100%; font-size: .9rem; }
table.data th, table.data td { border: 1px solid #d0d7de; padding: .25rem .4rem; text-align: left;
       vertical-align: top; }
table.data th { white-space: nowrap; }
table.data td { white-space: nowrap; }
table.data td.t { white-space: normal; min-width: 16rem; max-width: 36rem;
       overflow-wrap: anywhere; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.gap td { text-align: center; color: #57606a; font-style: italic; background: #f6f8fa; }
@media print { .scroll { overflow: visible; } table.data { font-size: .75rem; } }
.note { background: #fff8c5; border-left: 4px solid #d4a72c; padding: .5rem .8rem; }
"""


def report_html(report: Report) -> str:
    """The report as one self-contained HTML document (see the module docstring)."""
    parts: list[str] = []
    inlined = False
    config = {"displaylogo": False, "responsive": True}
    for section in report.sections:
        parts.append(f"<h2>{html.escape(visible(section.heading))}</h2>")
        parts.extend(f"<p class='note'>{html.escape(visible(n))}</p>" for n in section.notes)
        parts.append(_facts_html(section.facts))
        for fig in section.figures:
            parts.append(
                fig.to_html(
                    full_html=False,
                    include_plotlyjs=not inlined,
                    include_mathjax=False,
                    config=config,
                )
            )
            inlined = True
        parts.extend(_table_html(t) for t in section.tables)
    title = html.escape(visible(report.title))
    conversation = (
        f" · conversation: <b>{html.escape(visible(report.conversation))}</b>"
        if report.conversation
        else ""
    )
    meta = (
        f"Chat: <b>{html.escape(visible(report.chat))}</b>{conversation} · model: "
        f"<b>{html.escape(visible(report.model))}</b> · made with ctxlab on "
        f"{html.escape(report.created)}"
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{title}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{title}</h1><p class='meta'>{meta}</p>{''.join(parts)}</body></html>\n"
    )


def _trim_section(
    heading: str,
    counted: CountedChat,
    strategy: Strategy,
    result: TrimResult,
    model: str,
    *,
    x_range: tuple[float, float] | None = None,
    notes: tuple[str, ...] = (),
    table: bool = True,
) -> Section:
    # The chat's fixed overhead (its tool definitions) is the map's first block.
    figs = [
        figures.round_map_figure(
            counted,
            result.decisions,
            title="Round map",
            x_range=x_range,
            overhead=counted.overhead,
        )
    ]
    zoom = figures.zoom_rounds(counted, result.decisions)
    if zoom is not None:
        figs.append(
            figures.round_map_figure(
                counted,
                result.decisions,
                title="Zoom on the newest end",
                rounds=zoom,
                overhead=counted.overhead,
            )
        )
    return Section(
        heading,
        facts=(*strategy_facts(strategy), *trim_facts(result, model)),
        figures=tuple(figs),
        tables=(decisions_table(counted, result.decisions),) if table else (),
        notes=(*notes, *(visible(w) for w in result.warnings)),
    )


def playground_report(
    chat: str,
    model: str,
    counted: CountedChat,
    strategy: Strategy,
    result: TrimResult,
    *,
    conversation: str | None = None,
) -> Report:
    """The Playground's view: the strategy, its parameters, metrics, round map and decisions."""
    return Report(
        f"ctxlab report: {type(strategy).title} on {_named(chat, conversation)}",
        chat,
        model,
        (_trim_section("Configuration and result", counted, strategy, result, model),),
        conversation=conversation,
    )


def _named(chat: str, conversation: str | None) -> str:
    """The chat as a report's title names it: ``session.jsonl, conversation 2``."""
    return f"{chat}, conversation {conversation}" if conversation else chat


def compare_report(
    chat: str,
    model: str,
    counted: CountedChat,
    configurations: Sequence[tuple[str, Strategy, TrimResult]],
    metrics: pd.DataFrame,
    *,
    notes: tuple[str, ...] = (),
    conversation: str | None = None,
) -> Report:
    """Compare's view: the metrics table, then each configuration with a round map on one
    shared axis (the chat's tokens) and its decisions."""
    shared = (0.0, float(max(counted.prefix[-1], 1)))
    sections = [Section("Metrics", tables=(frame_table(metrics),), notes=notes)]
    sections.extend(
        _trim_section(label, counted, strategy, result, model, x_range=shared)
        for label, strategy, result in configurations
    )
    return Report(
        f"ctxlab comparison on {_named(chat, conversation)}",
        chat,
        model,
        tuple(sections),
        conversation=conversation,
    )


def last_call(rep: Replay, counter: TokenCounter, messages: Sequence[Message]) -> CallView:
    """The chat as the replay's last call saw it and each of its messages' decision.

    A message absent from that call's decisions was folded into an earlier summary.
    """
    row = rep.rows[-1]
    context = rep.context_at(len(rep))
    prefix = counter.counted(messages[: row.message_index])
    decisions = {m.id: context.decisions.get(m.id, Decision.SUMMARIZED) for m in prefix.messages}
    return prefix, decisions


def replay_report(
    chat: str,
    model: str,
    strategy: Strategy,
    rep: Replay,
    budget: int | None,
    *,
    last: CallView | None = None,
    conversation: str | None = None,
) -> Report:
    """Replay's view: the strategy, session totals, tokens and cost per call, every call, and
    (``last``, from :func:`last_call`) the round map and decisions of the last call."""
    facts = (
        *strategy_facts(strategy),
        ("Calls", f"{len(rep):,}"),
        ("Input tokens, all calls", f"{rep.tokens_sent:,} of {rep.tokens_untrimmed:,} untrimmed"),
        ("Saved", f"{rep.saved_fraction:.1%}"),
        ("Summarizer calls", f"{rep.summarizer_calls:,}"),
        ("Cumulative cost (trimmed)", format_usd(rep.total_cost)),
        ("Cumulative cost (untrimmed)", format_usd(rep.total_cost_untrimmed)),
        ("Cumulative cost with prompt cache", format_usd(rep.total_cost_with_cache)),
        (
            "Cumulative cost (untrimmed, with prompt cache)",
            format_usd(rep.total_cost_untrimmed_with_cache),
        ),
    )
    rows = rep.rows_as_dicts()
    figs = [figures.replay_tokens_figure(rows, budget)]
    cost_figure = figures.session_cost_figure(rep)
    if cost_figure is not None:
        figs.append(cost_figure)
    frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame()
    keep = [
        c
        for c in (
            "turn",
            "message_index",
            "messages_sent",
            "tokens_sent",
            "tokens_untrimmed",
            "summarizer_calls",
            "call_cost",
            "cumulative_cost",
        )
        if c in frame.columns
    ]
    table = frame_table(frame[keep], "One row per model call (costs in USD).")
    sections = [
        Section(
            "Session",
            facts=facts,
            figures=tuple(figs),
            tables=(table,),
            notes=tuple(visible(w) for w in rep.warnings),
        )
    ]
    if last is not None:
        counted, decisions = last
        sections.append(
            Section(
                f"The last call (call {len(rep):,})",
                figures=(figures.round_map_figure(counted, decisions, title="Round map"),),
                tables=(decisions_table(counted, decisions),),
            )
        )
    return Report(
        f"ctxlab replay: {type(strategy).title} on {_named(chat, conversation)}",
        chat,
        model,
        tuple(sections),
        conversation=conversation,
    )
