"""Learn: a guided walk-through of context trimming, every example live on the same engine."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ctxlab.strategies import build_strategy, get_strategy_class, parameters, strategy_names
from ctxlab.tokens import get_counter
from ctxlab.ui import figures, render
from ctxlab.ui.examples import FAKE_KEY, example_chat
from ctxlab.ui.shell import shared
from ctxlab.ui.summary import PreviewSummarizer
from ctxlab.ui.text import visible
from ctxlab.validate import validate

shared()  # the sidebar, so that the chat and settings chosen elsewhere stay chosen

chat = example_chat()
counter = get_counter("gpt-4o")
counted = counter.counted(chat)


def table(decisions: dict[str, str] | None = None) -> pd.DataFrame:
    frame = render.build_message_frame(counted)
    if decisions is not None:
        frame.insert(1, "decision", [decisions[m.id] for m in chat])
    return frame


st.title("Learn: how chat context gets trimmed")
st.markdown(
    "Every model call resends the whole conversation. When it grows past what the model "
    "accepts (or what you want to pay), something must go. The examples below use one small "
    f"bakery-ops chat of {len(chat)} messages and the same engine as the other pages."
)

st.header("1 · What a round is")
st.markdown(
    "A **round** starts at a user message and holds everything that answers it: assistant "
    "replies, tool calls and tool results. Anything before the first user message (the system "
    "prompt) is round 0. Round-wise strategies keep or drop whole rounds."
)
st.dataframe(table(), hide_index=True, width="stretch")

st.header("2 · Projection vs replacement")
st.markdown(
    "A **projection** computes what to send from the full history on every call and forgets "
    "nothing: raise the budget and old rounds come back. A **replacement** (summarizing) "
    "rewrites the history: the folded messages are gone from then on, replaced by a summary."
)
budget = st.slider(
    "Window drop budget (tokens)", 20, counted.total + 20, counted.total // 2, key="learn-budget"
)
drop = build_strategy("window-drop", {"budget": budget}).apply(chat, counter)
st.info(get_strategy_class("window-drop").explanation)
st.plotly_chart(
    figures.round_map_figure(counted, drop.decisions), key="learn-drop", width="stretch"
)
st.caption(f"Sent {drop.tokens_after} of {drop.tokens_before} tokens; replace={drop.replace}.")

st.header("3 · Tool calls and results travel together")
st.markdown(
    "An API rejects a tool result whose call is not in the request. A message-count window "
    "can cut between them; whole rounds cannot."
)
window = st.slider("Sliding window (messages)", 1, len(chat) - 1, 6, key="learn-window")
sliding = build_strategy("sliding-window", {"window": window}).apply(chat, counter)
sent = sum(counter.counts(sliding.messages)) + counted.reply_priming
pairs = build_strategy("window-drop", {"budget": sent}).apply(chat, counter)
cols = st.columns(2)
for col, result, label in ((cols[0], sliding, "sliding-window"), (cols[1], pairs, "window-drop")):
    with col:
        st.subheader(label)
        st.caption(get_strategy_class(label).summary)
        st.plotly_chart(
            figures.round_map_figure(counted, result.decisions),
            key=f"learn-{label}",
            width="stretch",
        )
        problems = validate(result.messages)
        if problems:
            for p in problems:
                st.error(f"{p.code}: {visible(p.text)}")
        else:
            st.success("The API would accept this context.")

st.header("4 · What redaction protects")
st.markdown(
    "A summarizer is another model call, often to another provider. Before anything is sent, "
    "tool outputs (and credential-looking spans anywhere) are replaced by markers. The chat "
    "above holds a planted fake key in a tool output; here is the exact summarizer request."
)
summarizing = [n for n in strategy_names() if get_strategy_class(n).uses_summarizer]
if summarizing:
    cls = get_strategy_class(summarizing[0])
    st.info(cls.explanation)
    keep = st.slider("Messages kept verbatim", 1, len(chat) - 2, 4, key="learn-keep")
    infos = {i.name for i in parameters(cls)}
    params = {
        n: v
        for n, v in {"trigger_token_budget": 1, "keep_recent_messages": keep}.items()
        if n in infos
    }
    preview = PreviewSummarizer()
    result = build_strategy(cls.name, params).apply(chat, counter, preview)
    request = result.summary_request or (preview.requests[-1] if preview.requests else None)
    render.render_summary_request(request, counter)
    if request is not None:
        leaked = FAKE_KEY in str(request.body())
        st.caption(f"The planted key is {'STILL IN' if leaked else 'not in'} the request.")
else:
    st.caption("No summarizing strategy is installed.")
