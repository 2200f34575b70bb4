"""ctxlab's Semantic Kernel reducers against Semantic Kernel 1.45.0 itself.

One subprocess (``tests/oracles/semantic_kernel.py``) runs SK's own
``ChatHistoryTruncationReducer`` and ``ChatHistorySummarizationReducer`` on every oracle chat
with several settings each (derived from the chat's length, so they act), with a fake service
returning a fixed summary; each case compares the whole resulting history (ids and order, the
summary's text, role and position) and the exact messages the summarizer was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from oracle_support import neutral, oracle_chats, run_oracle

from ctxlab.errors import SummarizerError
from ctxlab.model import Message
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.semantic_kernel_summarization import (
    SemanticKernelSummarization,
    plan_summarization,
)
from ctxlab.strategies.frameworks.semantic_kernel_truncation import SemanticKernelTruncation
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter

SUMMARY = "FIXED SUMMARY: the user and the assistant worked through the task."


def chats() -> dict[str, tuple[Message, ...]]:
    out = dict(oracle_chats())
    # a history that starts with SK's own summary (no system message before it): SK's
    # insertion point is past it, so use_single_summary=False keeps it
    chain = out["compaction_chain"]
    out["compaction_chain-from-summary"] = chain[2:]
    return out


def settings(n: int) -> list[tuple[str, dict[str, Any]]]:
    """Truncation and summarization settings for a chat of ``n`` messages."""
    half, third, quarter = max(n // 2, 1), max(n // 3, 1), max(n // 4, 1)
    trunc = [
        {"target_count": 10, "threshold_count": 0},  # ctxlab's default (SK's samples)
        {"target_count": half, "threshold_count": 0},
        {"target_count": third, "threshold_count": quarter},
        {"target_count": 2, "threshold_count": 0},
        {"target_count": 1, "threshold_count": 0},
    ]
    base = {
        "use_single_summary": True,
        "include_function_content_in_summary": False,
        "fail_on_error": True,
    }
    summ = [
        {**base, "target_count": 10, "threshold_count": 0},
        {**base, "target_count": half, "threshold_count": 0},
        {
            **base,
            "target_count": third,
            "threshold_count": quarter,
            "include_function_content_in_summary": True,
        },
        {**base, "target_count": third, "threshold_count": 0, "use_single_summary": False},
        {
            **base,
            "target_count": 2,
            "threshold_count": 1,
            "include_function_content_in_summary": True,
        },
        # everything but the system message is summarized, function content included
        {
            **base,
            "target_count": 1,
            "threshold_count": 0,
            "include_function_content_in_summary": True,
        },
    ]
    return [("truncation", p) for p in trunc] + [("summarization", p) for p in summ]


def chat_payload(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out = neutral(messages)
    for item, message in zip(out, messages, strict=True):
        if message.is_summary:
            item["is_summary"] = True
    return out


CASES: list[tuple[str, str, dict[str, Any]]] = [
    (name, reducer, params)
    for name, chat in chats().items()
    for reducer, params in settings(len(chat))
]


@pytest.fixture(scope="module")
def oracle() -> list[dict[str, Any]]:
    all_chats = chats()
    payload = [
        {
            "chat": chat_payload(all_chats[name]),
            "reducer": reducer,
            "params": params,
            "summary": SUMMARY,
        }
        for name, reducer, params in CASES
    ]
    return run_oracle("semantic_kernel", payload)


def strategy_for(reducer: str, params: dict[str, Any]) -> Any:
    if reducer == "truncation":
        return SemanticKernelTruncation(**params)
    return SemanticKernelSummarization(**params)


def history_of(messages: Sequence[Message], inserted: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if any(m is i for i in inserted):
            out.append({"id": None, "role": m.role.value, "content": m.content, "summary": True})
        else:
            out.append({"id": m.id})
    return out


@pytest.mark.parametrize(
    ("index", "case"),
    list(enumerate(CASES)),
    ids=[
        f"{n}-{r}-{'-'.join(f'{k}={v}' for k, v in p.items() if not isinstance(v, bool))}"
        f"{'-fc' if p.get('include_function_content_in_summary') else ''}"
        f"{'-multi' if p.get('use_single_summary') is False else ''}"
        for n, r, p in CASES
    ],
)
def test_matches_semantic_kernel(
    oracle: list[dict[str, Any]], index: int, case: tuple[str, str, dict[str, Any]]
) -> None:
    name, reducer, params = case
    chat = chats()[name]
    expected = oracle[index]
    assert expected["error"] is None, expected
    strategy = strategy_for(reducer, params)
    summarizer = ScriptedSummarizer([SUMMARY])
    result = strategy.apply(chat, get_counter("gpt-4o"), summarizer)

    assert history_of(result.messages, result.inserted) == expected["history"]
    assert result.replace == expected["reduced"]
    assert set(result.decisions) == {m.id for m in chat}

    if reducer == "truncation":
        assert result.summary_request is None and expected["requests"] == []
        return
    if not expected["requests"]:
        assert result.summary_request is None
        assert summarizer.requests == []
        return
    (sent,) = expected["requests"]
    assert result.summary_request is not None
    assert summarizer.requests == [result.summary_request]
    bodies = [dict(m) for m in result.summary_request.messages]
    sk_bodies = [dict(item["body"]) for item in sent]
    for body in sk_bodies:  # SK sends no content beside tool calls; ctxlab sends ""
        if "tool_calls" in body:
            body.setdefault("content", "")
    assert bodies == sk_bodies
    plan = plan_summarization(
        chat,
        target_count=params["target_count"],
        threshold_count=params["threshold_count"],
        use_single_summary=params["use_single_summary"],
        include_function_content_in_summary=params["include_function_content_in_summary"],
    )
    assert not isinstance(plan, str)
    assert [chat[i].id for i in plan.summarized] + [None] == [i["ctxlab_id"] for i in sent]
    summarized = {mid for mid, d in result.decisions.items() if d is Decision.SUMMARIZED}
    assert summarized == {chat[i].id for i in plan.summarized}


def test_every_chat_is_reduced_by_some_setting(oracle: list[dict[str, Any]]) -> None:
    """The settings act: on every chat at least one truncation and one summarization case
    changed the history in SK itself."""
    acted: dict[str, set[str]] = {}
    for (name, reducer, _), result in zip(CASES, oracle, strict=True):
        if result["reduced"]:
            acted.setdefault(name, set()).add(reducer)
    assert all(acted.get(name) == {"truncation", "summarization"} for name in chats())


@pytest.fixture(scope="module")
def failing_oracle() -> list[dict[str, Any]]:
    chat = chat_payload(oracle_chats()["support_function_calls"])
    params = {
        "target_count": 10,
        "threshold_count": 0,
        "use_single_summary": True,
        "include_function_content_in_summary": False,
    }
    return run_oracle(
        "semantic_kernel",
        [
            {
                "chat": chat,
                "reducer": "summarization",
                "fail": True,
                "summary": SUMMARY,
                "params": {**params, "fail_on_error": flag},
            }
            for flag in (True, False)
        ],
    )


def test_failing_service_matches_semantic_kernel(failing_oracle: list[dict[str, Any]]) -> None:
    chat = oracle_chats()["support_function_calls"]
    raising, quiet = failing_oracle
    assert raising["error"] == "ChatHistoryReducerException"
    assert raising["history"] == [{"id": m.id} for m in chat]
    with pytest.raises(SummarizerError, match="ChatHistoryReducerException"):
        SemanticKernelSummarization(target_count=10).apply(
            chat, get_counter("gpt-4o"), ScriptedSummarizer([RuntimeError("down")])
        )
    assert quiet["error"] is None and quiet["reduced"] is False
    result = SemanticKernelSummarization(target_count=10, fail_on_error=False).apply(
        chat, get_counter("gpt-4o"), ScriptedSummarizer([RuntimeError("down")])
    )
    assert history_of(result.messages, result.inserted) == quiet["history"]
    assert any("fail_on_error=False" in w for w in result.warnings)
