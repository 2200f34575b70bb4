"""The Replay page's engine call (cached per configuration) and its rendering."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any, overload

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ctxlab.caches import BoundedCache
from ctxlab.counted import CountedChat
from ctxlab.errors import CtxlabError, SummarizerError
from ctxlab.insights import fact_retention
from ctxlab.plural import plural
from ctxlab.pricing import format_usd
from ctxlab.provider_usage import UsageComparison, compare_usage
from ctxlab.replay import COLUMNS, Replay, ReplayRow, replay
from ctxlab.strategies import Decision, Strategy
from ctxlab.summarizers import Summarizer
from ctxlab.ui import binned_map, checks_view, figures, insights_view, notices
from ctxlab.ui.session import Workspace, apply_params
from ctxlab.ui.strip import strip_html
from ctxlab.ui.summary import Backend
from ctxlab.ui.text import visible

__all__ = [
    "CACHE_EXPLANATION",
    "FACTS_BY_DEFAULT_UP_TO",
    "REPLAYS_KEPT",
    "RowView",
    "RowsView",
    "cached_replay",
    "chat_key",
    "compaction_retention_frame",
    "render_cache",
    "render_provider_usage",
    "render_replay",
    "render_turn",
    "replay_key",
    "run_replay",
    "summary_cost",
    "usage_explanation",
    "usage_frame",
]

CACHE_EXPLANATION = (
    "Providers cache a prompt by its exact leading tokens: a call pays the cached price only "
    "for the part that repeats the previous call word for word, from the very first token. "
    "A strategy that drops from the front on every call (a sliding window, a token budget "
    "that is always full) changes the first messages each time, so the cache breaks on every "
    "call and every token is billed at the full input price. A compaction breaks the cache "
    "once: the summary replaces the front, and the calls after it repeat the compacted prefix "
    "and get it cached until the next compaction. OpenAI caches prompts of 1,024 tokens or "
    "more, in steps of 128 tokens; the cost with cache uses the model's cached-input price."
)

FACTS_BY_DEFAULT_UP_TO = 2_000
"""Chats up to this many messages show fact retention on the Replay page without asking."""

REPLAYS_KEPT = 6
"""Replays the server keeps per chat, for every session of it, while a session holds the chat
(a 100,000-message replay is about 27 MB)."""


def usage_explanation(comparison: UsageComparison) -> str:
    """What the gap between billed and counted is made of, in numbers (Markdown, no chat text).

    At the last call, the difference is the hidden fixed part (the difference at the first call,
    paid on every call) plus what grew with the chat (``difference - hidden fixed``, the
    tokenizer mismatch: the provider counts ``tokenizer_ratio`` tokens per token ctxlab counts).
    The sentence says which of the two is the larger share of the last call's difference.
    """
    calls = comparison.calls
    if not calls or comparison.hidden_fixed is None:
        return "The transcript records no usage for these messages."
    hidden = comparison.hidden_fixed
    last = calls[-1]
    text = (
        f"Hidden fixed part: **{hidden:+,}** tokens per call (the difference at the first call: "
        "a system prompt, tool schemas or other text the transcript does not show)."
    )
    if comparison.tokenizer_ratio is None:
        return text + " One call only, so a tokenizer mismatch cannot be told apart from it."
    grown = last.difference - hidden
    text += (
        f" Tokenizer ratio: **{comparison.tokenizer_ratio:.2f}** billed tokens per token ctxlab "
        f"counts as the chat grows (1.00 = same tokenizer), which adds **{grown:+,}** tokens by "
        f"the last call. Of the last call's difference of **{last.difference:+,}** tokens, "
    )
    if abs(hidden) >= abs(grown):
        return text + "the hidden fixed part explains most."
    return text + "the tokenizer mismatch explains most."


def usage_frame(comparison: UsageComparison) -> pd.DataFrame:
    """One row per recorded call: billed, counted, difference and the provider's cache split."""
    return pd.DataFrame(
        [
            {
                "call": n,
                "message": c.index,
                "billed prompt": c.billed_prompt,
                "counted by ctxlab": c.counted_prompt,
                "difference": c.difference,
                "cache read": c.cache_read_input_tokens,
                "cache write": c.cache_creation_input_tokens,
                "output": c.output_tokens,
            }
            for n, c in enumerate(comparison.calls, start=1)
        ]
    )


def render_provider_usage(ws: Workspace) -> None:
    """Where the transcript recorded what the provider billed: each call beside ctxlab's count
    of the same request (the chat's tool definitions included), as a chart, a sentence saying
    what the gap is made of, and a table. Draws nothing when no usage was recorded."""
    if not ws.chat.usage:
        return
    comparison = compare_usage(ws.chat.messages, ws.chat.usage, ws.counter)
    st.subheader(figures.USAGE_TITLE)
    if not comparison.calls:
        st.info("The transcript records usage, but for none of the messages of this chat.")
        return
    st.plotly_chart(
        figures.usage_comparison_figure(comparison), key="replay-usage", width="stretch"
    )
    st.caption(usage_explanation(comparison))
    if comparison.unmatched:
        st.caption(
            f"{len(comparison.unmatched):,} recorded calls belong to messages not in this chat."
        )
    with st.expander("Billed and counted, per call"):
        st.dataframe(usage_frame(comparison), hide_index=True, width="stretch")


def chat_key(ws: Workspace) -> Hashable:
    """What Replay and Compare key their caches on for the chat of ``ws``: its messages and the
    request's fixed overhead, by identity.

    A chat is read once per server process (samples and the chats folder are cached resources),
    so every session that opens it holds the very same messages tuple; every cached entry keeps a
    reference to that tuple (a replay's ``_chat``, a Compare result's entry), so its id cannot
    name another chat while the entry lives, and readers check it by identity.
    The one place to change if the app ever keys chats by a content hash.
    """
    return (id(ws.counted.messages), ws.counted.overhead)


def replay_key(ws: Workspace, strategy: Strategy, backend: Backend | None) -> tuple[Hashable, ...]:
    """The cache key of one replay: chat, model, configuration and summarizer backend."""
    return (chat_key(ws), ws.model, repr(strategy), backend.label if backend else "")


def _replays(_: CountedChat) -> BoundedCache[tuple[Hashable, ...], Replay]:
    return BoundedCache(max_entries=REPLAYS_KEPT)


def _shared_replay(
    key: tuple[Hashable, ...],
    ws: Workspace,
    strategy: Strategy,
    summarizer: Summarizer | None,
) -> Replay:
    """One replay per key for the whole server (every session of the same chat shares it),
    kept with the counted chat: released with the last session holding the chat."""
    kept = ws.counted.derived("replays", _replays)
    return kept.get_or_build(
        key,
        lambda: replay(
            ws.counted.messages, strategy, ws.counter, summarizer=summarizer, model=ws.model
        ),
    )


def cached_replay(strategy: Strategy, ws: Workspace, backend: Backend | None) -> Replay:
    """The replay of ``strategy`` over the chat, computed once per :func:`replay_key`.

    Replays without a summarizer, or with the automatic (offline) one, are shared by every
    session; a replay that called a real endpoint is never shared (it is kept by the session
    that paid for it, see :func:`run_replay`). Raises what :func:`ctxlab.replay.replay` raises.
    """
    summarizer = backend.summarizer if backend is not None else None
    if backend is not None and not backend.automatic:
        return replay(ws.chat.messages, strategy, ws.counter, summarizer=summarizer, model=ws.model)
    rep = _shared_replay(replay_key(ws, strategy, backend), ws, strategy, summarizer)
    if not _same_chat(rep, ws):  # pragma: no cover - chat_key's invariant
        raise RuntimeError("a cached replay belongs to another chat")
    return rep


def _same_chat(rep: Replay, ws: Workspace) -> bool:
    return rep._chat is not None and rep._chat.messages is ws.counted.messages


def run_replay(strategy: Strategy, ws: Workspace, backend: Backend | None) -> Replay | None:
    """The replay of ``strategy`` over the chat; a real summarizer only runs on a button press.

    The last replay is kept in session state per (chat, model, strategy, backend), so moving the
    turn scrubber never recomputes it; replays that need no paid endpoint also come from the
    server-wide cache (:func:`cached_replay`), so opening the page again costs no replay.
    """
    key = replay_key(ws, strategy, backend)
    cached = st.session_state.get("ctx.replay")
    if cached is not None and cached[0] == key and _same_chat(cached[1], ws):
        hit: Replay = cached[1]
        return hit
    if (
        backend is not None
        and not backend.automatic
        and not st.button("Run replay with the summarizer", key="replay-run", type="primary")
    ):
        st.info("This replay calls the summarizer endpoint: press the button to run it.")
        return None
    try:
        with st.spinner("Replaying every turn…"):
            result = cached_replay(strategy, ws, backend)
    except SummarizerError as exc:
        notices.error(f"The summarizer failed; nothing was changed. {exc}")
        return None
    except CtxlabError as exc:
        notices.error(str(exc))
        return None
    st.session_state["ctx.replay"] = (key, result)
    return result


class RowView(Mapping[str, Any]):
    """One replay row read as ``{column: value}`` (what the figures take), without copying it."""

    __slots__ = ("_row",)

    def __init__(self, row: ReplayRow) -> None:
        self._row = row

    def __getitem__(self, column: str) -> Any:
        if column not in _COLUMN_SET:
            raise KeyError(column)
        return getattr(self._row, column)

    def get(self, column: str, default: Any = None) -> Any:
        # Mapping.get goes through __getitem__ and a try: a figure asks this of every row.
        return getattr(self._row, column) if column in _COLUMN_SET else default

    def __iter__(self) -> Iterator[str]:
        return iter(COLUMNS)

    def __len__(self) -> int:
        return len(COLUMNS)


_COLUMN_SET = frozenset(COLUMNS)


class RowsView(Sequence[Mapping[str, Any]]):
    """A replay's rows as :class:`RowView` mappings, made only for the rows a figure reads
    (a figure of a 44,000-call replay samples 2,000 of them)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Sequence[ReplayRow]) -> None:
        self._rows = rows

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        if isinstance(index, slice):
            return [RowView(r) for r in self._rows[index]]
        return RowView(self._rows[index])

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return map(RowView, self._rows)


_VIEWS = "replay.views"
_TOKENS_REVISIONS = itertools.count(1)


def replay_views(rep: Replay, *config: Hashable) -> dict[str, Any]:
    """This session's memo of what the page draws from ``rep`` (figures, frames): built on
    the first run that shows ``rep`` with ``config`` (budget, model, ...) and reused by every
    rerun after it (a scrubber step rebuilds nothing that does not depend on the turn).

    Held in session state, not beside the shared replay: a figure's turn marker is moved in
    place, which must not show in another session.
    """
    held = st.session_state.get(_VIEWS)
    if held is not None and held[0] is rep and held[1] == config:
        views: dict[str, Any] = held[2]
        return views
    views = {}
    st.session_state[_VIEWS] = (rep, config, views)
    return views


def _memo(views: dict[str, Any], name: str, build: Callable[[], Any]) -> Any:
    if name not in views:
        views[name] = build()
    return views[name]


def add_policy_markers(fig: go.Figure, rep: Replay, markers: Sequence[int]) -> None:
    """Mark ``markers`` (calls, 1-based) on the tokens chart: a trace of points on the
    untrimmed line, not vertical lines (those are the scrubber's, which
    :func:`move_turn_marker` moves)."""
    shown = [t for t in markers if 1 <= t <= len(rep.rows)]
    if not shown:
        return
    fig.add_trace(
        go.Scatter(
            name="policy fires",
            x=shown,
            y=[rep.rows[t - 1].tokens_untrimmed for t in shown],
            mode="markers",
            marker={"color": "#6a1b9a", "size": 13, "symbol": "triangle-down"},
            hovertemplate="call %{x}: the policy acts<extra></extra>",
        )
    )


def move_turn_marker(fig: go.Figure, turn: int) -> None:
    """Move the vertical turn line of :func:`ctxlab.ui.figures.replay_tokens_figure` to
    ``turn`` (the line spans the plot's height: its ``yref`` is the y domain)."""
    for shape in fig.layout.shapes:
        if shape.yref == "y domain" and shape.xref == "x":
            shape.update(x0=turn, x1=turn)


def summary_cost(rep: Replay) -> float | None:
    """USD of all summarizer calls of the replay; None when one of them has no price."""
    total = 0.0
    for row in rep.rows:
        if row.summarizer_calls and row.summary_cost is None:
            return None
        total += row.summary_cost or 0.0
    return total


def render_cache(rep: Replay, views: dict[str, Any] | None = None) -> None:
    """Cacheable vs non-cacheable tokens per call, the cache breaks, and cost with caching.

    ``views`` (see :func:`replay_views`) keeps the chart across reruns."""
    st.subheader("Prompt cache")
    st.markdown(CACHE_EXPLANATION)
    if not rep.cache_known:
        st.info(
            "The cache columns are not computed for this strategy on a chat this long: its "
            "context at each call cannot be derived without rebuilding every call."
        )
        return
    breaks = rep.cache_break_turns()
    cached = _memo(
        views if views is not None else {},
        "cached tokens",
        lambda: sum(r.cached_tokens or 0 for r in rep.rows),
    )
    cols = st.columns(3)
    cols[0].metric("Cache breaks", f"{len(breaks):,} of {plural(max(len(rep) - 1, 0), 'call')}")
    cols[1].metric(
        "Input tokens billed as cached",
        f"{cached:,}",
        f"{cached / rep.tokens_sent * 100:.1f}% of sent" if rep.tokens_sent else None,
        delta_color="off",
    )
    saving = (
        None
        if rep.total_cost is None or rep.total_cost_with_cache is None
        else rep.total_cost - rep.total_cost_with_cache
    )
    cols[2].metric(
        "Saved by the prompt cache",
        format_usd(saving),
        help="Trimmed session cost at full input price minus the same with the cached price.",
    )
    figure = _memo(
        views if views is not None else {},
        "cache",
        lambda: figures.cache_figure(
            [r.turn for r in rep.rows],
            [r.tokens_sent for r in rep.rows],
            [r.cacheable_prefix_tokens or 0 for r in rep.rows],
            breaks,
        ),
    )
    st.plotly_chart(
        figure,
        key="replay-cache",
        width="stretch",
    )


def compaction_retention_frame(rep: Replay, ws: Workspace) -> pd.DataFrame:
    """Fact retention right after each compaction of the replay."""
    facts = insights_view.chat_facts(ws.counted)
    positions = {m.id: i for i, m in enumerate(ws.chat.messages)}
    rows = []
    for c in rep.compactions:
        seen = tuple(f for f in facts if positions.get(f.message_id or "", 0) < c.message_index)
        context = rep.context_at(c.turn).messages
        retention = fact_retention(ws.chat.messages[: c.message_index], context, seen)
        rows.append(
            {
                "turn": c.turn,
                "before message #": c.message_index,
                "folded messages": len(c.folded_ids),
                "facts so far": retention.total,
                "retained": retention.retained,
                "retention %": round(retention.percent, 1),
            }
        )
    return pd.DataFrame.from_records(rows)


COST_LABELS = {
    "trimmed": "Cost, trimmed",
    "untrimmed": "Cost, untrimmed",
    "trimmed_cached": "Cost, trimmed + cache",
    "untrimmed_cached": "Cost, untrimmed + cache",
}
"""Replay's session-cost metrics: short enough for a quarter of the page (each has help)."""


def turn_caption(turn: int, message_index: int, row: Any, reply_priming: int) -> str:
    """The caption over the round map at ``turn``: what the call sent, and how its token count
    meets the map's axis. The map draws the messages (and the tool definitions); the request
    also holds the ``reply_priming`` tokens every call adds, so the two differ by exactly that.

    >>> from types import SimpleNamespace as R
    >>> turn_caption(3, 9, R(messages_sent=1, messages_untrimmed=9, tokens_sent=80,
    ...     tokens_untrimmed=32_619), 3)  # doctest: +NORMALIZE_WHITESPACE
    'Call 3 produced message #9: it sent 1 message of 9, 80 of 32,619 tokens (the round map
    below spans 32,616 of them; the other 3 prime the reply in every request).'
    """
    drawn = row.tokens_untrimmed - reply_priming
    return (
        f"Call {turn} produced message #{message_index}: it sent "
        f"{plural(row.messages_sent, 'message')} of {row.messages_untrimmed:,}, "
        f"{row.tokens_sent:,} of {row.tokens_untrimmed:,} tokens (the round map below spans "
        f"{drawn:,} of them; the other {reply_priming:,} prime the reply in every request)."
    )


def render_replay(
    rep: Replay,
    ws: Workspace,
    budget: int | None,
    strategy: Strategy,
    *,
    markers: Sequence[int] = (),
) -> None:
    """Metrics, the turn scrubber with what depends on the turn (:func:`render_turn`), then
    the cumulative cost, the prompt cache and the compactions.

    ``markers`` are calls marked on the tokens chart (when a framework policy first acts and
    when it rewrites its history: :func:`ctxlab.ui.frameworks.render_firing`)."""
    if not rep.rows:
        st.info("The chat has no assistant turn, so there is nothing to replay.")
        return
    for warning in rep.warnings:
        notices.warning(warning)
    insights_view.render_resummarization_guard(
        strategy,
        ws.chat.messages,
        ws.counter,
        apply=lambda changes: apply_params("", strategy.name, ws.chat.slot, changes, ws),
        key="replay-guard",
        summarizer_calls=rep.summarizer_calls,
        summary_cost=summary_cost(rep),
    )
    cols = st.columns(4)
    cols[0].metric("Calls", f"{len(rep):,}")
    cols[1].metric(
        "Input tokens, all calls",
        f"{rep.tokens_sent:,}",
        f"{rep.tokens_sent - rep.tokens_untrimmed:,}",
        delta_color="inverse",
    )
    cols[2].metric("Saved", f"{rep.saved_fraction * 100:.1f}%")
    cols[3].metric("Summarizer calls", f"{rep.summarizer_calls:,}")
    costs_row = st.columns(4)
    # Short labels (a quarter of the page each: longer ones are cut off); the help says the rest.
    costs_row[0].metric(
        COST_LABELS["trimmed"],
        format_usd(rep.total_cost),
        help="The whole session's cost with this strategy: every call's input at the full input "
        "price, plus its output.",
    )
    costs_row[1].metric(
        COST_LABELS["untrimmed"],
        format_usd(rep.total_cost_untrimmed),
        help="The same session sending the whole history at every call, at the full input price.",
    )
    costs_row[2].metric(
        COST_LABELS["trimmed_cached"],
        format_usd(rep.total_cost_with_cache),
        help="Trimmed, with the part of each call the prompt cache serves (the prefix unchanged "
        "since the previous call) billed at the model's cached-input price.",
    )
    costs_row[3].metric(
        COST_LABELS["untrimmed_cached"],
        format_usd(rep.total_cost_untrimmed_with_cache),
        help="Untrimmed, with the prompt cache: the fair baseline. Without trimming, every call "
        "repeats the previous one word for word, so the provider bills all of it but the new "
        "messages at the cached price.",
    )
    render_turn(rep, ws, budget, strategy, tuple(markers))
    views = replay_views(rep, budget, ws.model, tuple(markers))
    cost_figure = _memo(views, "cost", lambda: figures.session_cost_figure(rep))
    if cost_figure is not None:
        st.plotly_chart(cost_figure, key="replay-cost", width="stretch")
    render_cache(rep, views)
    if rep.compactions:
        st.subheader("Compactions")
        st.dataframe(
            _memo(views, "compactions", lambda: compaction_retention_frame(rep, ws)),
            hide_index=True,
            width="stretch",
            key="replay-compaction-facts",
        )
        insights_view.render_lineage(rep.lineage(), ws.counted.positions, key="replay-lineage")
    st.download_button(
        "Replay CSV",
        lambda: rep.to_csv(),
        file_name="replay.csv",
        mime="text/csv",
        key="dl-replay",
        on_click="ignore",  # a download changes nothing: no rerun
    )


@st.fragment
def render_turn(
    rep: Replay,
    ws: Workspace,
    budget: int | None,
    strategy: Strategy,
    markers: tuple[int, ...] = (),
) -> None:
    """The turn scrubber and what depends on the turn: the tokens chart's turn line, the
    context sent at that turn, its round map and fact retention.

    A fragment: a scrubber step reruns this part alone, so the sidebar, the metrics and the
    charts that do not move with the turn are neither rebuilt nor sent to the browser again.
    Its arguments are those of the last full run, and every change to them (the sidebar) is a
    full run.
    """
    n = len(rep)
    turn = int(st.slider("Turn", 1, n, n, key="replay-turn")) if n > 1 else 1
    views = replay_views(rep, budget, ws.model, markers)
    tokens_figure = views.get("tokens")
    if tokens_figure is None:
        tokens_figure = views["tokens"] = figures.replay_tokens_figure(
            RowsView(rep.rows), budget, turn=turn, window=ws.model_info
        )
        add_policy_markers(tokens_figure, rep, markers)
        # A step moves only the turn line: marked with one revision for as long as its data
        # stays, the browser's Plotly redraws the line, not the series (about 25 ms a step),
        # and keeps a zoom the user made. A new figure (new data) gets a new revision.
        revision = next(_TOKENS_REVISIONS)
        tokens_figure.update_layout(datarevision=revision, uirevision=revision)
    move_turn_marker(tokens_figure, turn)
    st.plotly_chart(tokens_figure, key="replay-tokens", width="stretch")
    row = rep.rows[turn - 1]
    st.subheader(f"Context at turn {turn}")
    notices.caption(turn_caption(turn, row.message_index, row, ws.counted.reply_priming))
    try:
        context = rep.context_at(turn)
    except (CtxlabError, IndexError, ValueError) as exc:
        notices.error(str(exc))
        return
    stop = row.message_index
    checks_view.render_sends_nothing(
        strategy.sends_nothing(
            ws.chat.messages[:stop],
            ws.counter,
            context,
            window=ws.model_info.input_room if ws.model_info is not None else None,
        ),
        key="replay-empty",
        apply=lambda changes: apply_params("", strategy.name, ws.chat.slot, changes, ws),
    )
    insights_view.render_provider_badges(
        context.messages, key="replay-ctx", counter=ws.counter, model=ws.model_info
    )
    if binned_map.wants_bins(ws.counted, stop):
        # Thousands of rounds: the binned map costs a pass over the prefix's decisions only.
        codes = binned_map.decision_codes(
            ws.counted, context.decisions, stop, missing=Decision.SUMMARIZED
        )
        map_figure = binned_map.binned_map_figure(
            binned_map.decision_bins(ws.counted, codes),
            title=f"Round map at turn {turn}",
            budget=None,
            window=ws.model_info,
            overhead=ws.tools.tokens,
        )
    else:
        prefix = ws.counter.counted(ws.chat.messages[:stop])
        # A message missing from the call's decisions was folded into an earlier summary.
        decisions = {
            m.id: context.decisions.get(m.id, Decision.SUMMARIZED) for m in prefix.messages
        }
        map_figure = figures.round_map_figure(
            prefix,
            decisions,
            title=f"Round map at turn {turn}",
            # a projection's context is the strategy applied to the prefix: it can say why
            explain=None
            if context.replace or strategy.uses_summarizer
            else functools.partial(strategy.explain_round, prefix, context),
            window=ws.model_info,
            overhead=ws.tools.tokens,
            overhead_parts=ws.tools.per_tool,
        )
    # Plain HTML, not a Plotly chart: this map changes on every step, and a Plotly redraw is
    # a fixed ~0.1 s in the browser.
    st.html(strip_html(map_figure))
    # Checking facts reads the context at the turn on every step (the facts themselves are
    # picked once per chat, in the background): on a large chat it waits until asked for.
    if st.toggle(
        "Fact retention at this turn",
        value=len(ws.chat.messages) <= FACTS_BY_DEFAULT_UP_TO,
        key="replay-facts",
        help="Which numbers, identifiers, names, paths and URLs seen so far this call still has.",
    ):
        facts = insights_view.chat_facts(ws.counted)
        positions = ws.counted.positions
        seen = [f for f in facts if positions.get(f.message_id or "", 0) < row.message_index]
        retention = fact_retention(ws.chat.messages[:stop], context.messages, seen)
        lost = retention.lost()
        notices.caption(
            f"Fact retention at turn {turn}: {retention.percent:.1f}% "
            f"({retention.retained:,} of {retention.total:,} facts seen so far)"
            + (f"; lost: {', '.join(visible(f.text) for f in lost[:8])}" if lost else "")
        )
