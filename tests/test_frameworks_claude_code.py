"""claude-code-auto-compact: Claude Code 2.1.197's threshold, count, microcompact and summary.

Claude Code is a closed binary: no oracle runs it. Every expected value below is computed
plainly in the test from the rule the research read (policies.md section 2d).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import pytest
from chatgen import assistant, call, system, tool, user
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle_support import oracle_chats

from ctxlab.catalog import CATALOG
from ctxlab.errors import ParameterError
from ctxlab.formats import CallUsage, load_chat_file
from ctxlab.model import Message
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.claude_code_auto_compact import (
    COMPACT_PROMPT,
    CONTINUATION_SENTENCE,
    MICROCOMPACT_PLACEHOLDER,
    SUMMARY_PREAMBLE,
    ClaudeCodeAutoCompact,
    claude_code_count,
    format_compact_summary,
)
from ctxlab.strategies.registry import build_strategy
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter

FIXTURES = Path(__file__).parent / "fixtures" / "formats" / "claude_code"
COUNTER = get_counter("claude-sonnet-4-5")
CLAUDE = [m for m in CATALOG.models if m.provider == "anthropic"]


def plain_rough(message: Message) -> int:
    """Claude Code's rough estimate written out: Math.round(chars / 4) of the text, and of
    each call's name, Math.round(chars / 2) of each call's JSON input."""
    total = math.floor(len(message.content) / 4 + 0.5)
    for c in message.tool_calls:
        total += math.floor(len(c.name) / 4 + 0.5) + math.floor(len(c.arguments) / 2 + 0.5)
    return total


# --- threshold ----------------------------------------------------------------------------


@pytest.mark.parametrize("info", CLAUDE, ids=lambda m: m.name)
def test_threshold_of_every_claude_model(info: object) -> None:
    window, max_output = info.context_window, info.max_output  # type: ignore[attr-defined]
    expected = window - min(max_output, 20_000) - 13_000
    strategy = ClaudeCodeAutoCompact(model=info.name)  # type: ignore[attr-defined]
    report = strategy.trigger_report([user("hi", "u")], COUNTER)
    assert report.threshold == expected
    assert f"Fires at {expected:,} tokens on {info.name}" in report.text  # type: ignore[attr-defined]
    assert not report.fires


def test_default_is_167000_on_sonnet_4_5_and_haiku_3_5_reserves_its_smaller_output() -> None:
    assert ClaudeCodeAutoCompact().thresholds() == (200_000, 180_000, 167_000)
    assert ClaudeCodeAutoCompact(model="claude-3-5-haiku").thresholds()[2] == (
        200_000 - 8_192 - 13_000
    )
    text = ClaudeCodeAutoCompact().trigger_report([user("hi", "u")], COUNTER).text
    assert "(window 200,000 − 20,000 output − 13,000)" in text


@pytest.mark.parametrize("pct", [1, 30, 50, 92, 93, 100])
def test_percent_override_can_only_lower_the_threshold(pct: int) -> None:
    effective = 200_000 - 20_000
    expected = min(math.floor(effective * pct / 100), effective - 13_000)
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=pct)
    assert strategy.thresholds()[2] == expected
    assert expected <= 167_000


def test_unknown_model_and_override_out_of_range_are_parameter_errors() -> None:
    with pytest.raises(ParameterError, match="model"):
        ClaudeCodeAutoCompact(model="gpt-4o")
    with pytest.raises(ParameterError, match="autocompact_pct_override"):
        ClaudeCodeAutoCompact(autocompact_pct_override=0)


def test_disable_auto_compact_never_fires() -> None:
    chat = oracle_chats()["codex-rollout"]
    strategy = ClaudeCodeAutoCompact(disable_auto_compact=True, autocompact_pct_override=1)
    report = strategy.trigger_report(chat, COUNTER)
    assert not report.fires and report.threshold is None
    assert report.text.startswith("Never fires: DISABLE_AUTO_COMPACT")
    result = strategy.apply(chat, COUNTER, ScriptedSummarizer(["unused"]))
    assert result.messages == chat and not result.replace
    assert "DISABLE_AUTO_COMPACT=1" in strategy.config_code()


# --- count --------------------------------------------------------------------------------


def test_count_is_the_last_usage_plus_chars_over_4_after_it() -> None:
    loaded = load_chat_file(FIXTURES / "thinking_session.jsonl")
    messages = loaded.messages
    usage = {u.message_id: u for u in loaded.usage}
    anchor = max(i for i, m in enumerate(messages) if m.id in usage)
    last = usage[messages[anchor].id]
    billed = (
        last.input_tokens
        + last.cache_read_input_tokens
        + last.cache_creation_input_tokens
        + last.output_tokens
    )
    expected = billed + sum(plain_rough(m) for m in messages[anchor + 1 :])
    count = claude_code_count(messages, loaded.usage)
    assert (count.total, count.anchor) == (expected, anchor)
    strategy = ClaudeCodeAutoCompact(usage=loaded.usage)
    assert strategy.estimate(messages, COUNTER) == expected
    assert f"this chat is at {expected:,}." in strategy.trigger_report(messages, COUNTER).text


@pytest.mark.parametrize("name", list(oracle_chats()))
def test_count_without_usage_is_the_rough_estimate_of_every_message(name: str) -> None:
    chat = oracle_chats()[name]
    expected = sum(plain_rough(m) for m in chat)
    assert ClaudeCodeAutoCompact().estimate(chat, COUNTER) == expected
    report = ClaudeCodeAutoCompact().trigger_report(chat, COUNTER)
    assert report.exact == COUNTER.count_messages(chat)
    assert "the chat records no usage" in report.text


def test_images_count_2000_and_json_inputs_chars_over_2() -> None:
    message = assistant("[image]\nabcd", "a", call("c", "Read", '{"file_path": "/x"}'))
    assert claude_code_count([message]).total == 2000 + 1 + 1 + math.floor(19 / 2 + 0.5)


# --- microcompact -------------------------------------------------------------------------


def read_chat(sizes: list[int], tool_name: str = "Read") -> tuple[Message, ...]:
    """A user message, then one call + result per size (the result ``size`` characters)."""
    out: list[Message] = [system("You are Claude Code.", "s"), user("look at the files", "u")]
    for k, size in enumerate(sizes):
        out.append(assistant("", f"a{k}", call(f"c{k}", tool_name, f'{{"file_path": "/f{k}"}}')))
        out.append(tool("x" * size, f"t{k}", f"c{k}"))
    out.append(assistant("done", "end"))
    return tuple(out)


def rough_total(chat: tuple[Message, ...]) -> int:
    return sum(plain_rough(m) for m in chat)


def test_microcompact_alone_when_it_brings_the_chat_under_the_threshold() -> None:
    chat = read_chat([20_000] * 10)  # 5,000 tokens each: clearing 5 saves about 25,000
    total = rough_total(chat)
    saving = 5 * (5_000 - math.floor(len(MICROCOMPACT_PLACEHOLDER) / 4 + 0.5))
    # a percentage whose threshold the chat reaches, but not once microcompact has cleared
    pct = next(p for p in range(1, 101) if total >= math.floor(180_000 * p / 100) > total - saving)
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=pct)
    threshold = strategy.thresholds()[2]
    assert total >= threshold > total - saving
    result = strategy.apply(chat, COUNTER, ScriptedSummarizer([]))
    cleared = [mid for mid, d in result.decisions.items() if d is Decision.CLEARED]
    assert cleared == [f"t{k}" for k in range(5)]
    assert all(m.content == MICROCOMPACT_PLACEHOLDER for m in result.inserted)
    assert [m.content for m in result.messages if m.id in ("t5", "t9")] == ["x" * 20_000] * 2
    assert not result.replace and result.summary_request is None
    assert "no summary" in result.warnings[-1]


def test_microcompact_skipped_under_20000_tokens_saved_then_summary() -> None:
    chat = read_chat([12_000] * 10)  # 3,000 tokens each: clearing 5 saves under 20,000
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=1)
    summarizer = ScriptedSummarizer(["<analysis>notes</analysis><summary>the work</summary>"])
    result = strategy.apply(chat, COUNTER, summarizer)
    assert any("Microcompact skipped" in w for w in result.warnings)
    # the summarizer saw every tool result whole
    sent = "\n".join(m["content"] for m in summarizer.requests[0].messages)
    assert sent.count("x" * 12_000) == 10
    assert result.replace


def test_only_compactable_tools_are_cleared() -> None:
    chat = read_chat([20_000] * 10, tool_name="Edit")  # Edit is not in the research's list
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=1)
    summarizer = ScriptedSummarizer(["<summary>s</summary>"])
    strategy.apply(chat, COUNTER, summarizer)
    sent = "\n".join(m["content"] for m in summarizer.requests[0].messages)
    assert MICROCOMPACT_PLACEHOLDER not in sent


def test_microcompact_then_summary_sends_the_cleared_results() -> None:
    chat = read_chat([40_000] * 10)
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=1)
    summarizer = ScriptedSummarizer(["<summary>s</summary>"])
    result = strategy.apply(chat, COUNTER, summarizer)
    sent = "\n".join(m["content"] for m in summarizer.requests[0].messages)
    assert sent.count(MICROCOMPACT_PLACEHOLDER) == 5 and sent.count("x" * 40_000) == 5
    assert result.warnings[0].startswith("Microcompact cleared 5 old tool results")


# --- compaction ---------------------------------------------------------------------------


def test_summary_message_request_and_decisions() -> None:
    chat = oracle_chats()["claude-code-subagent"]
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=1)
    reply = (
        "<analysis>\nthinking it over\n</analysis>\n\n<summary>\n1. Primary Request: x\n</summary>"
    )
    summarizer = ScriptedSummarizer([reply])
    result = strategy.apply(chat, COUNTER, summarizer)
    expected = (
        "This session is being continued from a previous conversation that ran out of "
        "context. The summary below covers the earlier portion of the conversation.\n"
        "Summary:\n1. Primary Request: x\n\n"
        "Continue the conversation from where it left off without asking the user any "
        "further questions."
    )
    assert result.inserted[0].content == expected
    assert result.inserted[0].role.value == "user" and result.replace
    lead = [m for m in chat[: next(i for i, m in enumerate(chat) if not m.role.is_instruction)]]
    assert result.messages == (*lead, result.inserted[0])
    assert {result.decisions[m.id] for m in lead} <= {Decision.PINNED}
    assert {result.decisions[m.id] for m in chat[len(lead) :]} == {Decision.SUMMARIZED}
    request = summarizer.requests[0]
    assert request.messages[-1] == {"role": "user", "content": COMPACT_PROMPT}
    assert len(request.messages) == 1 + len(chat) - len(lead) + 1
    for section in (
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and fixes",
        "Problem Solving",
        "All user messages",
        "Pending Tasks",
        "Current Work",
        "Optional Next Step",
    ):
        assert section in COMPACT_PROMPT
    assert COMPACT_PROMPT.startswith("CRITICAL: Respond with TEXT ONLY")
    assert SUMMARY_PREAMBLE in expected and CONTINUATION_SENTENCE in expected
    assert strategy.request_preview(chat, COUNTER, "scripted") == request


def test_format_compact_summary_drops_the_analysis() -> None:
    assert format_compact_summary("<analysis>a</analysis><summary> b </summary>") == "Summary:\nb"
    assert format_compact_summary("plain") == "Summary:\nplain"


def test_a_failing_summarizer_leaves_the_history_untouched() -> None:
    chat = oracle_chats()["coding_agent_session"]
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=1)
    result = strategy.apply(chat, COUNTER, ScriptedSummarizer([RuntimeError("down")]))
    assert result.messages == chat and not result.replace
    assert "nothing was changed" in result.warnings[-1]


def test_redaction_is_off_by_default_and_on_when_asked() -> None:
    chat = oracle_chats()["secrets_in_tool_outputs"]
    plain = ScriptedSummarizer(["<summary>s</summary>"])
    ClaudeCodeAutoCompact(autocompact_pct_override=1).apply(chat, COUNTER, plain)
    masked = ScriptedSummarizer(["<summary>s</summary>"])
    ClaudeCodeAutoCompact(autocompact_pct_override=1, redact_secrets=True).apply(
        chat, COUNTER, masked
    )
    assert plain.requests[0].redactions == {}
    assert masked.requests[0].redactions
    assert plain.requests[0] != masked.requests[0]


# --- on every chat ------------------------------------------------------------------------


def fixture_chats() -> dict[str, tuple[tuple[Message, ...], tuple[CallUsage, ...]]]:
    out = {}
    for path in sorted(FIXTURES.glob("*.jsonl")):
        loaded = load_chat_file(path)
        out[path.stem] = (loaded.messages, loaded.usage)
    return out


@pytest.mark.parametrize("name", [*oracle_chats(), *fixture_chats()])
@pytest.mark.parametrize("pct", [None, 1, 50])
def test_on_every_chat(name: str, pct: int | None) -> None:
    chats = oracle_chats()
    chat, usage = (chats[name], ()) if name in chats else fixture_chats()[name]
    before = copy.deepcopy(chat)
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=pct, usage=usage)
    report = strategy.trigger_report(chat, COUNTER)
    expected_threshold = min(180_000 - 13_000, math.floor(180_000 * pct / 100) if pct else 167_000)
    assert report.threshold == expected_threshold
    assert report.fires == (claude_code_count(chat, usage).total >= expected_threshold)
    result = strategy.apply(chat, COUNTER, ScriptedSummarizer(["<summary>s</summary>"]))
    assert chat == before
    assert set(result.decisions) == {m.id for m in chat}
    if not report.fires:
        assert result.messages == chat and not result.replace
    else:
        assert result.replace or any(d is Decision.CLEARED for d in result.decisions.values())


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 30_000), min_size=0, max_size=12), st.integers(1, 100))
def test_property_microcompact_keeps_the_last_five(sizes: list[int], pct: int) -> None:
    chat = read_chat(sizes)
    strategy = ClaudeCodeAutoCompact(autocompact_pct_override=pct)
    result = strategy.apply(chat, COUNTER, ScriptedSummarizer(["<summary>s</summary>"]))
    assert set(result.decisions) == {m.id for m in chat}
    cleared = [mid for mid, d in result.decisions.items() if d is Decision.CLEARED]
    assert cleared == [f"t{k}" for k in range(len(cleared))]
    assert len(cleared) <= max(len(sizes) - 5, 0)


def test_registered_with_its_parameters_and_config() -> None:
    strategy = build_strategy(
        "claude-code-auto-compact", {"model": "claude-opus-4-5", "autocompact_pct_override": "70"}
    )
    assert isinstance(strategy, ClaudeCodeAutoCompact)
    code = strategy.config_code()
    assert '"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"' in code
    assert "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=70" in code
    assert ClaudeCodeAutoCompact.framework_policy.evidence == "code"


def test_the_recorded_usage_reaches_the_count_and_survives_a_parameter_change() -> None:
    """The app and the CLI hand a framework policy the chat's recorded usage
    (``with_recorded_usage``); Tune's sweeps change parameters with ``with_params``, which
    must keep it, or Claude Code's count would fall back to chars/4 at every swept value."""
    from ctxlab.strategies import with_params

    path = Path(__file__).parent / "fixtures" / "formats" / "claude_code" / "thinking_session.jsonl"
    loaded = load_chat_file(path, name=path.name)
    assert loaded.usage
    plain = ClaudeCodeAutoCompact()
    given = plain.with_recorded_usage(loaded.usage)
    anchored = claude_code_count(loaded.messages, loaded.usage)
    assert anchored.anchor is not None
    assert given.estimate(loaded.messages, COUNTER) == anchored.total
    assert plain.estimate(loaded.messages, COUNTER) != anchored.total
    swept = with_params(given, {"autocompact_pct_override": 50})
    assert isinstance(swept, ClaudeCodeAutoCompact)
    assert swept.usage == given.usage and swept.autocompact_pct_override == 50
