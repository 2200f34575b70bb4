"""Unit tests of the LangChain policies that need no oracle: parameters, triggers, config code,
a failing summarizer, and properties over random chats (every id decided, input untouched)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.langchain_clear_tool_uses import (
    ClearToolUsesEdit,
    LangChainClearToolUses,
)
from ctxlab.strategies.frameworks.langchain_summarization import (
    LangChainSummarization,
    SummarizationMiddleware,
)
from ctxlab.strategies.frameworks.langchain_trim_messages import LangChainTrimMessages
from ctxlab.strategies.registry import build_strategy
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter
from tests.oracle_support import oracle_chats

COUNTER = get_counter("gpt-4o")
CHAT = oracle_chats()["coding_agent_session"]


def test_default_trigger_never_fires_and_says_so() -> None:
    strategy = LangChainSummarization()
    report = strategy.trigger_report(CHAT, COUNTER)
    assert not report.fires and report.threshold is None
    assert report.text.startswith("Never fires: trigger is None (LangChain's default)")
    result = strategy.apply(CHAT, COUNTER, ScriptedSummarizer([]))
    assert result.messages == CHAT and not result.replace


def test_trigger_reports_estimate_and_exact() -> None:
    strategy = LangChainSummarization(middleware=SummarizationMiddleware(trigger="tokens=1000"))
    report = strategy.trigger_report(CHAT, COUNTER)
    assert report.fires and report.threshold == 1000
    assert report.estimate == strategy.estimate(CHAT, COUNTER)
    assert report.exact == COUNTER.count_messages(CHAT)
    assert "1,000 tokens" in report.text


@pytest.mark.parametrize(
    ("trigger", "message"),
    [
        ("tokens=0", "greater than 0"),
        ("fraction=1.5", "between 0 and 1"),
        ("words=3", "kind=value"),
        ("tokens=1 & tokens=2", "twice"),
    ],
)
def test_bad_trigger_names_the_parameter(trigger: str, message: str) -> None:
    with pytest.raises(ParameterError, match=rf"^trigger: .*{message}"):
        SummarizationMiddleware(trigger=trigger)


def test_unknown_model_and_bad_prompt_are_refused() -> None:
    with pytest.raises(ParameterError, match=r"^model: "):
        SummarizationMiddleware(model="no-such-model")
    with pytest.raises(ParameterError, match=r"^summary_prompt: "):
        SummarizationMiddleware(summary_prompt="{other}")


def test_claude_counts_at_3_3_characters_per_token() -> None:
    gpt = LangChainSummarization().estimate(CHAT, COUNTER)
    claude = LangChainSummarization(
        middleware=SummarizationMiddleware(model="claude-sonnet-4-5")
    ).estimate(CHAT, COUNTER)
    assert gpt is not None and claude is not None and claude > gpt


def test_failing_summarizer_leaves_history_untouched() -> None:
    strategy = LangChainSummarization(middleware=SummarizationMiddleware(trigger="messages=2"))
    failing = ScriptedSummarizer([])  # raises SummarizerError
    result = strategy.apply(CHAT, COUNTER, failing)
    assert result.messages == CHAT and not result.replace
    assert any("nothing was changed" in w for w in result.warnings)


def test_cli_spelling_of_parameters() -> None:
    clear = build_strategy("langchain-clear-tool-uses", {"trigger": "2000", "keep": "1"})
    assert isinstance(clear, LangChainClearToolUses)
    assert clear.edit == ClearToolUsesEdit(trigger=2000, keep=1)
    summary = build_strategy("langchain-summarization", {"trigger": "messages=50 | tokens=4000"})
    assert isinstance(summary, LangChainSummarization)
    assert summary.middleware.clauses == ((("messages", 50),), (("tokens", 4000),))


def test_config_code_is_python() -> None:
    strategies = [
        LangChainTrimMessages(token_counter="model", include_system=True, start_on="human"),
        LangChainClearToolUses(edit=ClearToolUsesEdit(exclude_tools="bash, read")),
        LangChainSummarization(
            middleware=SummarizationMiddleware(
                trigger="tokens=4000 & messages=10 | fraction=0.8", keep="tokens=3000"
            )
        ),
    ]
    for strategy in strategies:
        compile(strategy.config_code(), strategy.name, "exec")
    code = strategies[2].config_code()
    assert 'trigger=[{"tokens": 4_000, "messages": 10}, ("fraction", 0.8)]' in code
    assert 'keep=("tokens", 3_000)' in code


def test_clear_at_least_stops_once_cleared() -> None:
    """LangChain's meaning: stop once that much is gone (Anthropic's skips unless it can)."""
    every = LangChainClearToolUses(edit=ClearToolUsesEdit(trigger=0, keep=0))
    first = LangChainClearToolUses(edit=ClearToolUsesEdit(trigger=0, keep=0, clear_at_least=1))
    assert len(first.apply(CHAT, COUNTER).inserted) == 1
    assert len(every.apply(CHAT, COUNTER).inserted) > 1


ROLES = st.sampled_from([Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM])


@st.composite
def chats(draw: st.DrawFn) -> tuple[Message, ...]:
    out: list[Message] = []
    for i in range(draw(st.integers(0, 14))):
        role = draw(ROLES)
        text = draw(st.text("ab\n{}", max_size=30))
        if role is Role.ASSISTANT and draw(st.booleans()):
            call = ToolCall(f"c{i}", "t", draw(st.sampled_from(["{}", '{"a": 1}', "x", ""])))
            out.append(Message(role, text, f"m{i}", tool_calls=(call,)))
        elif role is Role.TOOL:
            out.append(Message(role, text, f"m{i}", tool_call_id=f"c{i - 1}"))
        else:
            out.append(Message(role, text, f"m{i}"))
    return tuple(out)


@settings(max_examples=60, deadline=None)
@given(chats(), st.integers(0, 120), st.booleans())
def test_every_id_decided_and_input_untouched(
    chat: tuple[Message, ...], budget: int, partial: bool
) -> None:
    copy = tuple(chat)
    strategies = [
        LangChainTrimMessages(max_tokens=budget, allow_partial=partial, include_system=partial),
        LangChainTrimMessages(max_tokens=budget, strategy="first", allow_partial=partial),
        LangChainClearToolUses(edit=ClearToolUsesEdit(trigger=budget, keep=1)),
        LangChainSummarization(
            middleware=SummarizationMiddleware(trigger="tokens=1", keep="messages=2")
        ),
    ]
    for strategy in strategies:
        result = strategy.apply(chat, COUNTER, ScriptedSummarizer(["s"]))
        assert set(result.decisions) == {m.id for m in chat}
        assert all(isinstance(d, Decision) for d in result.decisions.values())
        assert chat == copy
