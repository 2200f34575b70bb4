"""Responses API request bodies and responses, recorded by pydantic-ai (see PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.formats import detect_format, load_chat, load_chat_file
from ctxlab.model import Role
from ctxlab.validate import validate

HERE = Path(__file__).parent / "fixtures" / "formats" / "responses"


def test_a_request_body_pairs_function_calls_with_their_outputs_and_keeps_its_tools() -> None:
    path = HERE / "tool_output_request.json"
    raw = json.loads(path.read_text())
    loaded = load_chat_file(path)
    calls = [i for i in raw["input"] if i.get("type") == "function_call"]
    outputs = [i for i in raw["input"] if i.get("type") == "function_call_output"]
    got = [tc for m in loaded.messages for tc in m.tool_calls]
    assert [(tc.id, tc.name, tc.arguments) for tc in got] == [
        (c["call_id"], c["name"], c["arguments"]) for c in calls
    ]
    answers = [(m.tool_call_id, m.content) for m in loaded.messages if m.role is Role.TOOL]
    assert answers == [(o["call_id"], o["output"]) for o in outputs]
    assert [(t.name, t.description, json.loads(t.parameters)) for t in loaded.tools] == [
        (t["name"], t["description"], t["parameters"]) for t in raw["tools"]
    ]
    assert validate(loaded.messages) == ()
    assert detect_format(path) == "responses"


def test_a_response_object_is_the_reply_with_its_billed_usage() -> None:
    path = HERE / "tool_output_response.json"
    raw = json.loads(path.read_text())
    loaded = load_chat_file(path)
    (reply,) = loaded.messages
    assert reply.role is Role.ASSISTANT
    assert [tc.name for tc in reply.tool_calls] == [o["name"] for o in raw["output"]]
    (usage,) = loaded.usage
    assert usage.message_id == reply.id
    assert (usage.input_tokens, usage.output_tokens) == (
        raw["usage"]["input_tokens"],
        raw["usage"]["output_tokens"],
    )
    assert usage.cache_read_input_tokens == raw["usage"]["input_tokens_details"]["cached_tokens"]


def test_reasoning_summaries_are_shown_apart_and_instructions_are_the_system_message() -> None:
    path = HERE / "reasoning_response.json"
    raw = json.loads(path.read_text())
    messages = load_chat(path)
    assert messages[0].role is Role.SYSTEM and messages[0].content == raw["instructions"]
    summary = [s["text"] for o in raw["output"] if o["type"] == "reasoning" for s in o["summary"]]
    reply = messages[-1]
    assert dict(reply.extra)["reasoning"] == summary
    text = [p["text"] for o in raw["output"] if o["type"] == "message" for p in o["content"]]
    assert reply.content == "\n".join(text)
    assert all(s not in reply.content for s in summary)


def test_an_input_list_with_built_in_and_unknown_items_keeps_them_as_counted_text() -> None:
    items = [
        {"role": "user", "content": "weather in Paris?"},
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "Paris weather"},
        },
        {"type": "brand_new_item", "payload": 1},
        {"type": "brand_new_item", "payload": 2},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Sunny"}],
        },
    ]
    loaded = load_chat_file(items)
    assert [m.role for m in loaded.messages] == [Role.USER, Role.ASSISTANT, Role.ASSISTANT]
    searched = loaded.messages[1].content
    assert "[web_search_call]" in searched and "Paris weather" in searched
    assert searched.count("[brand_new_item]") == 2
    assert loaded.warnings == (
        "$[2]: unknown item type 'brand_new_item', kept as assistant text and counted",
    )
