"""pi coding-agent sessions: the context pi builds at the leaf (compaction, branches, pi's own
message kinds), recorded usage per assistant message, and errors that name line and field.

Expected values come from the raw JSONL (json), following pi's buildSessionContext by hand."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from ctxlab.cli import main
from ctxlab.errors import ChatFormatError
from ctxlab.formats import detect_format, list_conversations, load_chat_file

HERE = Path(__file__).parent / "fixtures" / "formats" / "pi"
TREE = HERE / "pi_v3_tree.jsonl"
REAL = HERE / "pi_v1_large_session_head.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _path_to(entries: list[dict[str, Any]], leaf: dict[str, Any]) -> list[dict[str, Any]]:
    by_id = {e["id"]: e for e in entries}
    out = [leaf]
    while out[-1]["parentId"] is not None:
        out.append(by_id[out[-1]["parentId"]])
    return out[::-1]


def _sent(entry: dict[str, Any]) -> bool:
    """Whether an entry becomes a message pi sends (pi's appendMessage + convertToLlm)."""
    if entry["type"] in ("custom_message", "branch_summary"):
        return True
    if entry["type"] != "message":
        return False
    m = entry["message"]
    if m["role"] == "assistant" and m["stopReason"] in ("error", "aborted"):
        return False
    return not (m["role"] == "bashExecution" and m.get("excludeFromContext"))


def test_tree_session_main_is_the_context_after_the_last_compaction() -> None:
    raw = _lines(TREE)
    entries = raw[1:]
    path = _path_to(entries, entries[-1])
    compaction = [e for e in path if e["type"] == "compaction"][-1]
    at = path.index(compaction)
    ids = [e["id"] for e in path]
    first_kept = ids.index(compaction["firstKeptEntryId"])
    expected = [compaction["id"]] + [
        e["id"] for e in path[first_kept:at] + path[at + 1 :] if _sent(e)
    ]
    chat = load_chat_file(TREE)
    assert chat.format == "pi"
    assert [m.id for m in chat.messages] == expected
    summary = chat.messages[0]
    assert summary.role.value == "user" and compaction["summary"] in summary.content
    assert dict(summary.extra)["pi_compaction_summary"] is True
    left_out = sum(_sent(e) for e in path[:first_kept])
    assert any(f"{left_out} earlier messages left out" in w for w in chat.warnings)
    off_branch = len(entries) - len(path)
    assert any(w.startswith(f"{off_branch} entries on other branches") for w in chat.warnings)


def test_tree_session_usage_is_each_assistant_messages_recorded_usage() -> None:
    raw = _lines(TREE)
    chat = load_chat_file(TREE, conversation="full")
    shown = {m.id for m in chat.messages}
    expected = {
        e["id"]: e["message"]["usage"]
        for e in raw[1:]
        if e["type"] == "message" and e["message"]["role"] == "assistant" and e["id"] in shown
    }
    assert {u.message_id for u in chat.usage} == set(expected)
    for u in chat.usage:
        raw_usage = expected[u.message_id]
        assert (u.input_tokens, u.output_tokens) == (raw_usage["input"], raw_usage["output"])
        assert u.cache_read_input_tokens == raw_usage["cacheRead"]
        assert u.cache_creation_input_tokens == raw_usage["cacheWrite"]
        assert u.prompt_tokens + u.output_tokens == raw_usage["totalTokens"]


def test_tool_calls_results_thinking_and_pi_kinds_keep_their_meaning() -> None:
    raw = {e.get("id"): e for e in _lines(TREE)}
    chat = load_chat_file(TREE, conversation="full")
    by_id = {m.id: m for m in chat.messages}
    a1 = raw["a1"]["message"]["content"]
    call = next(b for b in a1 if b["type"] == "toolCall")
    assert by_id["a1"].tool_calls[0].id == call["id"]
    assert json.loads(by_id["a1"].tool_calls[0].arguments) == call["arguments"]
    thinking = next(b for b in a1 if b["type"] == "thinking")["thinking"]
    assert thinking not in by_id["a1"].content
    assert dict(by_id["a1"].extra)["thinking"][0]["thinking"] == thinking
    t2 = raw["t2"]["message"]
    assert by_id["t2"].tool_call_id == t2["toolCallId"] and by_id["t2"].name == t2["toolName"]
    assert dict(by_id["t2"].extra)["is_error"] is True
    bash = raw["b1"]["message"]
    assert by_id["b1"].content.startswith(f"Ran `{bash['command']}`")
    assert "b2" not in by_id  # excludeFromContext (pi's !! commands)
    assert raw["bs1"]["summary"] in by_id["bs1"].content
    assert by_id["cm1"].content == raw["cm1"]["content"]


def test_other_leaves_are_their_own_conversations() -> None:
    raw = _lines(TREE)
    entries = raw[1:]
    parents = {e["parentId"] for e in entries}
    leaves = [e for e in entries[:-1] if e["id"] not in parents]
    listed = list_conversations(TREE)
    assert [cid for cid, _ in listed] == ["main", "full"] + [
        f"branch-{k}" for k in range(1, len(leaves) + 1)
    ]
    assert listed[0][1] == next(e["name"] for e in entries if e["type"] == "session_info")
    branch = load_chat_file(TREE, conversation="branch-1")
    path = _path_to(entries, leaves[0])
    assert [m.id for m in branch.messages] == [e["id"] for e in path if _sent(e)]
    assert any("error or were aborted" in w for w in branch.warnings)


def test_real_version_1_session_reads_every_message_and_its_usage() -> None:
    raw = _lines(REAL)
    assert "version" not in raw[0]
    messages = [e["message"] for e in raw[1:] if e["type"] == "message"]
    kept = [
        m
        for m in messages
        if not (m["role"] == "assistant" and m["stopReason"] in ("error", "aborted"))
    ]
    results = sum(m["role"] == "toolResult" for m in kept)
    chat = load_chat_file(REAL)
    assert detect_format(REAL) == "pi"
    assert len(chat.messages) == len(kept)
    assert sum(m.role.value == "tool" for m in chat.messages) == results
    calls = [
        b["id"]
        for m in kept
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "toolCall"
    ]
    assert [c.id for m in chat.messages for c in m.tool_calls] == calls
    usage = [m["usage"] for m in kept if m["role"] == "assistant"]
    assert [(u.input_tokens, u.output_tokens, u.cache_read_input_tokens) for u in chat.usage] == [
        (x["input"], x["output"], x["cacheRead"]) for x in usage
    ]


@pytest.mark.parametrize(
    ("line", "bad", "where", "says"),
    [
        (3, {"message": {"role": "martian", "content": "x"}}, "line 3, $.message.role", "martian"),
        (3, {"message": None}, "line 3, $.message", "pi message object"),
        (2, {"id": 7}, "line 2, $.id", "entry id string"),
        (
            4,
            {"message": {"role": "toolResult", "content": []}},
            "line 4, $.message.toolCallId",
            "missing",
        ),
    ],
)
def test_bad_entries_name_file_line_and_field(
    tmp_path: Path, line: int, bad: dict[str, Any], where: str, says: str
) -> None:
    raw = _lines(TREE)
    raw[line - 1] = {**raw[line - 1], **bad}
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in raw))
    with pytest.raises(ChatFormatError) as info:
        load_chat_file(path, conversation="full")
    assert str(info.value).startswith(f"broken.jsonl: {where}")
    assert says in str(info.value)


def test_negative_usage_is_refused_naming_the_field(tmp_path: Path) -> None:
    raw = _lines(TREE)
    raw[2]["message"]["usage"]["cacheRead"] = -1
    path = tmp_path / "usage.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in raw))
    with pytest.raises(ChatFormatError, match=r"line 3, \$\.message\.usage\.cacheRead"):
        load_chat_file(path, conversation="full")


def test_cli_show_reads_a_pi_session() -> None:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["show", str(TREE)])
    assert status == 0, err.getvalue()
    raw = _lines(TREE)[1:]
    path = _path_to(raw, raw[-1])
    at = max(k for k, e in enumerate(path) if e["type"] == "compaction")
    first = [e["id"] for e in path].index(path[at]["firstKeptEntryId"])
    shown = 1 + sum(_sent(e) for e in path[first:at] + path[at + 1 :])
    calls = sum(
        e["type"] == "message" and e["message"]["role"] == "assistant"
        for e in path[first:at] + path[at + 1 :]
    )
    assert f"total: {shown} messages" in out.getvalue()
    assert f"provider usage: {calls} calls" in out.getvalue()
    assert "pi compacted the history once" in err.getvalue() + out.getvalue()
