"""Real agent sessions from public, permissively licensed repositories (provenance beside them).

Every expected value is computed from the raw file with json, replaying the app's own rules
where the file needs replaying (Gemini CLI's JSONL records: the last record of an id wins).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.formats import detect_format, load_chat_file
from ctxlab.model import Role

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
GEMINI_JSON = FIXTURES / "gemini_cli" / "vibecodingtracker_session.json"
GEMINI_JSONL = FIXTURES / "gemini_cli" / "vibecodingtracker_session.jsonl"
CODEX_039 = FIXTURES / "codex" / "vibecodingtracker_codex_0.39.0.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _gemini_records(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".json":
        messages: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["messages"]
        return messages
    by_id: dict[str, dict[str, Any]] = {}
    for record in _lines(path):
        assert "$rewindTo" not in record  # the replay below would need it
        if "id" in record:
            by_id[record["id"]] = record
    return list(by_id.values())


def _check_gemini(path: Path) -> None:
    records = _gemini_records(path)
    chat = load_chat_file(path)
    assert detect_format(path) == "gemini-cli" and chat.format == "gemini-cli"
    sent = [r for r in records if r["type"] in ("user", "gemini")]
    calls = [c for r in sent for c in r.get("toolCalls") or []]
    assert len(chat.messages) == len(sent) + len(calls)
    assert [m.id for m in chat.messages if m.role is not Role.TOOL] == [r["id"] for r in sent]
    assert [m.tool_call_id for m in chat.messages if m.role is Role.TOOL] == [
        c["id"] for c in calls
    ]
    with_tokens = [r for r in sent if r["type"] == "gemini" and "tokens" in r]
    assert [u.message_id for u in chat.usage] == [r["id"] for r in with_tokens]
    for u, r in zip(chat.usage, with_tokens, strict=True):
        assert u.input_tokens == r["tokens"]["input"]
        assert u.output_tokens == r["tokens"]["output"] + r["tokens"]["thoughts"]
        assert u.cache_read_input_tokens == r["tokens"]["cached"]
    notices = [r for r in records if r["type"] in ("info", "error", "warning")]
    assert bool(notices) == any("never sent to the model" in w for w in chat.warnings)
    by_id = {m.id: m for m in chat.messages}
    for r in sent:
        thoughts = r.get("thoughts") or []
        got = dict(by_id[r["id"]].extra).get("thinking", ())
        assert list(got) == thoughts
        if isinstance(r["content"], str):
            assert by_id[r["id"]].content == r["content"]


def test_a_real_gemini_cli_session_json_loads_completely() -> None:
    _check_gemini(GEMINI_JSON)


def test_a_real_gemini_cli_session_jsonl_loads_completely() -> None:
    _check_gemini(GEMINI_JSONL)


def test_a_real_codex_0_39_rollout_keeps_every_token_count() -> None:
    rows = _lines(CODEX_039)
    assert rows[0]["payload"]["cli_version"] == "0.39.0"
    counts = [
        r["payload"]["info"]["last_token_usage"]
        for r in rows
        if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"
    ]
    chat = load_chat_file(CODEX_039)
    assert chat.format == "codex"
    assert [u.input_tokens for u in chat.usage] == [c["input_tokens"] for c in counts]
    assert [u.cache_read_input_tokens for u in chat.usage] == [
        c["cached_input_tokens"] for c in counts
    ]
    assert [u.output_tokens for u in chat.usage] == [c["output_tokens"] for c in counts]
    assistants = {m.id for m in chat.messages if m.role is Role.ASSISTANT}
    ids = [u.message_id for u in chat.usage]
    assert len(set(ids)) == len(ids) and set(ids) <= assistants
    calls = [r for r in rows if r["payload"].get("type") in ("function_call", "custom_tool_call")]
    assert sum(len(m.tool_calls) for m in chat.messages) == len(calls)


CODEX_045 = FIXTURES / "codex" / "guideai_codex_0.45.0.jsonl"


def test_a_real_codex_0_45_rollout_bills_each_call_once() -> None:
    """Codex 0.45 writes each call's token_count twice after turn_context (the repeat has the
    same running total), before the call's items: one usage per distinct total."""
    rows = _lines(CODEX_045)
    assert rows[0]["payload"]["cli_version"] == "0.45.0"
    infos = [
        r["payload"]["info"]
        for r in rows
        if r["payload"].get("type") == "token_count" and r["payload"].get("info")
    ]
    billed = []
    previous = None
    for info in infos:
        if info["total_token_usage"] != previous:
            billed.append(info["last_token_usage"])
        previous = info["total_token_usage"]
    turns = sum(1 for r in rows if r["type"] == "turn_context")
    assert len(billed) == turns < len(infos)
    chat = load_chat_file(CODEX_045)
    assert [u.input_tokens for u in chat.usage] == [b["input_tokens"] for b in billed]
    assert [u.output_tokens for u in chat.usage] == [b["output_tokens"] for b in billed]
    assistants = {m.id for m in chat.messages if m.role is Role.ASSISTANT}
    assert {u.message_id for u in chat.usage} <= assistants
    calls = [r for r in rows if r["payload"].get("type") == "function_call"]
    outputs = [r for r in rows if r["payload"].get("type") == "function_call_output"]
    assert sum(len(m.tool_calls) for m in chat.messages) == len(calls)
    assert sum(1 for m in chat.messages if m.role is Role.TOOL) == len(outputs)
