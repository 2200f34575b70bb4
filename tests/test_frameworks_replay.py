"""Replay runs a framework policy the way the framework keeps its history.

A policy that rewrites its stored history (Semantic Kernel's reducers, LlamaIndex ``Memory``)
starts each call from what the previous call left; one that only edits the request (AutoGen's
contexts) is recomputed from the full chat at every call.
"""

from __future__ import annotations

from ctxlab import load_chat
from ctxlab.replay import assistant_turns, carries_history, replay
from ctxlab.samples import sample_path
from ctxlab.strategies import build_strategy
from ctxlab.tokens import get_counter

COUNTER = get_counter("gpt-4o")
CHAT = tuple(load_chat(sample_path("coding_agent_session")))


def test_a_reducer_that_rewrites_history_starts_each_call_from_the_last_reduction() -> None:
    strategy = build_strategy(
        "semantic-kernel-truncation", {"target_count": 10, "threshold_count": 10}
    )
    assert carries_history(strategy)
    rows = replay(CHAT, strategy, COUNTER, model="gpt-4o").rows
    stored: tuple = ()
    since = 0
    stateful, recomputed = [], []
    for index in assistant_turns(CHAT):
        live = (*stored, *CHAT[since:index])
        result = strategy.apply(live, COUNTER)
        stateful.append(len(result.messages))
        recomputed.append(len(strategy.apply(CHAT[:index], COUNTER).messages))
        if result.replace:
            stored, since = result.messages, index
    assert [row.messages_sent for row in rows] == stateful
    assert stateful != recomputed  # the history SK keeps is not the full chat's reduction


def test_a_view_is_recomputed_from_the_full_chat() -> None:
    strategy = build_strategy("autogen-buffered", {"buffer_size": 4})
    assert not carries_history(strategy)
    rows = replay(CHAT, strategy, COUNTER, model="gpt-4o").rows
    expected = [len(strategy.apply(CHAT[:i], COUNTER).messages) for i in assistant_turns(CHAT)]
    assert [row.messages_sent for row in rows] == expected
