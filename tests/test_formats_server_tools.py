"""Anthropic thinking and server-tool blocks, recorded by pydantic-ai (see PROVENANCE.md).

Server-tool blocks are counted text that shows what the model saw; thinking is kept apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.formats import detect_format, load_chat, load_chat_file

HERE = Path(__file__).parent / "fixtures" / "formats" / "anthropic_server_tools"


def content_blocks(raw: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in raw["content"] if b["type"] == kind]


def test_web_search_blocks_become_the_query_titles_and_urls() -> None:
    path = HERE / "web_search_response.json"
    raw = json.loads(path.read_text())
    (reply,) = load_chat(path)
    (call,) = content_blocks(raw, "server_tool_use")
    assert call["input"]["query"] in reply.content
    (result,) = content_blocks(raw, "web_search_tool_result")
    for hit in result["content"]:
        assert f"title: {hit['title']}" in reply.content
        assert f"url: {hit['url']}" in reply.content
        assert hit["encrypted_content"] not in reply.content  # opaque, not shown
    for block in content_blocks(raw, "text"):
        assert block["text"] in reply.content
    assert "[server_tool_use]" in reply.content and reply.content != "[server_tool_use]"


def test_code_execution_results_show_their_output() -> None:
    path = HERE / "code_execution_response.json"
    raw = json.loads(path.read_text())
    (reply,) = load_chat(path)
    for block in raw["content"]:
        if block["type"].endswith("_tool_result"):
            assert f"stdout: {block['content']['stdout']}" in reply.content
            assert f"return_code: {block['content']['return_code']}" in reply.content


def test_a_request_history_with_thinking_keeps_it_apart_and_counts_the_search() -> None:
    path = HERE / "web_search_request.json"
    raw = json.loads(path.read_text())
    loaded = load_chat_file(path)
    assistant = next(m for m in loaded.messages if m.role.value == "assistant")
    history = next(m for m in raw["messages"] if m["role"] == "assistant")
    thinking = [b for b in history["content"] if b["type"] == "thinking"]
    assert [b["thinking"] for b in dict(assistant.extra)["thinking"]] == [
        b["thinking"] for b in thinking
    ]
    assert thinking[0]["thinking"][:30] not in assistant.content
    assert "[web_search_tool_result]" in assistant.content
    assert [(t.name, t.kind) for t in loaded.tools] == [
        (t["name"], t["type"]) for t in raw["tools"]
    ]
    assert detect_format(path) == "anthropic"


def test_unknown_blocks_are_kept_as_text_and_warned_about_once_per_type() -> None:
    chat = {
        "messages": [
            {"role": "user", "content": [{"type": "hologram", "shape": "cube"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "hologram", "shape": "sphere"},
                    {"type": "smell", "note": "rose"},
                ],
            },
        ]
    }
    loaded = load_chat_file(chat)
    assert loaded.messages[0].content == '[hologram] {"shape":"cube"}'
    assert loaded.messages[1].content == '[hologram] {"shape":"sphere"}\n[smell] {"note":"rose"}'
    assert loaded.warnings == (
        "$.messages[0].content[0]: unknown content block type 'hologram', kept as text and counted",
        "$.messages[1].content[1]: unknown content block type 'smell', kept as text and counted",
    )


def test_a_text_document_is_its_text_and_a_pdf_a_placeholder() -> None:
    text_doc = {
        "type": "document",
        "title": "Notes",
        "source": {"type": "text", "media_type": "text/plain", "data": "Buy milk."},
    }
    pdf = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"},
    }
    (message,) = load_chat(
        {"system": "", "messages": [{"role": "user", "content": [text_doc, pdf]}]}
    )
    assert message.content == "[document Notes]\nBuy milk.\n[document]"
