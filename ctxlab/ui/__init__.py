"""The Streamlit side of ctxlab: the only package that imports streamlit.

* :mod:`ctxlab.ui.text` — make untrusted chat text inert and visible;
* :mod:`ctxlab.ui.figures` — pure Plotly builders (no Streamlit);
* :mod:`ctxlab.ui.widgets` — parameter widgets generated from strategy fields;
* :mod:`ctxlab.ui.session` — the shared sidebar (chat, model, strategy) and the URL;
* :mod:`ctxlab.ui.summary` — the summarizer backend and the guarded engine call;
* :mod:`ctxlab.ui.render` — the ``render_*`` helpers pages are made of;
* :mod:`ctxlab.ui.compare_setup` — Compare's set-up: URL, comparable defaults, session costs;
* :mod:`ctxlab.ui.report` — the self-contained HTML report (pure, no Streamlit).
"""
