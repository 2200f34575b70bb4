"""ctxlab.checks: provider verdicts hold only what a provider rejects, the user's own limit is a
separate note, and a configuration that sends no conversation says why and how to fix it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import pytest

from ctxlab.catalog import get_model
from ctxlab.checks import check_context, provider_problems
from ctxlab.formats import load_chat_file
from ctxlab.model import Message, Role
from ctxlab.samples import list_samples
from ctxlab.strategies import (
    Strategy,
    TrimLast,
    TrimResult,
    get_strategy_class,
    param,
    strategy_names,
    suggested_for,
    with_params,
)
from ctxlab.strategies.base import Decision, nice_ceiling, sends_conversation
from ctxlab.summarizers import OfflineSummarizer
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.validate import validate

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
CLAUDE_CODE = FIXTURES / "claude_code" / "thinking_session.jsonl"
(CODEX,) = sorted((FIXTURES / "codex").glob("rollout-2026-05-11T*.jsonl"))
CHATS = [
    *(s.path for s in list_samples() if not s.generated),
    CLAUDE_CODE,
    CODEX,
]
MODEL = get_model("gpt-4o")


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return get_counter("gpt-4o")


def _messages(path: Path) -> tuple[Message, ...]:
    return tuple(load_chat_file(str(path)).messages)


def _apply(strategy: Strategy, messages: Sequence[Message], counter: TokenCounter) -> TrimResult:
    if type(strategy).uses_summarizer:
        return strategy.apply(messages, counter, OfflineSummarizer(counter=counter))
    return strategy.apply(messages, counter)


@pytest.mark.parametrize("path", CHATS, ids=lambda p: Path(p).stem[:40])
def test_no_strategy_sends_an_empty_context_without_a_reason_and_a_working_fix(
    path: Path, counter: TokenCounter
) -> None:
    """Every strategy, at its defaults and at the app's suggested first view: either some
    conversation message is sent, or the check names a parameter of the strategy and every
    fix it offers does send one."""
    messages = _messages(path)
    chat = counter.counted(messages)
    for name in strategy_names():
        cls = get_strategy_class(name)
        for strategy in (cls(), suggested_for(cls, chat, MODEL.input_room)):
            result = _apply(strategy, messages, counter)
            found = check_context(messages, result, strategy, counter, model=MODEL).sends_nothing
            if sends_conversation(result):
                assert found is None, (name, found)
                continue
            assert found is not None, (path, name, strategy)
            known = set(strategy.params()) | {
                n for v in strategy.params().values() if isinstance(v, dict) for n in v
            }
            assert found.settings and set(found.settings) <= known, found
            assert found.fixes, found
            for fix in found.fixes:
                fixed = _apply(with_params(strategy, fix.changes), messages, counter)
                assert sends_conversation(fixed), (name, fix)


def test_trim_last_on_the_codex_rollout_names_its_settings_and_fixes(
    counter: TokenCounter,
) -> None:
    messages = _messages(CODEX)
    strategy = TrimLast()
    result = strategy.apply(messages, counter)
    assert [m.role for m in result.messages] == [Role.SYSTEM]  # the "only the system"
    found = check_context(messages, result, strategy, counter, model=MODEL).sends_nothing
    assert found is not None
    assert found.text.startswith("Trim last (LangChain) sends only the system prompt")
    assert "Max tokens (max_tokens) = 8,000" in found.text
    assert "Start on a user message (start_on_user)" in found.text
    assert found.settings == ("max_tokens", "start_on_user")
    raise_fix, off_fix = found.fixes
    assert off_fix.changes == {"start_on_user": False}
    need = raise_fix.changes["max_tokens"]
    assert raise_fix.label == f"Raise Max tokens to {need:,}"
    # the raise is the smallest round value that reaches the last user message
    reached = TrimLast(max_tokens=need).apply(messages, counter)
    assert any(m.role is Role.USER for m in reached.messages)
    assert need == nice_ceiling(need)
    below = TrimLast(max_tokens=nice_ceiling(need) * 9 // 10).apply(messages, counter)
    assert not sends_conversation(below)


def test_trim_last_names_end_on_and_a_too_small_budget(counter: TokenCounter) -> None:
    chat = (
        Message(Role.SYSTEM, "You are terse.", "s"),
        Message(Role.USER, "word " * 50, "u1"),
        Message(Role.ASSISTANT, "reply " * 50, "a1"),
    )
    strategy = TrimLast(end_on="system")
    found = strategy.sends_nothing(chat, counter, strategy.apply(chat, counter))
    assert found is not None and found.settings == ("end_on",)
    assert "End on (end_on) = 'system'" in found.text
    assert [f.changes for f in found.fixes] == [{"end_on": ""}]

    small = TrimLast(max_tokens=20, start_on_user=False)
    found = small.sends_nothing(chat, counter, small.apply(chat, counter))
    assert found is not None and "less than the newest message alone" in found.text
    assert found.settings == ("max_tokens", "include_system")
    assert {next(iter(f.changes)) for f in found.fixes} == {"max_tokens"}  # system off: no room
    assert found.fixes[0].changes["max_tokens"] >= counter.count_messages([chat[0], chat[2]])


@dataclass(frozen=True, slots=True)
class _AllOrNothing(Strategy):
    """A third party's strategy (not registered): the whole chat if it fits, else nothing."""

    name: ClassVar[str] = "all-or-nothing"
    title: ClassVar[str] = "All or nothing"
    summary: ClassVar[str] = "test strategy"
    budget: int = param(10, label="Budget", help="tokens", min=1, unit="tokens")

    def apply(self, messages, counter, summarizer=None):  # type: ignore[no-untyped-def]
        total = counter.count_messages(messages)
        fits = total <= self.budget
        return TrimResult(
            tuple(messages) if fits else (),
            {m.id: Decision.KEPT if fits else Decision.DROPPED for m in messages},
            total,
            total if fits else counter.count_messages([]),
        )


def test_the_default_check_raises_a_token_parameter_and_checks_the_fix(
    counter: TokenCounter,
) -> None:
    messages = _messages(CLAUDE_CODE)
    strategy = _AllOrNothing()
    result = strategy.apply(messages, counter)
    found = strategy.sends_nothing(messages, counter, result)
    assert found is not None
    assert (
        found.text
        == "All or nothing sends nothing of this chat with these settings (Budget (budget) = 10)."
    )
    (fix,) = found.fixes
    assert fix.changes == {"budget": nice_ceiling(counter.count_messages(messages))}
    # within a window smaller than the chat no raise works: no fix is offered, the text stays
    assert strategy.sends_nothing(messages, counter, result, window=100).fixes == ()  # type: ignore[union-attr]


def test_over_the_users_limit_is_a_note_not_a_provider_problem(counter: TokenCounter) -> None:
    """The issue's case: Summarize ending over its trigger. OpenAI accepts the request, so no
    provider reports it; the note says how far over and why."""
    messages = _messages(CODEX)
    strategy = get_strategy_class("summarize")()
    result = _apply(strategy, messages, counter)
    trigger = strategy.options.trigger_token_budget  # type: ignore[attr-defined]
    assert result.tokens_after > trigger
    check = check_context(messages, result, strategy, counter, model=MODEL)
    codes = {p.code for found in check.providers.values() for p in found}
    assert "over-budget" not in codes
    assert check.providers == provider_problems(result.messages, counter=counter, model=MODEL)
    assert check.providers["openai"] == validate(
        result.messages, counter=counter, window=MODEL.context_window
    )
    note = check.over_limit
    assert note is not None and (note.limit, note.tokens) == (trigger, result.tokens_after)
    assert note.text.startswith(
        f"Over your trigger: {result.tokens_after:,} of {trigger:,} tokens — "
    )
    assert "keeps the last 6 messages verbatim" in note.text


def test_window_drop_over_budget_says_it_keeps_the_newest_round(counter: TokenCounter) -> None:
    messages = _messages(CODEX)
    strategy = get_strategy_class("window-drop")(budget=8000)  # type: ignore[call-arg]
    result = strategy.apply(messages, counter)
    note = check_context(messages, result, strategy, counter, model=MODEL).over_limit
    assert note is not None
    assert note.text == (
        f"Over your token budget: {result.tokens_after:,} of 8,000 tokens — Window drop always "
        f"keeps the newest round, which alone holds {result.tokens_after:,} tokens."
    )
    within = get_strategy_class("window-drop")(budget=result.tokens_before)  # type: ignore[call-arg]
    kept = within.apply(messages, counter)
    assert check_context(messages, kept, within, counter, model=MODEL).over_limit is None


def test_the_window_stays_a_provider_problem(counter: TokenCounter) -> None:
    messages = _messages(CODEX)
    strategy = get_strategy_class("window-drop")(budget=10**7)  # type: ignore[call-arg]
    result = strategy.apply(messages, counter)
    small = replace(MODEL, context_window=result.tokens_after - 1)
    check = check_context(messages, result, strategy, counter, model=small)
    assert [p.code for p in check.providers[MODEL.validator_provider]] == ["over-window"]
    assert check.over_limit is None and check.sends_nothing is None
