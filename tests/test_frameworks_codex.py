"""``codex-compact``: Codex's compaction rule (codex-rs/core/src/compact.rs @ e06dd0e5), with
every expected value computed plainly from the rule on the oracle chats (the real Codex rollout
included), not by calling the module's helpers."""

from __future__ import annotations

import json

import pytest
from oracle_support import oracle_chats

from ctxlab.errors import SummarizerError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.codex_compact import (
    SUMMARIZATION_PROMPT,
    SUMMARY_PREFIX,
    CodexCompact,
    codex_estimate,
    truncate_middle_with_token_budget,
)
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import TokenCounter

MARKERS = [
    ("# agents.md instructions for ", "</instructions>"),
    ("<user_instructions>", "</user_instructions>"),
    ("<agents_instructions>", "</agents_instructions>"),
    ("<environment_context>", "</environment_context>"),
    ("<multiagent_context>", "</multiagent_context>"),
    ("<skill>", "</skill>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<subagent_notification>", "</subagent_notification>"),
    ("<goal_context>", "</goal_context>"),
]


def _real_user(m: Message) -> bool:
    text = m.content.strip().lower()
    contextual = any(text.startswith(a) and text.endswith(b) for a, b in MARKERS)
    summary = m.content.startswith(SUMMARY_PREFIX + "\n") or ("codex_compaction_summary", True) in (
        m.extra
    )
    return m.role is Role.USER and not contextual and not summary


def _expected_users(chat: tuple[Message, ...]) -> list[tuple[str, bool]]:
    """(id, cut?) of the user messages kept: newest first while ceil(bytes / 4) fits 20,000."""
    users = [m for m in chat if _real_user(m)]
    left = 20_000
    out: list[tuple[str, bool]] = []
    for m in reversed(users):
        if left == 0:
            break
        tokens = (len(m.content.encode("utf-8")) + 3) // 4
        if tokens <= left:
            out.append((m.id, False))
            left -= tokens
        else:
            out.append((m.id, True))
            break
    return out[::-1]


@pytest.mark.parametrize("name", list(oracle_chats()))
def test_compacted_history_follows_the_rule(name: str, counter: TokenCounter) -> None:
    chat = oracle_chats()[name]
    limit = max(codex_estimate(chat) // 2, 1)
    summarizer = ScriptedSummarizer(["FIXED SUMMARY"])
    result = CodexCompact(model_auto_compact_token_limit=limit).apply(chat, counter, summarizer)
    assert result.replace
    assert set(result.decisions) == {m.id for m in chat}
    kept = _expected_users(chat)
    pinned = [chat[0]] if chat[0].role.is_instruction else []
    assert [m.id for m in result.messages] == [
        *(m.id for m in pinned),
        *(i for i, _ in kept),
        result.inserted[-1].id,
    ]
    summary = result.messages[-1]
    assert summary.role is Role.USER
    assert summary.content == SUMMARY_PREFIX + "\nFIXED SUMMARY"
    kept_ids = {i for i, _ in kept}
    for m in chat:
        decision = result.decisions[m.id]
        if m in pinned:
            assert decision is Decision.PINNED
        elif m.id in kept_ids:
            assert decision is (Decision.CLEARED if dict(kept)[m.id] else Decision.KEPT)
        elif _real_user(m):
            assert decision is Decision.DROPPED
        else:
            assert decision is Decision.SUMMARIZED
            assert m.role is not Role.USER or not _real_user(m)
    # the summarizer saw the whole history, then Codex's prompt as a user message
    request = summarizer.requests[0]
    assert len(request.messages) == len(chat) + 1
    assert request.messages[-1] == {"role": "user", "content": SUMMARIZATION_PROMPT}
    assert [m["role"] for m in request.messages[:-1]] == [m.role.value for m in chat]


def test_the_codex_rollout_keeps_its_user_messages(counter: TokenCounter) -> None:
    chat = oracle_chats()["codex-rollout"]
    result = CodexCompact(model_auto_compact_token_limit=1).apply(
        chat, counter, ScriptedSummarizer(["S"])
    )
    users = [m for m in chat if _real_user(m)]
    assert users, "the rollout has real user messages"
    sent_users = [m for m in result.messages[:-1] if m.role is Role.USER]
    assert [m.id for m in sent_users] == [i for i, _ in _expected_users(chat)]
    assert not any(m.role in (Role.ASSISTANT, Role.TOOL) for m in result.messages)
    # contextual messages (environment context, AGENTS.md) are not kept as user messages
    assert all(_real_user(m) for m in sent_users)


def test_truncation_marker_is_codexs() -> None:
    big = "word " * 200  # 1,000 bytes; 16 tokens = 64 bytes, 32 each side
    removed = -(-(1000 - 64) // 4)
    assert truncate_middle_with_token_budget(big, 16) == (
        big[:32] + f"…{removed} tokens truncated…" + big[-32:]
    )
    assert truncate_middle_with_token_budget("short", 16) == "short"
    # multi-byte characters are never split
    text = "é" * 100  # 200 bytes
    cut = truncate_middle_with_token_budget(text, 5)  # 20 bytes: 10 each side = 5 chars
    assert cut == "é" * 5 + f"…{-(-(200 - 20) // 4)} tokens truncated…" + "é" * 5


def test_estimate_is_bytes_over_four_of_the_items() -> None:
    chat = (
        Message(Role.SYSTEM, "sys!", "s"),
        Message(Role.USER, "héllo", "u"),
    )
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "héllo"}]}
    blob = json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()
    assert codex_estimate(chat) == 1 + -(-len(blob) // 4)


def test_default_trigger_sentence_and_never_firing(counter: TokenCounter) -> None:
    chat = oracle_chats()["coding_agent_session"]
    report = CodexCompact().trigger_report(chat, counter)
    assert report.threshold == 244_800  # 90% of gpt-5's 272,000 (400,000 - 128,000 output)
    assert not report.fires
    assert report.text.startswith(
        "Codex compacts at 244,800 tokens (90% of gpt-5's 272,000) by its bytes/4 estimate; "
        f"this chat is at {codex_estimate(chat):,}."
    )
    result = CodexCompact().apply(chat, counter, ScriptedSummarizer(["S"]))
    assert not result.replace and result.messages == chat
    window = CodexCompact(model_context_window=100_000)
    assert window.auto_compact_limit == 90_000


def test_failing_summarizer_leaves_history_untouched(counter: TokenCounter) -> None:
    chat = oracle_chats()["coding_agent_session"]
    boom = ScriptedSummarizer([SummarizerError("down")])
    result = CodexCompact(model_auto_compact_token_limit=1).apply(chat, counter, boom)
    assert result.messages == chat and not result.replace
    assert "failed" in result.warnings[0]


def test_previous_summary_is_not_kept(counter: TokenCounter) -> None:
    chat = (
        Message(Role.USER, "first ask", "u1"),
        Message(Role.USER, SUMMARY_PREFIX + "\nold summary", "s1"),
        Message(Role.ASSISTANT, "ok", "a1"),
        Message(Role.USER, "<environment_context>cwd=/tmp</environment_context>", "e1"),
        Message(Role.USER, "second ask", "u2"),
    )
    result = CodexCompact(model_auto_compact_token_limit=1).apply(
        chat, counter, ScriptedSummarizer(["new"])
    )
    assert [m.id for m in result.messages[:-1]] == ["u1", "u2"]
    assert result.decisions["s1"] is Decision.SUMMARIZED
    assert result.decisions["e1"] is Decision.SUMMARIZED
    assert result.decisions["a1"] is Decision.SUMMARIZED


def test_config_code() -> None:
    assert CodexCompact(model_auto_compact_token_limit=200_000).config_code() == (
        '# ~/.codex/config.toml\nmodel = "gpt-5"\nmodel_auto_compact_token_limit = 200000\n'
    )
