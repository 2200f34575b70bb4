"""Every strategy's derived defaults make the first view of a chat act on it, and say why.

The chats: every sample, the real Claude Code session (both conversations) and the real Codex
rollout of ``tests/fixtures/formats``. A strategy that cannot act on a chat (no tool results to
clear, a one-round chat for Window drop) must say so in its opening note instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.catalog import CATALOG
from ctxlab.formats import list_conversations, load_chat_file
from ctxlab.samples import list_samples, sample_path
from ctxlab.strategies import get_strategy_class, strategy_names, suggested_for
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks import FrameworkStrategy
from ctxlab.tokens import get_counter

FORMATS = Path(__file__).parent / "fixtures" / "formats"
CLAUDE_CODE = FORMATS / "claude_code" / "thinking_session.jsonl"
CODEX = next((FORMATS / "codex").glob("rollout-2026-05-11T*.jsonl"))


def _chats() -> list[tuple[str, Path, str | None]]:
    out: list[tuple[str, Path, str | None]] = [
        (s.name, sample_path(s.name), None) for s in list_samples()
    ]
    for cid, _ in list_conversations(CLAUDE_CODE, name=CLAUDE_CODE.name):
        out.append((f"claude_code:{cid}", CLAUDE_CODE, cid))
    out.append(("codex_rollout", CODEX, None))
    return out


CHATS = _chats()
CANNOT_ACT = ("nothing to clear", "keeps whole")


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4.1"])
@pytest.mark.parametrize(("label", "path", "conversation"), CHATS, ids=[c[0] for c in CHATS])
def test_first_view_drops_summarizes_or_clears_or_says_why_not(
    label: str, path: Path, conversation: str | None, model: str
) -> None:
    counter = get_counter(model)
    info = CATALOG.get(model)
    assert info is not None
    chat = load_chat_file(path, name=path.name, conversation=conversation)
    counted = counter.counted(chat.messages)
    for name in strategy_names():
        if issubclass(get_strategy_class(name), FrameworkStrategy):
            continue  # a framework opens at its own defaults: see the next test
        strategy = suggested_for(get_strategy_class(name), counted, info.input_room)
        note = strategy.opening_note(counted, info.input_room)
        assert note, f"{name} on {label}: no opening note"
        result = strategy.apply(chat.messages, counter)
        counts = result.decision_counts()
        acted = counts[Decision.DROPPED] + counts[Decision.SUMMARIZED] + counts[Decision.CLEARED]
        if any(phrase in note for phrase in CANNOT_ACT):
            continue
        assert acted > 0, f"{name} on {label} keeps everything: {note}"
        sent_messages = counts[Decision.KEPT] + counts[Decision.CLEARED]
        assert sent_messages > 0, f"{name} on {label} sends no message of the chat: {note}"
        assert result.tokens_after <= info.input_room or name == "clear-tool-results"
        limit = {"window-drop": "budget", "trim-last": "max_tokens"}.get(name)
        if limit is not None:  # the first view is within the derived budget, not over it
            assert result.tokens_after <= strategy.params()[limit], f"{name} on {label}"


FRAMEWORKS = [n for n in strategy_names() if issubclass(get_strategy_class(n), FrameworkStrategy)]


@pytest.mark.parametrize(("label", "path", "conversation"), CHATS, ids=[c[0] for c in CHATS])
def test_a_framework_opens_at_its_defaults_and_says_whether_it_acts(
    label: str, path: Path, conversation: str | None
) -> None:
    """A framework policy opens as its users run it (its defaults, even when they do nothing);
    its trigger report then says whether it acts on this chat, and a policy that acts or says
    it fires does so."""
    counter = get_counter("gpt-4o")
    info = CATALOG.get("gpt-4o")
    assert info is not None and FRAMEWORKS
    chat = load_chat_file(path, name=path.name, conversation=conversation)
    counted = counter.counted(chat.messages)
    for name in FRAMEWORKS:
        cls = get_strategy_class(name)
        strategy = suggested_for(cls, counted, info.input_room)
        assert strategy == cls(), f"{name}: the first view is not the framework's defaults"
        assert isinstance(strategy, FrameworkStrategy)
        report = strategy.trigger_report(chat.messages, counter)
        assert report.text, f"{name} on {label}: no trigger sentence"
        result = strategy.apply(chat.messages, counter)
        counts = result.decision_counts()
        acted = counts[Decision.DROPPED] + counts[Decision.SUMMARIZED] + counts[Decision.CLEARED]
        if acted:
            assert report.fires, f"{name} on {label} acts but says it does not: {report.text}"


def test_the_note_names_the_derived_value_and_the_chat() -> None:
    counter = get_counter("gpt-4o")
    chat = load_chat_file(CLAUDE_CODE, name=CLAUDE_CODE.name)
    counted = counter.counted(chat.messages)
    strategy = suggested_for(get_strategy_class("window-drop"), counted, 111_616)
    note = strategy.opening_note(counted, 111_616)
    budget = strategy.params()["budget"]
    assert note.startswith(f"budget {budget:,} tokens: ")
    assert f"this {counted.total:,}-token chat" in note
    assert note.endswith("so you see what is dropped")


def test_trim_last_on_the_codex_rollout_keeps_the_last_user_turn() -> None:
    """The rollout's last user message starts far back: the default must not send only the
    system prompt (issue 23), so the limit grows to keep from that message."""
    counter = get_counter("gpt-4o")
    chat = load_chat_file(CODEX, name=CODEX.name)
    counted = counter.counted(chat.messages)
    strategy = suggested_for(get_strategy_class("trim-last"), counted, 111_616)
    result = strategy.apply(chat.messages, counter)
    assert result.decision_counts()[Decision.KEPT] > 0
    assert result.decision_counts()[Decision.DROPPED] > 0
    assert result.tokens_after <= 111_616


def test_a_model_window_smaller_than_half_the_chat_caps_the_budget() -> None:
    from ctxlab.samples import ensure_generated

    ensure_generated("large_agent_10k")
    counter = get_counter("gpt-4o")
    chat = load_chat_file(sample_path("large_agent_10k"), name="large_agent_10k")
    counted = counter.counted(chat.messages)
    strategy = suggested_for(get_strategy_class("window-drop"), counted, 111_616)
    note = strategy.opening_note(counted, 111_616)
    assert "of the model's 111,616-token room for a prompt" in note
