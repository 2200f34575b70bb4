"""Compare's views on long chats: decision codes, the disagreement window and the zoom."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from chatgen import budgets, chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load_chat
from ctxlab.model import Message
from ctxlab.strategies import build_strategy
from ctxlab.strategies.window_drop import WindowDrop
from ctxlab.tokens import TokenCounter
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
