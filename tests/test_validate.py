"""The validator: what each provider would reject, and never a crash on real chats."""

from __future__ import annotations

from pathlib import Path

import pytest
from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given

from ctxlab.errors import UnknownNameError
from ctxlab.model import Message, Role
from ctxlab.strategies.sliding_window import SlidingWindow
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.validate import PROVIDERS, RULES, Problem, validate

REAL_CHATS = sorted(str(p) for p in (Path(__file__).parent / "fixtures/real_chats").glob("*.json"))

GOOD = (
    system("be brief"),
    user("weather?", "u1"),
    assistant("", "a1", call("c1", "get_weather"), call("c2", "get_weather")),
    tool("sunny", "t1", "c1"),
    tool("rainy", "t2", "c2"),
    assistant("mixed", "a2"),
)


def codes(problems: tuple[Problem, ...]) -> list[str]:
    return [p.code for p in problems]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_well_formed_chat_has_no_problems(provider: str) -> None:
    assert validate(GOOD, provider=provider) == ()


def test_providers_are_the_rule_table_keys() -> None:
    assert set(PROVIDERS) == set(RULES) >= {"openai", "anthropic", "gemini"}


def test_an_unknown_provider_raises() -> None:
    with pytest.raises(UnknownNameError, match="mistral"):
        validate(GOOD, provider="mistral")


def test_an_orphan_tool_result_is_an_error_with_the_api_wording() -> None:
    chat = (user("q", "u1"), tool("x", "t1", "c9"), assistant("a", "a1"))
    (problem,) = [p for p in validate(chat) if p.code == "orphan-tool-result"]
    assert problem.severity == "error" and problem.message_id == "t1"
    assert "messages[1]" in problem.text and "'t1'" in problem.text
    assert problem.provider_error is not None and "preceeding" in problem.provider_error


def test_a_result_answering_another_message_s_call_is_an_orphan() -> None:
    chat = (user("q", "u1"), assistant("", "a1", call("c1")), tool("x", "t1", "c2"))
    assert "orphan-tool-result" in codes(validate(chat))
    assert "unanswered-tool-call" in codes(validate(chat))


def test_an_unanswered_tool_call_names_the_missing_ids() -> None:
    chat = (user("q", "u1"), GOOD[2], GOOD[3], user("again", "u2"))
    (problem,) = [p for p in validate(chat) if p.code == "unanswered-tool-call"]
    assert problem.message_id == "a1" and "c2" in problem.text
    assert problem.provider_error is not None and problem.provider_error.endswith("c2")


def test_duplicate_call_ids_in_one_message_are_an_error() -> None:
    chat = (user("q", "u1"), assistant("", "a1", call("c1"), call("c1")), tool("x", "t", "c1"))
    assert "duplicate-tool-call-id" in codes(validate(chat))


def test_call_ids_reused_across_turns_are_fine() -> None:
    turn = (assistant("", "a1", call("c1")), tool("x", "t1", "c1"))
    again = (assistant("", "a2", call("c1")), tool("y", "t2", "c1"))
    assert validate((user("q", "u1"), *turn, user("more", "u2"), *again)) == ()


def test_legacy_function_calls_are_deprecated_warnings() -> None:
    chat = (
        user("q", "u1"),
        assistant("", "a1", call(None, "lookup")),
        Message(Role.FUNCTION, "42", "f1", name="lookup"),
        assistant("42", "a2"),
    )
    problems = validate(chat)
    assert codes(problems) == ["legacy-function-call", "legacy-function-call"]
    assert all(p.severity == "warning" and "deprecated" in p.text for p in problems)


def test_a_context_starting_with_a_tool_result_or_an_assistant() -> None:
    tool_first = validate((system("s"), tool("x", "t1", "c1"), user("q", "u1")))
    start = [p for p in tool_first if p.code == "starts-with-tool-result"]
    assert start and start[0].severity == "error"
    assistant_first = validate((assistant("hi", "a0"), user("q", "u1")))
    assert [(p.code, p.severity) for p in assistant_first] == [("starts-with-assistant", "warning")]


def test_an_empty_context_is_an_error() -> None:
    for provider in PROVIDERS:
        assert codes(validate((), provider=provider)) == ["empty-context"]


def test_over_budget_shows_tokens_and_budget(counter: TokenCounter) -> None:
    tokens = counter.count_messages(GOOD)
    assert validate(GOOD, budget=tokens, counter=counter) == ()
    (problem,) = validate(GOOD, budget=tokens - 1, counter=counter)
    assert problem.code == "over-budget" and f"{tokens:,}" in problem.text
    assert validate(GOOD, budget=1) == ()  # no counter: no budget check


def test_anthropic_rules() -> None:
    assistant_first = (assistant("hi", "a0"), user("q", "u1"))
    assert "first-not-user" in codes(validate(assistant_first, provider="anthropic"))
    late_system = (user("q", "u1"), system("late", "s2"), assistant("a", "a1"))
    assert "system-not-at-top" in codes(validate(late_system, provider="anthropic"))
    doubled = (user("q", "u1"), user("and?", "u2"), assistant("a", "a1"))
    merged = validate(doubled, provider="anthropic")
    assert [(p.code, p.severity) for p in merged] == [("consecutive-same-role", "warning")]
    cut = (user("q", "u1"), tool("x", "t1", "c1"), assistant("a", "a1"))
    assert "orphan-tool-result" in codes(validate(cut, provider="anthropic"))


def test_gemini_rules() -> None:
    cut = (user("q", "u1"), tool("x", "t1", "c1"), assistant("a", "a1"))
    found = validate(cut, provider="gemini")
    assert "orphan-tool-result" in codes(found)
    assert any(p.provider_error and "function response" in p.provider_error for p in found)
    short = (user("q", "u1"), GOOD[2], GOOD[3], assistant("a", "a2"))
    assert "function-response-count" in codes(validate(short, provider="gemini"))


@given(chats(max_turns=6, pending_user=False))
def test_generated_chats_are_valid_for_openai(chat: tuple[Message, ...]) -> None:
    problems = validate(chat)
    if chat:
        assert all(p.code == "starts-with-assistant" for p in problems) or not problems
    else:
        assert codes(problems) == ["empty-context"]


@given(chats(min_turns=2, max_turns=6, with_system=True))
def test_the_validator_flags_the_orphans_a_sliding_window_leaves(
    chat: tuple[Message, ...],
) -> None:
    counter = get_counter("gpt-4o")
    for window in range(1, len(chat)):
        sent = SlidingWindow(window).apply(chat, counter).messages
        first = next(m for m in sent if m.role is not Role.SYSTEM)
        if first.role is Role.TOOL:
            assert "orphan-tool-result" in codes(validate(sent))


def test_real_chats_are_read() -> None:
    assert len(REAL_CHATS) >= 9


@pytest.mark.parametrize("path", REAL_CHATS, ids=[Path(p).name for p in REAL_CHATS])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_real_chats_never_make_the_validator_raise(path: str, provider: str) -> None:
    from ctxlab.formats import load_chat

    chat = load_chat(path)
    counter = get_counter("gpt-4o")
    problems = validate(chat, budget=1000, counter=counter, provider=provider)
    assert isinstance(problems, tuple)
    assert all(isinstance(p, Problem) for p in problems)
    for window in (1, 2, 5):  # trimmed contexts with orphans
        validate(SlidingWindow(window).apply(chat, counter).messages, provider=provider)
