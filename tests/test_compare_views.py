"""Compare's views on long chats: decision codes, the disagreement window and the zoom."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from chatgen import budgets, chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load_chat
from ctxlab.model import Message
from ctxlab.strategies import build_strategy
from ctxlab.strategies.window_drop import WindowDrop
from ctxlab.tokens import TokenCounter, new_counter
from ctxlab.ui import compare_setup, figures, render
from ctxlab.ui.binned_map import ORDER

CODING = Path(__file__).resolve().parent.parent / "sample_chats" / "coding_agent_session.json"


def three_results(counter: TokenCounter) -> tuple[object, list[tuple[str, object]]]:
    messages = load_chat(CODING)
    counted = counter.counted(messages)
    configs = [
        ("1: window", build_strategy("window-drop", {"budget": counted.total // 3})),
        ("2: last", build_strategy("trim-last", {"max_tokens": counted.total // 2})),
        ("3: clear", build_strategy("clear-tool-results", {"keep_tool_results": 1})),
    ]
    return counted, [(label, s.apply(messages, counter)) for label, s in configs]


def test_the_disagreement_window_equals_the_full_table_sliced(counter: TokenCounter) -> None:
    counted, labelled = three_results(counter)
    full = render.disagreement_frame(counted, labelled)  # type: ignore[arg-type]
    assert len(full) > 3  # the configurations do disagree on this chat
    columns = [compare_setup.decision_codes_of(counted, r) for _, r in labelled]  # type: ignore[arg-type]
    differ = compare_setup.disagreeing(columns)
    assert differ == list(full["index"])
    labels = [label for label, _ in labelled]
    whole = compare_setup.disagreement_window(counted, labels, columns, differ)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(whole, full)
    part = compare_setup.disagreement_window(counted, labels, columns, differ, 2, 3)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(part, full.iloc[2:5].reset_index(drop=True))


def test_decision_codes_are_the_results_decisions(counter: TokenCounter) -> None:
    counted, labelled = three_results(counter)
    for _, result in labelled:
        codes = compare_setup.decision_codes_of(counted, result)  # type: ignore[arg-type]
        assert compare_setup.decision_codes_of(counted, result) is codes  # type: ignore[arg-type]
        raw = [result.decisions[m.id] for m in counted.messages]  # type: ignore[attr-defined]
        assert [ORDER[c] for c in codes] == raw


@settings(max_examples=60)
@given(chat=chats(min_turns=1, max_turns=12), data=st.data())
def test_a_binned_maps_zoom_is_the_round_maps_zoom_for_whole_rounds(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    counted = counter.counted(chat)
    strategy = WindowDrop(budget=data.draw(budgets(counted.total)))
    result = strategy.apply(chat, counter)
    codes = compare_setup.decision_codes_of(counted, result)
    assert compare_setup.zoom_of(counted, codes) == figures.zoom_rounds(counted, result.decisions)


def test_a_sliver_sent_end_gets_the_same_zoom_as_the_round_map(counter: TokenCounter) -> None:
    from chatgen import assistant, user

    chat = tuple(
        m
        for k in range(200)
        for m in (user(f"question {k} " * 5, f"u{k}"), assistant(f"answer {k} " * 5, f"a{k}"))
    )
    counted = counter.counted(chat)
    result = WindowDrop(budget=counted.total // 100).apply(chat, counter)
    codes = compare_setup.decision_codes_of(counted, result)
    zoom = compare_setup.zoom_of(counted, codes)
    assert zoom is not None and zoom == figures.zoom_rounds(counted, result.decisions)


@given(st.lists(st.lists(st.integers(0, 4), min_size=6, max_size=6), min_size=1, max_size=4))
def test_disagreeing_lists_the_rows_whose_codes_are_not_all_equal(
    columns: list[list[int]],
) -> None:
    plain = [i for i, row in enumerate(zip(*columns, strict=True)) if len(set(row)) > 1]
    assert compare_setup.disagreeing(columns) == plain
    assert compare_setup.disagreeing([np.asarray(c, dtype=np.int8) for c in columns]) == plain


def test_problems_of_a_result_are_the_validators_with_a_fresh_count(counter: TokenCounter) -> None:
    """problems_of passes the result's tokens_after instead of counting again: the problems
    are those of validating the messages from scratch (here an over-window context)."""
    from types import SimpleNamespace

    from ctxlab.catalog import get_model
    from ctxlab.ui import insights_view

    messages = load_chat(CODING)
    model = get_model("gpt-4o")
    for name, params in (
        ("clear-tool-results", {"trigger_tokens": 0, "keep_tool_results": 1}),
        ("window-drop", {"budget": 10**9}),
    ):
        strategy = build_strategy(name, params)
        result = strategy.apply(messages, counter)
        small = replace(model, context_window=result.tokens_after - 1)
        ws = SimpleNamespace(
            counted=counter.counted(messages),
            counter=counter,
            model_info=small,
            model="x",
            chat=SimpleNamespace(messages=messages),
        )
        got = compare_setup.problems_of(result, strategy, ws)  # type: ignore[arg-type]
        fresh = insights_view.provider_problems(
            tuple(result.messages), counter=new_counter("gpt-4o"), model=small
        )
        assert got == fresh
        assert any(p.code == "over-window" for p in got[model.validator_provider])
