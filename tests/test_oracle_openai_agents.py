"""The Agents SDK's own session code (openai-agents 0.24.0) against ctxlab's
``openai-agents-session``: the exact items the model receives, per chat and limit.

One oracle subprocess runs every case (``tests/oracles/openai_agents.py``): the chat stored in a
``SQLiteSession(":memory:")``, ``Runner.run`` with ``RunConfig(session_settings=
SessionSettings(limit=N))`` and a fake model recording its ``input``. Limits per chat: the
default None, half the stored items, 3 items and 1 item (which makes the orphan clean-up act).
"""

from __future__ import annotations

from typing import Any

import pytest
from oracle_support import neutral, oracle_chats, run_oracle

from ctxlab.model import Message
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.openai_agents_session import (
    OpenAIAgentsSession,
    prepared_input,
    session_items,
)
from ctxlab.tokens import TokenCounter


def _limits(chat: tuple[Message, ...]) -> list[int | None]:
    _, stored, _ = session_items(chat)
    return sorted({None, max(len(stored) // 2, 1), 3, 1}, key=lambda x: -1 if x is None else x)


CASES: list[tuple[str, int | None]] = [
    (name, limit) for name, chat in oracle_chats().items() for limit in _limits(chat)
]


@pytest.fixture(scope="module")
def oracle_results() -> dict[tuple[str, int | None], Any]:
    chats = oracle_chats()
    payload = [{"chat": neutral(chats[n]), "params": {"limit": lim}} for n, lim in CASES]
    return dict(zip(CASES, run_oracle("openai_agents", payload), strict=True))


def _items(messages: tuple[Message, ...] | list[Message]) -> list[dict[str, Any]]:
    _, stored, new = session_items(messages)
    return [dict(s.item) for s in (*stored, *new)]


@pytest.mark.parametrize(("chat_name", "limit"), CASES, ids=[f"{n}-{lim}" for n, lim in CASES])
def test_same_items_as_the_sdk(
    chat_name: str,
    limit: int | None,
    oracle_results: dict[tuple[str, int | None], Any],
    counter: TokenCounter,
) -> None:
    chat = oracle_chats()[chat_name]
    expected = oracle_results[(chat_name, limit)]
    _, stored, new_input = session_items(chat)
    assert [dict(s.item) for s in prepared_input(stored, new_input, limit)] == expected["input"]

    result = OpenAIAgentsSession(limit=limit).apply(chat, counter)
    assert set(result.decisions) == {m.id for m in chat}
    pinned = [m for m in chat if result.decisions[m.id] is Decision.PINNED]
    if expected["instructions"] is None:
        assert pinned == []
    else:
        assert [m.content for m in pinned] == [expected["instructions"]]
        assert result.messages[0] is pinned[0]
    sent = [m for m in result.messages if result.decisions.get(m.id) is not Decision.PINNED]
    # the context ctxlab shows, mapped back to items, is exactly what the SDK sent
    assert _items(sent) == expected["input"]
    for m in chat:
        d = result.decisions[m.id]
        if d is Decision.KEPT:
            assert m in result.messages
        elif d is Decision.CLEARED:
            assert any(s.id == m.id for s in result.inserted)
    if limit is None and not result.warnings:
        # the default sends every stored item: only orphan clean-up or call-id de-duplication
        # (each announced by a warning) can leave a message out
        assert all(d is not Decision.DROPPED for d in result.decisions.values())
    if limit is None and len(expected["input"]) < len(_items(chat)):
        assert result.warnings
