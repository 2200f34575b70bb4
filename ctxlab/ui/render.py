"""``render_*`` helpers: everything a page shows, drawn from engine values.

Chat text is only ever shown through ``st.text``, ``st.code``, ``st.dataframe`` and ``st.json``
after :func:`ctxlab.ui.text.visible`; Markdown is used for text this module writes itself.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import streamlit as st

from ctxlab.catalog import ModelInfo
from ctxlab.counted import CountedChat
from ctxlab.csvtext import csv_text
from ctxlab.formats import messages_to_openai
from ctxlab.model import Message
from ctxlab.pricing import DEFAULT_PRICES, format_usd
from ctxlab.redaction import MARKER_PATTERN
from ctxlab.strategies import Decision, Strategy, TrimResult, parameters
from ctxlab.strategies.base import sends_conversation
from ctxlab.strategies.registry import current_params
from ctxlab.summarizers import SummaryRequest
from ctxlab.tokens import TokenCounter
from ctxlab.tool_overhead import ToolOverhead
from ctxlab.ui import figures, message_selection, notices
from ctxlab.ui.insights_view import (
    PROVIDER_TITLES,
    ProblemsByProvider,
    problem_frame,
    render_message_problems,
)
from ctxlab.ui.text import highlighted_html, visible

__all__ = [
    "COMPARE_MONEY",
    "DISAGREEMENT_COLUMNS",
    "READER_KEY",
    "TABLE_PAGE_ROWS",
    "CompareRow",
    "budget_of",
    "build_message_frame",
    "compare_frame",
    "context_json",
    "decisions_csv",
    "disagreement_frame",
    "dropped_instructions",
    "message_rows",
    "page_bounds",
    "page_of",
    "positions",
    "redaction_markers",
    "render_badge_row",
    "render_compare_table",
    "render_context_chart",
    "render_context_json",
    "render_downloads",
    "render_message_reader",
    "render_message_table",
    "render_metrics",
    "render_problems",
    "render_round_map",
    "render_summary_request",
    "render_system_prompt_note",
    "render_tool_definitions",
    "saved_percent",
    "table_rows",
    "tokens_sent_delta",
    "tool_frame",
    "zoom_title",
]

CONTEXT_VIEW_MESSAGES = 60


def budget_of(strategy: Strategy) -> int | None:
    """The first token-measured parameter of ``strategy`` (its budget or trigger), if set."""
    values = current_params(strategy)
    for info in parameters(type(strategy)):
        value = values.get(info.name)
        if info.spec.unit == "tokens" and isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def call_cost(model: str, input_tokens: int) -> float | None:
    """Input cost (USD) of one call to ``model`` sending ``input_tokens``; None without a price."""
    return DEFAULT_PRICES.cost(model, input_tokens, 0)


def tokens_sent_delta(
    result: TrimResult,
) -> tuple[str, Literal["normal", "inverse", "off"], Literal["auto", "off"]]:
    """The "Tokens sent" metric's delta text, colour and arrow.

    Fewer tokens than the chat: a green down arrow ("-2,000 of 6,420"); the whole chat kept:
    a neutral "all 6,420 kept", no arrow (nothing went up); more than the chat (a summary
    bigger than what it replaced): a red up arrow; no conversation sent: neutral words.
    """
    before, after = result.tokens_before, result.tokens_after
    if before and not sends_conversation(result):
        return "nothing of the chat sent", "off", "off"
    if after == before:
        return f"all {before:,} kept", "off", "off"
    return f"{after - before:+,} of {before:,}", "inverse", "auto"


def render_metrics(result: TrimResult, model: str) -> None:
    """Tokens before -> after, saved %, decision counts and the estimated cost per call."""
    before, after = result.tokens_before, result.tokens_after
    counts = result.decision_counts()
    cols = st.columns(4)
    delta, colour, arrow = tokens_sent_delta(result)
    cols[0].metric("Tokens sent", f"{after:,}", delta, delta_color=colour, delta_arrow=arrow)
    if sends_conversation(result) or not before:
        saved = (before - after) / before * 100 if before else 0.0
        cols[1].metric("Saved", f"{saved:.1f}%")
    else:
        # Sending no conversation is not a saving: the model would answer blind.
        cols[1].metric(
            "Saved",
            "—",
            "nothing of the chat sent",
            delta_color="off",
            delta_arrow="off",
            help="No message of the conversation is sent, so there is nothing to save: see "
            "the error above for the setting that causes it.",
        )
    cost, full = call_cost(model, after), call_cost(model, before)
    cols[2].metric(
        "Input cost per call",
        format_usd(cost),
        None
        if cost is None or full is None or cost == full or not sends_conversation(result)
        else f"{format_usd(cost - full, signed=True)} vs untrimmed",
        delta_color="inverse",
        help=f"{model} list price (ctxlab.pricing, as of {DEFAULT_PRICES.as_of}); input only.",
    )
    cols[3].metric("Messages sent", f"{len(result.messages):,}")
    for col, decision in zip(st.columns(5), Decision, strict=True):
        col.metric(decision.value.capitalize(), f"{counts[decision]:,}")
    for warning in result.warnings:
        notices.warning(warning)


def render_round_map(
    counted: CountedChat,
    result: TrimResult,
    *,
    title: str | None = None,
    key: str = "map",
    strategy: Strategy | None = None,
    budget: int | None = None,
    window: ModelInfo | None = None,
    x_range: tuple[float, float] | None = None,
    tools: ToolOverhead | None = None,
    reveal: Callable[[], None] | None = None,
) -> None:
    """The round map, with a second, zoomed strip when the sent end is a sliver of it.

    With ``tools`` (the chat's tool definitions counted), the map starts with their block, which
    every call sends.

    With ``strategy``, each block's hover says why it got its decision. ``x_range`` fixes the
    axis (Compare gives every configuration the chat's tokens, so the maps line up). The zoom
    (:func:`ctxlab.ui.figures.zoom_rounds`) is what makes a 100,000-message chat at a realistic
    budget readable: its kept rounds get the full width, in a lower strip of the same chart.

    With ``reveal``, a click on a block selects its first message
    (:mod:`ctxlab.ui.message_selection`) and then calls ``reveal`` (e.g. to open the tab of the
    message inspector). Draw a clickable map inside an ``st.fragment`` with the inspector: a
    click then reruns that part only.
    """
    explain = None
    if strategy is not None:
        explain = functools.partial(strategy.explain_round, counted, result)
    overhead = tools.tokens if tools is not None else 0
    parts = tools.per_tool if tools is not None else ()
    zoom = figures.zoom_rounds(counted, result.decisions)
    options: dict[str, Any] = {
        "title": title,
        "explain": explain,
        "budget": budget,
        "window": window,
        "x_range": x_range,
        "overhead": overhead,
        "overhead_parts": parts,
    }
    # Zoomed, one chart holds both strips: the browser redraws one chart per click, not two.
    fig = (
        figures.round_map_figure(counted, result.decisions, **options)
        if zoom is None
        else figures.round_map_zoom_figure(counted, result.decisions, zoom, **options)
    )
    if reveal is None:
        st.plotly_chart(fig, key=key, width="stretch")
    else:
        # A click selects one block; Plotly then fades the others to 0.2, too pale to read
        # their decisions by: fade them less.
        fig.update_traces(unselected={"marker": {"opacity": 0.55}}, selector={"type": "bar"})
        st.plotly_chart(
            fig,
            key=key,
            width="stretch",
            on_select=functools.partial(message_selection.on_map_select, key, counted, reveal),
            selection_mode="points",
        )
        st.caption("Click a block to read its first message in the message inspector.")
    if zoom is not None:
        first, stop = zoom
        total = counted.prefix[-1]
        share = (total - counted.prefix[counted.starts[first]]) / total
        # A caption, not a figure title: in a narrow column a title and the legend collide.
        st.caption(f"{zoom_title(first, stop, share)} (the lower strip)")


def tool_frame(tools: ToolOverhead) -> pd.DataFrame:
    """One row per tool definition (name, tokens), then the once-per-request framing, if any."""
    rows = [{"tool": visible(name), "tokens": n} for name, n in tools.per_tool]
    if tools.framing:
        rows.append({"tool": "(framing, once per request)", "tokens": tools.framing})
    return pd.DataFrame(rows, columns=["tool", "tokens"])


def render_tool_definitions(tools: ToolOverhead) -> None:
    """A caption with the tool definitions' tokens per call, and a table of them per tool.

    Draws nothing for a chat without tool definitions.
    """
    if not tools.tokens:
        return
    n = len(tools.per_tool)
    st.caption(
        f"Tool definitions: **{n:,}** tool{'' if n == 1 else 's'}, **{tools.tokens:,}** tokens "
        "sent "
        "with every call and included in every budget (counted with OpenAI's accounting of "
        "function definitions)."
    )
    with st.expander("Tokens per tool definition"):
        st.dataframe(tool_frame(tools), hide_index=True, width="stretch")


def zoom_title(first: int, stop: int, share: float) -> str:
    """The zoomed strip's title: which rounds, and what share of the chat they are."""
    return (
        f"Zoom on the newest end: rounds {first:,}–{stop - 1:,}, {share:.2%} of the chat's tokens"
    )


def dropped_instructions(counted: CountedChat, result: TrimResult) -> list[int]:
    """Positions of the system/developer messages the result does not send."""
    codes = figures.decision_codes(counted, result.decisions)
    return [
        i
        for i in counted.instruction_positions()
        if not (decision := figures.DECISIONS[codes[i]]).is_sent
        and decision is not Decision.SUMMARIZED
    ]


def render_system_prompt_note(counted: CountedChat, result: TrimResult, strategy: Strategy) -> None:
    """A visible note when the strategy drops a system prompt, and what that means."""
    dropped = dropped_instructions(counted, result)
    if not dropped:
        return
    where = ", ".join(f"#{i}" for i in dropped[:5]) + (" …" if len(dropped) > 5 else "")
    tokens = sum(counted.counts[i] for i in dropped)
    noun = "system prompt is" if len(dropped) == 1 else f"{len(dropped)} system messages are"
    st.warning(
        f"The {noun} dropped (message {where}, {tokens:,} tokens): the model answers without "
        "its instructions (its role, rules and tool guidance). "
        + (strategy.system_prompt_hint or ""),
        icon=":material/warning:",
    )


def render_context_chart(
    counted: CountedChat,
    result: TrimResult,
    counter: TokenCounter,
    budget: int | None,
    window: ModelInfo | None = None,
) -> None:
    sent = counter.counts(result.messages)
    fig = figures.context_tokens_figure(counted.counts, sent, counted.fixed, budget, window=window)
    st.plotly_chart(fig, key="context-chart", width="stretch")


def message_rows(counted: CountedChat, rows: Sequence[int] | np.ndarray) -> pd.DataFrame:
    """Index, id, round, role, tokens and a visible preview of the messages at ``rows``.

    Only those rows are built: the table shows one page of a chat, and previews of 100,000
    messages cost more than everything else of a first open together.
    """
    picked = np.asarray(rows, dtype=np.int64)
    messages = counted.messages
    chosen = [messages[i] for i in picked.tolist()]
    starts = np.asarray(counted.starts, dtype=np.int64)
    counts = counted.counts
    return pd.DataFrame(
        {
            "index": picked,
            "id": [visible(m.id) for m in chosen],
            "round": np.searchsorted(starts, picked, side="right") - 1,
            "role": [m.role.value for m in chosen],
            "tokens": [counts[i] for i in picked.tolist()],
            "preview": [visible(m.preview(120)) for m in chosen],
        }
    )


def build_message_frame(counted: CountedChat) -> pd.DataFrame:
    """:func:`message_rows` of every message of ``counted``."""
    return message_rows(counted, np.arange(len(counted)))


def positions(counted: CountedChat) -> Mapping[str, int]:
    """Message id -> index in the chat (:attr:`CountedChat.positions`)."""
    return counted.positions


def problems_by_id(by_provider: ProblemsByProvider) -> dict[str, list[str]]:
    """Message id -> ``provider:rule`` labels of the problems that concern it."""
    out: dict[str, list[str]] = {}
    for provider, problems in by_provider.items():
        for p in problems:
            if p.message_id is not None:
                out.setdefault(p.message_id, []).append(f"{provider}:{p.code}")
    return out


TABLE_PAGE_ROWS = 1000
"""The message table shows at most this many rows at once (a pager picks which)."""


def table_rows(codes: np.ndarray, shown: Sequence[str]) -> np.ndarray:
    """Positions of the messages whose decision is in ``shown`` (``codes`` as
    :func:`ctxlab.ui.figures.decision_codes` gives them), in chat order."""
    wanted = [i for i, d in enumerate(figures.DECISIONS) if d.value in shown]
    return np.flatnonzero(np.isin(codes, wanted))


def page_bounds(rows: int, page: int, size: int = TABLE_PAGE_ROWS) -> tuple[int, int]:
    """``(start, stop)`` of 1-based ``page`` among ``rows`` rows (clamped to the last page).

    >>> page_bounds(2500, 3, 1000)
    (2000, 2500)
    """
    pages = max(-(-rows // size), 1)
    first = (min(max(page, 1), pages) - 1) * size
    return first, min(first + size, rows)


_TABLE_OPENED = "ctx.table-opened"
"""The selection the message table last opened the page of (it does so once per selection,
so the user can page away from it)."""


def page_of(rows: np.ndarray, index: int, size: int = TABLE_PAGE_ROWS) -> int | None:
    """The 1-based page of the table rows ``rows`` (chat positions, ascending) that shows
    message ``index``, or None when the filter hides it.

    >>> page_of(np.arange(2500), 2100, 1000)
    3
    """
    at = int(np.searchsorted(rows, index))
    if at < len(rows) and int(rows[at]) == index:
        return at // size + 1
    return None


def render_message_table(
    counted: CountedChat,
    result: TrimResult,
    problems: ProblemsByProvider,
    key: str = "pg-table",
) -> None:
    """The message table (decision, round, role, tokens, problems, preview) with a filter.

    The filter runs over the whole chat; the table shows one page of
    :data:`TABLE_PAGE_ROWS` rows of what it keeps, so a rerun costs the same whatever the
    chat's length. A click on a row selects its message for the inspector
    (:mod:`ctxlab.ui.message_selection`), whatever order the user sorted the table into; a
    message selected elsewhere (the round map, the typed number) opens its page once.
    """
    codes = figures.decision_codes(counted, result.decisions)
    present = [d.value for i, d in enumerate(figures.DECISIONS) if (codes == i).any()]
    # Keyed by the decisions present: another strategy (or parameter) that produces other
    # decisions starts from showing them all, instead of a stale selection hiding the new ones.
    shown = st.multiselect(
        "Show decisions", present, default=present, key=f"table-filter.{'.'.join(present)}"
    )
    rows = table_rows(codes, shown) if len(shown) < len(present) else np.arange(len(codes))
    st.caption(f"{len(rows):,} of {len(counted):,} messages")
    start, stop = 0, len(rows)
    if len(rows) > TABLE_PAGE_ROWS:
        pages = -(-len(rows) // TABLE_PAGE_ROWS)
        page_key = f"table-page.{'.'.join(shown)}.{pages}"
        index, selection = message_selection.current(counted)
        if selection is not None and st.session_state.get(_TABLE_OPENED) != selection:
            st.session_state[_TABLE_OPENED] = selection
            if selection.source != "table" and (wanted := page_of(rows, index)) is not None:
                st.session_state[page_key] = wanted
        page = st.number_input(
            f"Page (of {pages:,}, {TABLE_PAGE_ROWS:,} messages each)", 1, pages, key=page_key
        )
        start, stop = page_bounds(len(rows), int(page))
        st.caption(f"Showing rows {start + 1:,}–{stop:,} of {len(rows):,}")
    picked = rows[start:stop]
    view = message_rows(counted, picked)
    view.insert(1, "decision", [figures.DECISIONS[c].value for c in codes[picked]])
    flagged = problems_by_id(problems)
    if flagged:
        messages = counted.messages
        view["problems"] = [", ".join(flagged.get(messages[i].id, ())) for i in picked]
    # Keyed by what the table shows: a row position means one message only within one view.
    table_key = f"{key}.{'.'.join(shown)}.{start}"
    st.dataframe(
        view,
        hide_index=True,
        height=420,
        width="stretch",
        key=table_key,
        on_select=functools.partial(message_selection.on_table_select, table_key, counted, picked),
        selection_mode="single-row",
    )
    st.caption("Click a row to read that message in the inspector below.")


READER_KEY = "reader-index"
"""Widget key of the message inspector's typed number."""


def render_message_reader(
    counted: CountedChat, result: TrimResult, problems: ProblemsByProvider
) -> None:
    """The message inspector: the selected message (:mod:`ctxlab.ui.message_selection`: a
    click on the round map or the message table, or its number typed here) in full, with every
    provider's problems with it."""
    n = len(counted)
    index, selection = message_selection.current(counted)
    # The widget shows the one selected message, whoever selected it.
    st.session_state[READER_KEY] = index
    st.number_input(
        f"Message # (0–{n - 1})",
        0,
        max(n - 1, 0),
        key=READER_KEY,
        on_change=message_selection.on_number_change,
        args=(READER_KEY, counted),
    )
    if selection is not None and selection.span is not None:
        first, stop = selection.span
        low, high = counted.round_containing(first), counted.round_containing(stop - 1)
        rounds = f"round {low:,}" if low == high else f"rounds {low:,}–{high:,}"
        notices.caption(
            f"The round map block you clicked holds messages {first:,}–{stop - 1:,} ({rounds}): "
            "this is its first message. Pick another of them in the table or by number."
        )
    message = counted.messages[index]
    decision = result.decisions[message.id].value
    st.text(
        f"#{index} · id {visible(message.id)} · {message.role.value} · round "
        f"{counted.round_containing(index)} · {counted.counts[index]:,} tokens · {decision}"
    )
    render_message_problems(message.id, problems)
    st.code(visible(message.content) or "(no text)", language=None, wrap_lines=True)
    if message.tool_calls:
        st.json(
            [
                {"id": c.id, "name": visible(c.name), "arguments": visible(c.arguments)}
                for c in message.tool_calls
            ],
            expanded=True,
        )
    if message.tool_call_id:
        st.text(f"answers tool call {visible(message.tool_call_id)}")


def render_problems(result: TrimResult, problems: ProblemsByProvider) -> None:
    """Every provider's problems with the context, each naming its message."""
    if not any(problems.values()):
        st.success("No problems: every provider would accept this context as is.")
        return
    st.dataframe(problem_frame(result.messages, problems), hide_index=True, width="stretch")


def redaction_markers(text: str) -> dict[str, int]:
    """How many times each redaction marker occurs in ``text``."""
    out: dict[str, int] = {}
    for match in MARKER_PATTERN.finditer(text):
        out[match.group()] = out.get(match.group(), 0) + 1
    return out


def request_tokens(request: SummaryRequest, counter: TokenCounter) -> int:
    """Tokens of the summarizer request's messages with the chat accounting of ``counter``."""
    acc = counter.accounting
    return acc.reply_priming + sum(
        acc.tokens_per_message + counter.count_text(m["role"]) + counter.count_text(m["content"])
        for m in request.messages
    )


def render_summary_request(request: SummaryRequest | None, counter: TokenCounter) -> None:
    """The exact request the summarizer gets: prompt, transcript, tokens, redactions."""
    if request is None:
        st.info("No summarizer call: the chat is under the trigger, so nothing is summarized.")
        return
    transcript = request.transcript
    markers = redaction_markers(transcript)
    cols = st.columns(3)
    cols[0].metric("Request tokens", f"{request_tokens(request, counter):,}")
    cols[1].metric("Redaction markers", f"{sum(markers.values()):,}")
    cols[2].metric("Max summary tokens", "—" if request.max_tokens is None else request.max_tokens)
    if request.redactions:
        st.markdown("**Masked spans per rule**")
        st.dataframe(
            pd.DataFrame(
                {"rule": list(request.redactions), "spans": list(request.redactions.values())}
            ),
            hide_index=True,
        )
    if markers:
        lines = [
            (n, visible(line))
            for n, line in enumerate(transcript.splitlines(), 1)
            if MARKER_PATTERN.search(line)
        ]
        st.markdown("**Lines with redaction markers** (what was masked never leaves ctxlab)")
        st.dataframe(
            pd.DataFrame({"line": [n for n, _ in lines], "text": [t for _, t in lines]}),
            hide_index=True,
            height=min(38 * (len(lines) + 1), 300),
            width="stretch",
        )
    st.markdown("**System prompt**")
    st.code(visible(request.system_prompt), language=None, wrap_lines=True)
    st.markdown("**Transcript** (exactly as sent; redaction markers highlighted)")
    with st.container(height=400, border=True):
        st.html(highlighted_html(transcript, MARKER_PATTERN))
    with st.expander("Copy the transcript as plain text"):
        st.code(visible(transcript), language=None, wrap_lines=True, height=400)


def context_json(messages: Sequence[Message], limit: int | None = None) -> str:
    """The context as the API's ``messages`` JSON; with ``limit``, head and tail only."""
    data: list[Any]
    if limit is not None and len(messages) > limit:
        half = limit // 2
        omitted = len(messages) - 2 * half
        data = [
            *messages_to_openai(messages[:half]),
            f"… {omitted:,} messages omitted: download the full JSON …",
            *messages_to_openai(messages[-half:]),
        ]
    else:
        data = messages_to_openai(messages)
    return json.dumps(data, indent=2, ensure_ascii=False)


def render_context_json(result: TrimResult) -> None:
    """The exact context JSON (a head-and-tail view for long contexts)."""
    n = len(result.messages)
    if n > CONTEXT_VIEW_MESSAGES:
        st.caption(
            f"Showing the first and last {CONTEXT_VIEW_MESSAGES // 2} of {n:,} messages; "
            "the download holds all of them."
        )
    st.code(
        visible(context_json(result.messages, CONTEXT_VIEW_MESSAGES)), language="json", height=480
    )


def decisions_csv(counted: CountedChat, decisions: Mapping[str, Decision]) -> str:
    """id, index, round, role, tokens, decision: one line per input message (an id that a
    spreadsheet would run as a formula is neutralised, see :mod:`ctxlab.csvtext`)."""
    rows = []
    k = 0
    starts = counted.starts
    for i, m in enumerate(counted.messages):
        while k + 1 < len(starts) and starts[k + 1] <= i:
            k += 1
        rows.append([m.id, i, k, m.role.value, counted.counts[i], decisions[m.id].value])
    return csv_text(["id", "index", "round", "role", "tokens", "decision"], rows)


def render_downloads(
    counted: CountedChat, result: TrimResult, request: SummaryRequest | None, stem: str
) -> None:
    """Context JSON, summarizer request JSON and decisions CSV; built only when clicked."""
    cols = st.columns(3)
    cols[0].download_button(
        "Context JSON",
        lambda: context_json(result.messages),
        file_name=f"{stem}-context.json",
        mime="application/json",
        key="dl-context",
        on_click="ignore",  # a download changes nothing: no rerun
    )
    if request is not None:
        cols[1].download_button(
            "Summarizer request JSON",
            lambda: json.dumps(request.body(), indent=2, ensure_ascii=False),
            file_name=f"{stem}-summary-request.json",
            mime="application/json",
            key="dl-request",
            on_click="ignore",  # a download changes nothing: no rerun
        )
    cols[2].download_button(
        "Decisions CSV",
        lambda: decisions_csv(counted, result.decisions),
        file_name=f"{stem}-decisions.csv",
        mime="text/csv",
        key="dl-decisions",
        on_click="ignore",  # a download changes nothing: no rerun
    )


@dataclass(frozen=True, slots=True, eq=False)
class CompareRow:
    """One configuration of the Compare page and what it costs.

    Costs are USD (None: no price, or not computed). ``session_cost`` replays every assistant
    turn (:func:`ctxlab.replay.replay`) without prompt cache, ``session_cost_cached`` with it.
    ``stand_in`` marks a configuration whose summaries come from the offline extractive
    stand-in, so its fact retention and tokens are not a real model's; ``summaries_by`` says
    who wrote its summary, for the table ("—" when it has none).
    """

    label: str
    result: TrimResult
    problems: ProblemsByProvider
    retention: float | None = None
    cost_per_call: float | None = None
    session_cost: float | None = None
    session_cost_cached: float | None = None
    stand_in: bool = False
    summaries_by: str = "—"


COMPARE_MONEY = ("cost per call", "cost per session", "cost per session, prompt cache")
"""The money columns of :func:`compare_frame`, written by :func:`ctxlab.pricing.format_usd`."""


def saved_percent(result: TrimResult) -> float | None:
    """Tokens saved as a % of the chat, to 0.1; None when no conversation message is sent
    (sending nothing is not a saving) and 0.0 for an empty chat."""
    before = result.tokens_before
    if not before:
        return 0.0
    if not sends_conversation(result):
        return None
    return round((before - result.tokens_after) / before * 100, 1)


def compare_frame(rows: Sequence[CompareRow]) -> pd.DataFrame:
    """One line per configuration: tokens sent, saved %, cost per call and per session (money
    as text, ``$1,234.50``), fact retention %, decision counts and problems per provider.

    Token and count columns are integers and percentages floats rounded to 0.1, so the table
    sorts by value; :data:`COMPARE_COLUMNS` formats them for people.
    """
    records: list[dict[str, Any]] = []
    for row in rows:
        result = row.result
        counts = result.decision_counts()
        records.append(
            {
                "configuration": row.label,
                "tokens sent": result.tokens_after,
                "saved %": saved_percent(result),
                "cost per call": format_usd(row.cost_per_call),
                "cost per session": format_usd(row.session_cost),
                "cost per session, prompt cache": format_usd(row.session_cost_cached),
                "fact retention %": None if row.retention is None else round(row.retention, 1),
                "summaries by": row.summaries_by,
                **{d.value: counts[d] for d in Decision},
                **{f"{provider} problems": len(found) for provider, found in row.problems.items()},
            }
        )
    return pd.DataFrame.from_records(records)


def _compare_columns() -> dict[str, Any]:
    count = st.column_config.NumberColumn(format="localized")
    return {
        "tokens sent": st.column_config.NumberColumn(
            format="localized", help="Tokens of the context this configuration sends."
        ),
        "saved %": st.column_config.NumberColumn(format="%.1f%%"),
        "fact retention %": st.column_config.NumberColumn(
            format="%.1f%%",
            help="Share of the chat's facts (numbers, identifiers, names, URLs) still in the "
            "context, verbatim or in a summary.",
        ),
        "cost per call": st.column_config.TextColumn(
            help="Input cost of one call sending this context (list price)."
        ),
        "cost per session": st.column_config.TextColumn(
            help="Every assistant turn of the chat replayed with this configuration: the sum "
            "of all calls, without prompt cache (summarizer calls included)."
        ),
        "cost per session, prompt cache": st.column_config.TextColumn(
            help="The same replay with the provider's cached-input price for the part of each "
            "call that repeats the previous one."
        ),
        "summaries by": st.column_config.TextColumn(
            help="Offline stand-in: an extractive, deterministic summarizer, not a real model."
        ),
        **{d.value: count for d in Decision},
    }


def render_compare_table(frame: pd.DataFrame) -> None:
    """The Compare metrics, formatted: thousands separators, %, money."""
    config = {k: v for k, v in _compare_columns().items() if k in frame.columns}
    for column in frame.columns:
        if column.endswith(" problems"):
            config[column] = st.column_config.NumberColumn(format="localized")
    st.dataframe(frame, hide_index=True, width="stretch", column_config=config)


def render_badge_row(by_provider: ProblemsByProvider) -> None:
    """One wrapping line of short provider badges ("OpenAI ✓", "Anthropic: 2 problems"); the
    full wording is in the line's help tooltip."""
    badges: list[str] = []
    details: list[str] = []
    for provider, problems in by_provider.items():
        title = PROVIDER_TITLES.get(provider, provider)
        if not problems:
            badges.append(f":green-badge[:material/check_circle: {title} ✓]")
            details.append(f"{title}: valid, the API would accept this context.")
            continue
        n = len(problems)
        colour = "red" if any(p.severity == "error" for p in problems) else "orange"
        badges.append(f":{colour}-badge[:material/error: {title}: {n}]")
        details.append(f"{title}: {n} problem{'s' if n != 1 else ''} ({problems[0].code}, …)")
    st.markdown(" ".join(badges), help="  \n".join(details))


def _row_columns(counted: CountedChat) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Per message: its round, its tokens and its visible 100-character preview; built once
    per counted chat (:meth:`CountedChat.derived`)."""

    def build(chat: CountedChat) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
        n = len(chat.messages)
        starts = np.asarray(chat.starts, dtype=np.int64)
        sizes = np.diff(np.append(starts, n))
        rounds = np.repeat(np.arange(len(starts), dtype=np.int64), sizes)
        tokens = np.asarray(chat.counts, dtype=np.int64)
        previews = tuple(visible(m.preview(100)) for m in chat.messages)
        return rounds, tokens, previews

    built: tuple[np.ndarray, np.ndarray, tuple[str, ...]] = counted.derived("ui.row_columns", build)
    return built


def disagreement_frame(
    counted: CountedChat, labelled: Sequence[tuple[str, TrimResult]]
) -> pd.DataFrame:
    """The messages whose decision differs between configurations, one column per config:
    position, round, role, tokens, each configuration's decision and a visible preview.

    One vectorised pass per configuration over the decisions; the per-message columns come
    from a table built once per chat.
    """
    messages = counted.messages
    codes = np.stack(
        [figures.decision_codes(counted, r.decisions) for _, r in labelled]
        or [np.zeros(len(messages), dtype=np.int8)]
    )
    differ = np.flatnonzero((codes != codes[0]).any(axis=0))
    rounds, tokens, previews = _row_columns(counted)
    names = np.array([d.value for d in figures.DECISIONS], dtype=object)
    data: dict[str, Any] = {
        "index": differ.tolist(),
        "round": rounds[differ].tolist(),
        "role": [messages[i].role.value for i in differ],
        "tokens": tokens[differ].tolist(),
    }
    for (label, _), row in zip(labelled, codes, strict=False):
        data[label] = names[row[differ]].tolist()
    data["preview"] = [previews[i] for i in differ]
    return pd.DataFrame(data)


DISAGREEMENT_COLUMNS: dict[str, Any] = {
    "index": st.column_config.NumberColumn("#", format="localized"),
    "round": st.column_config.NumberColumn(format="localized"),
    "tokens": st.column_config.NumberColumn(format="localized"),
}
"""Column formats of :func:`disagreement_frame` for ``st.dataframe``."""
