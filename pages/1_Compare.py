"""Compare: two to four strategy configurations on the same chat, side by side."""

from __future__ import annotations

import streamlit as st

from ctxlab.strategies import get_strategy_class, strategy_names
from ctxlab.ui import insights_view, render
from ctxlab.ui.session import build_or_error, strategy_params
from ctxlab.ui.shell import shared
from ctxlab.ui.summary import run, summarizer_panel

ws = shared().ws
st.title("Compare strategies")
count = int(st.sidebar.number_input("Configurations", 2, 4, 2, key="cmp.count"))
names = strategy_names()
facts = insights_view.chat_facts(ws.counted)
labelled, rows = [], []
for i, col in enumerate(st.columns(count)):
    with col:
        name = col.selectbox(
            f"Configuration {i + 1}",
            names,
            index=i % len(names),
            key=f"cmp{i}.strategy",
            format_func=lambda n: get_strategy_class(n).title,
        )
        cls = get_strategy_class(name)
        with col.expander("Parameters", expanded=True):
            values = strategy_params(ws, cls, namespace=f"cmp{i}.", container=st)
        strategy = build_or_error(name, values)
        outcome = None
        if strategy is not None:
            outcome = run(strategy, ws, summarizer_panel(cls), button_key=f"cmp{i}.run")
        if outcome is None:
            continue
        label = f"{i + 1}: {name}"
        render.render_round_map(ws.counted, outcome.result, title=label, key=f"cmp{i}.map")
        problems = insights_view.render_provider_badges(
            outcome.result.messages, key=f"cmp{i}", counter=ws.counter, model=ws.model_info
        )
        retention = insights_view.retention_of(ws.chat.messages, outcome.result.messages, facts)
        labelled.append((label, outcome.result))
        rows.append((label, outcome.result, problems, retention.percent if facts else None))

st.subheader("Metrics")
st.caption(
    f"Fact retention: how many of the {len(facts):,} facts picked from the chat (numbers, "
    "identifiers, names, URLs) each context still holds, verbatim or in a summary."
)
st.dataframe(render.compare_frame(rows), hide_index=True, width="stretch")
st.subheader("Messages on which they disagree")
disagreements = render.disagreement_frame(ws.counted, labelled)
st.caption(f"{len(disagreements):,} of {len(ws.counted):,} messages")
st.dataframe(disagreements, hide_index=True, height=420, width="stretch")
