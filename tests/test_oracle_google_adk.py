"""google-adk-compaction against Google ADK's own code (google-adk 2.13.0).

One oracle subprocess (tests/oracles/google_adk.py) runs every case: each oracle chat with
ADK's default (no trigger: nothing compacted), two sliding windows ((2, 1) and (3, 0)), and a
token threshold derived from the chat (half of ADK's own estimate, keeping 3 events). Per case
the test compares the contents the model would see (which events survive, the summaries' text,
role and position), the messages hidden by compaction, every summarizer prompt, in order, and
ADK's chars/4 estimate of the whole chat.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from oracle_support import neutral, oracle_chats, run_oracle

from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.google_adk_compaction import (
    GoogleAdkCompaction,
    adk_contents_of,
)
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter

SUMMARY = "Conversation Language: English. The user asked for help; tools: lookup."

SLIDING = ((2, 1), (3, 0), (1, 0))


def _settings(chat_name: str) -> list[dict[str, int | None]]:
    chat = oracle_chats()[chat_name]
    estimate = GoogleAdkCompaction().estimate(chat, get_counter()) or 0
    out: list[dict[str, int | None]] = [
        {
            "compaction_interval": None,
            "overlap_size": None,
            "token_threshold": None,
            "event_retention_size": None,
        }
    ]
    for interval, overlap in SLIDING:
        out.append(
            {
                "compaction_interval": interval,
                "overlap_size": overlap,
                "token_threshold": None,
                "event_retention_size": None,
            }
        )
    out.append(
        {
            "compaction_interval": None,
            "overlap_size": None,
            "token_threshold": max(estimate // 2, 1),
            "event_retention_size": 3,
        }
    )
    out.append(
        {
            "compaction_interval": 2,
            "overlap_size": 1,
            "token_threshold": max(estimate // 3, 1),
            "event_retention_size": 0,
        }
    )
    return out


CASES: list[tuple[str, dict[str, int | None]]] = [
    (name, params) for name in oracle_chats() for params in _settings(name)
]


def _case_id(case: tuple[str, dict[str, int | None]]) -> str:
    name, p = case
    sliding = f"i{p['compaction_interval']}o{p['overlap_size']}"
    return f"{name}-{sliding}-t{p['token_threshold']}r{p['event_retention_size']}"


@pytest.fixture(scope="module")
def oracle_results() -> list[dict[str, Any]]:
    payload = [
        {"chat": neutral(oracle_chats()[name]), "params": params, "summary": SUMMARY}
        for name, params in CASES
    ]
    return run_oracle("google_adk", payload)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[_case_id(c) for c in CASES])
def test_matches_adk(index: int, oracle_results: list[dict[str, Any]]) -> None:
    name, params = CASES[index]
    chat = oracle_chats()[name]
    expected = oracle_results[index]
    counter = get_counter()
    strategy = GoogleAdkCompaction(**params)  # type: ignore[arg-type]
    summarizer = ScriptedSummarizer([SUMMARY] * 400)
    result = strategy.apply(chat, counter, summarizer)

    contents = [
        {"role": c.role, "parts": [list(p) for p in c.parts]}
        for c in adk_contents_of(result.messages)
    ]
    assert contents == expected["contents"]
    prompts = [r.messages[0]["content"] for r in summarizer.requests]
    assert len(prompts) == len(expected["requests"])
    for ours, theirs in zip(prompts, expected["requests"], strict=True):
        assert ours == theirs
    summarized = [mid for mid, d in result.decisions.items() if d is Decision.SUMMARIZED]
    assert summarized == expected["summarized"]
    assert len(result.inserted) == sum(1 for c in contents if c["parts"] == [["text", SUMMARY]])
    assert strategy.estimate(chat, counter) == (expected["estimate"] or 0)
    if params["compaction_interval"] is None and params["token_threshold"] is None:
        assert expected["compactions"] == 0 and not result.inserted
        assert not summarized


def test_settings_act_on_every_chat(oracle_results: list[dict[str, Any]]) -> None:
    """Each chat is compacted by at least one non-default setting (the oracle is not vacuous)."""
    acted = {name for (name, _), r in zip(CASES, oracle_results, strict=True) if r["compactions"]}
    assert acted == set(oracle_chats())


def test_payload_is_json() -> None:
    json.dumps([neutral(chat) for chat in oracle_chats().values()])
