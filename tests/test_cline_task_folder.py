"""Cline task folders: the conversation from api_conversation_history.json, one recorded usage
per request from ui_messages.json (on the assistant message the request produced), the task
metadata as a reading note; a lone history still loads and is named Cline's.

Expected values come from the raw files (json)."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from ctxlab.cli import main
from ctxlab.errors import ChatFormatError
from ctxlab.formats import detect_format, load_chat_file

TASK = Path(__file__).parent / "fixtures" / "formats" / "cline" / "task-1767225600000"


def _json(name: str) -> Any:
    return json.loads((TASK / name).read_text())


def _requests() -> list[dict[str, Any]]:
    out = []
    for m in _json("ui_messages.json"):
        if m.get("say") == "api_req_started":
            info = json.loads(m["text"])
            if "tokensIn" in info:
                out.append({**info, "index": m["conversationHistoryIndex"]})
    return out


def test_folder_reads_the_history_with_tools_and_thinking() -> None:
    history = _json("api_conversation_history.json")
    chat = load_chat_file(TASK)
    assert chat.format == "cline" and detect_format(TASK) == "cline"
    calls = [b for m in history for b in m["content"] if b["type"] == "tool_use"]
    assert [(c.id, c.name) for m in chat.messages for c in m.tool_calls] == [
        (b["id"], b["name"]) for b in calls
    ]
    results = [b for m in history for b in m["content"] if b["type"] == "tool_result"]
    tools = [m for m in chat.messages if m.role.value == "tool"]
    assert [m.tool_call_id for m in tools] == [b["tool_use_id"] for b in results]
    thinking = [b["thinking"] for m in history for b in m["content"] if b["type"] == "thinking"]
    assert all(t not in m.content for t in thinking for m in chat.messages)
    assert all(
        "ts" not in dict(m.extra) and "modelInfo" not in dict(m.extra) for m in chat.messages
    )
    texts = [
        b["text"]
        for m in history
        if m["role"] == "user"
        for b in m["content"]
        if b["type"] == "text"
    ]
    users = "\n".join(m.content for m in chat.messages if m.role.value == "user")
    assert all(t in users for t in texts)


def test_usage_is_each_requests_tokens_on_the_message_it_produced() -> None:
    history = _json("api_conversation_history.json")
    chat = load_chat_file(TASK)
    requests = _requests()
    assert len(chat.usage) == len(requests)
    by_id = {m.id: m for m in chat.messages}
    for usage, request in zip(chat.usage, requests, strict=True):
        reply = history[request["index"] + 1]
        assert reply["role"] == "assistant"
        message = by_id[usage.message_id]
        assert [c.id for c in message.tool_calls] == [
            b["id"] for b in reply["content"] if b["type"] == "tool_use"
        ]
        assert usage.input_tokens == request["tokensIn"]
        assert usage.output_tokens == request["tokensOut"]
        assert usage.cache_read_input_tokens == request["cacheReads"]
        assert usage.cache_creation_input_tokens == request["cacheWrites"]
        assert usage.prompt_tokens == (
            request["tokensIn"] + request["cacheReads"] + request["cacheWrites"]
        )


def test_task_metadata_is_summarised_in_a_note() -> None:
    meta = _json("task_metadata.json")
    chat = load_chat_file(TASK)
    model = meta["model_usage"][0]
    note = next(w for w in chat.warnings if w.startswith("task_metadata.json"))
    assert f"{model['model_provider_id']}/{model['model_id']}" in note
    assert f"{len(meta['files_in_context'])} files in context" in note


def test_requests_without_index_are_matched_in_order(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    shutil.copytree(TASK, folder)
    ui = _json("ui_messages.json")
    for m in ui:
        m.pop("conversationHistoryIndex", None)
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    chat = load_chat_file(folder)
    assistants = [m.id for m in chat.messages if m.role.value == "assistant"]
    assert [u.message_id for u in chat.usage] == assistants[: len(_requests())]


def test_lone_history_loads_and_says_it_is_clines(tmp_path: Path) -> None:
    history = _json("api_conversation_history.json")
    alone = tmp_path / "api_conversation_history.json"
    alone.write_text(json.dumps(history))
    chat = load_chat_file(alone)
    assert chat.format == "cline" and chat.usage == ()
    assert len(chat.messages) == len(load_chat_file(TASK).messages)
    assert any("alone" in w and "ui_messages.json" in w for w in chat.warnings)
    beside = load_chat_file(TASK / "api_conversation_history.json")  # its folder is read
    assert len(beside.usage) == len(_requests())


def test_bad_request_json_names_the_file_and_item(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    shutil.copytree(TASK, folder)
    ui = _json("ui_messages.json")
    k = next(i for i, m in enumerate(ui) if m.get("say") == "api_req_started")
    ui[k]["text"] = "{not json"
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    with pytest.raises(ChatFormatError, match=rf"ui_messages.json: \$\[{k}\]\.text"):
        load_chat_file(folder)


def test_bad_history_names_the_file_and_path(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    shutil.copytree(TASK, folder)
    history = _json("api_conversation_history.json")
    history[1]["content"][2]["name"] = 5
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    with pytest.raises(ChatFormatError, match=r"api_conversation_history.json: \$\[1\]"):
        load_chat_file(folder)


def test_cli_show_reads_a_task_folder() -> None:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["show", str(TASK)])
    assert status == 0, err.getvalue()
    assert f"provider usage: {len(_requests())} calls" in out.getvalue()
