"""Gemini CLI chat sessions: expected values come from the raw file with json."""

from __future__ import annotations

import json
from pathlib import Path

from ctxlab.formats import load_chat_file
from ctxlab.model import Role

SESSION = (
    Path(__file__).parent / "fixtures/formats/gemini_cli/session-2026-08-21T10-00-fix-test.json"
)


def test_session_reads_turns_tools_usage_and_skips_notices() -> None:
    raw = json.loads(SESSION.read_text(encoding="utf-8"))
    loaded = load_chat_file(SESSION)
    assert loaded.format == "gemini-cli"
    sent = [m for m in raw["messages"] if m["type"] in ("user", "gemini")]
    calls = [c for m in sent for c in m.get("toolCalls", [])]
    assert len(loaded.messages) == len(sent) + len(calls)
    assert [m.role for m in loaded.messages] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    (call,) = loaded.messages[1].tool_calls
    assert (call.id, call.name) == (calls[0]["id"], calls[0]["name"])
    assert json.loads(call.arguments) == calls[0]["args"]
    assert loaded.messages[2].tool_call_id == calls[0]["id"]
    assert (
        loaded.messages[2].content
        == calls[0]["result"][0]["functionResponse"]["response"]["output"]
    )
    tokens = [m["tokens"] for m in sent if "tokens" in m]
    assert [(u.input_tokens, u.output_tokens, u.cache_read_input_tokens) for u in loaded.usage] == [
        (t["input"], t["output"] + t["thoughts"], t["cached"]) for t in tokens
    ]
    assert "skipped 1 info entry (Gemini CLI notices, never sent to the model)" in loaded.warnings
    assert dict(loaded.messages[1].extra)["thinking"][0]["subject"] == "Reading the test"


def test_jsonl_session_replays_updates_and_rewinds(tmp_path: Path) -> None:
    raw = json.loads(SESSION.read_text(encoding="utf-8"))
    header = {k: v for k, v in raw.items() if k != "messages"}
    lines = [header, *raw["messages"], {"$rewindTo": "m4"}, raw["messages"][3]]
    lines.append({**raw["messages"][0], "id": "m5", "content": "thanks"})
    lines.append({"$rewindTo": "m5"})
    path = tmp_path / "session-x.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    loaded = load_chat_file(path)
    assert [m.content for m in loaded.messages] == [
        m.content for m in load_chat_file(SESSION).messages
    ]
