"""Framework policies in the app: the group picker, what a policy does with the chat, when it fires.

Every framework policy is a :class:`~ctxlab.strategies.frameworks.FrameworkStrategy`; what
differs between frameworks lives in the strategy (its ``framework_policy`` provenance, its
trigger report, its configuration code), so nothing here names a framework. Text a policy
writes (its trigger sentence, provenance, unpublished details, known issues) is shown through
:mod:`ctxlab.ui.notices` or :func:`~ctxlab.ui.text.markdown_literal`, like any text not written
in this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import streamlit as st

from ctxlab.errors import CtxlabError
from ctxlab.model import Message
from ctxlab.strategies import Decision, Strategy, TrimResult, get_strategy_class
from ctxlab.strategies.frameworks import FrameworkStrategy
from ctxlab.strategies.provenance import FrameworkPolicy, TriggerReport
from ctxlab.tokens import TokenCounter
from ctxlab.ui import notices
from ctxlab.ui.text import markdown_literal

if TYPE_CHECKING:
    from ctxlab.replay import Replay

__all__ = [
    "CTXLAB_GROUP",
    "FRAMEWORK_GROUP",
    "GROUPS",
    "Firing",
    "firing_of",
    "framework_names",
    "group_of",
    "groups_of",
    "is_framework",
    "panel_title",
    "persists_text",
    "policy_lines",
    "render_firing",
    "render_framework_panel",
    "render_trigger_caption",
    "strategy_picker",
    "trigger_report",
]

CTXLAB_GROUP = "ctxlab strategies"
FRAMEWORK_GROUP = "Framework policies"
GROUPS: tuple[str, ...] = (CTXLAB_GROUP, FRAMEWORK_GROUP)
CHOSEN_BY_GROUP = "ctx.strategy_by_group"
"""``{(picker key, group): strategy}``: the last strategy picked in each group of a picker, so
switching the group back returns to it."""

PERSISTS_WORDS = {
    "view": "edits only the request: the stored history stays whole",
    "state": "rewrites the stored history",
    "server": "the provider edits the prompt on its side",
}


def is_framework(cls: type[Strategy]) -> bool:
    """``cls`` reproduces a framework's policy (it carries a :class:`FrameworkPolicy`)."""
    return isinstance(getattr(cls, "framework_policy", None), FrameworkPolicy)


def group_of(name: str) -> str:
    """The picker group of the registered strategy ``name``."""
    return FRAMEWORK_GROUP if is_framework(get_strategy_class(name)) else CTXLAB_GROUP


def groups_of(names: Sequence[str]) -> dict[str, list[str]]:
    """``names`` split by group, in registry order; groups without a strategy are left out."""
    out: dict[str, list[str]] = {group: [] for group in GROUPS}
    for name in names:
        out[group_of(name)].append(name)
    return {group: members for group, members in out.items() if members}


def framework_names(names: Sequence[str]) -> list[str]:
    """The framework policies among ``names``, in registry order."""
    return [n for n in names if group_of(n) == FRAMEWORK_GROUP]


def option_label(name: str) -> str:
    """A picker's label of ``name``: its title ("LangChain · SummarizationMiddleware")."""
    return get_strategy_class(name).title


def _group_switched(key: str, group_key: str, groups: dict[str, list[str]]) -> None:
    """The group control changed: pick the group's last choice (else its first strategy)."""
    group = st.session_state.get(group_key)
    if group not in groups:
        return
    chosen: dict[tuple[str, str], str] = st.session_state.setdefault(CHOSEN_BY_GROUP, {})
    previous = chosen.get((key, group))
    st.session_state[key] = previous if previous in groups[group] else groups[group][0]


def strategy_picker(
    where: Any,
    names: Sequence[str],
    *,
    key: str,
    group_key: str,
    label: str = "Strategy",
    group_label: str = "Strategy family",
) -> str:
    """A group control ("ctxlab strategies" / "Framework policies") above the strategy picker
    of that group; the picked registry name.

    The group follows the picked strategy (a link or a test that sets ``st.session_state[key]``
    to a framework policy opens its group); clicking the group picks that group's last choice.
    Without any framework policy registered, only the strategy picker is drawn.
    """
    if st.session_state.get(key) not in names:
        st.session_state[key] = names[0]
    groups = groups_of(names)
    options: Sequence[str] = names
    if len(groups) > 1:
        st.session_state[group_key] = group_of(st.session_state[key])
        group = where.radio(
            group_label,
            list(groups),
            key=group_key,
            horizontal=True,
            on_change=_group_switched,
            args=(key, group_key, groups),
            help="ctxlab's own strategies, or the policies of the frameworks people run "
            "(LangChain, Codex, Claude Code, ...) reproduced with their own defaults.",
        )
        options = groups[group]
    picked: str = where.selectbox(label, options, key=key, format_func=option_label)
    if len(groups) > 1:
        chosen: dict[tuple[str, str], str] = st.session_state.setdefault(CHOSEN_BY_GROUP, {})
        chosen[(key, group_of(picked))] = picked
    return picked


def trigger_report(
    strategy: Strategy, messages: Sequence[Message], counter: TokenCounter
) -> TriggerReport | None:
    """``strategy``'s :class:`TriggerReport` on ``messages``; None for a ctxlab strategy.

    Kept with the counted chat: a report can cost seconds on a 100,000-message chat (LlamaIndex
    tokenizes the joined text), and every rerun of a page asks again."""
    if not isinstance(strategy, FrameworkStrategy):
        return None
    framework = strategy
    return counter.counted(messages).derived(
        ("framework-trigger-report", framework),
        lambda _chat: framework.trigger_report(messages, counter),
    )


def panel_title(policy: FrameworkPolicy) -> str:
    """``What LangChain does with this chat`` (plain text: used as an expander's label)."""
    return f"What {policy.framework} does with this chat"


def persists_text(policy: FrameworkPolicy) -> str:
    """How the policy keeps its result, in words."""
    return PERSISTS_WORDS.get(policy.persists, policy.persists)


def policy_lines(policy: FrameworkPolicy) -> list[str]:
    """The provenance lines of a policy, plain text: evidence, source, counter, details not
    published by the vendor (or not reproduced exactly), known issues."""
    lines = [
        f"{policy.evidence_text}. Source: {policy.source}.",
        f"Counts with: {policy.counter}; it {persists_text(policy)}.",
    ]
    lines.extend(f"{policy.unpublished_label}: {detail}" for detail in policy.unpublished)
    lines.extend(f"Known issue, reproduced: {issue}" for issue in policy.known_issues)
    return lines


def _report_or_error(
    strategy: Strategy, messages: Sequence[Message], counter: TokenCounter
) -> TriggerReport | None:
    try:
        return trigger_report(strategy, messages, counter)
    except (CtxlabError, NotImplementedError, ValueError) as exc:
        notices.error(f"{strategy.title}: its trigger cannot be computed ({exc}).")
        return None


def render_framework_panel(
    strategy: Strategy, messages: Sequence[Message], counter: TokenCounter, result: TrimResult
) -> None:
    """The Playground's panel of a framework policy: when it fires on this chat (its own
    sentence), where its estimate and the exact count part, what it did with these settings,
    where the reproduction comes from, what the vendor does not publish, its known issues, and
    the framework's own configuration for these settings."""
    policy = getattr(type(strategy), "framework_policy", None)
    if not isinstance(policy, FrameworkPolicy):
        return
    with st.expander(panel_title(policy), expanded=True, icon=":material/policy:"):
        report = _report_or_error(strategy, messages, counter)
        if report is not None:
            show = notices.success if report.fires else notices.info
            show(report.text)
            if report.disagreement:
                notices.warning(report.disagreement, icon=":material/difference:")
        notices.caption(acted_text(policy.framework, result))
        lines = policy_lines(policy)
        notices.caption(lines[0])
        notices.caption(lines[1])
        for line in lines[2:]:
            if line.startswith("Known issue"):
                notices.warning(line, icon=":material/bug_report:")
            else:
                notices.info(line, icon=":material/help:")
        try:
            code = strategy.config_code()  # type: ignore[attr-defined]
        except (CtxlabError, NotImplementedError, ValueError):
            code = ""
        if code:
            st.markdown(
                f"**{markdown_literal(policy.framework)} configuration for these settings**"
            )
            st.code(code, language=code_language(code))


def acted_text(framework: str, result: TrimResult) -> str:
    """What the policy did with these settings, from its result (plain text)."""
    counts = result.decision_counts()
    acted = {d: n for d, n in counts.items() if n and d not in (Decision.KEPT, Decision.PINNED)}
    if not acted and not result.inserted:
        return f"With these settings {framework} sends the whole chat unchanged."
    parts = [f"{n:,} {d.value}" for d, n in acted.items()]
    if result.inserted:
        parts.append(f"{len(result.inserted):,} inserted")
    how = "rewrites its stored history" if result.replace else "edits the request only"
    return (
        f"With these settings {framework} {how}: {', '.join(parts)}; "
        f"{result.tokens_before:,} -> {result.tokens_after:,} tokens (exact count)."
    )


def render_trigger_caption(
    strategy: Strategy, messages: Sequence[Message], counter: TokenCounter
) -> None:
    """Compare's line under a framework configuration: its trigger sentence and, when its
    estimate is off, the disagreement."""
    report = _report_or_error(strategy, messages, counter)
    if report is None:
        return
    notices.caption(report.text)
    if report.disagreement:
        notices.caption(report.disagreement)


def code_language(code: str) -> str:
    """The language of a policy's configuration code, for highlighting: JSON, TOML or Python."""
    import ast
    import json

    try:
        json.loads(code)
    except ValueError:
        pass
    else:
        return "json"
    try:
        ast.parse(code)
    except SyntaxError:
        return "toml"
    return "python"


@dataclass(frozen=True, slots=True)
class Firing:
    """When a policy acted during a replay: its first acting call, the calls where it rewrote
    the history (compactions), and every call where it acted. Calls are 1-based turns."""

    first: int | None
    compactions: tuple[int, ...]
    acting: tuple[int, ...]
    calls: int
    checked: int

    @property
    def markers(self) -> tuple[int, ...]:
        """The turns marked on the chart: the first acting call, then every compaction."""
        found = set(self.compactions)
        if self.first is not None:
            found.add(self.first)
        return tuple(sorted(found))


FIRING_CALLS_CHECKED = 400
LONG_CHAT = 5_000
"""On a chat longer than this many messages, a tenth as many calls are read in full (each
rebuilds the call's context)."""
"""Calls of a replay whose full result is read for the markers; on a longer replay the rest are
told from the row numbers (a call sending less than the whole history acted)."""


def _acted(result: TrimResult) -> bool:
    if result.inserted:
        return True
    counts = result.decision_counts()
    return any(counts[d] for d in (Decision.DROPPED, Decision.SUMMARIZED, Decision.CLEARED))


def firing_of(rep: Replay, limit: int = FIRING_CALLS_CHECKED) -> Firing:
    """When the replayed strategy acted, from its result at every call (decisions, inserted
    messages, ``replace``): the first call it acted on, the calls where it rewrote the history.

    A replacement replay's compactions are its recorded ones. Past ``limit`` calls, a call
    counts as acting when it sent fewer messages or tokens than the untrimmed history.
    """
    acting: list[int] = []
    compactions: list[int] = [c.turn for c in rep.compactions]
    checked = min(len(rep.rows), limit)
    for row in rep.rows[:checked]:
        result = rep.context_at(row.turn)
        if not _acted(result):
            continue
        acting.append(row.turn)
        if result.replace and not rep.compactions and row.turn not in compactions:
            compactions.append(row.turn)
    for row in rep.rows[checked:]:
        if row.messages_sent < row.messages_untrimmed or row.tokens_sent != row.tokens_untrimmed:
            acting.append(row.turn)
    if not rep.compactions and compactions:
        # a projection that rewrites the history acts on every call from its first: only the
        # calls where the rewrite begins count as compactions (the first of each run)
        runs = [t for k, t in enumerate(compactions) if k == 0 or compactions[k - 1] != t - 1]
        compactions = runs
    first = min([*acting, *compactions], default=None)
    return Firing(first, tuple(sorted(set(compactions))), tuple(acting), len(rep.rows), checked)


def firing_text(framework: str, firing: Firing, message_of: Callable[[int], int]) -> str:
    """When the policy fired during the session, in one sentence (plain text)."""
    if firing.first is None:
        return f"{framework} never acts during this session: every call sends the whole history."
    text = (
        f"{framework} first acts at call {firing.first:,} (message #{message_of(firing.first)}) "
        f"and acts on {len(firing.acting):,} of {firing.calls:,} calls."
    )
    if firing.compactions:
        shown = ", ".join(f"{t:,}" for t in firing.compactions[:20])
        more = f" and {len(firing.compactions) - 20:,} more" if len(firing.compactions) > 20 else ""
        text += f" It rewrites its history at call{'s' if len(firing.compactions) > 1 else ''} "
        text += f"{shown}{more}."
    return text


def rows_chat_size(rep: Replay) -> int:
    """How many messages the replayed chat holds up to its last call."""
    return rep.rows[-1].messages_untrimmed if rep.rows else 0


def render_firing(rep: Replay, strategy: Strategy) -> Firing | None:
    """Replay's line for a framework policy: when it first acts and when it compacts; the
    firing (for the chart's markers), None for a ctxlab strategy."""
    policy = getattr(type(strategy), "framework_policy", None)
    if not isinstance(policy, FrameworkPolicy) or not rep.rows:
        return None
    long_chat = rows_chat_size(rep) > LONG_CHAT
    try:
        firing = firing_of(rep, FIRING_CALLS_CHECKED // 10 if long_chat else FIRING_CALLS_CHECKED)
    except (CtxlabError, ValueError, IndexError) as exc:
        notices.error(f"When {policy.framework} fires could not be computed: {exc}")
        return None
    rows = rep.rows
    st.subheader(f"When {markdown_literal(policy.framework)} fires in this session")
    notices.info(
        firing_text(policy.framework, firing, lambda turn: rows[turn - 1].message_index),
        icon=":material/flag:",
    )
    if firing.checked < firing.calls:
        st.caption(
            f"Read from the strategy's result at the first {firing.checked:,} calls; later calls "
            "from how much each sent."
        )
    return firing


LEARN_PAIR: tuple[str, str] = ("langchain-summarization", "codex-compact")
"""The two policies the Learn page contrasts when both are registered."""
LEARN_SETTINGS: dict[str, dict[str, str]] = {
    # small enough that both act on the Learn page's coding-agent chat (about 33,000 tokens)
    "langchain-summarization": {"trigger": "tokens=8000", "keep": "messages=10"},
    "codex-compact": {"model_auto_compact_token_limit": "8000"},
}
"""Settings the Learn page starts each of :data:`LEARN_PAIR` from (parameters a policy does not
have are left out); any other framework policy starts from its defaults."""


def learn_pair(names: Sequence[str]) -> list[str]:
    """The two framework policies the Learn page contrasts: :data:`LEARN_PAIR` when both are
    registered, else the first two framework policies registered (fewer when there are not
    two)."""
    if all(name in names for name in LEARN_PAIR):
        return list(LEARN_PAIR)
    return framework_names(names)[:2]


def learn_settings(name: str) -> dict[str, str]:
    """:data:`LEARN_SETTINGS` of ``name``, restricted to the parameters it has."""
    from ctxlab.strategies import parameters

    known = {info.name for info in parameters(get_strategy_class(name))}
    return {k: v for k, v in LEARN_SETTINGS.get(name, {}).items() if k in known}


def context_rows(
    messages: Sequence[Message], result: TrimResult, counter: TokenCounter
) -> list[dict[str, Any]]:
    """One row per message a policy sends: its position in the context, role, what it is (a
    message of the chat, verbatim or cleared, or one the policy wrote) and a preview."""
    from ctxlab.ui.text import visible

    position = {m.id: i for i, m in enumerate(messages)}
    inserted = {id(m) for m in result.inserted}
    rows: list[dict[str, Any]] = []
    for k, m in enumerate(result.messages):
        if id(m) in inserted or m.id not in position:
            kind = (
                "written by the policy: compaction marker"
                if m.is_compaction
                else "written by the policy: summary"
                if m.is_summary
                else "written by the policy"
            )
        else:
            decision = result.decisions.get(m.id, Decision.KEPT)
            kind = f"message #{position[m.id]}, {decision.value}"
        rows.append(
            {
                "position": k,
                "role": m.role.value,
                "what it is": kind,
                "tokens": counter.count_message(m),
                "preview": visible(m.preview(70)),
            }
        )
    return rows


LEARN_CHAT = "coding_agent_session"
"""The sample the Learn page runs two frameworks on."""


def learn_chat() -> tuple[Message, ...]:
    """The coding-agent sample's messages (the Learn page's own small chat when it is missing)."""
    from ctxlab.formats import load_chat_file
    from ctxlab.samples import sample_path
    from ctxlab.ui.examples import example_chat

    try:
        return load_chat_file(sample_path(LEARN_CHAT), name=LEARN_CHAT).messages
    except (CtxlabError, OSError):
        return example_chat()


@dataclass(frozen=True, slots=True)
class LearnContrast:
    """One framework's column of the Learn page: plain-text sentences and the context rows."""

    title: str
    evidence: str
    settings: str
    trigger: str
    disagreement: str
    acted: str
    rows: tuple[dict[str, Any], ...]
    written: str
    firing: str


def learn_contrast(
    name: str, messages: tuple[Message, ...], counter: TokenCounter
) -> LearnContrast:
    """What framework policy ``name`` does with ``messages`` at the Learn page's settings
    (:func:`learn_settings`; its defaults otherwise), and when it first fires as the session
    grows (a replay with the offline summarizer); kept for the session per policy."""
    memo: dict[tuple[str, int], LearnContrast] = st.session_state.setdefault("learn.fw", {})
    key = (name, id(messages))
    if key in memo and memo[key].title == get_strategy_class(name).title:
        return memo[key]
    from ctxlab.replay import replay
    from ctxlab.strategies import build_strategy, current_params, format_value
    from ctxlab.summarizers import OfflineSummarizer

    cls = get_strategy_class(name)
    try:
        strategy = build_strategy(name, learn_settings(name))
    except CtxlabError:
        strategy = cls()
    policy = cls.framework_policy
    assert policy is not None  # learn_pair gives framework policies only
    summarizer = OfflineSummarizer()
    result = strategy.apply(messages, counter, summarizer)
    report = trigger_report(strategy, messages, counter)
    shown = ", ".join(
        f"{k}={format_value(v)}"
        for k, v in current_params(strategy).items()
        if not (isinstance(v, str) and len(v) > 40)
    )
    written = [
        (k, m) for k, m in enumerate(result.messages) if any(m is i for i in result.inserted)
    ]
    if written:
        where = "; ".join(
            f"a {m.role.value} message at position {k} of {len(result.messages)}"
            for k, m in written
        )
        written_text = f"It writes {len(written):,} message(s) of its own: {where}."
    else:
        written_text = "It writes no message of its own here."
    rep = replay(messages, strategy, counter, summarizer=summarizer, model="gpt-4o")
    firing = firing_of(rep)
    contrast = LearnContrast(
        title=cls.title,
        evidence=policy.evidence_text,
        settings=f"Settings: {shown}" if shown else "Settings: the framework's defaults",
        trigger=report.text if report is not None else "",
        disagreement=report.disagreement if report is not None else "",
        acted=acted_text(policy.framework, result),
        rows=tuple(context_rows(messages, result, counter)),
        written=written_text,
        firing=firing_text(policy.framework, firing, lambda turn: rep.rows[turn - 1].message_index),
    )
    memo[key] = contrast
    return contrast
