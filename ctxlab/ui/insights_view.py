"""The issue-7 views: provider badges, fact retention, re-summarization guard, summary lineage,
token-count disagreement and policy export. Every number comes from :mod:`ctxlab.insights`,
:mod:`ctxlab.validate` or :mod:`ctxlab.export`; this module only caches per chat and draws.

Chat text is shown through ``st.dataframe``, ``st.code`` and ``st.text`` after
:func:`ctxlab.ui.text.visible`; Markdown only carries text this module writes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from ctxlab import checks
from ctxlab.catalog import ModelInfo
from ctxlab.counted import CountedChat
from ctxlab.errors import CtxlabError
from ctxlab.export import NATIVE, export_details, targets_for
from ctxlab.insights import (
    Fact,
    FactRetention,
    LineageEntry,
    extract_facts,
    fact_retention,
    resummarization_guard,
    token_disagreement,
    word_diff,
)
from ctxlab.model import Message
from ctxlab.pricing import format_usd
from ctxlab.strategies import Strategy
from ctxlab.tokens import TokenCounter
from ctxlab.ui import figures
from ctxlab.ui.text import visible
from ctxlab.validate import Problem

__all__ = [
    "FACTS_PREFETCH_DELAY_ENV",
    "FACTS_PREFETCH_DELAY_S",
    "PROVIDER_TITLES",
    "ProblemsByProvider",
    "chat_facts",
    "diff_lines",
    "disagreement_frame",
    "facts_frame",
    "facts_prefetch_delay_s",
    "lineage_frame",
    "per_chat",
    "prefetch_facts",
    "problem_frame",
    "provider_problems",
    "render_export",
    "render_facts",
    "render_lineage",
    "render_message_problems",
    "render_provider_badges",
    "render_resummarization_guard",
    "render_token_disagreement",
    "render_window_badge",
    "retention_of",
    "typed_facts",
    "window_badge_text",
]

PROVIDER_TITLES: Mapping[str, str] = {
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "gemini": "Gemini",
}
ProblemsByProvider = dict[str, tuple[Problem, ...]]
T = TypeVar("T")


def per_chat(name: str, chat: object, build: Callable[[], T], extra: object = None) -> T:
    """``build()``, kept in session state while ``chat`` (by identity) and ``extra`` are the same.

    One slot per ``name``: the chat on screen is the only one worth remembering.
    """
    key = f"ctx.cache.{name}"
    cached = st.session_state.get(key)
    if cached is not None and cached[0] is chat and cached[1] == extra:
        value: T = cached[2]
        return value
    value = build()
    st.session_state[key] = (chat, extra, value)
    return value


# -- provider badges -----------------------------------------------------------------------------


def provider_problems(
    messages: Sequence[Message],
    *,
    counter: TokenCounter | None = None,
    model: ModelInfo | None = None,
    tokens: int | None = None,
) -> ProblemsByProvider:
    """What every provider would reject in ``messages``: :func:`ctxlab.checks.provider_problems`
    (the model's window for its own provider; never the user's budget)."""
    return checks.provider_problems(messages, counter=counter, model=model, tokens=tokens)


def window_badge_text(tokens: int, model: ModelInfo) -> tuple[str, bool]:
    """The window badge's words and whether the context fits ``model``'s window.

    >>> from ctxlab.catalog import get_model
    >>> window_badge_text(130_000, get_model("gpt-4o"))
    ("Over gpt-4o's 128,000-token window by 2,000 tokens", False)
    """
    head = f"{model.name}'s {model.context_window:,}-token window"
    if tokens <= model.context_window:
        return f"Fits {head}", True
    return f"Over {head} by {tokens - model.context_window:,} tokens", False


def render_window_badge(tokens: int, model: ModelInfo | None) -> None:
    """A badge: does a context of ``tokens`` fit ``model``'s window (nothing without a model)."""
    if model is None:
        return
    text, fits = window_badge_text(tokens, model)
    if fits:
        st.badge(text, icon=":material/check_circle:", color="green")
    else:
        st.badge(text, icon=":material/error:", color="red")


def problem_frame(messages: Sequence[Message], by_provider: ProblemsByProvider) -> pd.DataFrame:
    """One row per problem: provider, severity, rule, the message's position/id/role in the
    context, our explanation and the provider's own error wording."""
    position = {m.id: i for i, m in enumerate(messages)}
    rows: list[dict[str, Any]] = []
    for provider, problems in by_provider.items():
        for p in problems:
            i = position.get(p.message_id) if p.message_id is not None else None
            rows.append(
                {
                    "provider": PROVIDER_TITLES.get(provider, provider),
                    "severity": p.severity,
                    "rule": p.code,
                    "position": "—" if i is None else str(i),
                    "message id": visible(p.message_id or "—"),
                    "role": "—" if i is None else messages[i].role.value,
                    "problem": visible(p.text),
                    "provider error": visible(p.provider_error or "—"),
                }
            )
    columns = [
        "provider",
        "severity",
        "rule",
        "position",
        "message id",
        "role",
        "problem",
        "provider error",
    ]
    return pd.DataFrame.from_records(rows, columns=columns)


def render_provider_badges(
    messages: Sequence[Message],
    *,
    key: str,
    counter: TokenCounter | None = None,
    details: bool = True,
    model: ModelInfo | None = None,
    problems: Mapping[str, tuple[Problem, ...]] | None = None,
) -> ProblemsByProvider:
    """One badge per provider ("valid" / "n problems") and, when any, the problem list.

    ``problems``: the providers' verdict when already known (a :class:`ctxlab.checks.
    ContextCheck`'s); otherwise computed with ``model``'s window for its own provider (see
    :func:`provider_problems`). Only what a provider would reject: the user's own budget is a
    separate line (:func:`ctxlab.ui.checks_view.render_context_notes`). Returns the problems
    by provider, for views that show them next to their messages.
    """
    by_provider = (
        dict(problems)
        if problems is not None
        else provider_problems(messages, counter=counter, model=model)
    )
    cols = st.columns(len(by_provider))
    for col, (provider, found) in zip(cols, by_provider.items(), strict=True):
        title = PROVIDER_TITLES.get(provider, provider)
        errors = sum(p.severity == "error" for p in found)
        if not found:
            col.badge(f"{title}: valid", icon=":material/check_circle:", color="green")
        else:
            n = len(found)
            label = f"{title}: {n} problem{'s' if n != 1 else ''}"
            col.badge(label, icon=":material/error:", color="red" if errors else "orange")
    if details and any(by_provider.values()):
        with st.expander("Provider problems (position, id, role, the provider's error)"):
            st.dataframe(
                problem_frame(messages, by_provider),
                hide_index=True,
                width="stretch",
                key=f"{key}-problems",
            )
    return by_provider


def render_message_problems(message_id: str, by_provider: ProblemsByProvider) -> None:
    """The problems every provider has with one message, with the provider's wording."""
    for provider, problems in by_provider.items():
        for p in problems:
            if p.message_id != message_id:
                continue
            title = PROVIDER_TITLES.get(provider, provider)
            text = f"{title} · {p.severity}: {p.code} — {visible(p.text)}"
            if p.provider_error:
                text += f"\nProvider error: {visible(p.provider_error)}"
            (st.error if p.severity == "error" else st.warning)(text)


# -- facts -----------------------------------------------------------------------------------------


def chat_facts(counted: CountedChat) -> tuple[Fact, ...]:
    """Facts picked from the chat automatically, computed once per counted chat and kept with
    it (:meth:`CountedChat.derived`): every session showing the same chat shares them."""
    facts: tuple[Fact, ...] = counted.derived(_FACTS_KEY, _pick_facts)
    return facts


FACTS_PREFETCH_DELAY_S = 20.0
"""How long after the run that first showed a chat its facts start being picked, unless the
session runs again or a view asks for them first: the server's CPU goes to that first screen
(its deltas sent, the page drawn, 10 s and more on a loaded 2-core machine at 100,000 messages)
before a pick that no view on it shows. The operator may set another one
(:data:`FACTS_PREFETCH_DELAY_ENV`)."""

FACTS_PREFETCH_DELAY_ENV = "CTXLAB_FACTS_PREFETCH_DELAY_S"
"""The environment variable that sets the delay in seconds (:func:`facts_prefetch_delay_s`)."""


def facts_prefetch_delay_s(env: Mapping[str, str] | None = None) -> float:
    """The delay before a chat's facts are picked after its first showing: the value of
    :data:`FACTS_PREFETCH_DELAY_ENV` in ``env`` (this process's environment by default), a
    number of seconds, 0 or more; unset or empty: :data:`FACTS_PREFETCH_DELAY_S`.

    Raises:
        CtxlabError: the variable holds anything else (a typo must not silently become a
            delay the operator did not choose).
    """
    raw = (os.environ if env is None else env).get(FACTS_PREFETCH_DELAY_ENV, "").strip()
    if not raw:
        return FACTS_PREFETCH_DELAY_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise CtxlabError(
            f"{FACTS_PREFETCH_DELAY_ENV}={raw!r} is not a delay: set it to a number of seconds, "
            f"0 or more (unset, the delay is {FACTS_PREFETCH_DELAY_S:g} s)"
        )
    return value


def prefetch_facts(counted: CountedChat, *, first_showing: bool = False) -> None:
    """Start picking the chat's facts in the background (once per counted chat).

    Picking reads every user and tool message (about 3 s on a 100,000-message agent chat): the
    router starts it after a page has run, so that opening the Facts tab, or fact retention on
    the Replay page, finds them picked instead of paying for the whole chat on that click.
    After the run that first showed the chat (``first_showing``) it starts
    :func:`facts_prefetch_delay_s` later (:data:`FACTS_PREFETCH_DELAY_S` unless the operator
    set :data:`FACTS_PREFETCH_DELAY_ENV`), or as soon as the session's next run ends or a view
    asks for the facts (the Facts tab then waits for the pick, as it did before any prefetch).
    """
    delay = facts_prefetch_delay_s() if first_showing else 0.0
    counted.prefetch(_FACTS_KEY, _pick_facts, delay_s=delay)


_FACTS_KEY = "insights.chat_facts"


def _pick_facts(chat: CountedChat) -> tuple[Fact, ...]:
    return extract_facts(chat.messages)


def typed_facts(text: str) -> tuple[Fact, ...]:
    """One typed fact per non-empty line."""
    return tuple(Fact(line.strip()) for line in text.splitlines() if line.strip())


def retention_of(
    original: Sequence[Message], context: Sequence[Message], facts: Sequence[Fact]
) -> FactRetention:
    """:func:`fact_retention` of ``facts`` in ``context``."""
    return fact_retention(original, context, facts)


def _positions(counted: CountedChat) -> Mapping[str, int]:
    return counted.positions


def facts_frame(retention: FactRetention, positions: Mapping[str, int]) -> pd.DataFrame:
    """One row per fact: kept or lost, how (verbatim / in a summary), where it came from."""
    rows = []
    for check in retention.checks:
        fact = check.fact
        origin = positions.get(fact.message_id) if fact.message_id else None
        how = "lost"
        if check.retained:
            how = "in the summary" if check.via_summary else "verbatim"
        rows.append(
            {
                "fact": visible(fact.text),
                "kind": fact.kind,
                "status": how,
                "from message #": "typed" if origin is None else str(origin),
                "from id": visible(fact.message_id or "—"),
            }
        )
    return pd.DataFrame.from_records(
        rows, columns=["fact", "kind", "status", "from message #", "from id"]
    )


def render_facts(counted: CountedChat, context: Sequence[Message], *, key: str) -> FactRetention:
    """The Facts panel: automatic + typed facts, retention %, and the lost ones first."""
    typed = st.text_area(
        "Facts to check (one per line), on top of the ones picked automatically",
        key=f"{key}-typed",
        height=90,
        placeholder="e.g. order 4417\nnut-free",
    )
    auto = chat_facts(counted)
    facts = (*typed_facts(typed), *auto)
    # Once per (chat, context sent, typed facts): a rerun for another reason (a filter, a tab)
    # or a budget that sends the same messages does not search the context again.
    retention = per_chat(
        f"retention.{key}",
        counted,
        lambda: retention_of(counted.messages, context, facts),
        extra=(tuple(context), typed),
    )
    cols = st.columns(3)
    cols[0].metric("Fact retention", f"{retention.percent:.1f}%")
    cols[1].metric("Facts kept", f"{retention.retained:,} of {retention.total:,}")
    cols[2].metric("Facts lost", f"{retention.total - retention.retained:,}")
    st.caption(
        f"{len(auto):,} facts picked automatically (numbers, identifiers, names, URLs, paths "
        "from user and tool messages); a fact counts as kept when its exact text is in the "
        "context, in a kept message or in a summary."
    )
    frame = facts_frame(retention, _positions(counted))
    frame = frame.sort_values("status", key=lambda s: s != "lost", kind="stable")
    st.dataframe(frame, hide_index=True, width="stretch", height=360, key=f"{key}-facts")
    return retention


# -- re-summarization guard ----------------------------------------------------------------------


def render_resummarization_guard(
    strategy: Strategy,
    messages: Sequence[Message],
    counter: TokenCounter,
    *,
    apply: Callable[[Mapping[str, Any]], None],
    key: str,
    summarizer_calls: int | None = None,
    summary_cost: float | None = None,
) -> None:
    """A warning when the configuration would summarize on (almost) every call, with the
    suggested change and a button that applies it through ``apply``."""
    guard = resummarization_guard(strategy, messages, counter)
    if guard is None or not guard.risk.fires_every_call:
        return
    text = f"Re-summarization loop: {guard.risk.suggestion}"
    if summarizer_calls is not None:
        cost = format_usd(summary_cost)
        text += f" Over this replay: {summarizer_calls:,} summarizer calls costing {cost}."
    st.warning(text)
    change = ", ".join(f"{name} = {value:,}" for name, value in guard.changes.items())
    if guard.changes and st.button(f"Apply the suggestion ({change})", key=f"{key}-apply"):
        apply(guard.changes)
        st.rerun()


# -- summary lineage -------------------------------------------------------------------------------


def lineage_frame(
    entries: Sequence[LineageEntry], positions: Mapping[str, int] | None = None
) -> pd.DataFrame:
    """One row per compaction: its ids, what it covers and which compaction it updated."""
    positions = positions or {}
    rows = []
    for n, e in enumerate(entries, start=1):
        covered = [positions[i] for i in e.covers if i in positions]
        span = f"#{min(covered)}–#{max(covered)}" if covered else "—"
        tail = positions.get(e.tail_start_id) if e.tail_start_id else None
        rows.append(
            {
                "compaction": n,
                "compaction id": visible(e.compaction_id),
                "summary id": visible(e.summary_id or "—"),
                "updates": visible(e.previous_compaction_id or "— (first)"),
                "covers": f"{len(e.covers):,} messages {span}" if e.covers else "—",
                "covered ids": visible(
                    ", ".join(e.covers[:8]) + (" …" if len(e.covers) > 8 else "")
                )
                if e.covers
                else "—",
                "tail starts at": visible(e.tail_start_id or "—")
                + ("" if tail is None else f" (#{tail})"),
                "summary words": len(e.summary_text.split()),
            }
        )
    return pd.DataFrame.from_records(rows)


def diff_lines(old: str, new: str) -> str:
    """A word diff as plain text lines: ``+ added``, ``- removed``, ``  unchanged``."""
    prefix = {"=": "  ", "-": "- ", "+": "+ "}
    return "\n".join(f"{prefix[op]}{visible(text)}" for op, text in word_diff(old, new) if text)


def render_lineage(
    entries: Sequence[LineageEntry], positions: Mapping[str, int] | None, *, key: str
) -> None:
    """The compaction chain and a word diff between successive summaries (plain text)."""
    if not entries:
        st.info("No compaction here: the chat holds no compaction pair.")
        return
    st.dataframe(
        lineage_frame(entries, positions), hide_index=True, width="stretch", key=f"{key}-table"
    )
    if len(entries) < 2:
        st.caption("A single compaction: nothing to diff yet.")
        return
    pick = int(
        st.number_input(
            f"Diff summary # (2–{len(entries)}) against the one it updated",
            2,
            len(entries),
            len(entries),
            key=f"{key}-pick",
        )
    )
    old, new = entries[pick - 2], entries[pick - 1]
    st.caption(f"Word diff: summary {pick - 1} → {pick} (+ added, - removed)")
    st.code(diff_lines(old.summary_text, new.summary_text), language=None, wrap_lines=True)


# -- token-count disagreement ----------------------------------------------------------------------


def disagreement_frame(counted: CountedChat, counter: TokenCounter) -> pd.DataFrame:
    """Per message: exact, chars/4, overhead and error, worst under-count first."""
    rows = token_disagreement(counted.messages, counter)
    frame = pd.DataFrame(
        {
            "index": range(len(rows)),
            "id": [visible(r.message_id) for r in rows],
            "role": [r.role.value for r in rows],
            "kind": [_kind(m) for m in counted.messages],
            "exact": [r.exact for r in rows],
            "chars/4": [r.heuristic for r in rows],
            "overhead": [r.overhead for r in rows],
            "error": [r.error for r in rows],
        }
    )
    return frame.sort_values(["error", "index"], kind="stable").reset_index(drop=True)


def _kind(message: Message) -> str:
    text = message.content
    if message.tool_calls:
        return "tool call"
    if message.role.is_tool_result:
        return "tool result"
    if "```" in text or text.count("\n    ") >= 3:
        return "code"
    if text and sum(ord(ch) > 127 for ch in text) > len(text) // 5:
        return "non-English"
    return "text"


def disagreement_summary(frame: pd.DataFrame) -> str:
    """One sentence: how far chars/4 under-counts in total and where it is worst."""
    exact, estimate = int(frame["exact"].sum()), int(frame["chars/4"].sum())
    under = frame[frame["error"] < 0]
    by_kind = under.groupby("kind")["error"].sum().sort_values()
    worst = ", ".join(f"{kind} ({-int(v):,} tokens)" for kind, v in by_kind.head(3).items())
    share = (exact - estimate) / exact * 100 if exact else 0.0
    if estimate >= exact:
        return (
            f"chars/4 estimates {estimate:,} tokens for {exact:,} real ones: it over-counts "
            "this chat, so a heuristic budget trims early, never too late."
        )
    return (
        f"chars/4 estimates {estimate:,} tokens for {exact:,} real ones ({share:.1f}% under): "
        f"a heuristic budget would trim too late, mostly on {worst or 'message overhead'}."
    )


def render_token_disagreement(counted: CountedChat, counter: TokenCounter, model: str) -> None:
    """The Tokens tab: a one-line verdict, the per-message table and a scatter plot."""
    # Built once per (counted chat, model) and shared by every session showing it: the frame
    # covers every message, so building it (and its figure) walks the whole chat.
    frame, summary, figure = counted.derived(
        ("insights.disagreement", model),
        lambda chat: _disagreement_view(disagreement_frame(chat, counter)),
    )
    st.markdown(summary)
    shown = frame if len(frame) <= TOKENS_TABLE_ROWS else frame.head(TOKENS_TABLE_ROWS)
    if len(shown) < len(frame):
        st.caption(
            f"The {len(shown):,} messages chars/4 gets most wrong, of {len(frame):,} "
            "(the plot below samples all of them)."
        )
    st.dataframe(shown, hide_index=True, width="stretch", height=360, key="tokens-table")
    st.plotly_chart(figure, key="tokens-figure", width="stretch")


TOKENS_TABLE_ROWS = 1000
"""The Tokens tab's table shows at most this many messages (worst under-count first)."""


def _disagreement_view(frame: pd.DataFrame) -> tuple[pd.DataFrame, str, Any]:
    """The Tokens tab's frame, verdict and figure (pure: derived once per chat and model)."""
    figure = figures.disagreement_figure(list(frame["exact"]), list(frame["chars/4"]))
    return frame, disagreement_summary(frame), figure


# -- export ----------------------------------------------------------------------------------------


def render_export(strategy: Strategy, model: str, stem: str) -> None:
    """Target picker, the exported code, its caveats and a download."""
    targets = targets_for(strategy)
    if st.session_state.get("export-target") not in targets:
        st.session_state["export-target"] = targets[0]
    target = st.selectbox("Export for", targets, key="export-target")
    exported = export_details(strategy, target, model=model)
    for note in exported.notes:
        st.warning(note)
    if exported.exact and target == NATIVE:
        st.caption(
            "Exact: the framework's own configuration of the policy shown here; run by the "
            "framework, it makes these decisions."
        )
    elif exported.exact:
        st.caption("Exact: run on the same chat, this code makes the decisions shown here.")
    source = exported.as_source()
    from ctxlab.ui.frameworks import code_language

    language = code_language(source) if target == NATIVE else "python"
    suffix = {"python": "py", "json": "json", "toml": "toml"}[language]
    st.code(source, language=language)
    st.download_button(
        f"Download policy.{suffix}",
        source,
        file_name=f"{stem}-{target}-policy.{suffix}",
        mime="text/x-python" if suffix == "py" else "text/plain",
        key="dl-export",
        on_click="ignore",  # a download changes nothing: no rerun
    )
