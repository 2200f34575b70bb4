"""The summarizer backend panel and the one engine call of a page, with its error handling.

A summarizing strategy never calls a paid endpoint because a slider moved: with a real endpoint
the strategy runs against a *preview* summarizer that records the exact request and returns a
visible placeholder, until the user presses "Run summarizer" (or the response is already in the
shared cache). The offline summarizer is free and deterministic, so it runs on every change.
The API key lives only in this session's server-side state, moved out of the password box as soon
as it is entered (or comes from ``st.secrets`` /
``OPENAI_API_KEY``); it is never written to the URL, a download, the page or a log.

Which key a call uses follows :mod:`ctxlab.hosting`: a key the visitor typed goes where they
point it; the server's key only to the endpoints the operator listed (any endpoint in the local
profile). Elsewhere the panel says that this endpoint needs the visitor's own key and the
backend refuses without sending anything. In the hosted profile the client connects only to
public addresses (checked where it connects), and errors of endpoints the operator did not list
quote no reply text: a visitor cannot read a server's answers through the app.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ctxlab.errors import CtxlabError, SummarizerError
from ctxlab.hosting import address_policy, choose_key, literal_address_refusal
from ctxlab.strategies import Strategy, TrimResult
from ctxlab.summarizers import Summarizer, SummaryRequest, SummaryResponse
from ctxlab.summarizers.scripted import PLACEHOLDER, PreviewSummarizer
from ctxlab.ui import notices
from ctxlab.ui.session import Workspace, hosting_settings, run_scope
from ctxlab.ui.text import markdown_literal

__all__ = [
    "PLACEHOLDER",
    "Backend",
    "Outcome",
    "PreviewSummarizer",
    "Unavailable",
    "run",
    "summarizer_panel",
]


@dataclass(frozen=True, slots=True, eq=False)
class Backend:
    """The chosen summarizer and whether it may run without a button press."""

    summarizer: Summarizer
    automatic: bool
    label: str


@dataclass(frozen=True, slots=True, eq=False)
class Outcome:
    """One engine call's result; ``preview`` when the summary is a placeholder."""

    result: TrimResult
    request: SummaryRequest | None
    preview: bool = False


def summarizer_panel(cls: type[Strategy] | None) -> Backend | None:
    """Sidebar controls of the summarizer backend; None when ``cls`` does not summarize.

    With ``cls`` None the controls are drawn whatever the strategy (a page that may run a
    summarizing configuration of its own). They are drawn at most once per run; later calls
    get the same backend.
    """
    if cls is not None and not cls.uses_summarizer:
        return None
    scope = run_scope()
    if "backend" not in scope:
        scope["backend"] = _draw_backend()
    backend: Backend = scope["backend"]
    return backend


def _draw_backend() -> Backend:
    from ctxlab import summarizers

    side = st.sidebar
    side.header("Summarizer")
    kind = side.radio(
        "Backend",
        ("Offline (extractive, no network)", "OpenAI-compatible endpoint"),
        key="ctx.backend",
    )
    if kind.startswith("Offline"):
        offline: Summarizer = summarizers.OfflineSummarizer()
        return Backend(offline, automatic=True, label="offline")
    settings = hosting_settings()
    for problem in settings.problems:
        notices.warning(f"Hosting setting ignored: {problem}", where=side)
    base_url = side.text_input(
        "Base URL", key="ctx.base_url", placeholder=settings.default_endpoint.url
    )
    model = side.text_input("Summarizer model", "gpt-4o-mini", key="ctx.sum_model")
    held = str(st.session_state.get(_KEY_HELD) or "")
    side.text_input(
        "API key",
        type="password",
        key=_KEY_FIELD,
        on_change=_hold_typed_key,
        help="Used for this session only; never stored in the URL, downloads or logs.",
        placeholder=(
            "a key is set for this session"
            if held
            else "optional for the server's endpoints"
            if settings.has_server_key
            else "sk-…"
        ),
    )
    if held:
        side.caption("A key you entered is set for this session.")
        side.button("Forget the key", key="ctx.forget_key", on_click=_forget_key)
    try:
        choice = choose_key(settings, base_url, held, model)
    except SummarizerError as exc:
        return _unavailable(str(exc), f"{model} at an invalid base URL")
    label = f"{model} at {choice.endpoint.where}"
    policy = address_policy(settings)
    refusal = choice.refusal or literal_address_refusal(choice.endpoint, policy)
    if refusal is not None:
        return _unavailable(refusal, label)
    if choice.source == "none" and choice.endpoint.host == "api.openai.com":
        return _unavailable(
            "no OpenAI API key: enter your key (the server holds none; set OPENAI_API_KEY or "
            "secrets.toml to give it one)",
            label,
        )
    side.caption(markdown_literal(choice.describe()))
    if settings.hosted:
        side.caption(
            "Hosted server: its key goes only to the endpoints its operator listed, and "
            "private addresses are " + ("allowed." if settings.allow_private else "not called.")
        )
    listed = choice.endpoint in settings.key_endpoints
    try:
        real: Summarizer = summarizers.OpenAISummarizer(
            model,
            base_url=choice.endpoint.url,
            api_key=choice.key or summarizers.NO_KEY_NEEDED,
            # The operator's own endpoints go through the ordinary client (their proxies apply);
            # any other is connected to directly, each address checked where it connects.
            address_policy=None if settings.allow_private or listed else policy,
            quote_replies=not settings.hosted or listed,
        )
    except SummarizerError as exc:
        return _unavailable(str(exc), label)
    return Backend(real, automatic=False, label=label)


def _unavailable(reason: str, label: str) -> Backend:
    """A backend that refuses with ``reason`` when run (no request is ever sent), shown now."""
    notices.error(reason, where=st.sidebar)
    return Backend(Unavailable(reason), automatic=False, label=label)


# The typed key moves from the password box into this server-side session entry and the box is
# cleared at once, so the key never stays in the page: browsers mirror an input's value into
# its DOM attribute, where page HTML, screenshots and extensions can read it.
_KEY_FIELD = "ctx.api_key"
_KEY_HELD = "ctx.api_key_held"


def _hold_typed_key() -> None:
    typed = str(st.session_state.get(_KEY_FIELD) or "").strip()
    if typed:
        st.session_state[_KEY_HELD] = typed
    st.session_state[_KEY_FIELD] = ""


def _forget_key() -> None:
    st.session_state.pop(_KEY_HELD, None)


class Unavailable:
    """Stands in for a summarizer that could not be configured; says why when called."""

    name = "unavailable"
    model = ""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        raise SummarizerError(self.reason)


def _is_cached(backend: Backend, request: SummaryRequest) -> bool:
    """True when the backend's response cache already holds the answer to ``request``."""
    summarizer = backend.summarizer
    cache = getattr(summarizer, "cache", None)
    key_of = getattr(summarizer, "cache_key", None)
    if cache is None or key_of is None:
        return False
    try:
        return cache.get(key_of(request)) is not None
    except (CtxlabError, OSError, ValueError):
        return False


def run(
    strategy: Strategy, ws: Workspace, backend: Backend | None, *, button_key: str = "run-sum"
) -> Outcome | None:
    """Apply ``strategy`` to the workspace chat; errors become ``st.error`` and None.

    With a non-automatic backend, the real summarizer runs only on the button press or when its
    cache holds the response; otherwise the outcome is a preview with the exact request.
    """
    messages, counter = ws.chat.messages, ws.counter
    try:
        if backend is None:
            result = strategy.apply(messages, counter)
            return Outcome(result, result.summary_request)
        preview = PreviewSummarizer(getattr(backend.summarizer, "model", ""))
        drafted = strategy.apply(messages, counter, preview)
        request = drafted.summary_request or (preview.requests[-1] if preview.requests else None)
        if request is None:
            return Outcome(drafted, None)
        pressed = False
        if not backend.automatic:
            pressed = st.button("Run summarizer", key=button_key, type="primary")
        if backend.automatic or pressed or _is_cached(backend, request):
            try:
                with st.spinner(f"Summarizing with {markdown_literal(backend.label)}…"):
                    result = strategy.apply(messages, counter, backend.summarizer)
            except SummarizerError as exc:
                notices.error(f"The summarizer failed; nothing was changed. {exc}")
                return Outcome(drafted, request, preview=True)
            return Outcome(result, result.summary_request or request)
        st.info(
            "Preview: the context below holds a placeholder where the summary goes. "
            "Press “Run summarizer” to call the endpoint (nothing is sent before)."
        )
        return Outcome(drafted, request, preview=True)
    except CtxlabError as exc:
        notices.error(str(exc))
        return None
