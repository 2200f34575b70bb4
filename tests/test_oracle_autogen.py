"""AutoGen's own model contexts (autogen-core 0.7.5) against ctxlab's ``autogen-buffered``,
``autogen-token-limited`` and ``autogen-head-and-tail``: the exact messages
``get_messages()`` returns, per chat and setting.

One oracle subprocess runs every case (``tests/oracles/autogen.py``). The duck-typed model
client counts with ctxlab's per-message counts sent in the payload, so both sides count the
same. Settings per chat, derived from the chat's AutoGen messages (results of one call batch
are one message): buffered — ctxlab's default 5, half the messages, 1, and a size whose buffer
starts on a result message; head-and-tail — ctxlab's default (2, 4), (1, 1), a third each, and
a head that ends on a tool-call message; token-limited — AutoGen's default None (the model's
limit), half, a quarter and a tenth of the context's count.
"""

from __future__ import annotations

from typing import Any

import pytest
from oracle_support import neutral, oracle_chats, run_oracle

from ctxlab.catalog import get_model
from ctxlab.model import Message
from ctxlab.strategies.base import Decision, Strategy
from ctxlab.strategies.frameworks._autogen import Kind, autogen_context
from ctxlab.strategies.frameworks.autogen_buffered import AutoGenBuffered
from ctxlab.strategies.frameworks.autogen_head_and_tail import AutoGenHeadAndTail
from ctxlab.strategies.frameworks.autogen_token_limited import ISSUE_7955, AutoGenTokenLimited
from ctxlab.tokens import TokenCounter, get_counter

COUNTER = get_counter("gpt-4o")


def _settings(chat: tuple[Message, ...]) -> list[tuple[str, dict[str, Any]]]:
    ctx = autogen_context(chat, COUNTER)
    kinds = [u.kind for u in ctx.units]
    n = len(kinds)
    out: list[tuple[str, dict[str, Any]]] = []
    sizes = {5, max(n // 2, 1), 1}
    on_result = next((b for b in range(2, n + 1) if kinds[n - b] is Kind.RESULTS), None)
    if on_result is not None:
        sizes.add(on_result)
    out += [("buffered", {"buffer_size": b}) for b in sorted(sizes)]
    pairs = {(2, 4), (1, 1), (max(n // 3, 1), max(n // 3, 1))}
    on_call = next((h for h in range(1, n) if kinds[h - 1] is Kind.CALLS), None)
    if on_call is not None and on_call + 1 < n:
        pairs.add((on_call, 1))
    out += [("head_and_tail", {"head_size": h, "tail_size": t}) for h, t in sorted(pairs)]
    total = ctx.context_tokens
    limits: list[int | None] = [None]
    limits += sorted({max(total // 2, 1), max(total // 4, 1), max(total // 10, 1)})
    out += [("token_limited", {"token_limit": lim}) for lim in limits]
    return out


CASES: list[tuple[str, str, dict[str, Any]]] = [
    (name, policy, params)
    for name, chat in oracle_chats().items()
    for policy, params in _settings(chat)
]


def _case_id(case: tuple[str, str, dict[str, Any]]) -> str:
    name, policy, params = case
    return f"{name}-{policy}-" + "-".join(f"{v}" for v in params.values())


@pytest.fixture(scope="module")
def oracle_results() -> list[Any]:
    chats = oracle_chats()
    window = get_model("gpt-4o").context_window
    payload = []
    for name, policy, params in CASES:
        chat = chats[name]
        counted = COUNTER.counted(chat)
        payload.append(
            {
                "policy": policy,
                "chat": neutral(chat),
                "counts": list(counted.counts),
                "fixed": counted.fixed,
                "params": params,
                "window": window,
            }
        )
    return run_oracle("autogen", payload)


def _strategy(policy: str, params: dict[str, Any]) -> Strategy:
    if policy == "buffered":
        return AutoGenBuffered(**params)
    if policy == "head_and_tail":
        return AutoGenHeadAndTail(**params)
    return AutoGenTokenLimited(**params)


def _as_autogen(chat: tuple[Message, ...], strategy: Strategy) -> list[dict[str, Any]]:
    """ctxlab's result, told the way the oracle tells AutoGen's: each sent AutoGen message by
    the ctxlab ids it was built from, each inserted message by its text and source."""
    result = strategy.apply(chat, COUNTER)
    ctx = autogen_context(chat, COUNTER)
    unit_of = {
        ctx.chat.ids[i]: u for u, unit in enumerate(ctx.units) for i in range(unit.start, unit.stop)
    }
    inserted = {m.id for m in result.inserted}
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for m in result.messages:
        if result.decisions.get(m.id) is Decision.PINNED:
            continue
        if m.id in inserted:
            out.append({"type": "UserMessage", "content": m.content, "source": m.name})
            continue
        u = unit_of[m.id]
        if u in seen:
            continue
        seen.add(u)
        unit = ctx.units[u]
        kind = "AssistantMessage" if unit.kind in (Kind.CALLS, Kind.ASSISTANT) else unit.kind.value
        out.append({"type": kind, "ids": list(ctx.chat.ids[unit.start : unit.stop])})
    return out


@pytest.mark.parametrize("index", range(len(CASES)), ids=[_case_id(c) for c in CASES])
def test_same_messages_as_autogen(index: int, oracle_results: list[Any]) -> None:
    name, policy, params = CASES[index]
    chat = oracle_chats()[name]
    strategy = _strategy(policy, params)
    assert _as_autogen(chat, strategy) == oracle_results[index]
    result = strategy.apply(chat, COUNTER)
    assert set(result.decisions) == {m.id for m in chat}
    sent_ids = {i for entry in oracle_results[index] for i in entry.get("ids", ())}
    for m in chat:
        decision = result.decisions[m.id]
        if decision is Decision.PINNED:
            assert m is chat[0] and m.role.is_instruction
        else:
            assert (decision is Decision.KEPT) == (m.id in sent_ids)


def test_cases_cover_every_chat_three_ways_per_policy() -> None:
    for name in oracle_chats():
        for policy in ("buffered", "head_and_tail", "token_limited"):
            assert sum(1 for n, p, _ in CASES if n == name and p == policy) >= 3


def test_the_oracle_reproduces_the_known_shapes(oracle_results: list[Any]) -> None:
    """The two behaviours the research found hold on these chats too, in AutoGen's own output:
    a "Skipped N messages." that undercounts what was left out, and a token-limited context
    that keeps a tool call and not its result (microsoft/autogen#7955), which ctxlab flags."""
    undercounts = orphans = 0
    for index, (name, policy, params) in enumerate(CASES):
        chat = oracle_chats()[name]
        returned = oracle_results[index]
        ctx = autogen_context(chat, COUNTER)
        if policy == "head_and_tail":
            notes = [e["content"] for e in returned if "content" in e]
            left_out = len(ctx.units) - (len(returned) - len(notes))
            if notes and notes[0] != f"Skipped {left_out} messages.":
                undercounts += 1
        if policy == "token_limited":
            sent = {i for e in returned for i in e.get("ids", ())}
            first = {ctx.chat.ids[u.start]: u for u in ctx.units}
            kept = [first[e["ids"][0]] for e in returned]
            orphan = any(
                u.kind is Kind.CALLS
                and u.stop < len(chat)
                and chat[u.stop].role.is_tool_result
                and chat[u.stop].id not in sent
                for u in kept
            ) or any(
                u.kind is Kind.RESULTS
                and u.start > 0
                and chat[u.start - 1].tool_calls
                and chat[u.start - 1].id not in sent
                for u in kept
            )
            flagged = any(
                ISSUE_7955 in w for w in _strategy(policy, params).apply(chat, COUNTER).warnings
            )
            assert orphan == flagged
            orphans += orphan
    assert undercounts > 0
    assert orphans > 0


def test_token_limited_default_uses_the_model_limit(counter: TokenCounter) -> None:
    chat = oracle_chats()["coding_agent_session"]
    report = AutoGenTokenLimited().trigger_report(chat, counter)
    assert report.threshold == get_model("gpt-4o").context_window
    assert not report.fires
    assert all(
        d is not Decision.DROPPED
        for d in AutoGenTokenLimited().apply(chat, counter).decisions.values()
    )
