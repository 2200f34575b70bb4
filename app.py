"""ctxlab's entry point and router: the shared sidebar on every run, then the chosen page.

Run it with ``streamlit run app.py``. The pages live in ``pages/``; this script registers them
with ``st.navigation`` and draws the sidebar (chat, model, strategy, parameters) before the page,
so what the user chose holds on every page. See :mod:`ctxlab.ui.shell`.
"""

from __future__ import annotations

import streamlit as st

from ctxlab.ui import shell

st.set_page_config(page_icon="✂️", layout="wide")  # each page titles its own tab

page = shell.navigation()
shell.begin_run()
if shell.draw_shared(page) is None:
    st.stop()
try:
    page.run()
finally:
    shell.write_url()
    shell.end_run()
