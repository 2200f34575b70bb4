"""The "Count with the provider" panel: Anthropic's or Google's own count beside ctxlab's.

Shown under the window badge for Claude and Gemini models only (ctxlab's count of them is
approximate). Nothing is sent until the user presses the button, which names the provider the
context goes to; a count already made for the same request (same provider, model and body) is
shown again from :data:`ctxlab.provider_count.COUNTS` without sending anything.

Keys follow :func:`ctxlab.provider_count.choose_count_key`: a key typed here is held in this
session's server-side state (moved out of the password box at once, as the summarizer's key
is) and goes only to the provider; the server's ``ANTHROPIC_API_KEY`` / ``GEMINI_API_KEY`` is
used only when the operator runs the app for themselves (``CTXLAB_PROFILE=local``). Failures are
one line; ctxlab's count above stands.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import streamlit as st

from ctxlab.catalog import CATALOG
from ctxlab.errors import ProviderCountError
from ctxlab.formats import ToolDefinition
from ctxlab.hosting import PROFILE_ENV
from ctxlab.model import Message
from ctxlab.provider_count import (
    KEY_ENV,
    CountKey,
    CountRequest,
    ProviderCount,
    cached_count,
    choose_count_key,
    comparison,
    count_request,
    count_with_provider,
    endpoint_of,
    provider_of,
)
from ctxlab.redaction import RedactionPolicy
from ctxlab.ui import notices
from ctxlab.ui.session import secret_settings

__all__ = ["button_label", "render_provider_count"]

_TITLES = {"anthropic": "Anthropic", "gemini": "Google"}
_HELD = "ctx.pc.key.{provider}"
_FIELD = "ctx.pc.key_field.{provider}"
_ASKED = "ctx.pc.asked"


def button_label(provider: str) -> str:
    """``Count with the provider — sends this chat to Anthropic``."""
    return f"Count with the provider — sends this chat to {_TITLES.get(provider, provider)}"


def render_provider_count(
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    ctxlab_tokens: int,
    model: str,
    *,
    key: str = "pg",
) -> None:
    """The opt-in panel for ``messages`` (the context as sent) counted with ``model``; nothing
    for a model whose provider has no counting endpoint."""
    provider = provider_of(model)
    if provider is None:
        return
    title = _TITLES[provider]
    with st.expander(f"Count with {title}", icon=":material/calculate:"):
        notices.caption(
            f"ctxlab's count of {model} is approximate ({title}'s tokenizer is not public). "
            f"{title} counts a request for free: the button sends this context "
            f"({len(messages):,} messages, tool definitions included) to {title}; nothing is "
            "sent before."
        )
        choice = _key_panel(provider, key)
        mask = st.checkbox(
            "Mask credential-looking text before sending",
            value=True,
            key=f"{key}-pc-mask",
            help="API keys, tokens and passwords in the context are replaced by markers, so "
            "they never leave this server; the count then covers the masked text.",
        )
        policy = RedactionPolicy(frozenset(), mask)
        asked: set[tuple[str, str]] = st.session_state.setdefault(_ASKED, set())
        try:
            endpoint = endpoint_of(provider)
        except ProviderCountError as exc:
            notices.error(str(exc))
            return
        # The body is built only once the user has asked for this model's count (it walks the
        # whole context); then a count already made for it is shown without sending anything.
        request: CountRequest | None = None
        shown: ProviderCount | None = None
        if (provider, model) in asked:
            request = count_request(model, messages, tools, policy)
            shown = cached_count(request, endpoint)
        pressed = st.button(
            button_label(provider),
            key=f"{key}-pc-send",
            disabled=not choice.usable,
            icon=":material/send:",
            help=f"Sends the context to {title}'s token-counting endpoint with your key.",
        )
        if pressed and shown is None:
            request = request or count_request(model, messages, tools, policy)
            try:
                with st.spinner("Asking the provider to count…"):
                    shown = count_with_provider(request, choice.key, endpoint=endpoint)
            except ProviderCountError as exc:
                notices.error(f"{exc}. ctxlab's count ({ctxlab_tokens:,} tokens) stands.")
                return
            asked.add((provider, model))
        if shown is None or request is None:
            return
        info = CATALOG.get(model)
        text = comparison(shown, ctxlab_tokens, exact=info is not None and info.is_exact)
        if shown.tokens == ctxlab_tokens:
            notices.success(text)
        else:
            notices.warning(text, icon=":material/difference:")
        masked = sum(request.redactions.values())
        if masked:
            notices.caption(
                f"{masked:,} credential-looking span{'s' if masked != 1 else ''} masked before "
                f"sending; {title} counted the masked text."
            )


def _key_panel(provider: str, key: str) -> CountKey:
    """The key a count would use: a key field while there is none, what is used once there is."""
    title = _TITLES[provider]
    held_name = _HELD.format(provider=provider)
    field_name = _FIELD.format(provider=provider)
    held = str(st.session_state.get(held_name) or "")
    names = (*KEY_ENV[provider], PROFILE_ENV)
    choice = choose_count_key(provider, held, env=os.environ, secrets=secret_settings(names))
    if choice.source == "visitor":
        notices.caption(choice.describe())
        st.button(
            f"Forget my {title} key",
            key=f"{key}-pc-forget",
            on_click=lambda: st.session_state.pop(held_name, None),
        )
        return choice
    if choice.source == "server":
        notices.caption(choice.describe())
        return choice

    def hold() -> None:
        typed = str(st.session_state.get(field_name) or "").strip()
        if typed:
            st.session_state[held_name] = typed
        st.session_state[field_name] = ""

    notices.caption(choice.describe())
    st.text_input(
        f"Your {title} API key",
        type="password",
        key=field_name,
        on_change=hold,
        help="Used for this session only, sent only to the provider; never stored in the URL, "
        "downloads or logs.",
    )
    return choice
