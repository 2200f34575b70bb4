"""Compare: two to four strategy configurations on the same chat, side by side."""

from __future__ import annotations

import functools

import streamlit as st

from ctxlab.plural import plural
from ctxlab.strategies import get_strategy_class, strategy_names
from ctxlab.ui import (
    binned_map,
    checks_view,
    compare_setup,
    frameworks,
    insights_view,
    render,
    report,
)
from ctxlab.ui.session import apply_params, build_or_error, strategy_params
from ctxlab.ui.shell import page_query, shared
from ctxlab.ui.summary import summarizer_panel
from ctxlab.ui.timeline import FACTS_BY_DEFAULT_UP_TO

setup = shared()
ws = setup.ws
budget = render.budget_of(setup.strategy)
names = strategy_names()
compare_setup.restore_setup(names, ws)

st.title("Compare strategies")
compare_setup.framework_preset(names, ws)
count = int(
    st.sidebar.number_input(
        "Configurations",
        compare_setup.MIN_CONFIGS,
        compare_setup.MAX_CONFIGS,
        key=compare_setup.COUNT,
    )
)
st.caption(
    f"Every configuration starts from the sidebar's budget ({budget:,} tokens) or, counting "
    "messages, from how many of the newest messages fit it; the round maps share one axis: the "
    "chat's tokens, oldest on the left."
    if budget is not None
    else "The round maps share one axis: the chat's tokens, oldest on the left."
)
# Picking facts reads every user and tool message once per chat (a minute on a 100k chat).
with_facts = len(ws.counted) <= FACTS_BY_DEFAULT_UP_TO or st.toggle(
    "Fact retention (reads every message once: slow on a chat this long)", key="cmp.facts"
)
facts = insights_view.chat_facts(ws.counted) if with_facts else ()
shared_axis = (0.0, float(max(ws.counted.prefix[-1], 1)))
large = len(ws.counted) > compare_setup.SESSION_COST_AUTO
binned = binned_map.wants_bins(ws.counted)  # thousands of rounds: every map binned alike
configs: list[tuple[str, dict[str, object]]] = []
labelled, rows, reported = [], [], []
stand_in_used = False
for i, col in enumerate(st.columns(count)):
    with col:
        name = frameworks.strategy_picker(
            col,
            names,
            key=compare_setup.strategy_key(i),
            group_key=compare_setup.group_key(i),
            label=f"Configuration {i + 1}",
            group_label=f"Family of configuration {i + 1}",
        )
        cls = get_strategy_class(name)
        compare_setup.seed_defaults(i, cls, ws, budget)
        with col.expander("Parameters", expanded=True):
            values = strategy_params(ws, cls, namespace=compare_setup.namespace(i), container=st)
        configs.append((name, values))
        strategy = build_or_error(name, values, ws.chat.usage)
        outcome = None
        backend = summarizer_panel(cls)
        if strategy is not None:
            outcome = compare_setup.configuration_outcome(
                strategy, ws, backend, button_key=f"cmp{i}.run"
            )
        if strategy is None or outcome is None:
            continue
        label = f"{i + 1}: {cls.title}"
        st.markdown(f"**{label}**")  # above the chart: a narrow chart's legend needs its top
        frameworks.render_trigger_caption(strategy, ws.chat.messages, ws.counter)
        if binned:
            compare_setup.render_binned_map(
                ws, outcome.result, strategy, key=f"cmp{i}.map", x_range=shared_axis
            )
        else:
            render.render_round_map(
                ws.counted,
                outcome.result,
                key=f"cmp{i}.map",
                x_range=shared_axis,
                strategy=strategy,
                budget=render.budget_of(strategy),
                window=ws.model_info,
                tools=ws.tools,
            )
        check = checks_view.check_of(outcome.result, strategy, ws)
        checks_view.render_sends_nothing(
            check.sends_nothing,
            key=f"cmp{i}.empty",
            apply=functools.partial(
                apply_params, compare_setup.namespace(i), name, ws.chat.slot, ws=ws
            ),
        )
        problems = dict(check.providers)
        render.render_badge_row(problems)
        checks_view.render_over_limit(check.over_limit)
        allowed = not large or st.toggle(
            "Session cost (replays every turn: slow on a chat this long)",
            key=f"cmp{i}.session",
        )
        session = compare_setup.session_cost(strategy, ws, backend, allowed=allowed)
        summarized = outcome.result.summary_request is not None
        stand_in = summarized and backend is not None and backend.label == "offline"
        stand_in_used = stand_in_used or stand_in
        summaries_by = "—"
        if summarized and backend is not None:
            summaries_by = (
                "offline stand-in"
                if stand_in
                else "placeholder: not run yet"
                if outcome.preview
                else backend.label
            )
        retention = compare_setup.retention_of(ws.counted, outcome.result, facts) if facts else None
        labelled.append((label, outcome.result))
        reported.append((label, strategy, outcome.result))
        rows.append(
            render.CompareRow(
                label,
                outcome.result,
                problems,
                retention.percent if retention is not None else None,
                render.call_cost(ws.model, outcome.result.tokens_after),
                None if session is None else session.without_cache,
                None if session is None else session.with_cache,
                stand_in=stand_in,
                summaries_by=summaries_by,
            )
        )
compare_setup.save_setup(count, [name for name, _ in configs])
page_query(compare_setup.compare_query(configs))

STAND_IN_NOTE = (
    "Fact retention and tokens of summarizing configurations come from the offline extractive "
    "stand-in, not a real model."
)
st.subheader("Metrics")
st.caption(
    (
        f"Fact retention: how many of the {len(facts):,} facts picked from the chat (numbers, "
        "identifiers, names, URLs) each context still holds, verbatim or in a summary. "
        if with_facts
        else "Fact retention is off for this long chat (switch it on above). "
    )
    + f"Cost per session: every assistant turn of the chat replayed with the configuration, "
    f"{ws.model} list prices; n/a when not computed."
)
if stand_in_used:
    st.info(STAND_IN_NOTE, icon=":material/science:")
metrics = render.compare_frame(rows)
render.render_compare_table(metrics)
st.subheader("Messages on which they disagree")
columns = [compare_setup.decision_codes_of(ws.counted, result) for _, result in labelled]
differ = compare_setup.disagreeing(columns)
first_row = 0
if len(differ) > compare_setup.DISAGREEMENT_ROWS:
    first_row = int(
        st.number_input(
            f"First row shown (of {len(differ):,}; {compare_setup.DISAGREEMENT_ROWS:,} at a time)",
            min_value=0,
            max_value=len(differ) - 1,
            step=compare_setup.DISAGREEMENT_ROWS,
            key="cmp.rows",
        )
    )
st.caption(f"{len(differ):,} of {plural(len(ws.counted), 'message')}")
st.dataframe(
    compare_setup.disagreement_window(
        ws.counted, [label for label, _ in labelled], columns, differ, first_row
    ),
    hide_index=True,
    height=420,
    width="stretch",
    column_config=render.DISAGREEMENT_COLUMNS,
)
st.download_button(
    "Download report",
    lambda: report.report_html(
        report.compare_report(
            ws.chat.label,
            ws.model,
            ws.counted,
            reported,
            metrics,
            notes=(STAND_IN_NOTE,) if stand_in_used else (),
            conversation=ws.chat.conversation,
        )
    ),
    file_name=f"{ws.chat.slot}-comparison.html",
    mime="text/html",
    key="cmp.report",
    on_click="ignore",  # a download changes nothing: no rerun
    icon=":material/download:",
)
