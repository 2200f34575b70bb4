"""The verdicts of :func:`ctxlab.checks.check_context` on screen, the same on every page.

A configuration that sends no conversation message gets an error naming the setting, with one
button per fix; being over the user's own budget or trigger is a neutral line, never a
provider badge. Text comes from the engine (strategy and parameter names, numbers) and still
goes through :mod:`ctxlab.ui.notices`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ctxlab.checks import ContextCheck, check_context
from ctxlab.counted import CountedChat
from ctxlab.strategies.base import BudgetNote, SendsNothing, Strategy, TrimResult
from ctxlab.ui import notices
from ctxlab.ui.session import Workspace

__all__ = ["check_of", "render_over_limit", "render_sends_nothing"]

_MEMO_SIZE = 32


def check_of(result: TrimResult, strategy: Strategy, ws: Workspace) -> ContextCheck:
    """:func:`ctxlab.checks.check_context` of ``result`` (``strategy`` applied to the workspace
    chat), once per result: Playground, Compare and Replay share the memo, kept with the
    counted chat (:meth:`CountedChat.derived`), so reruns and other sessions reuse it."""
    memo: dict[Hashable, tuple[TrimResult, ContextCheck]] = ws.counted.derived(
        "checks.context", _empty_memo
    )
    # The result's identity stands for the strategy too: a result comes from one configuration
    # (and a third party's strategy need not be hashable).
    key = (id(result), ws.model)
    held = memo.get(key)
    if held is not None and held[0] is result:
        return held[1]
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    # A result no summarizer took part in has tokens_after == ws.counter.count_messages of its
    # messages (TrimResult's invariant; tests pin it per strategy): counting a 100k-message
    # result again would cost 0.1 s. A summarized preview's count is left to the validator.
    known = result.tokens_after if result.summary_request is None else None
    found = check_context(
        ws.chat.messages, result, strategy, ws.counter, model=ws.model_info, tokens=known
    )
    memo[key] = (result, found)
    return found


def _empty_memo(_: CountedChat) -> dict[Hashable, tuple[TrimResult, ContextCheck]]:
    return {}


def render_sends_nothing(
    found: SendsNothing | None,
    *,
    key: str,
    apply: Callable[[Mapping[str, Any]], None],
    where: DeltaGenerator | None = None,
) -> None:
    """An error saying the configuration sends no conversation message and why, with a
    button per fix that sets its parameters through ``apply`` and reruns the page."""
    if found is None:
        return
    box = where if where is not None else st.container()
    notices.error(
        f"Nothing of the conversation is sent. {found.text}",
        where=box,
        icon=":material/block:",
    )
    for i, fix in enumerate(found.fixes):
        if box.button(fix.label, key=f"{key}-fix{i}", type="primary" if i == 0 else "secondary"):
            apply(fix.changes)
            st.rerun()


def render_over_limit(note: BudgetNote | None, *, where: DeltaGenerator | None = None) -> None:
    """A neutral line when the context is over the user's own budget or trigger (a setting,
    not something a provider rejects)."""
    if note is None:
        return
    notices.info(note.text, where=where, icon=":material/straighten:")
