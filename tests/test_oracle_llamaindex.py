"""LlamaIndex's ChatMemoryBuffer and Memory, run by llama-index-core itself, against ctxlab.

One oracle subprocess runs every case (``tests/oracles/llamaindex.py``); each case compares
the ids LlamaIndex returns (in order) with the messages the ctxlab strategy keeps. Every chat of
:func:`oracle_chats` runs with LlamaIndex's defaults and with limits derived from LlamaIndex's
own count of that chat, so the policy acts on every chat.
"""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.llamaindex_chat_memory_buffer import (
    LlamaIndexChatMemoryBuffer,
)
from ctxlab.strategies.frameworks.llamaindex_memory import LlamaIndexMemory
from ctxlab.tokens import get_counter
from tests.oracle_support import neutral, oracle_chats, run_oracle

COUNTER = get_counter("gpt-4o")


def _buffer_settings(estimate: int) -> list[dict[str, Any]]:
    return [
        {},  # LlamaIndex's default: token_limit 3,000
        {"token_limit": max(estimate // 2, 1)},
        {"token_limit": max(estimate // 5, 1)},
        {"token_limit": max(estimate // 3, 2), "initial_token_count": max(estimate // 30, 1)},
        {"token_limit": max(estimate - 1, 1)},
    ]


def _memory_settings(estimate: int) -> list[dict[str, Any]]:
    half = max(int(estimate * 0.5 / 0.7), 1)
    return [
        {},  # LlamaIndex's defaults: 30,000 x 0.7, flush 3,000
        {"token_limit": half},
        {"token_limit": max(estimate // 3, 1), "token_flush_size": max(estimate // 40, 1)},
        {
            "token_limit": max(estimate // 2, 1),
            "chat_history_token_ratio": 0.5,
            "token_flush_size": max(estimate // 10, 1),
        },
    ]


def _cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for name, chat in oracle_chats().items():
        plain = neutral(chat)
        buffer_estimate = LlamaIndexChatMemoryBuffer().estimate(chat, COUNTER)
        for params in _buffer_settings(buffer_estimate):
            cases.append(
                {"name": name, "policy": "chat_memory_buffer", "chat": plain, "params": params}
            )
        memory_estimate = LlamaIndexMemory().estimate(chat, COUNTER)
        for params in _memory_settings(memory_estimate):
            cases.append({"name": name, "policy": "memory", "chat": plain, "params": params})
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def oracle_results() -> list[Any]:
    return run_oracle("llamaindex", CASES)


def _strategy(case: dict[str, Any]) -> LlamaIndexChatMemoryBuffer | LlamaIndexMemory:
    if case["policy"] == "chat_memory_buffer":
        return LlamaIndexChatMemoryBuffer(**case["params"])
    return LlamaIndexMemory(**case["params"])


@pytest.mark.parametrize(
    "index",
    range(len(CASES)),
    ids=[f"{c['name']}-{c['policy']}-{c['params']}" for c in CASES],
)
def test_ctxlab_keeps_what_llamaindex_returns(index: int, oracle_results: list[Any]) -> None:
    case = CASES[index]
    chat = oracle_chats()[case["name"]]
    result = _strategy(case).apply(chat, COUNTER)
    assert [m.id for m in result.messages] == oracle_results[index]
    kept = set(oracle_results[index])
    assert {i: d for i, d in result.decisions.items()} == {
        m.id: Decision.KEPT if m.id in kept else Decision.DROPPED for m in chat
    }
    assert result.inserted == ()
    assert result.replace is (case["policy"] == "memory")


def _one_turn(name: str) -> bool:
    """The chat is a single turn: its first message is its only user message."""
    roles = [m["role"] for m in neutral(oracle_chats()[name])]
    return roles.count("user") == 1 and roles[0] == "user"


def test_every_chat_is_acted_on(oracle_results: list[Any]) -> None:
    """The derived limits make each policy drop something on every chat (no vacuous case),
    except Memory on a one-turn chat: it keeps at least one full turn, which is everything
    (the Claude Code sessions start with their only user message)."""
    acted: dict[tuple[str, str], bool] = {}
    for case, ids in zip(CASES, oracle_results, strict=True):
        key = (case["name"], case["policy"])
        acted[key] = acted.get(key, False) or len(ids) < len(case["chat"])
    for (name, policy), dropped in acted.items():
        assert dropped is not (policy == "memory" and _one_turn(name)), (name, policy)
    assert sum(_one_turn(name) for name in oracle_chats()) == 2


def test_defaults_are_among_the_cases() -> None:
    for name in oracle_chats():
        for policy in ("chat_memory_buffer", "memory"):
            assert any(
                c["name"] == name and c["policy"] == policy and c["params"] == {} for c in CASES
            )
