"""Replay: the strategy applied before every assistant turn, as the chat grows."""

from __future__ import annotations

import streamlit as st

from ctxlab.replay import Replay
from ctxlab.ui import frameworks, render, report
from ctxlab.ui.shell import shared
from ctxlab.ui.timeline import render_provider_usage, render_replay, run_replay

setup = shared()
ws, strategy, backend = setup.ws, setup.strategy, setup.backend

st.title("Replay")
st.caption(
    "Every assistant turn of the chat is one model call: the strategy decides what that call "
    "sees, given the chat up to that point."
)
replayed = run_replay(strategy, ws, backend)
if replayed is not None:
    rep: Replay = replayed  # narrowed for the report's closure
    firing = frameworks.render_firing(rep, strategy)
    render_replay(
        rep,
        ws,
        render.budget_of(strategy),
        strategy,
        markers=firing.markers if firing is not None else (),
    )
    if rep.rows:
        st.download_button(
            "Download report",
            lambda: report.report_html(
                report.replay_report(
                    ws.chat.label,
                    ws.model,
                    strategy,
                    rep,
                    render.budget_of(strategy),
                    last=report.last_call(rep, ws.counter, ws.chat.messages),
                    conversation=ws.chat.conversation,
                )
            ),
            file_name=f"{ws.chat.slot}-replay-report.html",
            mime="text/html",
            key="replay.report",
            on_click="ignore",  # a download changes nothing: no rerun
            icon=":material/download:",
            help="One HTML file that opens offline: the set-up, session totals and charts.",
        )
render_provider_usage(ws)
