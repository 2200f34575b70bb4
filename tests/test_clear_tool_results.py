"""ClearToolResults: Anthropic-style tool result clearing."""

from __future__ import annotations

import copy

import pytest
from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.clear_tool_results import DEFAULT_PLACEHOLDER, ClearToolResults
from ctxlab.strategies.registry import build_strategy
from ctxlab.tokens import TokenCounter, get_counter

CHAT = (
    system("You are an agent.", "s"),
    user("find the bug", "u1"),
    assistant("", "a1", call("c1", "search", '{"q": "bug"}'), call("c2", "read_file")),
    tool("search hit " * 40, "t1", "c1"),
    tool("file line " * 40, "t2", "c2"),
    assistant("", "a2", call("c3", "run_tests", '{"all": true}')),
    tool("PASSED " * 40, "t3", "c3"),
    assistant("fixed", "a3"),
    user("thanks", "u2"),
)


def ids(messages: tuple[Message, ...], decision: Decision, result_decisions: dict) -> list[str]:
    return [m.id for m in messages if result_decisions[m.id] is decision]


def test_under_the_trigger_nothing_is_cleared(counter: TokenCounter) -> None:
    total = counter.count_messages(CHAT)
    result = ClearToolResults(trigger_tokens=total, keep_tool_results=0).apply(CHAT, counter)
    assert result.messages == CHAT
    assert set(result.decisions.values()) == {Decision.KEPT}
    assert result.tokens_after == result.tokens_before == total


def test_over_the_trigger_all_but_the_last_n_results_are_cleared(counter: TokenCounter) -> None:
    result = ClearToolResults(trigger_tokens=10, keep_tool_results=1).apply(CHAT, counter)
    assert ids(CHAT, Decision.CLEARED, dict(result.decisions)) == ["t1", "t2"]
    by_id = {m.id: m for m in result.messages}
    assert by_id["t1"].content == DEFAULT_PLACEHOLDER
    assert by_id["t1"].tool_call_id == "c1" and by_id["t1"].role is Role.TOOL
    assert by_id["t3"] == CHAT[6]
    assert by_id["a1"] == CHAT[2]  # arguments kept by default
    assert [m.id for m in result.inserted] == ["t1", "t2"]
    assert [m.id for m in result.messages] == [m.id for m in CHAT]
    assert result.tokens_after == counter.count_messages(result.messages) < result.tokens_before
    assert not result.replace


def test_excluded_tools_are_never_cleared_but_still_count_towards_keep(
    counter: TokenCounter,
) -> None:
    strategy = ClearToolResults(trigger_tokens=10, keep_tool_results=1, exclude_tools=" search ,x")
    result = strategy.apply(CHAT, counter)
    assert ids(CHAT, Decision.CLEARED, dict(result.decisions)) == ["t2"]


def test_clear_tool_inputs_empties_only_the_arguments_of_cleared_calls(
    counter: TokenCounter,
) -> None:
    strategy = ClearToolResults(
        trigger_tokens=10, keep_tool_results=2, clear_tool_inputs=True, placeholder="[gone]"
    )
    result = strategy.apply(CHAT, counter)
    by_id = {m.id: m for m in result.messages}
    assert [c.arguments for c in by_id["a1"].tool_calls] == ["{}", CHAT[2].tool_calls[1].arguments]
    assert result.decisions["a1"] is Decision.CLEARED
    assert by_id["t1"].content == "[gone]"
    assert result.decisions["a2"] is Decision.KEPT
    assert result.tokens_after == counter.count_messages(result.messages)


def test_clear_at_least_skips_a_clearing_that_saves_too_little(counter: TokenCounter) -> None:
    full = ClearToolResults(trigger_tokens=10, keep_tool_results=1).apply(CHAT, counter)
    saved = full.tokens_saved
    enough = ClearToolResults(trigger_tokens=10, keep_tool_results=1, clear_at_least=saved)
    assert enough.apply(CHAT, counter).tokens_saved == saved
    too_much = ClearToolResults(trigger_tokens=10, keep_tool_results=1, clear_at_least=saved + 1)
    result = too_much.apply(CHAT, counter)
    assert result.messages == CHAT and result.tokens_saved == 0
    assert result.warnings and "clear at least" in result.warnings[0]


def test_the_tool_name_comes_from_the_message_name_when_no_call_matches(
    counter: TokenCounter,
) -> None:
    legacy = (
        user("q", "u1"),
        Message(Role.FUNCTION, "result " * 30, "f1", name="lookup"),
        assistant("", "a1", call(None, "lookup")),
        Message(Role.FUNCTION, "result " * 30, "f2", name="lookup"),
        user("q2", "u2"),
    )
    strategy = ClearToolResults(trigger_tokens=0, keep_tool_results=0, exclude_tools="lookup")
    assert strategy.apply(legacy, counter).tokens_saved == 0
    cleared = ClearToolResults(trigger_tokens=0, keep_tool_results=0).apply(legacy, counter)
    assert cleared.decisions["f1"] is Decision.CLEARED
    assert cleared.decisions["f2"] is Decision.CLEARED


def test_parameters_are_checked_and_coerced() -> None:
    built = build_strategy(
        "clear-tool-results", {"trigger_tokens": "500", "clear_tool_inputs": "1"}
    )
    assert built == ClearToolResults(trigger_tokens=500, clear_tool_inputs=True)
    with pytest.raises(ParameterError, match="keep_tool_results"):
        ClearToolResults(keep_tool_results=-1)


def test_suggested_triggers_at_about_half_the_chat(counter: TokenCounter) -> None:
    counted = counter.counted(CHAT)
    suggested = ClearToolResults.suggested(counted)
    results = sum(1 for m in CHAT if m.is_tool_result)
    # the newest three stay, but at least one is left to clear on the first view
    assert suggested.keep_tool_results == min(3, results - 1)
    assert 0 < suggested.trigger_tokens <= counted.total // 2
    assert suggested.apply(CHAT, counter).decision_counts()[Decision.CLEARED] >= 1


settings_params = st.builds(
    ClearToolResults,
    trigger_tokens=st.integers(0, 600),
    keep_tool_results=st.integers(0, 5),
    clear_at_least=st.sampled_from([0, 0, 20, 200]),
    exclude_tools=st.sampled_from(["", "search", "read_file,get_weather"]),
    clear_tool_inputs=st.booleans(),
    placeholder=st.sampled_from([DEFAULT_PLACEHOLDER, "[x]", "a much longer placeholder " * 5]),
)


@given(chats(max_turns=6), settings_params)
def test_properties_hold_on_generated_chats(
    chat: tuple[Message, ...], strategy: ClearToolResults
) -> None:
    counter = get_counter("gpt-4o")
    snapshot = copy.deepcopy(chat)
    result = strategy.apply(chat, counter)
    assert chat == snapshot
    assert result.tokens_after == counter.count_messages(result.messages)
    assert [m.id for m in result.messages] == [m.id for m in chat]
    assert set(result.decisions) == {m.id for m in chat}
    tool_results = [m for m in chat if m.role.is_tool_result]
    kept_recent = {m.id for m in tool_results[len(tool_results) - strategy.keep_tool_results :]}
    if strategy.keep_tool_results == 0:
        kept_recent = set()
    for original, sent in zip(chat, result.messages, strict=True):
        decision = result.decisions[original.id]
        if decision is Decision.CLEARED:
            assert sent in result.inserted
            if original.role.is_tool_result:
                assert sent.content == strategy.placeholder
                assert original.id not in kept_recent
        else:
            assert decision is Decision.KEPT and sent == original
    if counter.count_messages(chat) <= strategy.trigger_tokens:
        assert result.messages == chat
