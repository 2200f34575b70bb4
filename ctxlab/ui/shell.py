"""The app's frame: one sidebar drawn on every run, whatever page runs, and the URL written once.

``app.py`` is the router: it calls :func:`navigation`, then :func:`draw_shared` (chat, model,
strategy, parameters and the summarizer backend), then runs the page, then :func:`write_url`.
Because the sidebar's widgets are drawn by the entry script on every run, Streamlit keeps their
state across page switches (a widget drawn by only one page loses its state when another page
runs, which is how a click in the navigation used to reset every parameter to its minimum).

A page asks for the shared set-up with :func:`shared`. When the page runs on its own (Streamlit's
``AppTest`` on a page file), there is no router, so :func:`shared` draws the sidebar itself: the
page behaves the same either way.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from ctxlab.strategies import Strategy
from ctxlab.ui import insights_view
from ctxlab.ui.memory_release import watch_sessions
from ctxlab.ui.session import STRATEGY as STRATEGY_KEY
from ctxlab.ui.session import (
    Workspace,
    apply_params,
    build_or_error,
    first_showing,
    new_run_scope,
    run_scope,
    sidebar,
    strategy_params,
    sync_url,
)
from ctxlab.ui.summary import Backend, summarizer_panel

__all__ = [
    "PAGES",
    "PageSpec",
    "Shared",
    "apply_and_open_playground",
    "begin_run",
    "draw_shared",
    "end_run",
    "leave_legacy_page_mode",
    "navigation",
    "page_query",
    "run_scope",
    "shared",
    "switch_to",
    "write_url",
]

# The router's set-up for the run under way. A script run executes in one thread, router and page
# alike, and the router clears it when the page has run, so a page never sees another run's.
_LOCAL = threading.local()


@dataclass(frozen=True, slots=True)
class PageSpec:
    """One page of the app: its file (under ``pages/``), title, icon and URL path."""

    path: str
    title: str
    icon: str
    url_path: str
    needs_summarizer: bool = False


PAGES: tuple[PageSpec, ...] = (
    PageSpec("pages/0_Playground.py", "Playground", ":material/content_cut:", "Playground"),
    PageSpec("pages/1_Compare.py", "Compare", ":material/compare_arrows:", "Compare", True),
    PageSpec("pages/2_Replay.py", "Replay", ":material/replay:", "Replay"),
    PageSpec("pages/3_Tune.py", "Tune", ":material/tune:", "Tune"),
    PageSpec("pages/4_Learn.py", "Learn", ":material/school:", "Learn"),
    PageSpec("pages/5_Fleet.py", "Fleet", ":material/hub:", "Fleet"),
)
"""Every page, in navigation order; the first is the default page (``/``)."""

PLAYGROUND = PAGES[0].path


@dataclass(frozen=True, slots=True, eq=False)
class Shared:
    """What the sidebar set up for this run: the workspace, parameter values, the strategy
    built from them and the summarizer backend (None when the strategy does not summarize)."""

    ws: Workspace
    values: dict[str, Any]
    strategy: Strategy
    backend: Backend | None


def navigation() -> st.Page:
    """Register the pages (``st.navigation``) and return the one this run shows."""
    pages = [
        st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path, default=i == 0)
        for i, spec in enumerate(PAGES)
    ]
    page: st.Page = st.navigation(pages)
    return page


def begin_run() -> None:
    """Start a new run: a fresh :func:`~ctxlab.ui.session.run_scope`, no set-up yet (and, once
    per server, the watcher that releases the memory of sessions that left)."""
    watch_sessions()
    new_run_scope()
    _LOCAL.shared = None


def _spec_of(page: st.Page | None) -> PageSpec | None:
    if page is None:
        return None
    return next((s for s in PAGES if s.url_path == page.url_path), None)


def draw_shared(page: st.Page | None = None) -> Shared | None:
    """Draw the shared sidebar and build the strategy; None (an error shown) when impossible.

    The summarizer backend's controls are drawn when the sidebar's strategy summarizes, or when
    the page may run a summarizing configuration of its own (Compare).
    """
    ws = sidebar()
    if ws is None:
        return None
    values = strategy_params(ws)
    strategy = build_or_error(ws.strategy_cls.name, values, ws.chat.usage)
    if strategy is None:
        return None
    spec = _spec_of(page)
    backend = summarizer_panel(ws.strategy_cls)
    if backend is None and spec is not None and spec.needs_summarizer:
        # Drawn here, not by the page, so that its widgets keep their state across pages.
        summarizer_panel(None)
    out = Shared(ws, dict(values), strategy, backend)
    _LOCAL.shared = out
    return out


def shared() -> Shared:
    """The set-up the router drew for this run; drawn here when the page runs on its own.

    Stops the page (after showing what is missing) when no chat or no valid strategy exists.
    """
    found: Shared | None = getattr(_LOCAL, "shared", None)
    if found is not None:
        return found
    leave_legacy_page_mode()
    begin_run()
    drawn = draw_shared()
    if drawn is None:
        st.stop()
    write_url()
    end_run()  # no router will clear it: the next run of this page must draw afresh
    return drawn


def switch_to(path: str) -> None:
    """``st.switch_page`` to the page file ``path`` (as in :data:`PAGES`); a page run on its
    own, without the router, reruns instead."""
    from streamlit.errors import StreamlitAPIException

    try:
        st.switch_page(path)
    except StreamlitAPIException:
        # A page run on its own (AppTest) has no navigation to switch within: stay, rerun.
        st.rerun()


def apply_and_open_playground(ws: Workspace, strategy: str, values: Mapping[str, Any]) -> None:
    """Make ``values`` the sidebar's parameters of ``strategy`` on the chat on screen and open
    the Playground (Tune's Apply).

    The chat stays the one on screen, conversation included: the switch runs without the
    browser's widget values (the uploader is empty for that run), and the sidebar keeps the
    picked conversation and its picker from session state (see ``ctxlab.ui.session``).
    """
    apply_params("", strategy, ws.chat.slot, values, ws)
    if st.session_state.get(STRATEGY_KEY) != strategy:
        st.session_state[STRATEGY_KEY] = strategy
    switch_to(PLAYGROUND)


def leave_legacy_page_mode() -> None:
    """Hand a page run by Streamlit's legacy multipage mode over to the router.

    Streamlit decides at its first session whether the app uses the legacy ``pages/`` folder;
    it switches to ``st.navigation`` when the router calls it. When the server's very first
    request opens a page URL (``/Learn``), that page runs alone, listed beside an "app" entry.
    Streamlit documents that once any session calls ``st.navigation`` the app ignores the
    ``pages/`` directory in every session: so the page registers the router's pages itself
    (:func:`navigation`, public API) and reruns, and the rerun runs the router, which draws the
    same page. Nothing private is written.

    A page only runs without the router under ``streamlit run app.py`` in that legacy mode;
    ``AppTest`` on a page file runs the page as its own main script, and nothing happens then.
    """
    # Under the router this run's set-up is drawn before the page runs: nothing to hand over
    # (calling st.navigation and rerunning there would rerun the page for ever).
    if getattr(_LOCAL, "shared", None) is None and _served_by_router_script():
        navigation()
        st.rerun()


def _served_by_router_script() -> bool:
    """The server runs ``app.py`` (the router) beside ``pages/``: ``streamlit run`` puts the
    main script's path in ``sys.argv[0]`` (how a script reads its arguments, documented)."""
    import sys
    from pathlib import Path

    if not sys.argv:
        return False
    main = Path(sys.argv[0])
    return main.name == "app.py" and (main.resolve().parent / "pages").is_dir()


def page_query(values: Mapping[str, str]) -> None:
    """Add this page's own set-up (Compare's configurations) to the URL written for this run.

    A page run on its own (AppTest) has no router to write the URL after it: the entries are
    written at once.
    """
    run_scope().setdefault("query", {}).update(values)
    if getattr(_LOCAL, "shared", None) is None:
        for key, value in values.items():
            if st.query_params.get(key) != value:
                st.query_params[key] = value


def write_url() -> None:
    """Write the shared set-up plus the page's own entries to the URL (when they changed)."""
    current: Shared | None = getattr(_LOCAL, "shared", None)
    if current is None:
        return
    sync_url(current.ws, current.strategy.name, current.values, run_scope().get("query", {}))


def end_run() -> None:
    """Forget this run's set-up (the router calls it once the page has run), and start
    building, in the background, what a next click on this chat may need (its facts)."""
    current: Shared | None = getattr(_LOCAL, "shared", None)
    _LOCAL.shared = None
    if current is not None:
        insights_view.prefetch_facts(current.ws.counted, first_showing=first_showing())
