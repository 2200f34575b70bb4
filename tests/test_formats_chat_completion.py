"""A pasted chat.completion response (recorded by pydantic-ai, see PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.formats import detect_format, load_chat_file
from ctxlab.model import Role

HERE = Path(__file__).parent / "fixtures" / "formats" / "chat_completion"


def test_the_first_choice_is_the_reply_and_usage_is_billed_to_it() -> None:
    path = HERE / "tool_calls_response.json"
    raw = json.loads(path.read_text())
    loaded = load_chat_file(path)
    (reply,) = loaded.messages
    message = raw["choices"][0]["message"]
    assert reply.role is Role.ASSISTANT and reply.id == raw["id"]
    assert [(tc.id, tc.name, tc.arguments) for tc in reply.tool_calls] == [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]
    ]
    (usage,) = loaded.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (
        raw["usage"]["prompt_tokens"],
        raw["usage"]["completion_tokens"],
        raw["usage"]["prompt_tokens_details"]["cached_tokens"],
    )
    assert detect_format(path) == "chat-completion"


def test_the_request_of_the_same_call_is_openai_json_with_its_tools() -> None:
    path = HERE / "tool_calls_request.json"
    raw = json.loads(path.read_text())
    loaded = load_chat_file(path)
    assert len(loaded.messages) == len(raw["messages"])
    assert [t.to_openai()["function"]["name"] for t in loaded.tools] == [
        t["function"]["name"] for t in raw["tools"]
    ]
    assert (
        loaded.openai_tools()[0]["function"]["parameters"]
        == raw["tools"][0]["function"]["parameters"]
    )
