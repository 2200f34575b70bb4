"""Fleet: strategy configurations compared over many chats (a ``ctxlab eval`` results file)."""

from __future__ import annotations

import streamlit as st

from ctxlab.extras import missing_extra
from ctxlab.ui import notices
from ctxlab.ui.shell import leave_legacy_page_mode

leave_legacy_page_mode()  # opened first by URL, this page must still run through the router
st.title("Fleet")
st.caption(
    "Every configuration replayed over every chat of a corpus: tokens, cost, calls over budget, "
    "what a provider would reject, and how much the model would forget."
)
# DuckDB and Arrow come with the fleet extra, not with the playground's: say so, don't fail.
missing = missing_extra("fleet", "The Fleet page")
if missing is not None:
    notices.info(missing)
    st.stop()

from ctxlab.ui import fleet_view  # noqa: E402  (needs the fleet extra, checked above)

results = fleet_view.results_picker()
if results is None:
    st.stop()
fleet_view.render_report(results)
