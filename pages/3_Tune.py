"""Tune: replay the session across one parameter's values and recommend the value that answers
the user's question (fits the model's window and keeps the facts, or costs least), then apply it.
"""

from __future__ import annotations

import time

import streamlit as st

from ctxlab.recommend import (
    Question,
    SessionPoint,
    accepted_values,
    candidate_values,
    recommend,
    recommendation_sentence,
    refine_values,
    session_sweep,
)
from ctxlab.strategies import parameters
from ctxlab.ui import insights_view, notices, tune_view
from ctxlab.ui.shell import apply_and_open_playground, shared

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
swept_range = strategy.sweep_range(name, ws.counted, window)
if swept_range is None:
    floor = info.spec.min
    if info.spec.unit == "tokens" and floor is not None and floor >= ws.counted.total:
        notices.info(
            f"“{info.spec.label}” takes {floor:,.0f} tokens or more, and this chat has "
            f"{ws.counted.total:,}: every value it accepts leaves the chat as it is, so there is "
            "nothing to tune here."
        )
    else:
        notices.info(
            f"“{info.spec.label}” acts on nothing in this chat (it counts something the chat "
            "does not hold), so every value sends the same context: there is nothing to tune here."
        )
    st.stop()
integer = swept_range.integer
lo_bound = int(swept_range.lo) if integer else swept_range.lo
hi_bound = int(swept_range.hi) if integer else swept_range.hi
if lo_bound < hi_bound:
    lo, hi = cols[1].slider(
        "Range",
        lo_bound,
        hi_bound,
        (lo_bound, hi_bound),
        step=1 if integer else (hi_bound - lo_bound) / 100,
        key=f"tune-range.{strategy.name}.{name}.{ws.chat.slot}.{ws.model}.{lo_bound}-{hi_bound}",
    )
else:
    lo = hi = lo_bound
    notices.caption(f"The chat leaves one value to try: {lo_bound:,}.", where=cols[1])
steps = int(cols[2].number_input("Steps", 3, 40, 12, key="tune-steps"))
notices.caption(
    f"The range runs up to {swept_range.basis}: above it every value sends the same context"
    + (" or a call the model refuses" if window is not None else "")
    + (". Values are spaced geometrically" if swept_range.log else ". Values are evenly spaced")
    + ", and a second pass fills in the values around the answer."
)
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
        "Facts to keep (share of the chat's facts in the context sent)",
        0,
        100,
        80,
        step=5,
        format="%d%%",
        key="tune-facts",
    )
    / 100
)
summarizer, summarizer_label = tune_view.sweep_summarizer(ws.strategy_cls, setup.backend)
if summarizer is not None:
    notices.caption(
        f"Summaries come from the {summarizer_label} summarizer, as on Compare with the same "
        "setting: the facts kept are the ones its summaries keep. Tune never calls an endpoint."
    )

log = swept_range.log
values, refused = accepted_values(
    strategy, name, candidate_values(lo, hi, steps, integer=integer, log=log), integer=integer
)
if refused:
    notices.caption(f"Some values are left out: {strategy.title} refuses them ({refused}).")
if not values:
    notices.info(
        f"{strategy.title} accepts no value of this parameter in the range with its other "
        "settings; change them in the sidebar."
    )
    st.stop()
facts = insights_view.chat_facts(ws.counted)


def sweep(grid: list[float]) -> tuple[tuple[SessionPoint, ...], float]:
    started = time.perf_counter()
    points = session_sweep(
        ws.chat.messages,
        strategy,
        name,
        grid,
        ws.counter,
        model=ws.model,
        facts=facts,
        window=window,
        summarizer=summarizer,
        integer=integer,
    )
    return points, time.perf_counter() - started


key = (ws.model, strategy, name, summarizer_label)
with st.spinner(f"Replaying the session at {len(values)} values…"):
    swept, seconds = insights_view.per_chat(
        "tune-sweep", ws.counted, lambda: sweep(values), extra=(*key, tuple(values))
    )
points = list(swept)
rec = recommend(points, question, window=window, min_facts=min_facts, chat_tokens=ws.counted.total)
finer, _ = accepted_values(
    strategy, name, refine_values(points, rec, 4, integer=integer), integer=integer
)
if finer:
    with st.spinner(f"Refining around {rec.point.value if rec.point else 0:,g}…"):
        extra, more = insights_view.per_chat(
            "tune-refine", ws.counted, lambda: sweep(finer), extra=(*key, tuple(finer))
        )
    points = sorted([*points, *extra], key=lambda p: p.value)
    seconds += more
    rec = recommend(
        points, question, window=window, min_facts=min_facts, chat_tokens=ws.counted.total
    )
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
        log_x=log and points[0].value >= 1,
    ),
    key="tune-figure",
    width="stretch",
)
st.caption(
    f"{len(points)} values, {len(facts):,} facts picked from the chat; sweep took "
    f"{seconds:.1f} s (kept for this chat, model and strategy). Facts kept are those of the "
    "context sent for the whole chat, measured only where every call fits the window."
)
options = [p.value for p in points]
default = options.index(rec.point.value) if rec.point is not None else len(options) // 2
chosen = st.select_slider(
    "Value to apply",
    options,
    value=options[default],
    # the key follows the recommendation and the grid, so the picker starts on the answer
    key=f"tune-pick.{name}.{options[default]:g}.{len(options)}",
    format_func=lambda v: f"{v:,g}",
)
if st.button(f"Apply {info.spec.label} = {chosen:,g} in the Playground", type="primary"):
    value = int(chosen) if integer else chosen
    apply_and_open_playground(ws, strategy.name, {name: value})
