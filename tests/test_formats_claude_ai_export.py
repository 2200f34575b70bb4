"""claude.ai data exports: a real one and a hand-written one in the newer shape (see PROVENANCE.md).

Expected values are computed here from the raw files, never from the loader.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

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


REAL = PATH.parent / "artifacts.json"  # a real export (simonw/claude-to-sqlite, Apache-2.0)
REAL_RAW = json.loads(REAL.read_bytes())


def _when(message: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(message["created_at"])


def test_a_real_export_is_listed_by_uuid_and_name_and_detected() -> None:
    assert list_conversations(REAL) == [(c["uuid"], c["name"]) for c in REAL_RAW]
    assert detect_format(REAL) == "claude-ai-export"
    assert load_chat(REAL, conversation=REAL_RAW[0]["name"]) == load_chat(REAL)


def test_a_real_export_loads_every_message_with_its_text_and_files_in_time_order() -> None:
    raw = REAL_RAW[0]["chat_messages"]
    assert [_when(m) for m in raw] != sorted(_when(m) for m in raw)  # the file is out of order
    expected = sorted(raw, key=_when)  # stable: file order among equal times
    loaded = load_chat_file(REAL)
    messages = loaded.messages
    assert len(messages) == len(raw)  # one message per export message: no tool blocks here
    assert [m.id for m in messages] == [m["uuid"] for m in expected]
    roles = {"human": Role.USER, "assistant": Role.ASSISTANT}
    assert [m.role for m in messages] == [roles[m["sender"]] for m in expected]
    assert [m.role for m in messages] == [Role.USER, Role.ASSISTANT] * (len(raw) // 2)
    for got, want in zip(messages, expected, strict=True):
        files = [f"[file {f['file_name']}]" for f in want["files"]]
        assert got.content == "\n".join([want["text"], *files])
    assert validate(messages) == ()
    assert loaded.warnings == (
        "$[0].chat_messages: the export lists these messages out of order; "
        "they are read in created_at order",
    )


def test_file_order_is_kept_when_a_time_is_missing_or_already_in_order() -> None:
    conv = json.loads(json.dumps(REAL_RAW[0]))
    del conv["chat_messages"][3]["created_at"]
    loaded = load_chat_file([conv], fmt="claude-ai-export")
    assert [m.id for m in loaded.messages] == [m["uuid"] for m in conv["chat_messages"]]
    assert loaded.warnings == ()
    example = [json.loads(json.dumps(REAL_RAW[0]))]
    example[0]["chat_messages"].sort(key=_when)
    assert load_chat_file(example).warnings == ()


def test_app_bookkeeping_in_tool_blocks_is_neither_shown_nor_counted() -> None:
    """The shape newer exports give a server-run tool call (keys as published in real exports:
    call ids, a ``uuid`` on each result part, a ``token_budget`` block between blocks); the
    text is invented."""
    result_part = {
        "type": "text",
        "text": "     1\tname: notes\n     2\tkeep it short",
        "uuid": "b4",
    }
    reply = [
        {"type": "tool_use", "id": "toolu_01", "name": "view", "input": {"path": "/mnt/n.md"}},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01",
            "name": "view",
            "is_error": False,
            "content": [result_part],
        },
        {
            "type": "token_budget",
            "start_timestamp": "2025-12-01T19:41:41.570375Z",
            "stop_timestamp": "2025-12-01T19:41:41.570375Z",
        },
        {"type": "text", "text": "Done.", "citations": [], "flags": None},
    ]
    conv = {
        "uuid": "c",
        "name": "n",
        "chat_messages": [
            {"uuid": "u", "sender": "human", "text": "Read my notes."},
            {"uuid": "a", "sender": "assistant", "text": "", "content": reply},
        ],
    }
    loaded = load_chat_file([conv], fmt="claude-ai-export")
    user, call, tool, answer = loaded.messages
    assert user.content == "Read my notes."
    assert call.tool_calls[0].id == "toolu_01" and tool.tool_call_id == "toolu_01"
    assert tool.content == result_part["text"]  # no "uuid: b4", no "text: " label
    assert answer.content == "Done."
    assert loaded.warnings == ()  # token_budget is not an unknown block
