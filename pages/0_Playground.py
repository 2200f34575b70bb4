"""Playground: one chat, one strategy, every decision visible."""

from __future__ import annotations

import streamlit as st

from ctxlab.insights import summary_lineage
from ctxlab.ui import (
    checks_view,
    frameworks,
    insights_view,
    notices,
    provider_count_panel,
    render,
    report,
)
from ctxlab.ui.session import apply_params, opening_caption
from ctxlab.ui.shell import shared
from ctxlab.ui.summary import run

setup = shared()
ws, strategy, backend = setup.ws, setup.strategy, setup.backend

st.title("Playground")
st.caption(f"{ws.strategy_cls.title}: {ws.strategy_cls.summary}")
first_view = opening_caption(ws, setup.values)
if first_view:
    notices.caption(first_view)
outcome = run(strategy, ws, backend)
if outcome is None:
    st.stop()
result, budget = outcome.result, render.budget_of(strategy)
frameworks.render_framework_panel(strategy, ws.chat.messages, ws.counter, result)
summary_request = outcome.request
check = checks_view.check_of(result, strategy, ws)

checks_view.render_sends_nothing(
    check.sends_nothing,
    key="pg-empty",
    apply=lambda changes: apply_params("", strategy.name, ws.chat.slot, changes, ws),
)
render.render_metrics(result, ws.model)
problems = insights_view.render_provider_badges(result.messages, key="pg", problems=check.providers)
insights_view.render_window_badge(result.tokens_after, ws.model_info)
provider_count_panel.render_provider_count(
    result.messages, ws.chat.tools, result.tokens_after, ws.model
)
checks_view.render_over_limit(check.over_limit)
insights_view.render_resummarization_guard(
    strategy,
    ws.chat.messages,
    ws.counter,
    apply=lambda changes: apply_params("", strategy.name, ws.chat.slot, changes, ws),
    key="pg-guard",
)
render.render_system_prompt_note(ws.counted, result, strategy)


def show_messages() -> None:
    """Open the Messages tab, where the inspector shows the message a click selected."""
    st.session_state["pg-tabs"] = "Messages"


@st.fragment
def explore() -> None:
    """The round map and the tabs: a click on a map block, a table row or a tab reruns this
    part alone (its values are those of the page's last full run)."""
    render.render_round_map(
        ws.counted,
        result,
        title="Round map (width = tokens; hover a block to see why)",
        strategy=strategy,
        budget=budget,
        window=ws.model_info,
        tools=ws.tools,
        reveal=show_messages,
    )
    render.render_tool_definitions(ws.tools)
    names = [
        "Messages",
        "Problems",
        "Facts",
        "Tokens",
        "Lineage",
        "Context chart",
        "Summarizer request",
        "Context JSON",
        "Export",
    ]
    # Lazy tabs: only the open one is computed (None when Streamlit does not track them: draw all).
    tabs = dict(zip(names, st.tabs(names, key="pg-tabs", on_change="rerun"), strict=True))

    def is_open(name: str) -> bool:
        return tabs[name].open is not False

    if is_open("Messages"):
        with tabs["Messages"]:
            render.render_message_table(ws.counted, result, problems)
            render.render_message_reader(ws.counted, result, problems)
    if is_open("Problems"):
        with tabs["Problems"]:
            render.render_problems(result, problems)
    if is_open("Facts"):
        with tabs["Facts"]:
            insights_view.render_facts(ws.counted, result.messages, key="pg")
    if is_open("Tokens"):
        with tabs["Tokens"]:
            insights_view.render_token_disagreement(ws.counted, ws.counter, ws.model)
    if is_open("Lineage"):
        with tabs["Lineage"]:
            st.markdown("**Compactions held in the loaded chat**")
            held = ws.counted.derived("insights.lineage", lambda c: summary_lineage(c.messages))
            insights_view.render_lineage(held, render.positions(ws.counted), key="pg-lineage")
            if any(m.is_compaction for m in result.inserted):
                st.markdown("**The compaction this configuration makes**")
                insights_view.render_lineage(
                    summary_lineage(result.messages), render.positions(ws.counted), key="pg-new"
                )
    if is_open("Context chart"):
        with tabs["Context chart"]:
            render.render_context_chart(ws.counted, result, ws.counter, budget, ws.model_info)
    if is_open("Summarizer request"):
        with tabs["Summarizer request"]:
            render.render_summary_request(summary_request, ws.counter)
    if is_open("Context JSON"):
        with tabs["Context JSON"]:
            render.render_context_json(result)
    if is_open("Export"):
        with tabs["Export"]:
            insights_view.render_export(strategy, ws.model, ws.chat.slot)


explore()
render.render_downloads(ws.counted, result, outcome.request, ws.chat.slot)
st.download_button(
    "Download report",
    lambda: report.report_html(
        report.playground_report(
            ws.chat.label,
            ws.model,
            ws.counted,
            strategy,
            result,
            conversation=ws.chat.conversation,
        )
    ),
    file_name=f"{ws.chat.slot}-report.html",
    mime="text/html",
    key="pg.report",
    on_click="ignore",  # a download changes nothing: no rerun
    icon=":material/download:",
    help="One HTML file that opens offline: the set-up, metrics, round map and decisions.",
)
