"""Codex usage kept in every rollout order, and items Codex never sends left out.

Expected values come from the raw files: a model call is a ``token_count`` event whose
``info.total_token_usage`` differs from the previous one's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.formats import load_chat_file
from ctxlab.model import Role

HERE = Path(__file__).parent / "fixtures" / "formats" / "codex"
REAL = HERE / "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
OLD_ORDER = HERE / "codex_0.4x_order.jsonl"
GHOSTS = HERE / "codex_ghost_snapshots.jsonl"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _dump(lines: list[dict[str, Any]]) -> str:
    return "".join(
        json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines
    )


def _is_count(line: dict[str, Any]) -> bool:
    payload = line.get("payload")
    return (
        line["type"] == "event_msg"
        and isinstance(payload, dict)
        and payload.get("type") == "token_count"
        and payload.get("info") is not None
    )


def _calls(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """last_token_usage of every new call (totals that changed), in file order."""
    calls, totals = [], None
    for line in lines:
        if _is_count(line):
            info = line["payload"]["info"]
            if info["total_token_usage"] != totals:
                calls.append(info["last_token_usage"])
                totals = info["total_token_usage"]
    return calls


def old_order(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rollout as Codex 0.4x wrote it: each call's token_count moved up to just after the
    turn_context of that call (``try_run_turn`` persisted the turn context, sent TokenCount on
    completion, and ``run_task`` recorded the items afterwards), dropping the repeat that the
    newer version writes there."""
    out: list[dict[str, Any]] = []
    context_at: int | None = None
    totals = None
    for line in lines:
        if line["type"] == "turn_context":
            out.append(line)
            context_at = len(out)
            continue
        if _is_count(line):
            info = line["payload"]["info"]
            if info["total_token_usage"] == totals:
                continue  # the repeat after turn_context
            totals = info["total_token_usage"]
            if context_at is not None:
                out.insert(context_at, line)
                context_at = None
                continue
        out.append(line)
    return out


def with_ghosts(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ghost_snapshot item after every turn_context, as Codex 0.5x-0.6x records the /undo
    snapshot at the start of a turn (shape from ``ResponseItem::GhostSnapshot``)."""
    out: list[dict[str, Any]] = []
    for k, line in enumerate(lines):
        out.append(line)
        if line["type"] == "turn_context":
            out.append(
                {
                    "timestamp": line["timestamp"],
                    "type": "response_item",
                    "payload": {
                        "type": "ghost_snapshot",
                        "ghost_commit": {
                            "id": f"{k:040x}",
                            "parent": f"{k + 1:040x}",
                            "preexisting_untracked_files": [],
                            "preexisting_untracked_dirs": [],
                        },
                    },
                }
            )
    return out


def test_derived_files_are_exactly_the_documented_edits() -> None:
    assert OLD_ORDER.read_text(encoding="utf-8") == _dump(old_order(_lines(REAL)))
    assert GHOSTS.read_text(encoding="utf-8") == _dump(with_ghosts(_lines(REAL)))


def test_old_order_really_puts_usage_before_the_items() -> None:
    lines = _lines(OLD_ORDER)
    kinds = [line["type"] for line in lines]
    firsts = [k for k, kind in enumerate(kinds) if kind == "turn_context"]
    assert firsts and all(_is_count(lines[k + 1]) for k in firsts)


@pytest.mark.parametrize("path", [REAL, OLD_ORDER, GHOSTS], ids=["0.104", "0.4x", "ghosts"])
def test_every_call_is_billed_once(path: Path) -> None:
    calls = _calls(_lines(path))
    loaded = load_chat_file(path)
    assert len(calls) == 28
    got = [(u.input_tokens, u.output_tokens) for u in loaded.usage]
    assert got == [(c["input_tokens"], c["output_tokens"]) for c in calls]
    assert not any("token_count" in w for w in loaded.warnings)


def test_both_orders_bill_the_same_messages() -> None:
    new, old = load_chat_file(REAL), load_chat_file(OLD_ORDER)
    assert [u.message_id for u in new.usage] == [u.message_id for u in old.usage]
    assert [m.content for m in new.messages] == [m.content for m in old.messages]
    assistants = {m.id for m in new.messages if m.role is Role.ASSISTANT}
    assert {u.message_id for u in new.usage} <= assistants


def test_each_bill_goes_to_the_response_it_follows_in_the_new_order() -> None:
    """In the real file a new token_count comes after the items of its call: the billed
    message's last function call is the last one before that event."""
    lines = _lines(REAL)
    last_call: list[str] = []
    expected, totals, current = [], None, None
    for line in lines:
        p = line.get("payload")
        if line["type"] == "response_item" and p["type"] == "function_call":
            current = p["call_id"]
        if _is_count(line) and line["payload"]["info"]["total_token_usage"] != totals:
            totals = line["payload"]["info"]["total_token_usage"]
            expected.append(current)
    loaded = load_chat_file(REAL)
    by_id = {m.id: m for m in loaded.messages}
    for usage, call_id in zip(loaded.usage, expected, strict=True):
        message = by_id[usage.message_id]
        ids = [c.id for c in message.tool_calls]
        last_call.append(ids[-1] if ids else "")
        if ids:
            assert ids[-1] == call_id


def test_ghost_snapshots_are_left_out_and_reported() -> None:
    plain, ghosts = load_chat_file(REAL), load_chat_file(GHOSTS)
    n = sum(
        1
        for line in _lines(GHOSTS)
        if line["type"] == "response_item" and line["payload"]["type"] == "ghost_snapshot"
    )
    assert n == 28
    assert [m.content for m in ghosts.messages] == [m.content for m in plain.messages]
    assert not any("ghost" in (m.content or "") for m in ghosts.messages)
    assert (
        f"skipped {n} ghost_snapshot items (Codex /undo snapshots, never sent to the model)"
        in ghosts.warnings
    )
    full = load_chat_file(GHOSTS, conversation="0")
    assert len(full.messages) == len(plain.messages)


def _rollout(*lines: dict[str, Any]) -> str:
    return _dump(list(lines))


def _count(total: int, out: int) -> dict[str, Any]:
    usage = {
        "input_tokens": total - out,
        "cached_input_tokens": 0,
        "output_tokens": out,
        "reasoning_output_tokens": 0,
        "total_tokens": total,
    }
    return {
        "timestamp": "t",
        "type": "event_msg",
        "payload": {
            "type": "token_count",
            "info": {"total_token_usage": usage, "last_token_usage": usage},
        },
    }


def test_a_call_no_response_follows_is_a_warning_not_a_silent_loss(tmp_path: Path) -> None:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "hello"}],
    }
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        _rollout(
            {"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}},
            {"timestamp": "t", "type": "response_item", "payload": user},
            {"timestamp": "t", "type": "turn_context", "payload": {}},
            _count(10, 2),
            {"timestamp": "t", "type": "response_item", "payload": answer},
            {"timestamp": "t", "type": "turn_context", "payload": {}},
            _count(25, 3),  # a call whose response the rollout does not hold
        ),
        encoding="utf-8",
    )
    loaded = load_chat_file(path)
    assert [(u.input_tokens, u.output_tokens) for u in loaded.usage] == [(8, 2)]
    (warning,) = [w for w in loaded.warnings if "token_count" in w]
    assert "line 7" in warning and "not recorded" in warning


def test_system_items_are_never_sent(tmp_path: Path) -> None:
    system = {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "s"}]}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        _rollout(
            {"timestamp": "t", "type": "response_item", "payload": system},
            {"timestamp": "t", "type": "response_item", "payload": user},
        ),
        encoding="utf-8",
    )
    loaded = load_chat_file(path)
    assert [m.content for m in loaded.messages] == ["hi"]
    assert any(w.startswith("skipped 1 system message item") for w in loaded.warnings)
