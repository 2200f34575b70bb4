"""OpenCode sessions: `opencode export` JSON and the older storage folder.

Expected values are computed from the raw fixture with json, following OpenCode's
toModelMessages / filterCompacted rules (message-v2.ts), never from the loader.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxlab.errors import ChatFormatError
from ctxlab.formats import detect_format, list_conversations, load_chat_file
from ctxlab.model import Role

EXPORT = Path(__file__).parent / "fixtures" / "formats" / "opencode" / "ses_export_compacted.json"


def _raw() -> dict[str, Any]:
    value: dict[str, Any] = json.loads(EXPORT.read_text(encoding="utf-8"))
    return value


def _step_finishes(raw: dict[str, Any], ids: set[str]) -> list[dict[str, Any]]:
    return [
        p
        for m in raw["messages"]
        if m["info"]["id"] in ids and not m["info"].get("error")
        for p in m["parts"]
        if p["type"] == "step-finish"
    ]


def test_an_export_is_detected_and_read_as_opencode() -> None:
    assert detect_format(EXPORT) == "opencode"
    chat = load_chat_file(EXPORT)
    assert chat.format == "opencode"
    assert list_conversations(EXPORT) == [
        ("main", _raw()["info"]["title"]),
        ("full", f"{_raw()['info']['title']} (the whole session)"),
    ]


def test_the_default_conversation_starts_at_the_finished_compaction() -> None:
    raw = _raw()
    msgs = raw["messages"]
    summary = next(m for m in msgs if m["info"].get("summary"))
    start = next(k for k, m in enumerate(msgs) if m["info"]["id"] == summary["info"]["parentID"])
    chat = load_chat_file(EXPORT)
    first = chat.messages[0]
    assert first.id == msgs[start]["info"]["id"]
    assert first.content == "What did we do so far?"
    assert chat.messages[1].id == summary["info"]["id"] and chat.messages[1].is_summary
    assert chat.messages[1].content == next(
        p["text"] for p in summary["parts"] if p["type"] == "text"
    )
    assert any(f"{start} messages before the last compaction" in w for w in chat.warnings)


def test_full_has_every_sent_message_and_each_step_is_one_call() -> None:
    raw = _raw()
    chat = load_chat_file(EXPORT, conversation="full")
    second = raw["messages"][1]
    steps = [p for p in second["parts"] if p["type"] == "step-finish"]
    ids = [m.id for m in chat.messages if m.id.startswith(second["info"]["id"] + ":")]
    assert [i for i in ids if i.count(":") == 1] == [
        f"{second['info']['id']}:{k}" for k in range(2)
    ]
    usage = {u.message_id: u for u in chat.usage}
    for k, finish in enumerate(steps):
        u = usage[f"{second['info']['id']}:{k}"]
        tokens = finish["tokens"]
        assert u.input_tokens == tokens["input"]
        assert u.output_tokens == tokens["output"] + tokens["reasoning"]
        assert u.cache_read_input_tokens == tokens["cache"]["read"]
        assert u.cache_creation_input_tokens == tokens["cache"]["write"]
        assert (
            u.prompt_tokens == tokens["input"] + tokens["cache"]["read"] + tokens["cache"]["write"]
        )
    sent = {m["info"]["id"] for m in raw["messages"]}
    cost = sum(p["cost"] for p in _step_finishes(raw, sent))
    assert f"${cost:.4f}" in " ".join(chat.warnings)


def test_user_parts_as_opencode_sends_them() -> None:
    raw = _raw()
    first = raw["messages"][0]
    expected = [p["text"] for p in first["parts"] if p["type"] == "text" and not p.get("ignored")]
    chat = load_chat_file(EXPORT, conversation="full")
    assert chat.messages[0].content == "\n".join(expected)  # the text/plain file was inlined
    assert "draft that was not sent" not in chat.messages[0].content
    later = next(m for m in chat.messages if m.id == raw["messages"][4]["info"]["id"])
    assert "[file failure.png (image/png)]" in later.content


def test_tool_states_become_results_as_opencode_sends_them() -> None:
    raw = _raw()
    tools = {
        p["callID"]: p["state"] for m in raw["messages"] for p in m["parts"] if p["type"] == "tool"
    }
    chat = load_chat_file(EXPORT, conversation="full")
    results = {m.tool_call_id: m for m in chat.messages if m.role is Role.TOOL}
    assert set(results) == set(tools)
    for call_id, state in tools.items():
        got = results[call_id]
        flags = dict(got.extra)
        if state["status"] == "completed":
            assert got.content == (
                "[Old tool result content cleared]"
                if state["time"].get("compacted")
                else state["output"]
            )
        elif state["status"] == "error" and state.get("metadata", {}).get("interrupted"):
            assert got.content == state["metadata"]["output"] and "is_error" not in flags
        elif state["status"] == "error":
            assert got.content == state["error"] and flags["is_error"] is True
        else:
            assert got.content == "[Tool execution was interrupted]" and flags["is_error"]
    calls = {c.id: c for m in chat.messages for c in m.tool_calls}
    for call_id, state in tools.items():
        assert json.loads(calls[call_id].arguments) == state["input"]


def test_reasoning_is_kept_apart_and_errored_replies_are_left_out() -> None:
    raw = _raw()
    chat = load_chat_file(EXPORT, conversation="full")
    reasoning = [p["text"] for p in raw["messages"][1]["parts"] if p["type"] == "reasoning"]
    step0 = next(m for m in chat.messages if m.id == raw["messages"][1]["info"]["id"] + ":0")
    assert [t["thinking"] for t in dict(step0.extra)["thinking"]] == reasoning
    assert all(r not in step0.content for r in reasoning)
    failed = [
        m["info"]["id"]
        for m in raw["messages"]
        if m["info"].get("error") and m["info"]["error"]["name"] != "MessageAbortedError"
    ]
    kept = {m.id.split(":")[0] for m in chat.messages}
    assert failed and not set(failed) & kept
    aborted = next(
        m
        for m in raw["messages"]
        if m["info"].get("error", {}).get("name") == "MessageAbortedError"
    )
    assert aborted["info"]["id"] in kept  # aborted after producing text: still sent


def _storage(tmp_path: Path) -> Path:
    """The export written as OpenCode's pre-SQLite storage folder."""
    raw = _raw()
    info = raw["info"]
    root = tmp_path / "opencode" / "storage"
    (root / "session" / info["projectID"]).mkdir(parents=True)
    (root / "session" / info["projectID"] / f"{info['id']}.json").write_text(json.dumps(info))
    for m in raw["messages"]:
        mdir = root / "message" / info["id"]
        mdir.mkdir(parents=True, exist_ok=True)
        (mdir / f"{m['info']['id']}.json").write_text(json.dumps(m["info"]))
        for p in m["parts"]:
            pdir = root / "part" / m["info"]["id"]
            pdir.mkdir(parents=True, exist_ok=True)
            (pdir / f"{p['id']}.json").write_text(json.dumps(p))
    return tmp_path / "opencode"


def test_the_storage_folder_reads_as_the_export(tmp_path: Path) -> None:
    folder = _storage(tmp_path)
    assert detect_format(folder) == "opencode"
    raw = _raw()
    assert list_conversations(folder) == [(raw["info"]["id"], raw["info"]["title"])]
    for conversation in ("main", "full"):
        from_export = load_chat_file(EXPORT, conversation=conversation)
        from_folder = load_chat_file(folder, conversation=f"{raw['info']['id']}/{conversation}")
        assert from_folder.messages == from_export.messages
        assert from_folder.usage == from_export.usage
    assert load_chat_file(folder / "storage").messages == load_chat_file(EXPORT).messages


def test_a_bad_part_is_named() -> None:
    raw = _raw()
    raw["messages"][1]["parts"][3]["state"] = "done"
    with pytest.raises(ChatFormatError, match=r"\$\.messages\[1\]\.parts\[3\]\.state"):
        load_chat_file(json.dumps(raw).encode(), conversation="full")


def _database(tmp_path: Path) -> Path:
    """The export written as OpenCode's SQLite store (session.sql.ts: ids in columns, the rest
    of each message and part as JSON ``data``)."""
    raw = _raw()
    info = raw["info"]
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, slug TEXT NOT NULL,
          directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
          time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
          time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
          time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
        """
    )
    db.execute(
        "INSERT INTO session VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            info["id"],
            info["projectID"],
            info["slug"],
            info["directory"],
            info["title"],
            info["version"],
            info["time"]["created"],
            info["time"]["updated"],
        ),
    )
    for m in raw["messages"]:
        data = {k: v for k, v in m["info"].items() if k not in ("id", "sessionID")}
        created = m["info"]["time"]["created"]
        db.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
            (m["info"]["id"], info["id"], created, created, json.dumps(data)),
        )
        for p in m["parts"]:
            pdata = {k: v for k, v in p.items() if k not in ("id", "sessionID", "messageID")}
            db.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (p["id"], m["info"]["id"], info["id"], created, created, json.dumps(pdata)),
            )
    db.commit()
    db.close()
    return path


def test_the_sqlite_store_reads_as_the_export(tmp_path: Path) -> None:
    path = _database(tmp_path)
    raw = _raw()
    assert detect_format(path) == "opencode"
    assert list_conversations(path) == [(raw["info"]["id"], raw["info"]["title"])]
    for conversation in ("main", "full"):
        from_export = load_chat_file(EXPORT, conversation=conversation)
        from_db = load_chat_file(path, conversation=f"{raw['info']['id']}/{conversation}")
        assert from_db.messages == from_export.messages
        assert from_db.usage == from_export.usage
        assert from_db.warnings == from_export.warnings


def test_an_sqlite_file_that_is_not_opencodes_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(ChatFormatError, match="a database holding no chat"):
        load_chat_file(path)
    with pytest.raises(ChatFormatError, match="pass the database file's path"):
        load_chat_file(path.read_bytes())
