"""claude.ai data export (a hand-written fixture in the export's shape, see PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.formats import detect_format, list_conversations, load_chat, load_chat_file
from ctxlab.model import Role
from ctxlab.validate import validate

PATH = Path(__file__).parent / "fixtures" / "formats" / "claude_ai_export" / "conversations.json"
RAW = json.loads(PATH.read_text())


def test_conversations_are_listed_by_uuid_and_name() -> None:
    assert list_conversations(PATH) == [(c["uuid"], c["name"]) for c in RAW]
    assert detect_format(PATH) == "claude-ai-export"
    assert load_chat(PATH, conversation=RAW[1]["name"]) == load_chat(PATH, conversation=1)


def test_server_run_tools_split_the_assistant_message_and_pair_in_order() -> None:
    loaded = load_chat_file(PATH)
    assert validate(loaded.messages) == () and loaded.warnings == ()
    reply = RAW[0]["chat_messages"][1]["content"]
    use = next(b for b in reply if b["type"] == "tool_use")
    result = next(b for b in reply if b["type"] == "tool_result")
    (call,) = [tc for m in loaded.messages for tc in m.tool_calls]
    assert (call.name, json.loads(call.arguments)) == (use["name"], use["input"])
    (tool,) = [m for m in loaded.messages if m.role is Role.TOOL]
    assert tool.tool_call_id == call.id
    for hit in result["content"]:
        for key in ("title", "url", "text"):
            assert f"{key}: {hit[key]}" in tool.content
    texts = [b["text"] for b in reply if b["type"] == "text"]
    roles = [m.role for m in loaded.messages]
    assert roles == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
    ]
    assert [loaded.messages[1].content, loaded.messages[3].content] == texts


def test_attachments_are_text_the_model_read_and_thinking_is_kept_apart() -> None:
    first, *_, last = load_chat(PATH)
    attachment = RAW[0]["chat_messages"][0]["attachments"][0]
    assert first.content.endswith(
        f"[attachment {attachment['file_name']}]\n{attachment['extracted_content']}"
    )
    thinking = RAW[0]["chat_messages"][3]["content"][0]["thinking"]
    assert dict(last.extra)["thinking"][0]["thinking"] == thinking
    assert thinking not in last.content
    user, _ = load_chat(PATH, conversation=1)
    assert user.content == RAW[1]["chat_messages"][0]["text"] + "\n[file starter.jpg]"


def test_the_current_branch_is_read_when_messages_form_a_tree() -> None:
    root = "00000000-0000-4000-8000-000000000000"
    conv = {
        "uuid": "c",
        "name": "edited",
        "current_leaf_message_uuid": "a2",
        "chat_messages": [
            {"uuid": "u1", "sender": "human", "text": "first try", "parent_message_uuid": root},
            {"uuid": "a1", "sender": "assistant", "text": "answer 1", "parent_message_uuid": "u1"},
            {"uuid": "u2", "sender": "human", "text": "edited", "parent_message_uuid": root},
            {"uuid": "a2", "sender": "assistant", "text": "answer 2", "parent_message_uuid": "u2"},
        ],
    }
    assert [m.content for m in load_chat([conv])] == ["edited", "answer 2"]
    del conv["current_leaf_message_uuid"]
    assert len(load_chat([conv])) == 4  # no leaf: every message, in file order
