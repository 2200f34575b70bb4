"""The validator's window rule: a context over the model's window, in the provider's own words."""

from __future__ import annotations

import re

import pytest
from chatgen import assistant, user

from ctxlab.catalog import get_model
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.validate import PROVIDERS, validate

CHAT = (user("tell me about ctxlab " * 40, "u1"), assistant("it trims context", "a1"))


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return get_counter("gpt-4o")


def _over(provider: str, window: int, counter: TokenCounter) -> str:
    problems = [p for p in validate(CHAT, counter=counter, provider=provider, window=window)]
    assert [p.code for p in problems] == ["over-window"]
    assert problems[0].severity == "error" and problems[0].message_id is None
    wording = problems[0].provider_error
    assert wording is not None
    return wording


def test_openai_words_it_as_context_length_exceeded(counter: TokenCounter) -> None:
    tokens = counter.count_messages(CHAT)
    wording = _over("openai", 100, counter)
    assert wording == (
        f"This model's maximum context length is 100 tokens. However, your messages resulted in "
        f"{tokens} tokens. Please reduce the length of the messages."
    )


def test_anthropic_words_it_as_prompt_too_long(counter: TokenCounter) -> None:
    tokens = counter.count_messages(CHAT)
    assert _over("anthropic", 100, counter) == f"prompt is too long: {tokens} tokens > 100 maximum"


def test_gemini_words_it_as_input_token_count(counter: TokenCounter) -> None:
    tokens = counter.count_messages(CHAT)
    assert _over("gemini", 100, counter) == (
        f"The input token count ({tokens}) exceeds the maximum number of tokens allowed (100)."
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_our_text_names_tokens_window_and_excess(provider: str, counter: TokenCounter) -> None:
    tokens = counter.count_messages(CHAT)
    (problem,) = validate(CHAT, counter=counter, provider=provider, window=50)
    numbers = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", problem.text)]
    assert numbers[:3] == [tokens, 50, tokens - 50]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_context_at_the_window_or_without_a_window_is_fine(
    provider: str, counter: TokenCounter
) -> None:
    tokens = counter.count_messages(CHAT)
    assert validate(CHAT, counter=counter, provider=provider, window=tokens) == ()
    assert validate(CHAT, counter=counter, provider=provider) == ()
    assert validate(CHAT, provider=provider, window=1) == ()  # no counter: nothing to count


def test_the_window_is_checked_for_the_models_own_provider_only(counter: TokenCounter) -> None:
    from ctxlab.ui.insights_view import provider_problems, window_badge_text

    gpt4 = get_model("gpt-4")
    big = (user("word " * 9000, "u1"),)
    tokens = counter.count_messages(big)
    assert tokens > gpt4.context_window
    found = provider_problems(big, counter=counter, model=gpt4)
    assert [p.code for p in found["openai"]] == ["over-window"]
    assert "over-window" not in {
        p.code for ps in found.values() for p in ps if ps is not found["openai"]
    }
    assert window_badge_text(tokens, gpt4) == (
        f"Over gpt-4's 8,192-token window by {tokens - 8192:,} tokens",
        False,
    )
    assert window_badge_text(8192, gpt4) == ("Fits gpt-4's 8,192-token window", True)


def test_a_known_count_gives_the_problems_of_counting() -> None:
    """``tokens=`` (a TrimResult's tokens_after) stands in for the count: same problems."""
    from ctxlab.model import Message, Role
    from ctxlab.tokens import get_counter
    from ctxlab.validate import validate

    counter = get_counter("gpt-4o")
    chat = (Message(Role.USER, "hello there " * 30, "u"), Message(Role.ASSISTANT, "hi", "a"))
    tokens = counter.count_messages(chat)
    for window in (tokens - 1, tokens):
        assert validate(chat, counter=counter, window=window, tokens=tokens) == validate(
            chat, counter=counter, window=window
        )
    assert validate(chat, counter=counter, window=tokens, tokens=tokens + 1)  # it is used
