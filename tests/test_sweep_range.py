"""Tune's swept range comes from the chat and the model (``Strategy.sweep_range``), and the answer
is always something a user can act on: on every sample, the real Claude Code session (its
conversations and its project folder) and the real Codex rollout, for every strategy."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.catalog import get_model
from ctxlab.counted import CountedChat
from ctxlab.formats import list_conversations, load_chat
from ctxlab.insights import extract_facts, fact_retention
from ctxlab.model import Message, Role
from ctxlab.recommend import (
    Question,
    accepted_values,
    candidate_values,
    recommend,
    recommendation_sentence,
    session_sweep,
)
from ctxlab.samples import list_samples, sample_path
from ctxlab.strategies import (
    ParamInfo,
    Strategy,
    get_strategy_class,
    parameters,
    strategy_names,
    suggested_for,
    with_params,
)
from ctxlab.summarizers import OfflineSummarizer, ScriptedSummarizer
from ctxlab.tokens import get_counter

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
CLAUDE_CODE = FIXTURES / "claude_code" / "thinking_session.jsonl"
PROJECT = FIXTURES / "claude_code" / "project"
CODEX = next((FIXTURES / "codex").glob("rollout-2026-05-11T*.jsonl"))
MODELS = ("gpt-4.1", "gpt-4o", "gpt-4")  # windows of 1M, 128k and 8k tokens


def _conversations(path: Path) -> list[tuple[str, Path, str | None]]:
    listed = list_conversations(path)
    if len(listed) <= 1:
        return [(path.name, path, None)]
    return [(f"{path.name}#{cid}", path, cid) for cid, _ in listed]


AGENT_CHATS = [*_conversations(CLAUDE_CODE), *_conversations(PROJECT), *_conversations(CODEX)]
SAMPLE_CHATS = [(s.name, sample_path(s.name), None) for s in list_samples() if not s.generated]
ALL_CHATS = [*SAMPLE_CHATS, *AGENT_CHATS]


@cache
def _messages(path: Path, conversation: str | None) -> tuple[Message, ...]:
    return tuple(load_chat(path, conversation=conversation))


def _counted(path: Path, conversation: str | None, model: str) -> CountedChat:
    return get_counter(model).counted(_messages(path, conversation))


def _numeric(cls: type[Strategy]) -> list[ParamInfo]:
    return [i for i in parameters(cls) if i.kind in ("int", "float")]


def _check_range(strategy: Strategy, info: ParamInfo, chat: CountedChat, window: int) -> None:
    swept = strategy.sweep_range(info.name, chat, window)
    tool_results = sum(1 for m in chat.messages if m.is_tool_result)
    framework = strategy.framework_policy is not None
    if swept is None:
        # a count the chat does not hold gives nothing to sweep; so does a framework's token
        # parameter whose smallest accepted value is above the chat (Anthropic's 50,000)
        floor_above = info.spec.min is not None and info.spec.min >= min(chat.total, window)
        assert (info.spec.unit == "tool_results" and tool_results == 0) or (
            framework and info.spec.unit == "tokens" and floor_above
        ), info.name
        return
    assert 0 < swept.lo <= swept.hi, (info.name, swept)
    top = {
        "tokens": min(chat.total, window),
        "messages": len(chat),
        "rounds": len(chat.starts),
        "tool_results": tool_results,
    }.get(info.spec.unit or "")
    if top is not None:
        assert swept.hi <= top, (info.name, swept, top)
    if info.spec.unit == "tokens":
        assert swept.log and swept.lo < swept.hi
    values = candidate_values(swept.lo, swept.hi, 12, integer=swept.integer, log=swept.log)
    assert all(0 < value <= swept.hi for value in values)
    accepted, refused = accepted_values(strategy, info.name, values, integer=swept.integer)
    # ctxlab's parameters are independent; a framework's may bound each other, and Tune then
    # sweeps the values the framework accepts (or says that it accepts none on this chat)
    assert accepted == values or (framework and refused), (info.name, refused)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    ("label", "path", "conversation"), ALL_CHATS, ids=[c[0] for c in ALL_CHATS]
)
def test_every_swept_range_lies_within_the_chat_and_the_window(
    label: str, path: Path, conversation: str | None, model: str
) -> None:
    chat = _counted(path, conversation, model)
    window = get_model(model).context_window
    for name in strategy_names():
        cls = get_strategy_class(name)
        strategy = suggested_for(cls, chat, window=get_model(model).input_room)
        for info in _numeric(cls):
            _check_range(strategy, info, chat, window)


def test_the_issue_s_claude_code_range_stays_under_the_chat_on_gpt_4_1() -> None:
    """Was 15,000-1,500,000 tokens on gpt-4.1, every value keeping the whole chat."""
    for _, path, conversation in _conversations(CLAUDE_CODE):
        chat = _counted(path, conversation, "gpt-4.1")
        swept = get_strategy_class("window-drop")().sweep_range("budget", chat, 1_047_576)
        assert swept is not None and swept.hi == chat.total < 2_000
        assert swept.basis == f"the chat's {chat.total:,} tokens"


def test_a_chat_over_the_window_is_swept_up_to_the_window() -> None:
    chat = _counted(CODEX, None, "gpt-4")
    window = get_model("gpt-4").context_window
    assert chat.total > window
    swept = get_strategy_class("trim-last")().sweep_range("max_tokens", chat, window)
    assert swept is not None and swept.hi == window
    assert swept.basis == f"the model's {window:,}-token window"


def test_sliding_window_counts_only_non_system_messages() -> None:
    chat = _counted(sample_path("coding_agent_session"), None, "gpt-4o")
    non_system = sum(1 for m in chat.messages if m.role not in (Role.SYSTEM, Role.DEVELOPER))
    swept = get_strategy_class("sliding-window")().sweep_range("window", chat, 128_000)
    assert swept is not None and (swept.lo, swept.hi) == (1, non_system) and non_system < len(chat)


def test_a_tool_result_count_on_a_chat_without_tool_results_gives_nothing_to_sweep() -> None:
    chat = _counted(sample_path("long_plain_chat"), None, "gpt-4o")
    assert not any(m.is_tool_result for m in chat.messages)
    strategy = get_strategy_class("clear-tool-results")()
    assert strategy.sweep_range("keep_tool_results", chat, 128_000) is None
    assert strategy.sweep_range("trigger_tokens", chat, 128_000) is not None


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 200), min_size=1, max_size=20),
    window=st.integers(50, 20_000),
)
def test_token_ranges_lie_in_zero_to_the_smaller_of_chat_and_window(
    sizes: list[int], window: int
) -> None:
    roles = (Role.USER, Role.ASSISTANT)
    messages = [Message(roles[i % 2], "word " * n, id=f"m{i}") for i, n in enumerate(sizes)]
    chat = get_counter("gpt-4o").counted(messages)
    for name in strategy_names():
        cls = get_strategy_class(name)
        for info in _numeric(cls):
            _check_range(cls(), info, chat, window)


# -- the answer is actionable ----------------------------------------------------------------


def _answer(path: Path, conversation: str | None, model: str, strategy_name: str) -> list[str]:
    """The sentence for every numeric parameter of ``strategy_name`` (both questions), with
    checks that the answer's value lies in the swept range."""
    counter = get_counter(model)
    messages = _messages(path, conversation)
    chat = counter.counted(messages)
    info_model = get_model(model)
    window = info_model.context_window
    cls = get_strategy_class(strategy_name)
    strategy = suggested_for(cls, chat, window=info_model.input_room)
    facts = extract_facts(messages)
    summarizer = OfflineSummarizer() if cls.uses_summarizer else None
    sentences = []
    for info in _numeric(cls):
        swept = strategy.sweep_range(info.name, chat, window)
        if swept is None:
            continue
        values, _ = accepted_values(
            strategy,
            info.name,
            candidate_values(swept.lo, swept.hi, 5, integer=swept.integer, log=swept.log),
            integer=swept.integer,
        )
        points = session_sweep(
            messages,
            strategy,
            info.name,
            values,
            counter,
            model=model,
            facts=facts,
            window=window,
            summarizer=summarizer,
            integer=swept.integer,
        )
        for question in Question:
            rec = recommend(points, question, window=window, chat_tokens=chat.total)
            text = recommendation_sentence(
                rec, parameter=info.spec.label, unit=info.spec.unit, model=model
            )
            if rec.point is not None:
                assert swept.lo <= rec.point.value <= swept.hi
                if info.spec.unit == "tokens":
                    assert rec.point.value <= min(chat.total, window)
                if rec.needs_no_trimming:
                    assert text.startswith(f"This chat needs no trimming on {model} — it fits")
                    assert f"{window - chat.total:,} tokens to spare" in text
                else:
                    assert rec.point.trims, text
            else:  # no value qualifies: the sentence says what to change
                assert "pick a model" in text or "lower the facts" in text or "ask for" in text
            sentences.append(text)
    return sentences


@pytest.mark.parametrize("strategy", strategy_names())
@pytest.mark.parametrize(
    ("label", "path", "conversation"),
    [*AGENT_CHATS[:2], (CODEX.name, CODEX, None)],
    ids=["claude-code-main", "claude-code-rewind", "codex-rollout"],
)
def test_the_answer_on_real_agent_sessions_is_actionable(
    label: str, path: Path, conversation: str | None, strategy: str
) -> None:
    answers = _answer(path, conversation, "gpt-4.1", strategy)
    # a framework policy whose parameters are text (LangChain's trigger="tokens=4000") or
    # above this chat has no number to sweep here
    assert answers or get_strategy_class(strategy).framework_policy is not None


@pytest.mark.parametrize("strategy", ["window-drop", "summarize"])
@pytest.mark.parametrize(
    ("label", "path", "conversation"), SAMPLE_CHATS, ids=[c[0] for c in SAMPLE_CHATS]
)
def test_the_answer_on_every_sample_is_actionable(
    label: str, path: Path, conversation: str | None, strategy: str
) -> None:
    assert _answer(path, conversation, "gpt-4o", strategy)


def test_the_907_token_conversation_never_gets_a_budget_above_itself() -> None:
    """The issue's second conversation was recommended (and applied) 1,500 tokens."""
    for _, path, conversation in _conversations(CLAUDE_CODE):
        chat = _counted(path, conversation, "gpt-4.1")
        for text in _answer(path, conversation, "gpt-4.1", "window-drop"):
            numbers = [int(n.replace(",", "")) for n in _tokens_in(text)]
            assert all(n <= chat.total for n in numbers if n != 1_047_576), text


def _tokens_in(text: str) -> list[str]:
    import re

    return re.findall(r"([\d,]+) tokens(?! to spare)", text)


# -- Summarize: the facts Compare shows ----------------------------------------------------------


def _summarize_sweep_at(trigger: int) -> float | None:
    messages = _messages(sample_path("coding_agent_session"), None)
    (point,) = session_sweep(
        messages,
        get_strategy_class("summarize")(),
        "trigger_token_budget",
        [float(trigger)],
        get_counter("gpt-4o"),
        model="gpt-4o",
        facts=extract_facts(messages),
        window=128_000,
        summarizer=OfflineSummarizer(),
    )
    return point.facts_kept


def test_summarize_sweep_keeps_the_facts_compare_shows_on_the_coding_sample() -> None:
    """Compare's "fact retention %" for Summarize at a trigger of 8,000 (offline summarizer) is
    the share the sweep reports at the same trigger: the sweep summarizes with the offline
    summarizer, never with placeholders (which kept fewer facts at every trigger that fired)."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from app_support import page

    at = page(
        "pages/1_Compare.py",
        chat="coding_agent_session",
        model="gpt-4o",
        strategy="summarize",
        cmp="1",
        cmp1="summarize",
        **{"cmp1.trigger_token_budget": "8000"},
    )
    at.run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "fact retention %" in df.value.columns)
    shown = table["fact retention %"].iloc[0]
    swept = _summarize_sweep_at(8_000)
    assert swept is not None and round(100 * swept, 1) == shown
    messages = _messages(sample_path("coding_agent_session"), None)
    counter = get_counter("gpt-4o")
    facts = extract_facts(messages)
    placeholder = fact_retention(
        messages,
        with_params(get_strategy_class("summarize")(), {"trigger_token_budget": 8_000})
        .apply(messages, counter, ScriptedSummarizer(["[summary]"] * 4))
        .messages,
        facts,
    )
    assert placeholder.retained / len(facts) < swept


def test_summarize_cheapest_on_the_coding_sample_is_a_trigger_under_the_chat() -> None:
    """Was a trigger of 43,000 on the 32.8k-token chat, "never summarize" dressed as a value."""
    messages = _messages(sample_path("coding_agent_session"), None)
    counter = get_counter("gpt-4o")
    chat = counter.counted(messages)
    strategy = get_strategy_class("summarize")()
    swept = strategy.sweep_range("trigger_token_budget", chat, 128_000)
    assert swept is not None
    values = candidate_values(swept.lo, swept.hi, 12, integer=True, log=True)
    points = session_sweep(
        messages,
        strategy,
        "trigger_token_budget",
        values,
        counter,
        model="gpt-4o",
        facts=extract_facts(messages),
        window=128_000,
        summarizer=OfflineSummarizer(),
    )
    # The offline summarizer keeps 32% of the facts at every trigger that fires on the whole
    # chat: at 80% the honest answer is to send it whole, at 30% a trigger that summarizes.
    whole = recommend(points, Question.CHEAPEST, window=128_000, chat_tokens=chat.total)
    assert whole.needs_no_trimming
    text = recommendation_sentence(whole, parameter="Trigger", unit="tokens", model="gpt-4o")
    assert text.startswith("This chat needs no trimming on gpt-4o — it fits with 95,209 tokens")
    rec = recommend(points, Question.CHEAPEST, window=128_000, min_facts=0.3)
    assert rec.point is not None and rec.point.value < chat.total and rec.point.trims
