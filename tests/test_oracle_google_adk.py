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

from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.google_adk_compaction import (
    GoogleAdkCompaction,
    adk_contents_of,
)
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter

SUMMARY = "Conversation Language: English. The user asked for help; tools: lookup."

SLIDING = ((2, 1), (3, 0), (1, 0))

LONG_SUMMARY = "Conversation Language: English. " + "The agent read files and ran tests. " * 60
"""A summary of about 2,000 characters: ADK refuses a range no larger than the previous summary
(``_is_range_worth_compacting``), so with it some windows are skipped."""


def _odd_chat() -> tuple[Message, ...]:
    """Shapes the real chats lack: a tool call never answered (then a dead call in an older
    invocation), an id-less call answered by name, invalid and non-object JSON arguments, an
    empty assistant message, a later system message, a tool result without its call, quotes
    and non-ASCII text."""
    u, a, t = Role.USER, Role.ASSISTANT, Role.TOOL
    big = "x" * 2500
    return (
        Message(Role.SYSTEM, "You are terse.", "s0"),
        Message(u, 'Grüße! Look up "order" 1.', "m1"),
        Message(a, "", "m2", tool_calls=(ToolCall("c1", "lookup", '{"id": 1, "q": "ü"}'),)),
        Message(t, big, "m3", tool_call_id="c1"),
        Message(a, "Found it.", "m4"),
        Message(u, "And order 2?", "m5"),
        Message(a, "Checking", "m6", tool_calls=(ToolCall("c2", "lookup", "not json"),)),
        Message(u, "Never mind, list files.", "m7"),
        Message(a, "", "m8", tool_calls=(ToolCall(None, "ls", ""),)),
        Message(Role.FUNCTION, "a.py b.py", "m9", name="ls"),
        Message(a, "", "m10"),
        Message(Role.SYSTEM, "Reminder: be terse.", "m11"),
        Message(u, "Run both.", "m12"),
        Message(
            a,
            "",
            "m13",
            tool_calls=(ToolCall("c3", "run", "[1, 2]"), ToolCall("c4", "run", '{"f": "b.py"}')),
        ),
        Message(t, "ok a", "m14", tool_call_id="c3"),
        Message(t, "ok b", "m15", tool_call_id="c4"),
        Message(t, "stray", "m16", tool_call_id="c9"),
        Message(a, "Both ran.", "m17"),
        Message(u, "Thanks.", "m18"),
        Message(a, "Anything else?", "m19", tool_calls=(ToolCall("c5", "ask", "{}"),)),
    )


def _chats() -> dict[str, tuple[Message, ...]]:
    return {**oracle_chats(), "odd-shapes": _odd_chat()}


def _settings(chat_name: str) -> list[dict[str, int | None]]:
    chat = _chats()[chat_name]
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


CASES: list[tuple[str, dict[str, int | None], str]] = (
    [(name, params, SUMMARY) for name in _chats() for params in _settings(name)]
    + [(name, {**_settings(name)[3]}, LONG_SUMMARY) for name in _chats()]
    + [(name, {**_settings(name)[4]}, LONG_SUMMARY) for name in _chats()]
)


def _case_id(case: tuple[str, dict[str, int | None], str]) -> str:
    name, p, summary = case
    name += "-long" if summary == LONG_SUMMARY else ""
    sliding = f"i{p['compaction_interval']}o{p['overlap_size']}"
    return f"{name}-{sliding}-t{p['token_threshold']}r{p['event_retention_size']}"


@pytest.fixture(scope="module")
def oracle_results() -> list[dict[str, Any]]:
    payload = [
        {"chat": neutral(_chats()[name]), "params": params, "summary": summary}
        for name, params, summary in CASES
    ]
    return run_oracle("google_adk", payload)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[_case_id(c) for c in CASES])
def test_matches_adk(index: int, oracle_results: list[dict[str, Any]]) -> None:
    name, params, summary_text = CASES[index]
    chat = _chats()[name]
    expected = oracle_results[index]
    counter = get_counter()
    strategy = GoogleAdkCompaction(**params)  # type: ignore[arg-type]
    summarizer = ScriptedSummarizer([summary_text] * 400)
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
    assert len(result.inserted) == sum(
        1 for c in contents if c["parts"] == [["text", summary_text]]
    )
    assert strategy.estimate(chat, counter) == (expected["estimate"] or 0)
    if params["compaction_interval"] is None and params["token_threshold"] is None:
        assert expected["compactions"] == 0 and not result.inserted
        assert not summarized


def test_settings_act_on_every_chat(oracle_results: list[dict[str, Any]]) -> None:
    """Each chat is compacted by at least one non-default setting (the oracle is not vacuous)."""
    acted = {
        name for (name, _, _), r in zip(CASES, oracle_results, strict=True) if r["compactions"]
    }
    assert acted == set(_chats())


def test_long_summaries_are_refused_somewhere(oracle_results: list[dict[str, Any]]) -> None:
    """With a long summary ADK skips some windows (fewer summaries than with the short one on
    the same setting): the range-size check is exercised, not only the triggers."""
    by_case = {
        (name, tuple(p.values()), summary): r["compactions"]
        for (name, p, summary), r in zip(CASES, oracle_results, strict=True)
    }
    fewer = [
        name
        for (name, p, summary), n in by_case.items()
        if summary == LONG_SUMMARY and n < by_case[(name, p, SUMMARY)]
    ]
    assert fewer


def test_payload_is_json() -> None:
    json.dumps([neutral(chat) for chat in oracle_chats().values()])
