"""Replay: the strategy applied before every assistant turn, as the chat grows."""

from __future__ import annotations

import streamlit as st

from ctxlab.ui import render
from ctxlab.ui.shell import shared
from ctxlab.ui.timeline import render_replay, run_replay

setup = shared()
ws, strategy, backend = setup.ws, setup.strategy, setup.backend

st.title("Replay")
st.caption(
    "Every assistant turn of the chat is one model call: the strategy decides what that call "
    "sees, given the chat up to that point."
)
replayed = run_replay(strategy, ws, backend)
if replayed is not None:
    render_replay(replayed, ws, render.budget_of(strategy), strategy)
