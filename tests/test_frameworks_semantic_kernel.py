"""Unit tests of the Semantic Kernel reducers (the oracle comparison is in
``test_oracle_semantic_kernel.py``): expected values computed by hand from SK's rules."""

from __future__ import annotations

import copy

import pytest
from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks._semantic_kernel import (
    DEFAULT_SUMMARIZATION_PROMPT,
    locate_safe_reduction_index,
)
from ctxlab.strategies.frameworks.semantic_kernel_summarization import (
    SemanticKernelSummarization,
)
from ctxlab.strategies.frameworks.semantic_kernel_truncation import SemanticKernelTruncation
from ctxlab.strategies.registry import get_strategy_class
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import TokenCounter


def plain_chat(turns: int, with_system: bool = True) -> tuple[Message, ...]:
    out: list[Message] = [system("be brief")] if with_system else []
    for i in range(turns):
        out += [user(f"q{i}", f"u{i}"), assistant(f"a{i}", f"a{i}")]
    return tuple(out)


def test_registered_under_the_issue_names() -> None:
    assert get_strategy_class("semantic-kernel-truncation") is SemanticKernelTruncation
    assert get_strategy_class("semantic-kernel-summarization") is SemanticKernelSummarization


def test_no_reduction_at_target_plus_threshold(counter: TokenCounter) -> None:
    chat = plain_chat(10)  # 21 messages
    result = SemanticKernelTruncation(target_count=11, threshold_count=10).apply(chat, counter)
    assert result.messages == chat and not result.replace
    report = SemanticKernelTruncation(target_count=11, threshold_count=10).trigger_report(
        chat, counter
    )
    assert not report.fires and report.threshold == 22 and report.estimate == 21
    assert report.text.startswith("Reduces at 22 messages (target 11 + threshold 10")
    assert "counts messages" in report.text and "this chat has 21" in report.text


def test_truncation_keeps_target_with_the_system_message_counted(counter: TokenCounter) -> None:
    chat = plain_chat(10)  # sys, u0, a0, ..., u9, a9
    result = SemanticKernelTruncation(target_count=5).apply(chat, counter)
    # target 5 - 1 for the system message = 4: the tail starts at 21 - 4 = 17 (u8)
    assert [m.id for m in result.messages] == ["sys", "u8", "a8", "u9", "a9"]
    assert result.decisions["sys"] is Decision.PINNED
    assert result.decisions["a7"] is Decision.DROPPED
    assert result.replace


def test_threshold_window_prefers_a_user_message(counter: TokenCounter) -> None:
    chat = plain_chat(10, with_system=False)  # 20 messages, u_i at 2i
    # target 5: len - 5 = 15 (a7); threshold 2 -> window down to 13: u7 at 14 is taken
    result = SemanticKernelTruncation(target_count=5, threshold_count=2).apply(chat, counter)
    assert result.messages[0].id == "u7" and len(result.messages) == 6


def test_cut_steps_back_to_the_call() -> None:
    chat = (
        user("go", "u0"),
        assistant("", "c1", call("x1")),
        tool("r", "r1", "x1"),
        assistant("", "c2", call("x2")),
        tool("r", "r2", "x2"),
        assistant("done", "a"),
    )
    # len - 3 = 3 (c2) whose predecessor r1 is a result: back to c1, whose predecessor is u0
    assert locate_safe_reduction_index(chat, 3) == 1


def test_target_one_with_a_system_message_keeps_only_it(counter: TokenCounter) -> None:
    chat = plain_chat(3)
    result = SemanticKernelTruncation(target_count=1).apply(chat, counter)
    assert [m.id for m in result.messages] == ["sys"]


def test_summary_request_and_placement(counter: TokenCounter) -> None:
    chat = (
        system("be brief"),
        user("q0", "u0"),
        assistant("looking", "c0", call("x0")),
        tool("result", "r0", "x0"),
        assistant("a0", "a0"),
        user("q1", "u1"),
        assistant("a1", "a1"),
    )
    summarizer = ScriptedSummarizer(["S"])
    result = SemanticKernelSummarization(target_count=3).apply(chat, counter, summarizer)
    # target 3 - 1 for the system message = 2: the tail starts at 7 - 2 = 5 (u1)
    (request,) = summarizer.requests
    assert [dict(m) for m in request.messages] == [
        {"role": "user", "content": "q0"},
        {"role": "assistant", "content": "a0"},
        {"role": "system", "content": DEFAULT_SUMMARIZATION_PROMPT},
    ]
    assert result.messages[0].id == "sys"
    summary = result.messages[1]
    assert summary.role is Role.ASSISTANT and summary.content == "S" and summary.is_summary
    assert result.inserted == (summary,)
    assert [m.id for m in result.messages[2:]] == ["u1", "a1"]
    assert result.decisions["c0"] is Decision.DROPPED  # function content: lost, not summarized
    assert result.decisions["u0"] is Decision.SUMMARIZED
    assert any("deleted without being summarized" in w for w in result.warnings)


def test_function_content_is_sent_when_included(counter: TokenCounter) -> None:
    chat = (
        user("q0", "u0"),
        assistant("looking", "c0", call("x0"), call("x1")),
        tool("r0", "r0", "x0"),
        tool("r1", "r1", "x1"),
        user("q1", "u1"),
        assistant("a1", "a1"),
    )
    summarizer = ScriptedSummarizer(["S"])
    SemanticKernelSummarization(target_count=2, include_function_content_in_summary=True).apply(
        chat, counter, summarizer
    )
    bodies = [dict(m) for m in summarizer.requests[0].messages]
    # SK pairs a call message with its *last* result, so r1 moves up before r0
    assert [b.get("tool_call_id") for b in bodies[2:4]] == ["x1", "x0"]
    assert bodies[1]["tool_calls"][1]["id"] == "x1" and bodies[1]["content"] == ""


def test_previous_summary_is_summarized_again(counter: TokenCounter) -> None:
    old = Message(Role.ASSISTANT, "old summary", "s0", is_summary=True)
    chat = (old, *plain_chat(4, with_system=False))
    single = ScriptedSummarizer(["S"])
    result = SemanticKernelSummarization(target_count=2).apply(chat, counter, single)
    assert single.requests[0].messages[0] == {"role": "assistant", "content": "old summary"}
    assert result.decisions["s0"] is Decision.SUMMARIZED
    multi = ScriptedSummarizer(["S"])
    kept = SemanticKernelSummarization(target_count=2, use_single_summary=False).apply(
        chat, counter, multi
    )
    assert kept.messages[0] is old and kept.messages[1].content == "S"
    assert kept.decisions["s0"] is Decision.KEPT


def test_failing_summarizer(counter: TokenCounter) -> None:
    chat = plain_chat(8)
    with pytest.raises(SummarizerError, match="fail_on_error=True"):
        SemanticKernelSummarization(target_count=4).apply(
            chat, counter, ScriptedSummarizer([RuntimeError("x")])
        )
    result = SemanticKernelSummarization(target_count=4, fail_on_error=False).apply(
        chat, counter, ScriptedSummarizer([RuntimeError("x")])
    )
    assert result.messages == chat and result.summary_request is not None


def test_redaction_is_off_unless_asked(counter: TokenCounter) -> None:
    secret = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    chat = (user(f"key {secret}", "u0"), *plain_chat(4, with_system=False)[1:])
    plain = SemanticKernelSummarization(target_count=2).request_preview(chat, counter)
    masked = SemanticKernelSummarization(target_count=2, redact_secrets=True).request_preview(
        chat, counter
    )
    assert plain is not None and masked is not None
    assert secret in plain.messages[0]["content"]
    assert secret not in masked.messages[0]["content"]


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="target_count"):
        SemanticKernelTruncation(target_count=0)
    with pytest.raises(ParameterError, match="threshold_count"):
        SemanticKernelSummarization(threshold_count=-1)


def test_config_code() -> None:
    code = SemanticKernelTruncation(target_count=20, threshold_count=5).config_code()
    assert "ChatHistoryTruncationReducer(\n    target_count=20, threshold_count=5\n)" in code
    code = SemanticKernelSummarization(include_function_content_in_summary=True).config_code()
    assert "ChatHistorySummarizationReducer(" in code and "service=" in code
    assert "include_function_content_in_summary=True" in code
    compile(code.replace("await ", ""), "<sk>", "exec")


@given(chat=chats(max_turns=5), target=st.integers(1, 12), threshold=st.integers(0, 4))
def test_decisions_cover_every_message_and_input_is_untouched(
    chat: tuple[Message, ...], target: int, threshold: int
) -> None:
    from ctxlab.tokens import get_counter

    counter = get_counter("gpt-4o")
    before = copy.deepcopy(chat)
    for strategy in (
        SemanticKernelTruncation(target_count=target, threshold_count=threshold),
        SemanticKernelSummarization(target_count=target, threshold_count=threshold),
    ):
        result = strategy.apply(chat, counter, ScriptedSummarizer(["S"]))
        assert set(result.decisions) == {m.id for m in chat}
        sent = {m.id for m in result.messages} - {m.id for m in result.inserted}
        assert sent == {mid for mid, d in result.decisions.items() if d.is_sent}
        assert chat == before
        # SK never leaves a tool result at the head of the kept tail of a well-formed chat
        tail = [m for m in result.messages if not m.role.is_instruction and not m.is_summary]
        assert not tail or not tail[0].is_tool_result
