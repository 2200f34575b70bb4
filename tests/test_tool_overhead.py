"""Tool definitions as a fixed per-request overhead that every budget includes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chatgen import budgets, chats
from hypothesis import given

from ctxlab.formats import ToolDefinition, load_chat_file
from ctxlab.model import Message
from ctxlab.strategies import build_strategy
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.tool_overhead import WithOverhead, tool_overhead, with_tools

FACTS = json.loads(
    (
        Path(__file__).parent / "fixtures" / "token_counts" / "openai_cookbook_token_counts.json"
    ).read_text()
)["facts"]
TOOL_FACTS = [f for f in FACTS if "tools" in f]


def test_the_cookbook_has_tool_facts() -> None:
    assert len(TOOL_FACTS) == 4


@pytest.mark.parametrize("fact", TOOL_FACTS, ids=[f["id"] for f in TOOL_FACTS])
def test_loaded_tool_definitions_cost_what_openai_billed(fact: dict[str, Any]) -> None:
    """Load the request as a user would paste it; chat + tools equal the API's prompt tokens."""
    request = {"model": fact["model"], "messages": fact["messages"], "tools": fact["tools"]}
    loaded = load_chat_file(json.dumps(request))
    assert [t.to_openai() for t in loaded.tools] == fact["tools"]
    counter = get_counter(fact["model"])
    total = with_tools(counter, loaded.tools).count_messages(loaded.messages)
    assert total == fact["cookbook_estimate"] == fact["api_prompt_tokens"]
    overhead = tool_overhead(counter, loaded.tools)
    assert overhead.tokens == counter.count_tools(fact["tools"])
    assert sum(n for _, n in overhead.per_tool) + overhead.framing == overhead.tokens
    assert overhead.framing == counter.accounting.func_end


def test_without_tools_the_counter_is_unchanged(counter: TokenCounter) -> None:
    assert with_tools(counter, ()) is counter
    assert tool_overhead(counter, ()).tokens == 0


@given(chats(min_turns=1), budgets(400))
def test_a_token_budget_with_tools_is_the_budget_minus_the_tools_without(
    chat: tuple[Message, ...], budget: int
) -> None:
    counter = get_counter("gpt-4o")
    tools = (
        ToolDefinition(
            "search",
            "Search the web.",
            '{"type":"object","properties":{"q":{"type":"string","description":"query"}}}',
        ),
    )
    overhead = tool_overhead(counter, tools).tokens
    wrapped = with_tools(counter, tools)
    assert isinstance(wrapped, WithOverhead) and overhead > 0
    for name, key in (("window-drop", "budget"), ("trim-last", "max_tokens")):
        with_t = build_strategy(name, {key: budget + overhead}).apply(chat, wrapped)
        without = build_strategy(name, {key: budget}).apply(chat, counter)
        assert [m.id for m in with_t.messages] == [m.id for m in without.messages]
        assert with_t.tokens_after == without.tokens_after + overhead
        assert with_t.tokens_before == counter.count_messages(chat) + overhead


@given(chats(min_turns=1))
def test_every_strategy_counts_the_tools_in_what_it_sends(chat: tuple[Message, ...]) -> None:
    counter = get_counter("gpt-4o")
    wrapped = WithOverhead(counter, 250)
    for name in ("window-drop", "sliding-window", "trim-last", "clear-tool-results"):
        result = build_strategy(name).apply(chat, wrapped)
        assert result.tokens_after == counter.count_messages(result.messages) + 250
    counted = wrapped.counted(chat)
    assert counted.total == counter.counted(chat).total + 250
    assert wrapped.counted(chat) is counted  # re-counting the same chat is O(1)
