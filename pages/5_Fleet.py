"""Fleet: strategy configurations compared over many chats (a ``ctxlab eval`` results file)."""

from __future__ import annotations

import streamlit as st

from ctxlab.ui import fleet_view
from ctxlab.ui.shell import leave_legacy_page_mode

leave_legacy_page_mode()  # opened first by URL, this page must still run through the router
st.title("Fleet")
st.caption(
    "Every configuration replayed over every chat of a corpus: tokens, cost, calls over budget, "
    "what a provider would reject, and how much the model would forget."
)
results = fleet_view.results_picker()
if results is None:
    st.stop()
fleet_view.render_report(results)
