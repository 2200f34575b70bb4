"""Tune: replay the session across one parameter's values and recommend the value that answers
the user's question (fits the model's window and keeps the facts, or costs least), then apply it.
"""

from __future__ import annotations

import time

import streamlit as st

from ctxlab.recommend import (
    Question,
    SessionPoint,
    candidate_values,
    recommend,
    recommendation_sentence,
    session_sweep,
)
from ctxlab.strategies import parameters
from ctxlab.ui import insights_view, tune_view
from ctxlab.ui.session import apply_params
from ctxlab.ui.shell import PLAYGROUND, shared, switch_to
from ctxlab.ui.summary import PreviewSummarizer
from ctxlab.ui.widgets import ChatScale, param_range

setup = shared()
ws, strategy = setup.ws, setup.strategy
model = ws.model_info

st.title("Tune")
st.caption(
    "Each value replays the whole session: the strategy runs before every assistant turn, as a "
    "live agent would, and every call is checked against the model's window and priced with "
    "the prompt cache."
)
numeric = {i.name: i for i in parameters(ws.strategy_cls) if i.kind in ("int", "float")}
if not numeric:
    st.info("This strategy has no numeric parameter to sweep.")
    st.stop()
cols = st.columns([2, 3, 1])
name = cols[0].selectbox(
    "Parameter", list(numeric), key="tune-param", format_func=lambda n: numeric[n].spec.label
)
info = numeric[name]
window = model.context_window if model is not None else None
rng = param_range(info, ChatScale.of(ws.counted), window=window)
# Token values start at 1% of the range (below it a context holds about one message); the
# range slider reaches down to the declared minimum.
start = max(rng.lo, rng.hi / 100) if info.spec.unit == "tokens" else rng.lo
start = int(start) if info.kind == "int" else start
lo, hi = cols[1].slider(
    "Range",
    rng.lo,
    rng.hi,
    (start, rng.hi),
    step=rng.step,
    key=f"tune-range.{name}.{ws.chat.slot}.{ws.model}",
)
steps = int(cols[2].number_input("Steps", 3, 40, 12, key="tune-steps"))
ask, share_col = st.columns([3, 2])
question = Question(
    ask.radio(
        "Question",
        [q.value for q in Question],
        key="tune-question",
        format_func=lambda q: tune_view.QUESTION_LABELS[q],
    )
)
min_facts = (
    share_col.slider(
        "Facts to keep (share of the chat's facts at the last call)",
        0,
        100,
        80,
        step=5,
        format="%d%%",
        key="tune-facts",
    )
    / 100
)
summarizer = PreviewSummarizer() if ws.strategy_cls.uses_summarizer else None
if summarizer is not None:
    st.caption("Summaries are placeholders here: the sweep never calls a summarizer.")

integer = info.kind == "int"
log = info.spec.unit == "tokens"
values = candidate_values(lo, hi, steps, integer=integer, log=log)
facts = insights_view.chat_facts(ws.counted)


def sweep() -> tuple[tuple[SessionPoint, ...], float]:
    started = time.perf_counter()
    points = session_sweep(
        ws.chat.messages,
        strategy,
        name,
        values,
        ws.counter,
        model=ws.model,
        facts=facts,
        window=window,
        summarizer=summarizer,
        integer=integer,
    )
    return points, time.perf_counter() - started


with st.spinner(f"Replaying the session at {len(values)} values…"):
    swept, seconds = insights_view.per_chat(
        "tune-sweep", ws.counted, sweep, extra=(ws.model, strategy, name, tuple(values))
    )
points = list(swept)
rec = recommend(points, question, window=window, min_facts=min_facts)
sentence = recommendation_sentence(
    rec, parameter=info.spec.label, unit=info.spec.unit, model=ws.model
)
(st.success if rec.point is not None else st.warning)(sentence)
st.plotly_chart(
    tune_view.recommendation_figure(
        points,
        parameter=info.spec.label,
        model=model,
        min_facts=min_facts,
        recommendation=rec,
        log_x=log and values[0] >= 1,
    ),
    key="tune-figure",
    width="stretch",
)
st.caption(
    f"{len(points)} values, {len(facts):,} facts picked from the chat; sweep took "
    f"{seconds:.1f} s (kept for this chat, model and strategy). Facts are measured only where "
    "every call fits the window."
)
options = [p.value for p in points]
default = options.index(rec.point.value) if rec.point is not None else len(options) // 2
chosen = st.select_slider(
    "Value to apply",
    options,
    value=options[default],
    key=f"tune-pick.{name}.{options[default]:g}",  # follows the recommendation
    format_func=lambda v: f"{v:,g}",
)
if st.button(f"Apply {info.spec.label} = {chosen:,g} in the Playground", type="primary"):
    value = int(chosen) if integer else chosen
    apply_params("", strategy.name, ws.chat.slot, {name: value}, ws)
    switch_to(PLAYGROUND)
