"""Tune: sweep one parameter, see tokens, messages and cost, pick the knee, apply it."""

from __future__ import annotations

import streamlit as st

from ctxlab.strategies import parameters
from ctxlab.sweep import KNEE_SHARE, grid, knee, sweep
from ctxlab.ui import figures
from ctxlab.ui.session import apply_params, configured_strategy
from ctxlab.ui.summary import PreviewSummarizer
from ctxlab.ui.widgets import ChatScale, param_range

st.set_page_config(page_title="ctxlab · Tune", page_icon="✂️", layout="wide")

ws, values, strategy = configured_strategy()

st.title("Tune")
numeric = {i.name: i for i in parameters(ws.strategy_cls) if i.kind in ("int", "float")}
if not numeric:
    st.info("This strategy has no numeric parameter to sweep.")
    st.stop()
cols = st.columns([2, 3, 1])
name = cols[0].selectbox(
    "Parameter", list(numeric), key="tune-param", format_func=lambda n: numeric[n].spec.label
)
info = numeric[name]
rng = param_range(info, ChatScale.of(ws.counted))
lo, hi = cols[1].slider(
    "Range",
    rng.lo,
    rng.hi,
    (rng.lo, rng.hi),
    step=rng.step,
    key=f"tune-range.{name}.{ws.chat.slot}",
)
steps = int(cols[2].number_input("Steps", 3, 60, 20, key="tune-steps"))
summarizer = PreviewSummarizer() if ws.strategy_cls.uses_summarizer else None
if summarizer is not None:
    st.caption("Summaries are placeholders here: the sweep never calls a summarizer.")
points = sweep(
    strategy,
    info,
    grid(lo, hi, steps, info.kind == "int"),
    ws.chat.messages,
    ws.counter,
    ws.model,
    summarizer,
)
suggested = knee(points)
st.plotly_chart(
    figures.tune_figure(
        [p.value for p in points],
        [p.tokens_sent for p in points],
        [p.messages_kept for p in points],
        None
        if any(p.cost_per_call is None for p in points)
        else [p.cost_per_call or 0.0 for p in points],
        parameter=info.spec.label,
        knee=suggested,
    ),
    key="tune-figure",
    width="stretch",
)
st.markdown(
    f"**Knee**: the smallest value after which every further step adds less than "
    f"{KNEE_SHARE:.0%} of the largest tokens-sent value — past it, a bigger value buys little "
    "more context."
)
options = [p.value for p in points]
default = options.index(suggested) if suggested in options else len(options) // 2
chosen = st.select_slider(
    "Value to apply",
    options,
    value=options[default],
    key="tune-pick",
    format_func=lambda v: f"{v:,g}",
)
if st.button(f"Apply {info.spec.label} = {chosen:,g} in the Playground", type="primary"):
    value = int(chosen) if info.kind == "int" else chosen
    apply_params("", strategy.name, ws.chat.slot, {name: value}, ws)
    st.switch_page("app.py")
