"""LlamaIndex ChatMemoryBuffer and Memory: rules and properties (the oracle test runs
llama-index-core itself; these run without it)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.encodings import load_encoding
from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks._llamaindex import (
    additional_kwargs,
    joined_content,
    llamaindex_tokens,
    memory_message_tokens,
)
from ctxlab.strategies.frameworks.llamaindex_chat_memory_buffer import (
    LlamaIndexChatMemoryBuffer,
    buffer_start,
)
from ctxlab.strategies.frameworks.llamaindex_memory import LlamaIndexMemory
from ctxlab.tokens import get_counter

COUNTER = get_counter("gpt-4o")
ENCODING = load_encoding("cl100k_base")


def _plain_get(messages: list[Message], limit: int, initial: int) -> int:
    """ChatMemoryBuffer.get()'s loop, as written in chat_memory_buffer.py, with the exact
    joined count at every step: the start index it returns."""
    n = len(messages)

    def count(k: int) -> int:
        joined = joined_content(messages[k:])
        return len(ENCODING.encode(joined, allowed_special="all")) + initial

    message_count = n
    token_count = count(0) if n else initial
    while token_count > limit and message_count > 1:
        message_count -= 1
        while message_count > 1 and messages[n - message_count].role in (
            Role.TOOL,
            Role.ASSISTANT,
        ):
            message_count -= 1
        token_count = count(n - message_count)
    if token_count > limit or message_count <= 0:
        return max(n - 1, 0)
    return n - message_count


WORDS = st.sampled_from(
    ["hello", " world", "<|endoftext|>", "def f():\n    return 1", "ünïcode", "", "  ", "x" * 40]
)
ROLES = st.sampled_from([Role.USER, Role.ASSISTANT, Role.TOOL, Role.SYSTEM, Role.FUNCTION])


@st.composite
def chats(draw: st.DrawFn) -> list[Message]:
    n = draw(st.integers(0, 12))
    out: list[Message] = []
    for i in range(n):
        role = draw(ROLES)
        text = "".join(draw(st.lists(WORDS, max_size=6)))
        calls: tuple[ToolCall, ...] = ()
        if role is Role.ASSISTANT and draw(st.booleans()):
            calls = (ToolCall(f"c{i}", "read", '{"path": "a.py"}'),)
            text = draw(st.sampled_from(["", text]))
        out.append(Message(role, text, f"m{i}", tool_calls=calls))
    return out


@settings(max_examples=150, deadline=None)
@given(chats(), st.integers(1, 60), st.integers(0, 5))
def test_buffer_start_is_the_loop_of_get(chat: list[Message], limit: int, initial: int) -> None:
    if initial > limit:
        return
    assert buffer_start(chat, limit, initial) == _plain_get(chat, limit, initial)


@settings(max_examples=60, deadline=None)
@given(chats(), st.integers(1, 80))
def test_decisions_cover_every_id_and_input_is_untouched(chat: list[Message], limit: int) -> None:
    before = list(chat)
    for strategy in (
        LlamaIndexChatMemoryBuffer(token_limit=limit),
        LlamaIndexMemory(token_limit=limit, token_flush_size=max(limit // 5, 1)),
    ):
        result = strategy.apply(chat, COUNTER)
        assert list(result.decisions) == [m.id for m in chat]
        kept = [m for m in chat if result.decisions[m.id] is Decision.KEPT]
        assert list(result.messages) == kept
        # both keep a suffix of the chat
        assert kept == chat[len(chat) - len(kept) :]
    assert chat == before


def test_special_tokens_count_as_one() -> None:
    text = "a <|endoftext|> b"
    assert llamaindex_tokens(text) == len(ENCODING.encode(text, allowed_special="all"))
    assert llamaindex_tokens(text) < len(ENCODING.encode_ordinary(text))


def test_openai_shape_of_additional_kwargs() -> None:
    call = Message(Role.ASSISTANT, "", "a", tool_calls=(ToolCall("c1", "read", "{}"),))
    assert additional_kwargs(call) == {
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        ]
    }
    result = Message(Role.TOOL, "ok", "t", tool_call_id="c1")
    assert additional_kwargs(result) == {"tool_call_id": "c1"}
    legacy = Message(Role.ASSISTANT, "", "l", tool_calls=(ToolCall(None, "f", "{}"),))
    assert additional_kwargs(legacy) == {"function_call": {"name": "f", "arguments": "{}"}}
    # content None -> "None" in ChatMemoryBuffer's join; Memory counts the kwargs repr
    assert joined_content([call, result]) == "None ok"
    assert memory_message_tokens(call) == llamaindex_tokens(str(additional_kwargs(call)))


def test_buffer_defaults_and_llm_window() -> None:
    assert LlamaIndexChatMemoryBuffer().effective_token_limit == 3000
    assert LlamaIndexChatMemoryBuffer(llm="gpt-4o").effective_token_limit == 96_000
    assert LlamaIndexChatMemoryBuffer(llm="gpt-4o", token_limit=500).effective_token_limit == 500
    with pytest.raises(ParameterError, match="initial_token_count"):
        LlamaIndexChatMemoryBuffer(token_limit=10, initial_token_count=11)
    code = LlamaIndexChatMemoryBuffer(llm="gpt-4o").config_code()
    assert 'ChatMemoryBuffer.from_defaults(llm=OpenAI(model="gpt-4o"))' in code


def test_buffer_flags_uncounted_tool_calls() -> None:
    big_args = '{"content": "' + "x " * 3000 + '"}'
    chat = [
        Message(Role.USER, "write the file", "u"),
        Message(Role.ASSISTANT, "", "a", tool_calls=(ToolCall("c1", "write", big_args),)),
        Message(Role.TOOL, "done", "t", tool_call_id="c1"),
    ]
    strategy = LlamaIndexChatMemoryBuffer(token_limit=100)
    result = strategy.apply(chat, COUNTER)
    assert [m.id for m in result.messages] == ["u", "a", "t"]  # 3,000 words of arguments: free
    assert any("run-llama/llama_index#21950" in w for w in result.warnings)
    report = strategy.trigger_report(chat, COUNTER)
    assert not report.fires
    assert "tool calls not counted, run-llama/llama_index#21950" in report.text
    assert report.exact is not None and report.exact > 3000
    assert "fires" in report.disagreement


def test_buffer_returns_last_message_when_nothing_fits() -> None:
    chat = [Message(Role.USER, "a " * 50, "u"), Message(Role.ASSISTANT, "b " * 50, "a")]
    result = LlamaIndexChatMemoryBuffer(token_limit=5).apply(chat, COUNTER)
    assert [m.id for m in result.messages] == ["a"]
    assert "returns it anyway" in result.warnings[0]


def test_memory_flush_size_rules() -> None:
    assert LlamaIndexMemory().effective_flush_size == 3000
    assert LlamaIndexMemory(token_limit=1000).effective_flush_size == 700  # > limit: 70%
    assert LlamaIndexMemory(token_limit=1000, token_flush_size=0).effective_flush_size == 100
    assert LlamaIndexMemory().threshold == pytest.approx(21_000)
    code = LlamaIndexMemory().config_code()
    assert "Memory.from_defaults(" in code and "token_limit=30000" in code


def test_memory_keeps_one_full_turn() -> None:
    """A single turn over the limit stays whole: the queue starts on its user message."""
    chat = [
        Message(Role.SYSTEM, "be brief", "s"),
        Message(Role.USER, "go", "u"),
        *(Message(Role.ASSISTANT, "word " * 30, f"a{i}") for i in range(5)),
    ]
    result = LlamaIndexMemory(token_limit=50, token_flush_size=10).apply(chat, COUNTER)
    assert [m.id for m in result.messages] == ["u", "a0", "a1", "a2", "a3", "a4"]
    assert result.decisions["s"] is Decision.DROPPED
    assert result.replace is True
    assert "at least one full turn" in result.warnings[0]
