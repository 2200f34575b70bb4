"""``render_*`` helpers: everything a page shows, drawn from engine values.

Chat text is only ever shown through ``st.text``, ``st.code``, ``st.dataframe`` and ``st.json``
after :func:`ctxlab.ui.text.visible`; Markdown is used for text this module writes itself.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from ctxlab.counted import CountedChat
from ctxlab.formats import messages_to_openai
from ctxlab.model import Message
from ctxlab.pricing import DEFAULT_PRICES
from ctxlab.redaction import MARKER_PATTERN
from ctxlab.strategies import Decision, Strategy, TrimResult, parameters
from ctxlab.strategies.registry import current_params
from ctxlab.summarizers import SummaryRequest
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.insights_view import ProblemsByProvider, problem_frame, render_message_problems
from ctxlab.ui.text import highlighted_html, visible

__all__ = [
    "budget_of",
    "build_message_frame",
    "compare_frame",
    "context_json",
    "decisions_csv",
    "disagreement_frame",
    "message_frame",
    "positions",
    "redaction_markers",
    "render_context_chart",
    "render_context_json",
    "render_downloads",
    "render_message_reader",
    "render_message_table",
    "render_metrics",
    "render_problems",
    "render_round_map",
    "render_summary_request",
]

CONTEXT_VIEW_MESSAGES = 60
_DECISION_ORDER = [d.value for d in Decision]


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


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def render_metrics(result: TrimResult, model: str) -> None:
    """Tokens before -> after, saved %, decision counts and the estimated cost per call."""
    before, after = result.tokens_before, result.tokens_after
    saved = (before - after) / before * 100 if before else 0.0
    counts = result.decision_counts()
    cols = st.columns(4)
    cols[0].metric(
        "Tokens sent", f"{after:,}", f"{after - before:,} of {before:,}", delta_color="inverse"
    )
    cols[1].metric("Saved", f"{saved:.1f}%")
    cost, full = call_cost(model, after), call_cost(model, before)
    cols[2].metric(
        "Input cost per call",
        _money(cost),
        None if cost is None or full is None else f"{cost - full:+.4f} $ vs untrimmed",
        delta_color="inverse",
        help=f"{model} list price (ctxlab.pricing, as of {DEFAULT_PRICES.as_of}); input only.",
    )
    cols[3].metric("Messages sent", f"{len(result.messages):,}")
    for col, decision in zip(st.columns(5), Decision, strict=True):
        col.metric(decision.value.capitalize(), f"{counts[decision]:,}")
    for warning in result.warnings:
        st.warning(visible(warning))


def render_round_map(
    counted: CountedChat, result: TrimResult, *, title: str | None = None, key: str = "map"
) -> None:
    st.plotly_chart(
        figures.round_map_figure(counted, result.decisions, title=title), key=key, width="stretch"
    )


def render_context_chart(
    counted: CountedChat, result: TrimResult, counter: TokenCounter, budget: int | None
) -> None:
    sent = counter.counts(result.messages)
    fig = figures.context_tokens_figure(counted.counts, sent, counted.reply_priming, budget)
    st.plotly_chart(fig, key="context-chart", width="stretch")


def message_frame(counted: CountedChat) -> pd.DataFrame:
    """Index, id, round, role, tokens and a visible preview of every message (cached per chat)."""
    cache = st.session_state.get("ctx.frame")
    if cache is not None and cache[0] is counted:
        frame: pd.DataFrame = cache[1]
        return frame
    frame = build_message_frame(counted)
    st.session_state["ctx.frame"] = (counted, frame)
    return frame


def build_message_frame(counted: CountedChat) -> pd.DataFrame:
    """The uncached frame of :func:`message_frame`."""
    rounds: list[int] = []
    for k, start in enumerate(counted.starts):
        stop = counted.starts[k + 1] if k + 1 < len(counted.starts) else len(counted)
        rounds.extend([k] * (stop - start))
    return pd.DataFrame(
        {
            "index": range(len(counted)),
            "id": [visible(m.id) for m in counted.messages],
            "round": rounds,
            "role": [m.role.value for m in counted.messages],
            "tokens": counted.counts,
            "preview": [visible(m.preview(120)) for m in counted.messages],
        }
    )


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


def render_message_table(
    counted: CountedChat, result: TrimResult, problems: ProblemsByProvider
) -> None:
    """The message table (decision, round, role, tokens, problems, preview) with a filter."""
    frame = message_frame(counted).copy(deep=False)
    decisions = result.decisions
    frame.insert(1, "decision", [decisions[m.id].value for m in counted.messages])
    flagged = problems_by_id(problems)
    if flagged:
        frame["problems"] = [", ".join(flagged.get(m.id, ())) for m in counted.messages]
    present = [d for d in _DECISION_ORDER if d in set(frame["decision"])]
    shown = st.multiselect("Show decisions", present, default=present, key="table-filter")
    view = frame[frame["decision"].isin(shown)] if len(shown) < len(present) else frame
    st.caption(f"{len(view):,} of {len(frame):,} messages")
    st.dataframe(view, hide_index=True, height=420, width="stretch")


def render_message_reader(
    counted: CountedChat, result: TrimResult, problems: ProblemsByProvider
) -> None:
    """Pick a message by position and read it in full, with every provider's problems with it."""
    n = len(counted)
    index = int(st.number_input(f"Message # (0–{n - 1})", 0, max(n - 1, 0), 0, key="reader-index"))
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
    """id, index, round, role, tokens, decision: one line per input message."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "index", "round", "role", "tokens", "decision"])
    k = 0
    starts = counted.starts
    for i, m in enumerate(counted.messages):
        while k + 1 < len(starts) and starts[k + 1] <= i:
            k += 1
        writer.writerow([m.id, i, k, m.role.value, counted.counts[i], decisions[m.id].value])
    return buffer.getvalue()


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


def compare_frame(
    rows: Sequence[tuple[str, TrimResult, ProblemsByProvider, float | None]],
) -> pd.DataFrame:
    """One line per configuration: tokens after, saved %, decision counts, fact retention %
    and the problem count per provider."""
    records: list[dict[str, Any]] = []
    for label, result, problems, retention in rows:
        before = result.tokens_before
        counts = result.decision_counts()
        records.append(
            {
                "configuration": label,
                "tokens after": result.tokens_after,
                "saved %": round((before - result.tokens_after) / before * 100, 1)
                if before
                else 0.0,
                **{d.value: counts[d] for d in Decision},
                "fact retention %": None if retention is None else round(retention, 1),
                **{f"{provider} problems": len(found) for provider, found in problems.items()},
            }
        )
    return pd.DataFrame.from_records(records)


def disagreement_frame(
    counted: CountedChat, labelled: Sequence[tuple[str, TrimResult]]
) -> pd.DataFrame:
    """The messages whose decision differs between configurations, one column per config."""
    messages = counted.messages
    columns = [[r.decisions[m.id].value for m in messages] for _, r in labelled]
    differ = [i for i in range(len(messages)) if len({c[i] for c in columns}) > 1]
    data: dict[str, Any] = {
        "index": differ,
        "role": [messages[i].role.value for i in differ],
        "tokens": [counted.counts[i] for i in differ],
    }
    for (label, _), column in zip(labelled, columns, strict=True):
        data[label] = [column[i] for i in differ]
    data["preview"] = [visible(messages[i].preview(100)) for i in differ]
    return pd.DataFrame(data)
