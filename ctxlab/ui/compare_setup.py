"""Compare's own set-up: how many configurations, which strategies, their parameters.

The set-up lives in three places kept in step:

* the URL, as ``cmp=3&cmp1=window-drop&cmp1.budget=16000&cmp2=sliding-window&cmp2.window=40``
  (:func:`compare_query` writes it, :func:`parse_compare_query` reads it; 1-based);
* plain session state (:data:`SAVED`), so the set-up survives a visit to another page, whose
  run deletes the state of Compare's widgets;
* the widgets themselves (``cmp.count``, ``cmp{i}.strategy`` and each configuration's parameter
  widgets in namespace ``cmp{i}.``; 0-based).

Defaults are comparable (:func:`comparable_defaults`): a configuration's budget or trigger starts
at the sidebar strategy's budget, and a message count at how many of the newest messages fit
that budget, so "16k tokens against 20 messages" never happens by default.
"""

from __future__ import annotations

import functools
from bisect import bisect_left
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from ctxlab.caches import BoundedCache
from ctxlab.counted import CountedChat
from ctxlab.errors import CtxlabError, SummarizerError
from ctxlab.insights.facts import Fact, FactRetention
from ctxlab.strategies import Decision, Strategy, TrimResult, get_strategy_class, parameters
from ctxlab.strategies.registry import coerce_value, current_params
from ctxlab.tokens import TokenCounter
from ctxlab.ui import binned_map, checks_view, figures, insights_view, notices, render
from ctxlab.ui.insights_view import ProblemsByProvider
from ctxlab.ui.session import Workspace, apply_params, opening_query, params_to_query
from ctxlab.ui.summary import Backend, Outcome, run
from ctxlab.ui.text import visible
from ctxlab.ui.timeline import cached_replay

__all__ = [
    "DISAGREEMENT_ROWS",
    "MAX_CONFIGS",
    "MIN_CONFIGS",
    "SESSION_COST_AUTO",
    "SessionCost",
    "comparable_defaults",
    "compare_query",
    "configuration_outcome",
    "decision_codes_of",
    "disagreeing",
    "disagreement_window",
    "framework_preset",
    "group_key",
    "messages_within",
    "parse_compare_query",
    "problems_of",
    "render_binned_map",
    "restore_setup",
    "retention_of",
    "save_setup",
    "seed_defaults",
    "session_cost",
    "zoom_of",
]

MIN_CONFIGS, MAX_CONFIGS = 2, 4
SAVED = "cmp.saved"
URL_DONE = "cmp.url_restored"
SEEDED = "cmp.seeded"
COUNT = "cmp.count"
SESSION_COST_AUTO = 2_000
"""Each configuration's session cost (a replay of every turn) is computed without asking on
chats up to this many messages; on longer chats it waits for its switch (or for the replay to
be in the server's cache already, e.g. from the Replay page)."""
DISAGREEMENT_ROWS = 1_000
"""Rows of the disagreement table built per run (a window over all disagreeing messages)."""


def strategy_key(i: int) -> str:
    """Widget key of configuration ``i``'s strategy (0-based)."""
    return f"cmp{i}.strategy"


def group_key(i: int) -> str:
    """Widget key of configuration ``i``'s group control (ctxlab strategies / frameworks)."""
    return f"cmp{i}.group"


FRAMEWORKS_PICKED = "cmp.frameworks"


def _put_frameworks_side_by_side(ws: Workspace) -> None:
    """The preset's button: one configuration per picked framework policy, each at the
    framework's own defaults (what its users run)."""
    picked = [n for n in st.session_state.get(FRAMEWORKS_PICKED, []) if n]
    if len(picked) < MIN_CONFIGS:
        return
    picked = picked[:MAX_CONFIGS]
    saved = _saved()
    st.session_state[COUNT] = saved[COUNT] = len(picked)
    seeded: set[tuple[str, str, str]] = st.session_state.setdefault(SEEDED, set())
    for i, name in enumerate(picked):
        st.session_state[strategy_key(i)] = saved[strategy_key(i)] = name
        seeded.add((namespace(i), name, ws.chat.slot))
        apply_params(
            namespace(i), name, ws.chat.slot, current_params(get_strategy_class(name)()), ws
        )


def framework_preset(names: Sequence[str], ws: Workspace) -> None:
    """ "Compare frameworks": pick framework policies and put them side by side, each at its
    defaults (drawn only when at least two framework policies are registered)."""
    from ctxlab.ui.frameworks import framework_names, option_label

    available = framework_names(names)
    if len(available) < MIN_CONFIGS:
        return
    with st.expander("Compare frameworks on this chat", icon=":material/view_column:"):
        st.session_state.setdefault(FRAMEWORKS_PICKED, available[:MIN_CONFIGS])
        chosen = st.multiselect(
            "Framework policies",
            available,
            key=FRAMEWORKS_PICKED,
            format_func=option_label,
            max_selections=MAX_CONFIGS,
            help="Each at the framework's own defaults; every column then says when it fires.",
        )
        st.button(
            "Put them side by side",
            key="cmp.frameworks_go",
            disabled=len(chosen) < MIN_CONFIGS,
            on_click=_put_frameworks_side_by_side,
            args=(ws,),
        )


def namespace(i: int) -> str:
    """Parameter-widget namespace of configuration ``i`` (0-based)."""
    return f"cmp{i}."


def compare_query(configs: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, str]:
    """The URL entries of a set-up: ``cmp`` (count), ``cmpN`` (strategy), ``cmpN.param``.

    >>> compare_query([("window-drop", {"budget": 16000}), ("sliding-window", {"window": 40})])
    {'cmp': '2', 'cmp1': 'window-drop', 'cmp1.budget': '16000', 'cmp2': 'sliding-window', \
'cmp2.window': '40'}
    """
    out = {"cmp": str(len(configs))}
    for n, (name, values) in enumerate(configs, start=1):
        out[f"cmp{n}"] = name
        for key, text in params_to_query(values).items():
            if len(text) <= 200:  # long prompts stay out of links
                out[f"cmp{n}.{key}"] = text
    return out


@dataclass(frozen=True, slots=True)
class ParsedConfig:
    """One configuration read from the URL: its strategy and coerced parameter values."""

    strategy: str
    values: dict[str, Any]


def parse_compare_query(query: Mapping[str, str], names: Sequence[str]) -> list[ParsedConfig]:
    """The set-up a URL describes (empty when it has no valid ``cmp``).

    The count is clamped to 2..4; a configuration whose strategy is unknown is left to its
    default (its slot is kept, with an empty strategy); parameters that do not exist or do not
    parse are ignored.
    """
    try:
        count = int(query.get("cmp", ""))
    except ValueError:
        return []
    count = min(max(count, MIN_CONFIGS), MAX_CONFIGS)
    out: list[ParsedConfig] = []
    for n in range(1, count + 1):
        name = query.get(f"cmp{n}", "")
        if name not in names:
            out.append(ParsedConfig("", {}))
            continue
        infos = {info.name: info for info in parameters(get_strategy_class(name))}
        values: dict[str, Any] = {}
        prefix = f"cmp{n}."
        for key, raw in query.items():
            if not key.startswith(prefix) or key[len(prefix) :] not in infos:
                continue
            try:
                values[key[len(prefix) :]] = coerce_value(infos[key[len(prefix) :]], raw)
            except CtxlabError:
                continue
        out.append(ParsedConfig(name, values))
    return out


def messages_within(counted: CountedChat, budget: int) -> int:
    """How many of the newest messages fit ``budget`` tokens (reply priming included); >= 1.

    >>> from ctxlab.model import Message, Role
    >>> chat = CountedChat(tuple(Message(Role.USER, "x", str(i)) for i in range(4)), (5,) * 4, 3)
    >>> messages_within(chat, 13), messages_within(chat, 1)
    (2, 1)
    """
    n = len(counted.messages)
    if n == 0:
        return 1
    room = budget - counted.fixed
    # The newest k messages cost prefix[n] - prefix[n-k]; find the smallest start that fits.
    start = bisect_left(counted.prefix, counted.prefix[n] - room, 0, n + 1)
    return max(n - start, 1)


def comparable_defaults(
    cls: type[Strategy], counted: CountedChat, budget: int | None
) -> dict[str, Any]:
    """Starting values that make ``cls`` comparable with a strategy of ``budget`` tokens.

    Its budget or trigger (the first token-measured parameter, what
    :func:`ctxlab.ui.render.budget_of` reads) becomes ``budget``; its required message counts
    become :func:`messages_within` that budget. Optional parameters and other units keep the
    strategy's own suggestion. Values stay inside the declared bounds. Empty when ``budget`` is
    None, and for a framework policy (it opens at the framework's own defaults).
    """
    if budget is None or cls.framework_policy is not None:
        # a framework policy opens at the framework's own defaults (what its users run); its
        # parameters also have constraints of their own that a shared budget could break
        return {}
    out: dict[str, Any] = {}
    token_done = False
    for info in parameters(cls):
        if info.kind != "int":
            continue
        unit = info.spec.unit
        if unit == "tokens" and not token_done:
            value = budget
            token_done = True
        elif unit == "messages":
            value = messages_within(counted, budget)
        else:
            continue
        if info.spec.min is not None:
            value = max(value, int(info.spec.min))
        if info.spec.max is not None:
            value = min(value, int(info.spec.max))
        out[info.name] = value
    return out


def _saved() -> dict[str, Any]:
    saved: dict[str, Any] = st.session_state.setdefault(SAVED, {})
    return saved


def restore_setup(names: Sequence[str], ws: Workspace) -> None:
    """Seed Compare's widgets: from the URL on the first run of the page in this session,
    else from :data:`SAVED` when another page's run deleted them."""
    saved = _saved()
    if not st.session_state.get(URL_DONE):
        st.session_state[URL_DONE] = True
        parsed = parse_compare_query(opening_query(), names)
        if parsed:
            saved[COUNT] = len(parsed)
            for i, config in enumerate(parsed):
                if not config.strategy:
                    continue
                saved[strategy_key(i)] = config.strategy
                if config.values:
                    apply_params(namespace(i), config.strategy, ws.chat.slot, config.values, ws)
                    st.session_state.setdefault(SEEDED, set()).add(
                        (namespace(i), config.strategy, ws.chat.slot)
                    )
    for key, value in saved.items():
        if key not in st.session_state:
            st.session_state[key] = value
    # Defaults, set here rather than in the widgets (a widget given both warns).
    st.session_state.setdefault(COUNT, MIN_CONFIGS)
    for i in range(MAX_CONFIGS):
        if st.session_state.get(strategy_key(i)) not in names:
            st.session_state[strategy_key(i)] = names[i % len(names)]


def save_setup(count: int, strategies: Sequence[str]) -> None:
    """Remember the set-up outside widget state (see the module docstring)."""
    saved = _saved()
    saved[COUNT] = count
    for i, name in enumerate(strategies):
        saved[strategy_key(i)] = name


def seed_defaults(i: int, cls: type[Strategy], ws: Workspace, budget: int | None) -> None:
    """Once per (configuration, strategy, chat): start from :func:`comparable_defaults`."""
    seeded: set[tuple[str, str, str]] = st.session_state.setdefault(SEEDED, set())
    marker = (namespace(i), cls.name, ws.chat.slot)
    if marker in seeded:
        return
    seeded.add(marker)
    defaults = comparable_defaults(cls, ws.counted, budget)
    if defaults:
        apply_params(namespace(i), cls.name, ws.chat.slot, defaults, ws)


@dataclass(frozen=True, slots=True)
class SessionCost:
    """USD of every call of the chat replayed with one configuration (None: no price)."""

    without_cache: float | None
    with_cache: float | None


def session_cost(
    strategy: Strategy, ws: Workspace, backend: Backend | None, *, allowed: bool = True
) -> SessionCost | None:
    """The replayed session's cost, cached per chat, model, configuration and summarizer.

    None when it is not computed: a summarizing configuration with a summarizer that is not
    automatic (a paid endpoint is never called for a table cell) or when ``allowed`` is False
    and the cost is not cached yet. Errors are shown and give None.
    """
    label = backend.label if backend is not None else ""
    key = (ws.model, repr(strategy), label)
    cache: dict[Any, tuple[CountedChat, SessionCost]] = st.session_state.setdefault(
        "cmp.sessions", {}
    )
    hit = cache.get(key)
    if hit is not None and hit[0] is ws.counted:
        return hit[1]
    if not allowed:
        return None
    if strategy.uses_summarizer and (backend is None or not backend.automatic):
        return None
    try:
        with st.spinner("Replaying every turn for the session cost…"):
            rep = cached_replay(strategy, ws, backend if strategy.uses_summarizer else None)
    except (SummarizerError, CtxlabError) as exc:
        notices.error(str(exc))
        return None
    cost = SessionCost(rep.total_cost, rep.total_cost_with_cache)
    if len(cache) >= 16:
        cache.clear()
    cache[key] = (ws.counted, cost)
    return cost


def _results(_: CountedChat) -> BoundedCache[tuple[Any, ...], TrimResult]:
    return BoundedCache(max_entries=2 * MAX_CONFIGS)


def _shared_result(
    key: tuple[Any, ...], ws: Workspace, strategy: Strategy, counter: TokenCounter
) -> TrimResult:
    """One result per (chat, model, configuration) for every session: no summarizer involved.
    Kept with the counted chat, so released with the last session holding the chat."""
    kept = ws.counted.derived("cmp.results", _results)
    return kept.get_or_build(key, lambda: strategy.apply(ws.counted.messages, counter))


def configuration_outcome(
    strategy: Strategy, ws: Workspace, backend: Backend | None, *, button_key: str
) -> Outcome | None:
    """:func:`ctxlab.ui.summary.run` of one configuration, computed once per chat, model and
    configuration for the whole server when it needs no summarizer or only the automatic
    (offline) one (the same chat is counted once and shared by every configuration and every
    session). A paid endpoint's outcome is never shared: it goes through ``run`` each time
    (whose own cache answers a request already paid for)."""
    if strategy.uses_summarizer:
        if backend is None or not backend.automatic:
            return run(strategy, ws, backend, button_key=button_key)
        # The automatic (offline) summarizer is deterministic: its outcome is kept with the
        # counted chat, shared by every session (a summarize apply reads the whole chat).
        kept: dict[Hashable, Outcome] = ws.counted.derived("cmp.summarized", _empty_outcomes)
        memo_key = (ws.model, repr(strategy), backend.label)
        hit = kept.get(memo_key)
        if hit is not None:
            return hit
        outcome = run(strategy, ws, backend, button_key=button_key)
        if outcome is not None and not outcome.preview:
            if len(kept) >= 2 * MAX_CONFIGS:
                kept.clear()
            kept[memo_key] = outcome
        return outcome
    key = (ws.model, repr(strategy))
    try:
        result = _shared_result(key, ws, strategy, ws.counter)
    except CtxlabError as exc:
        notices.error(str(exc))
        return None
    return Outcome(result, result.summary_request)


def _empty_outcomes(_: CountedChat) -> dict[Hashable, Outcome]:
    return {}


def decision_codes_of(counted: CountedChat, result: TrimResult) -> np.ndarray:
    """Each message's decision code (:data:`ctxlab.ui.binned_map.ORDER`), one read-only
    ``int8`` per message, kept beside the result so that its map and the disagreement table
    read it once per result and chat.

    Translated from :func:`ctxlab.ui.figures.decision_codes` of the result, which keeps the
    last mapping's codes with the chat: the zoomed round map drawn next reads them again.
    """
    memo: dict[int, tuple[TrimResult, np.ndarray]] = counted.derived("cmp.codes", _empty)
    held = memo.get(id(result))
    if held is not None and held[0] is result:  # the entry holds the result: its id is its own
        return held[1]
    if len(memo) >= 4 * MAX_CONFIGS:
        memo.clear()
    codes: np.ndarray = _TO_ORDER[figures.decision_codes(counted, result.decisions)]
    codes.setflags(write=False)
    memo[id(result)] = (result, codes)
    return codes


def retention_of(counted: CountedChat, result: TrimResult, facts: Sequence[Fact]) -> FactRetention:
    """:func:`ctxlab.ui.insights_view.retention_of` of ``facts`` in ``result``'s messages, kept
    beside the result (shared, like the result, by every session on the chat): a rerun of
    Compare for any widget checked every configuration's facts again (a tenth of a rerun's CPU
    on a sample chat), though a configuration that did not change keeps its result object."""
    kept = counted.derived("cmp.retention", _retentions)
    # Keyed by identity: each entry holds its result and facts, so while it is kept no other
    # object can take their ids.
    held = kept.get_or_build(
        (id(result), id(facts)),
        lambda: (
            result,
            facts,
            insights_view.retention_of(counted.messages, result.messages, facts),
        ),
    )
    return held[2]


def _retentions(
    _: CountedChat,
) -> BoundedCache[tuple[int, int], tuple[TrimResult, Sequence[Fact], FactRetention]]:
    return BoundedCache(max_entries=4 * MAX_CONFIGS)


_TO_ORDER = np.array([binned_map.ORDER.index(d) for d in figures.DECISIONS], dtype=np.int8)
"""A figures decision code (index in :data:`ctxlab.ui.figures.DECISIONS`) -> its ORDER code."""


def _empty(_: CountedChat) -> dict[int, tuple[TrimResult, np.ndarray]]:
    return {}


def disagreeing(columns: Sequence[binned_map.Codes]) -> list[int]:
    """Indices where the decision codes of the configurations are not all equal.

    >>> disagreeing([(0, 1, 2), (0, 2, 2)])
    [1]
    """
    if not columns:
        return []
    first = np.asarray(columns[0])
    differ = np.zeros(len(first), dtype=bool)
    for column in columns[1:]:
        other = np.asarray(column)
        if len(other) != len(first):
            raise ValueError("the columns have different lengths")
        differ |= other != first
    found: list[int] = np.flatnonzero(differ).tolist()
    return found


def disagreement_window(
    counted: CountedChat,
    labels: Sequence[str],
    columns: Sequence[binned_map.Codes],
    differ: Sequence[int],
    start: int = 0,
    limit: int = DISAGREEMENT_ROWS,
) -> pd.DataFrame:
    """Rows ``start..start+limit-1`` of :func:`ctxlab.ui.render.disagreement_frame` (same
    columns, same values), built from decision codes: only the rows shown read messages."""
    shown = list(differ[start : start + limit])
    messages = counted.messages
    order = binned_map.ORDER
    data: dict[str, Any] = {
        "index": shown,
        "round": [counted.round_containing(i) for i in shown],
        "role": [messages[i].role.value for i in shown],
        "tokens": [counted.counts[i] for i in shown],
    }
    for label, column in zip(labels, columns, strict=True):
        data[label] = [order[int(column[i])].value for i in shown]
    data["preview"] = [visible(messages[i].preview(100)) for i in shown]
    return pd.DataFrame(data)


def zoom_of(counted: CountedChat, codes: binned_map.Codes) -> tuple[int, int] | None:
    """The rounds a zoomed strip of a binned map shows: the rounds after the last message that
    is not sent (dropped or summarized), with earlier rounds for context as in
    :func:`ctxlab.ui.figures.zoom_rounds`; None when the sent end is not a sliver of the chat."""
    unsent = [binned_map.ORDER.index(Decision.DROPPED), binned_map.ORDER.index(Decision.SUMMARIZED)]
    where = np.flatnonzero(np.isin(np.asarray(codes), unsent))
    if len(where) == 0 or int(where[-1]) + 1 >= len(codes):
        return None
    last = int(where[-1])
    first = counted.round_containing(last + 1)
    total = counted.prefix[-1]
    end_tokens = total - counted.prefix[counted.starts[first]]
    if first == 0 or total <= 0 or end_tokens >= 0.05 * total:
        return None
    lo = first
    while lo > 0 and (
        first - lo < 3
        or counted.prefix[counted.starts[first]] - counted.prefix[counted.starts[lo - 1]]
        <= end_tokens / 4
    ):
        lo -= 1
    return (lo, len(counted.starts))


def problems_of(result: TrimResult, strategy: Strategy, ws: Workspace) -> ProblemsByProvider:
    """What every provider would reject in ``result``'s context: the providers' part of
    :func:`ctxlab.ui.checks_view.check_of`, the very verdict the Playground shows."""
    return dict(checks_view.check_of(result, strategy, ws).providers)


def render_binned_map(
    ws: Workspace,
    result: TrimResult,
    strategy: Strategy,
    *,
    key: str,
    x_range: tuple[float, float],
) -> None:
    """A configuration's round map on a chat of thousands of rounds: binned on the chat's own
    edges (the same ranges for every configuration), plus the zoomed strip on the sent end."""
    counted = ws.counted
    codes = decision_codes_of(counted, result)
    edges = counted.derived(("cmp.edges", binned_map.BINS), binned_map.bin_edges)
    budget = render.budget_of(strategy)
    st.plotly_chart(
        binned_map.binned_map_figure(
            binned_map.decision_bins(counted, codes, edges),
            budget=budget,
            window=ws.model_info,
            x_range=x_range,
            overhead=ws.tools.tokens,
        ),
        key=key,
        width="stretch",
    )
    zoom = zoom_of(counted, codes)
    if zoom is None:
        return
    first, stop = zoom
    share = (counted.prefix[-1] - counted.prefix[counted.starts[first]]) / counted.prefix[-1]
    st.caption(render.zoom_title(first, stop, share))
    st.plotly_chart(
        figures.round_map_figure(
            counted,
            result.decisions,
            rounds=zoom,
            explain=functools.partial(strategy.explain_round, counted, result),
            budget=budget,
            window=ws.model_info,
            overhead=ws.tools.tokens,
        ),
        key=f"{key}-zoom",
        width="stretch",
    )
