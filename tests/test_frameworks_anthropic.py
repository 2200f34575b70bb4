"""anthropic-clear-tool-uses, anthropic-clear-thinking, anthropic-compact: Anthropic's
documented context editing and server compaction.

Closed services: no oracle runs them. Expected values are computed plainly in each test from
the documented rule (policies.md sections 2a-2c).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from chatgen import assistant, call, system, tool, user
from oracle_support import oracle_chats

from ctxlab.catalog import CATALOG
from ctxlab.errors import ParameterError
from ctxlab.formats import load_chat_file
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.anthropic_clear_thinking import AnthropicClearThinking
from ctxlab.strategies.frameworks.anthropic_clear_tool_uses import (
    PLACEHOLDER,
    AnthropicClearToolUses,
    ClearToolUsesEdit,
)
from ctxlab.strategies.frameworks.anthropic_compact import (
    STAND_IN_PROMPT,
    AnthropicCompact,
    CompactEdit,
)
from ctxlab.strategies.registry import build_strategy
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter

FIXTURES = Path(__file__).parent / "fixtures" / "formats" / "claude_code"
COUNTER = get_counter("claude-sonnet-4-5")


def plain_uses(chat: tuple[Message, ...]) -> list[tuple[int, str, int | None]]:
    """(caller index, tool name, result index) of every tool call, in order: a result answers
    the call of the same id in the nearest earlier assistant message with calls."""
    uses: list[tuple[int, str, int | None]] = []
    caller_calls: dict[str | None, int] = {}
    for i, m in enumerate(chat):
        if m.role is Role.ASSISTANT and m.tool_calls:
            caller_calls = {}
            for c in m.tool_calls:
                caller_calls.setdefault(c.id, len(uses))
                uses.append((i, c.name, None))
        elif m.is_tool_result and m.tool_call_id in caller_calls:
            k = caller_calls.pop(m.tool_call_id)
            uses[k] = (uses[k][0], uses[k][1], i)
    return uses


def edit(**options: object) -> AnthropicClearToolUses:
    return AnthropicClearToolUses(ClearToolUsesEdit(**options))  # type: ignore[arg-type]


# --- clear_tool_uses ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(oracle_chats()))
@pytest.mark.parametrize(
    "options",
    [
        {},  # Anthropic's defaults
        {"trigger": "input_tokens=1000", "keep": 1},
        {"trigger": "tool_uses=2", "keep": 3, "exclude_tools": "Read,search_flights"},
    ],
    ids=["defaults", "trigger1000-keep1", "tool_uses2-exclude"],
)
def test_clear_tool_uses_on_every_oracle_chat(name: str, options: dict[str, object]) -> None:
    chat = oracle_chats()[name]
    before = copy.deepcopy(chat)
    strategy = edit(**options)
    result = strategy.apply(chat, COUNTER)
    assert chat == before
    uses = plain_uses(chat)
    trigger = str(options.get("trigger", "input_tokens=100000"))
    kind, value = trigger.split("=")
    measure = COUNTER.count_messages(chat) if kind == "input_tokens" else len(uses)
    keep = int(options.get("keep", 3))  # type: ignore[call-overload]
    excluded = set(str(options.get("exclude_tools", "")).split(","))
    expected: set[str] = set()
    if measure > int(value):
        for _, tool_name, result_index in uses[: max(len(uses) - keep, 0)]:
            if tool_name not in excluded and result_index is not None:
                expected.add(chat[result_index].id)
    cleared = {mid for mid, d in result.decisions.items() if d is Decision.CLEARED}
    assert cleared == expected
    assert set(result.decisions) == {m.id for m in chat}
    assert [m.id for m in result.messages] == [m.id for m in chat]
    assert all(m.content == PLACEHOLDER for m in result.inserted)
    assert not result.replace
    assert result.tokens_after == COUNTER.count_messages(result.messages)
    assert strategy.trigger_report(chat, COUNTER).fires == (measure > int(value))


def test_default_trigger_is_above_100000_input_tokens() -> None:
    chat = oracle_chats()["coding_agent_session"]
    report = edit().trigger_report(chat, COUNTER)
    assert report.threshold == 100_000 and not report.fires
    assert "Anthropic's default" in report.text and "Anthropic tokenizes" in report.text


def saving_of(chat: tuple[Message, ...], keep: int) -> int:
    """Tokens clearing every result but the last ``keep`` tool uses saves (ctxlab's count)."""
    uses = plain_uses(chat)
    placeholder = COUNTER.count_text(PLACEHOLDER)
    return sum(
        COUNTER.count_text(chat[r].content) - placeholder
        for _, _, r in uses[: max(len(uses) - keep, 0)]
        if r is not None
    )


@pytest.mark.parametrize(
    "name", ["coding_agent_session", "claude-code-websearch", "tau-bench-fail"]
)
def test_clear_at_least_skips_unless_that_much_can_be_cleared(name: str) -> None:
    chat = oracle_chats()[name]
    saving = saving_of(chat, 3)
    assert saving > 0
    skipped = edit(trigger="input_tokens=1000", clear_at_least=saving + 1).apply(chat, COUNTER)
    assert skipped.messages == chat and not skipped.inserted
    assert "Not applied" in skipped.warnings[0]
    applied = edit(trigger="input_tokens=1000", clear_at_least=saving).apply(chat, COUNTER)
    # Anthropic's rule clears everything it may, not just clear_at_least (LangChain stops early)
    assert applied.tokens_before - applied.tokens_after >= saving - 5 * len(applied.inserted)
    assert len(applied.inserted) == sum(
        1 for _, _, r in plain_uses(chat)[: max(len(plain_uses(chat)) - 3, 0)] if r is not None
    )


CHAT = (
    system("You are an agent.", "s"),
    user("find the bug", "u1"),
    assistant("", "a1", call("c1", "search", '{"q": "bug"}'), call("c2", "read_file")),
    tool("search hit " * 40, "t1", "c1"),
    tool("file line " * 40, "t2", "c2"),
    assistant("", "a2", call("c3", "run_tests", '{"all": true}')),
    tool("PASSED " * 40, "t3", "c3"),
    assistant("", "a3", call("c4", "search", '{"q": "more"}')),
    tool("more hits " * 40, "t4", "c4"),
    assistant("fixed", "a4"),
)


def test_keep_and_exclude_tools() -> None:
    result = edit(trigger="tool_uses=1", keep=1, exclude_tools="read_file").apply(CHAT, COUNTER)
    cleared = [mid for mid, d in result.decisions.items() if d is Decision.CLEARED]
    assert cleared == ["t1", "t3"]  # t2 excluded, t4 is the last use
    kept_all = edit(trigger="tool_uses=1", keep=4).apply(CHAT, COUNTER)
    assert not kept_all.inserted


def test_clear_tool_inputs_bool_and_list() -> None:
    every = edit(trigger="tool_uses=1", keep=1, clear_tool_inputs="true").apply(CHAT, COUNTER)
    a1 = next(m for m in every.messages if m.id == "a1")
    assert [c.arguments for c in a1.tool_calls] == ["{}", "{}"]
    assert every.decisions["a1"] is Decision.CLEARED and every.decisions["a4"] is Decision.KEPT
    listed = edit(trigger="tool_uses=1", keep=1, clear_tool_inputs="run_tests").apply(CHAT, COUNTER)
    a1 = next(m for m in listed.messages if m.id == "a1")
    a2 = next(m for m in listed.messages if m.id == "a2")
    assert [c.arguments for c in a1.tool_calls] == ['{"q": "bug"}', '{"q": "x"}']
    assert [c.arguments for c in a2.tool_calls] == ["{}"]
    code = edit(clear_tool_inputs="run_tests", clear_at_least=5000).config_code()
    assert '"clear_tool_inputs": [\n' in code and '"clear_at_least"' in code
    assert "anthropic-beta: context-management-2025-06-27" in code


@pytest.mark.parametrize(
    "bad",
    [
        {"trigger": "tokens=5"},
        {"trigger": "input_tokens=0"},
        {"trigger": "input_tokens"},
        {"clear_tool_inputs": " , "},
        {"keep": -1},
    ],
)
def test_bad_options_are_parameter_errors(bad: dict[str, object]) -> None:
    with pytest.raises(ParameterError):
        edit(**bad)


def test_clear_tool_uses_through_the_registry() -> None:
    strategy = build_strategy("anthropic-clear-tool-uses", {"trigger": "tool_uses=1", "keep": "1"})
    assert isinstance(strategy, AnthropicClearToolUses)
    assert strategy.edit.keep == 1
    assert AnthropicClearToolUses.framework_policy.persists == "server"
    assert any("placeholder" in u for u in AnthropicClearToolUses.framework_policy.unpublished)


# --- clear_thinking -----------------------------------------------------------------------

# The documented defaults, written out for every Claude model of the catalog: Opus 4.5+ and
# Sonnet 4.6+ (and the later Fable family) keep all thinking; earlier Opus/Sonnet and every
# Haiku keep the last turn.
DEFAULT_KEEP = {
    "claude-fable-5-1": None,
    "claude-fable-5": None,
    "claude-opus-5-5": None,
    "claude-opus-5": None,
    "claude-sonnet-5-5": None,
    "claude-sonnet-5": None,
    "claude-haiku-5-5": 1,
    "claude-opus-4-8": None,
    "claude-opus-4-7": None,
    "claude-opus-4-6": None,
    "claude-sonnet-4-6": None,
    "claude-opus-4-5": None,
    "claude-opus-4-1": 1,
    "claude-opus-4": 1,
    "claude-sonnet-4-5": 1,
    "claude-sonnet-4": 1,
    "claude-3-7-sonnet": 1,
    "claude-haiku-4-5": 1,
    "claude-3-5-haiku": 1,
}


def test_every_catalog_claude_model_has_its_documented_default() -> None:
    names = {m.name for m in CATALOG.models if m.provider == "anthropic"}
    assert names == set(DEFAULT_KEEP)
    for model, kept in DEFAULT_KEEP.items():
        assert AnthropicClearThinking(model=model).kept_turns() == kept, model


def thinking_session() -> tuple[Message, ...]:
    return load_chat_file(FIXTURES / "thinking_session.jsonl").messages


def with_thinking(messages: tuple[Message, ...]) -> list[int]:
    return [
        i
        for i, m in enumerate(messages)
        if m.role is Role.ASSISTANT and any(k == "thinking" for k, _ in m.extra)
    ]


@pytest.mark.parametrize(
    ("model", "keep", "kept_turns"),
    [
        ("claude-sonnet-4-5", "default", 1),
        ("claude-opus-4-5", "default", None),
        ("claude-opus-4-5", "thinking_turns=2", 2),
        ("claude-haiku-4-5", "all", None),
        ("claude-sonnet-4", "3", 3),
        ("claude-sonnet-4", "thinking_turns=9", 9),
    ],
)
def test_clear_thinking_keeps_the_last_turns(model: str, keep: str, kept_turns: int | None) -> None:
    chat = thinking_session()
    before = copy.deepcopy(chat)
    # in this session every thinking message is its own turn (a user message between each)
    thinking = with_thinking(chat)
    assert len(thinking) == 4
    cleared_positions = [] if kept_turns is None else thinking[: max(len(thinking) - kept_turns, 0)]
    strategy = AnthropicClearThinking(model=model, keep=keep)
    result = strategy.apply(chat, COUNTER)
    assert chat == before
    cleared = [mid for mid, d in result.decisions.items() if d is Decision.CLEARED]
    assert cleared == [chat[i].id for i in cleared_positions]
    assert with_thinking(result.messages) == [i for i in thinking if i not in cleared_positions]
    # ctxlab never counts earlier thinking: the counts do not move, and the warning says so
    assert result.tokens_after == result.tokens_before
    if cleared:
        assert "ctxlab counts no thinking of earlier turns" in result.warnings[0]
    assert strategy.trigger_report(chat, COUNTER).fires == bool(cleared)


def test_a_tool_use_loop_is_one_thinking_turn() -> None:
    thought = (("thinking", [{"type": "thinking", "thinking": "hmm " * 40}]),)
    chat = (
        user("go", "u1"),
        assistant("", "a1", call("c1", "Read")).replace(extra=thought),
        tool("file", "t1", "c1"),
        assistant("done", "a2").replace(extra=thought),
        user("again", "u2"),
        assistant("ok", "a3").replace(extra=thought),
    )
    result = AnthropicClearThinking(keep="thinking_turns=1").apply(chat, COUNTER)
    assert [m for m, d in result.decisions.items() if d is Decision.CLEARED] == ["a1", "a2"]
    assert "about 80 tokens of thinking" in result.warnings[0]


def test_clear_thinking_config_and_errors() -> None:
    code = AnthropicClearThinking(keep="thinking_turns=2").config_code()
    assert '"type": "thinking_turns"' in code and '"value": 2' in code
    assert '"keep": "all"' in AnthropicClearThinking(keep="all").config_code()
    assert "model's default" in AnthropicClearThinking().config_code()
    with pytest.raises(ParameterError, match="keep"):
        AnthropicClearThinking(keep="thinking_turns=0")
    report = AnthropicClearThinking(model="claude-opus-4-5").trigger_report(
        thinking_session(), COUNTER
    )
    assert not report.fires and report.text.startswith("Never clears")


@pytest.mark.parametrize("name", list(oracle_chats()))
def test_clear_thinking_leaves_chats_without_thinking_alone(name: str) -> None:
    chat = oracle_chats()[name]
    result = AnthropicClearThinking().apply(chat, COUNTER)
    if not with_thinking(chat):
        assert result.messages == chat and not result.inserted


# --- compact ------------------------------------------------------------------------------


def test_compact_trigger_minimum_and_default() -> None:
    assert AnthropicCompact().edit.trigger == 150_000
    with pytest.raises(ParameterError, match="trigger"):
        CompactEdit(trigger=49_999)
    CompactEdit(trigger=50_000)


@pytest.mark.parametrize("name", list(oracle_chats()))
@pytest.mark.parametrize("trigger", [150_000, 50_000], ids=["default", "minimum"])
def test_compact_on_every_oracle_chat(name: str, trigger: int) -> None:
    chat = oracle_chats()[name]
    strategy = AnthropicCompact(CompactEdit(trigger=trigger, instructions="Keep the file list."))
    summarizer = ScriptedSummarizer(["SUMMARY"])
    result = strategy.apply(chat, COUNTER, summarizer)
    total = COUNTER.count_messages(chat)
    assert strategy.trigger_report(chat, COUNTER).fires == (total >= trigger)
    lead = 0
    while lead < len(chat) and chat[lead].role.is_instruction:
        lead += 1
    if total < trigger:
        assert result.messages == chat and not summarizer.requests
        return
    block = result.inserted[0]
    assert result.messages == (*chat[:lead], block)
    assert block.role is Role.ASSISTANT and block.content == "SUMMARY" and block.is_summary
    assert result.replace
    request = summarizer.requests[0]
    assert request.messages[-1] == {"role": "user", "content": "Keep the file list."}
    assert {result.decisions[m.id] for m in chat[lead:]} == {Decision.SUMMARIZED}


def test_compact_later_requests_ignore_what_precedes_the_block() -> None:
    chat = oracle_chats()["codex-rollout"]
    strategy = AnthropicCompact(CompactEdit(trigger=50_000))
    first = strategy.apply(chat, COUNTER, ScriptedSummarizer(["S1"]))
    history = (*chat, first.inserted[0], user("next question", "later"))
    second = strategy.apply(history, COUNTER, ScriptedSummarizer([]))
    block_at = len(chat)
    lead = 1  # the rollout's developer/system message
    assert {second.decisions[m.id] for m in history[lead:block_at]} == {Decision.DROPPED}
    assert second.messages == (*history[:lead], *history[block_at:])
    assert "ignores the" in second.warnings[0]


def test_compact_default_prompt_is_a_named_stand_in_and_failures_change_nothing() -> None:
    chat = oracle_chats()["codex-rollout"]
    strategy = AnthropicCompact(CompactEdit(trigger=50_000, pause_after_compaction=True))
    summarizer = ScriptedSummarizer(["S"])
    result = strategy.apply(chat, COUNTER, summarizer)
    assert summarizer.requests[0].messages[-1]["content"] == STAND_IN_PROMPT
    assert "does not publish" in STAND_IN_PROMPT
    assert any("pause_after_compaction" in w for w in result.warnings)
    failed = strategy.apply(chat, COUNTER, ScriptedSummarizer([RuntimeError("boom")]))
    assert failed.messages == chat and not failed.replace
    code = strategy.config_code()
    assert '"type": "compact_20260112"' in code and '"pause_after_compaction": true' in code
    assert "anthropic-beta: compact-2026-01-12" in code
