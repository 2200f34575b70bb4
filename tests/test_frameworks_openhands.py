"""OpenHands SDK ``LLMSummarizingCondenser`` (ported, not run): expected values computed by
hand from the SDK's rules (``llm_summarizing_condenser.py``, ``context/view/``)."""

from __future__ import annotations

import copy
import hashlib

import jinja2
import pytest
from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.openhands_condenser import (
    SUMMARIZING_PROMPT_HEAD,
    SUMMARIZING_PROMPT_TAIL,
    OpenHandsCondenser,
    event_string,
    manipulation_indices,
    summarizing_prompt,
)
from ctxlab.strategies.registry import get_strategy_class
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import TokenCounter, get_counter

# sha256 of openhands-sdk/openhands/sdk/context/condenser/prompts/summarizing_prompt.j2 at
# OpenHands/software-agent-sdk 611629e6 (openhands-sdk 1.43.1)
TEMPLATE_SHA256 = "88cfcc443636ee2df8aa267417a22c0f1c9e3caa73c4edce10fe4ad6b03dd3f3"
LOOP = "{% for event in events %}\n<EVENT>\n{{ event }}\n</EVENT>\n{% endfor %}"


def plain_chat(turns: int) -> tuple[Message, ...]:
    out: list[Message] = [system("be brief")]
    for i in range(turns):
        out += [user(f"q{i}", f"u{i}"), assistant(f"a{i}", f"a{i}")]
    return tuple(out)


def test_registered() -> None:
    assert get_strategy_class("openhands-condenser") is OpenHandsCondenser
    assert OpenHandsCondenser.framework_policy.evidence == "code"


def test_quoted_template_is_the_sdk_file_and_renders_like_jinja() -> None:
    template = f"{SUMMARIZING_PROMPT_HEAD}\n\n{LOOP}\n\n{SUMMARIZING_PROMPT_TAIL}\n"
    assert hashlib.sha256(template.encode()).hexdigest() == TEMPLATE_SHA256
    events = ["MessageEvent (user)\n  user: hi", "ObservationEvent (environment)\n  Tool: t"]
    rendered = jinja2.Environment(autoescape=False).from_string(template).render(events=events)
    assert summarizing_prompt(events) == rendered.strip()


def test_events_trigger_keeps_first_and_half_window(counter: TokenCounter) -> None:
    chat = plain_chat(15)  # 31 messages
    strategy = OpenHandsCondenser(max_size=20, keep_first=2)
    summarizer = ScriptedSummarizer(["SUMMARY"])
    result = strategy.apply(chat, counter, summarizer)
    # tail = 20 // 2 - 2 - 1 = 7 events; forget [2, 31 - 7 = 24)
    kept_head, summary, tail = result.messages[:2], result.messages[2], result.messages[3:]
    assert [m.id for m in kept_head] == ["sys", "u0"]
    assert summary.role is Role.USER and summary.content == "SUMMARY" and summary.is_summary
    assert [m.id for m in tail] == [m.id for m in chat[24:]]
    assert sum(d is Decision.SUMMARIZED for d in result.decisions.values()) == 22
    (request,) = summarizer.requests
    assert request.messages[0]["role"] == "user" and len(request.messages) == 1
    assert (
        "<EVENT>\nMessageEvent (agent)\n  assistant: a0\n</EVENT>" in request.messages[0]["content"]
    )
    report = strategy.trigger_report(chat, counter)
    assert report.fires and report.threshold == 21 and report.unit == "messages"
    assert "this chat has 31" in report.text


def test_no_condensation_at_max_size(counter: TokenCounter) -> None:
    chat = plain_chat(10)[:20]
    result = OpenHandsCondenser(max_size=20).apply(chat, counter, ScriptedSummarizer([]))
    assert result.messages == chat and not result.replace


def test_cut_moves_past_pending_tool_calls(counter: TokenCounter) -> None:
    chat = [system("s"), user("go", "u0")]
    for i in range(6):
        chat += [assistant("", f"c{i}", call(f"x{i}"), call(f"y{i}")), tool("r", f"r{i}", f"x{i}")]
        chat += [tool("r", f"s{i}", f"y{i}")]
    ok = manipulation_indices(chat)
    assert ok[2] and not ok[3] and not ok[4] and ok[5]
    # 20 messages, max_size 10: tail 10 // 2 - 2 - 1 = 2, naive end 18 -> next free index 20
    result = OpenHandsCondenser(max_size=10).apply(chat, counter, ScriptedSummarizer(["S"]))
    assert [m.id for m in result.messages] == ["sys", "u0", result.inserted[0].id]


def test_tokens_reason_keeps_a_tail_under_half(counter: TokenCounter) -> None:
    chat = plain_chat(20)
    total = counter.count_messages(chat)
    strategy = OpenHandsCondenser(max_tokens=total // 2)
    result = strategy.apply(chat, counter, ScriptedSummarizer(["S"]))
    base = counter.count_messages(chat[:2])
    # the shortest prefix of chat[2:] whose removal saves more than total - max_tokens // 2
    need = total - (total // 2) // 2
    k = next(
        k for k in range(1, len(chat) - 1) if counter.count_messages(chat[: 2 + k]) - base > need
    )
    assert [m.id for m in result.messages[3:]] == [m.id for m in chat[2 + k :]]
    report = strategy.trigger_report(chat, counter)
    assert report.unit == "tokens" and report.fires and report.estimate == total


def test_event_strings_follow_the_sdk() -> None:
    long = "x" * 600
    assert event_string(user(long, "u"), {}) == f"MessageEvent (user)\n  user: {'x' * 497}..."
    observed = event_string(tool(long, "t", "c1"), {"c1": "terminal"})
    assert observed == f"ObservationEvent (environment)\n  Tool: terminal\n  Result: {'x' * 500}..."
    action = event_string(assistant("thinking", "a", call("c1", "terminal")), {})
    assert action == "ActionEvent (agent)\n  Thought: thinking\n  Action: terminal"


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="keep_first"):
        OpenHandsCondenser(max_size=8, keep_first=3)
    with pytest.raises(ParameterError, match="max_size"):
        OpenHandsCondenser(max_size=0)


def test_config_code() -> None:
    code = OpenHandsCondenser(max_tokens=50_000).config_code()
    assert "LLMSummarizingCondenser(" in code and "max_tokens=50000" in code
    compile(code, "<openhands>", "exec")


@given(chat=chats(max_turns=8), max_size=st.integers(4, 30), keep_first=st.integers(0, 3))
def test_decisions_cover_every_message_and_input_is_untouched(
    chat: tuple[Message, ...], max_size: int, keep_first: int
) -> None:
    if max_size // 2 - keep_first - 1 <= 0:
        return
    counter = get_counter("gpt-4o")
    before = copy.deepcopy(chat)
    result = OpenHandsCondenser(max_size=max_size, keep_first=keep_first).apply(
        chat, counter, ScriptedSummarizer(["S"])
    )
    assert set(result.decisions) == {m.id for m in chat}
    assert chat == before
    if result.replace:
        assert result.messages[: min(keep_first, len(chat))] == chat[:keep_first]
        # the kept tail never starts on a result whose call was forgotten
        after = result.messages[result.messages.index(result.inserted[0]) + 1 :]
        assert not after or not after[0].is_tool_result
