"""Claude Code sessions: real files from a transcript viewer's test data (see PROVENANCE.md).

Expected values are computed here from the raw JSONL lines, never from the loader.
"""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.errors import ChatFormatError
from ctxlab.formats import detect_format, list_conversations, load_chat, load_chat_file
from ctxlab.formats._claude_code_branches import branch_view, split_branches
from ctxlab.model import Role
from ctxlab.validate import validate

HERE = Path(__file__).parent / "fixtures" / "formats" / "claude_code"
PROJECT = HERE / "project"
SESSION = PROJECT / "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"
SUBAGENT = PROJECT / "29ccd257-68b1-427f-ae5f-6524b7cb6f20" / "subagents" / "agent-a2271d1.jsonl"
THINKING = HERE / "thinking_session.jsonl"


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def is_prompt(d: dict[str, Any]) -> bool:
    """A user line with a prompt of its own (not only tool results)."""
    content = d["message"]["content"]
    return d.get("type") == "user" and not (
        isinstance(content, list) and all(b.get("type") == "tool_result" for b in content)
    )


def forks(lines: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """The file's own rewinds: two user prompts with the same parent, as (earlier, later)
    line indices. Claude Code appends, so the lines from the earlier prompt up to the later one
    are the abandoned branch."""
    prompts: dict[str, list[int]] = {}
    for i, d in enumerate(lines):
        if d.get("type") == "user" and is_prompt(d) and isinstance(d.get("parentUuid"), str):
            prompts.setdefault(d["parentUuid"], []).append(i)
    return [(a, b) for kids in prompts.values() for a, b in itertools.pairwise(kids)]


def rewound(lines: list[dict[str, Any]]) -> set[int]:
    return {i for a, b in forks(lines) for i in range(a, b)}


def thread(lines: list[dict[str, Any]], sidechain: bool) -> list[dict[str, Any]]:
    """The message lines of one thread on the branch the model saw last."""
    gone = rewound(lines)
    return [
        d
        for i, d in enumerate(lines)
        if d.get("type") in ("user", "assistant")
        and bool(d.get("isSidechain")) is sidechain
        and i not in gone
    ]


def blocks(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    out = []
    for d in lines:
        content = d["message"]["content"]
        if isinstance(content, list):
            out += [b for b in content if b.get("type") == kind]
    return out


def pairing_problems(messages: Any) -> list[str]:
    codes = ("orphan-tool-result", "unanswered-tool-call", "duplicate-tool-call-id")
    return [p.code for p in validate(messages) if p.code in codes]


@pytest.mark.parametrize("path", [SESSION, SUBAGENT, THINKING, *sorted(PROJECT.glob("*.jsonl"))])
def test_lines_of_one_response_merge_into_one_message_with_every_block(path: Path) -> None:
    lines = raw_lines(path)
    mine = thread(lines, sidechain=path == SUBAGENT)
    conversation = "agent-a2271d1" if path == SUBAGENT else None
    source = SESSION if path == SUBAGENT else path
    loaded = load_chat_file(source, conversation=conversation)
    assistants = [m for m in loaded.messages if m.role is Role.ASSISTANT]
    response_ids = {d["message"]["id"] for d in mine if d["type"] == "assistant"}
    assert {m.id for m in assistants} == response_ids  # one message per API response
    calls = [tc for m in assistants for tc in m.tool_calls]
    assert [tc.id for tc in calls] == [b["id"] for b in blocks(mine, "tool_use")]
    results = [m for m in loaded.messages if m.role is Role.TOOL]
    assert sorted(m.tool_call_id or "" for m in results) == sorted(
        b["tool_use_id"] for b in blocks(mine, "tool_result")
    )
    texts = [b["text"] for b in blocks([d for d in mine if d["type"] == "assistant"], "text")]
    joined = "\n".join(m.content for m in assistants)
    assert all(t in joined for t in texts)  # no text lost
    assert pairing_problems(loaded.messages) == []


def test_billed_usage_is_the_last_line_of_each_response() -> None:
    lines = thread(raw_lines(SUBAGENT), sidechain=True)
    expected: dict[str, dict[str, int]] = {}
    for d in lines:
        if d["type"] == "assistant" and d["message"].get("usage"):
            expected[d["message"]["id"]] = d["message"]["usage"]
    usage = load_chat_file(SESSION, conversation="agent-a2271d1").usage
    assert [u.message_id for u in usage] == list(expected)
    for u in usage:
        raw = expected[u.message_id]
        assert u.input_tokens == raw["input_tokens"]
        assert u.output_tokens == raw["output_tokens"]
        assert u.cache_read_input_tokens == raw.get("cache_read_input_tokens", 0)
        assert u.cache_creation_input_tokens == raw.get("cache_creation_input_tokens", 0)
        assert u.prompt_tokens == (
            raw["input_tokens"]
            + raw.get("cache_read_input_tokens", 0)
            + raw.get("cache_creation_input_tokens", 0)
        )


def test_a_session_lists_its_main_thread_then_its_sub_agents() -> None:
    convs = list_conversations(SESSION)
    assert [cid for cid, _ in convs] == ["main", "agent-a2271d1"]
    first_user = thread(raw_lines(SESSION), sidechain=False)[0]["message"]["content"]
    assert convs[0][1] == " ".join(first_user.split())[:59] + "…"
    assert detect_format(SESSION) == "claude-code"
    # The default conversation is the main thread.
    assert load_chat(SESSION) == load_chat(SESSION, conversation="main")


def test_inline_side_chains_are_their_own_conversations() -> None:
    path = HERE / "sidechain.jsonl"
    lines = raw_lines(path)
    convs = list_conversations(path)
    assert [cid for cid, _ in convs] == ["main", "sidechain-0"]
    side = load_chat(path, conversation="sidechain-0")
    side_ids = {d["message"]["id"] for d in thread(lines, True) if d["type"] == "assistant"}
    assert {m.id for m in side if m.role is Role.ASSISTANT} == side_ids
    first = thread(lines, True)[0]["message"]["content"]
    assert side[0].role is Role.USER and side[0].content == first


def test_a_project_folder_lists_its_sessions_newest_first() -> None:
    stamps = {}
    for path in PROJECT.glob("*.jsonl"):
        stamps[path.stem] = next(d["timestamp"] for d in raw_lines(path) if "timestamp" in d)
    expected = sorted(stamps, key=lambda s: (stamps[s], s), reverse=True)
    assert [cid for cid, _ in list_conversations(PROJECT)] == expected
    assert detect_format(PROJECT) == "claude-code"
    newest = PROJECT / f"{expected[0]}.jsonl"
    assert load_chat(PROJECT) == load_chat(newest)
    assert load_chat(PROJECT, conversation=1) == load_chat(PROJECT / f"{expected[1]}.jsonl")
    inner = load_chat(PROJECT, conversation="29ccd257-68b1-427f-ae5f-6524b7cb6f20/agent-a2271d1")
    assert inner == load_chat(SESSION, conversation="agent-a2271d1")


def test_thinking_is_kept_apart_and_not_in_the_counted_text() -> None:
    lines = thread(raw_lines(THINKING), sidechain=False)
    thoughts = [b["thinking"] for b in blocks(lines, "thinking")]
    assert thoughts
    messages = load_chat(THINKING)
    kept = [b["thinking"] for m in messages for b in dict(m.extra).get("thinking", [])]
    assert kept == thoughts
    assert not any(t[:40] in m.content for t in thoughts for m in messages)


def test_summary_lines_title_the_session_and_are_not_messages() -> None:
    path = HERE / "summary_session.jsonl"
    lines = raw_lines(path)
    summary = next(d["summary"] for d in lines if d["type"] == "summary")
    assert list_conversations(path)[0] == ("main", summary)
    messages = load_chat(path)
    assert all(summary not in m.content for m in messages)
    assert messages[0].content == lines[1]["message"]["content"]


def test_tool_use_result_sidecars_are_not_counted_twice() -> None:
    lines = thread(raw_lines(THINKING), sidechain=False)
    sidecars = [d for d in lines if "toolUseResult" in d]
    assert sidecars
    results = {m.tool_call_id: m.content for m in load_chat(THINKING) if m.role is Role.TOOL}
    for d in sidecars:
        for b in d["message"]["content"]:
            if b.get("type") == "tool_result":
                content = b["content"]
                text = (
                    content
                    if isinstance(content, str)
                    else "\n".join(p["text"] for p in content if p.get("type") == "text")
                )
                assert results[b["tool_use_id"]] == text


def test_meta_lines_stay_flagged(tmp_path: Path) -> None:
    meta = {
        "type": "user",
        "isMeta": True,
        "uuid": "u0",
        "parentUuid": None,
        "sessionId": "s",
        "message": {"role": "user", "content": "Caveat: local command output follows."},
    }
    path = tmp_path / "s.jsonl"
    summary = {**meta, "isMeta": False, "isCompactSummary": True, "uuid": "u2"}
    plain = {**meta, "isMeta": False, "uuid": "u1"}
    path.write_text("\n".join(json.dumps(r) for r in (meta, plain, summary)))
    first, second, third = load_chat(path)
    assert dict(first.extra) == {"claude_code_meta": True} and second.extra == ()
    assert dict(third.extra) == {"claude_code_compact_summary": True}


def test_a_last_line_cut_off_mid_write_loads_the_rest_with_a_warning(tmp_path: Path) -> None:
    data = SESSION.read_bytes()
    lines = data.splitlines()
    cut = b"\n".join(lines) + b'\n{"type": "assistant", "message": {"id": "msg_x", "con'
    path = tmp_path / SESSION.name
    path.write_bytes(cut)
    loaded = load_chat_file(path)
    assert loaded.messages == load_chat(SESSION)
    assert loaded.warnings == (
        f"{path.name}: line {len(lines) + 1}: the last line is cut off (not complete JSON); "
        "skipped it",
    )
    # A bad line elsewhere is damage, not a crash: an error naming the line.
    path.write_bytes(lines[0] + b"\n{broken\n" + b"\n".join(lines[1:]))
    with pytest.raises(ChatFormatError) as err:
        load_chat(path)
    assert err.value.where == f"{path.name}: line 2"


def test_sub_agent_files_are_found_beside_a_copied_session(tmp_path: Path) -> None:
    shutil.copytree(PROJECT, tmp_path / "p")
    copied = tmp_path / "p" / SESSION.name
    assert load_chat(copied, conversation="agent-a2271d1") == load_chat(
        SESSION, conversation="agent-a2271d1"
    )
    # Bytes have no neighbours: only the main thread is there.
    assert [cid for cid, _ in list_conversations(SESSION.read_bytes(), name="s.jsonl")] == ["main"]


def test_a_folder_without_sessions_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ChatFormatError, match="folder"):
        load_chat(tmp_path)


def test_a_pasted_session_reads_as_the_file_does() -> None:
    """The app's paste box gives text with no file name; upload gives bytes and a name."""
    assert load_chat(SESSION.read_text()) == load_chat(SESSION)
    assert load_chat(SESSION.read_bytes(), name="upload.jsonl") == load_chat(SESSION)
    codex = HERE.parent / "codex" / "turn_two.jsonl"
    assert load_chat(codex.read_text()) == load_chat(codex)


def test_a_record_or_block_written_twice_is_read_once(tmp_path: Path) -> None:
    lines = SUBAGENT.read_text().splitlines()
    doubled = [lines[0], *lines[1:4], lines[2], *lines[4:]]  # line 3 again, later
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(doubled))
    assert load_chat(path) == load_chat(SESSION, conversation="agent-a2271d1")


def test_a_damaged_session_in_a_folder_is_named_in_the_error(tmp_path: Path) -> None:
    shutil.copytree(PROJECT, tmp_path / "p")
    damaged = tmp_path / "p" / "94604a7b-062f-4369-bdf0-da948381c3e5.jsonl"
    lines = damaged.read_text().splitlines()
    damaged.write_text("\n".join([lines[0], "{oops", *lines[1:]]))
    with pytest.raises(ChatFormatError) as err:
        list_conversations(tmp_path / "p")
    assert err.value.where == f"p: {damaged.name}: line 2"


def test_parsed_records_that_are_not_json_are_an_error() -> None:
    records = [json.loads(line) for line in SESSION.read_text().splitlines()]
    records[2]["odd"] = {1, 2}
    with pytest.raises(ChatFormatError) as err:
        load_chat(records, fmt="claude-code")
    assert err.value.where == "$"


def test_records_given_as_json_read_like_the_file() -> None:
    records = [json.loads(line) for line in SESSION.read_text().splitlines()]
    assert load_chat(records) == load_chat(SESSION)
    assert load_chat(json.dumps(records)) == load_chat(SESSION)
    codex = HERE.parent / "codex" / "turn_two.jsonl"
    lines = [json.loads(line) for line in codex.read_text().splitlines()]
    assert load_chat(lines) == load_chat(codex)
    one = next(r for r in records if r.get("type") == "user")
    (message,) = load_chat(json.dumps(one))
    assert message.role is Role.USER and message.id == one["uuid"]


def test_a_rewound_session_reads_the_branch_the_model_saw_last() -> None:
    lines = raw_lines(THINKING)
    ((first, second),) = forks(lines)  # a real rewind: the user rephrased a prompt
    gone = [d for d in lines[first:second] if d.get("type") in ("user", "assistant")]
    loaded = load_chat_file(THINKING)
    prompts = [d["message"]["content"] for d in thread(lines, False) if is_prompt(d)]
    assert [m.content for m in loaded.messages if m.role is Role.USER] == prompts
    assert lines[second]["message"]["content"] in prompts
    assert lines[first]["message"]["content"] not in prompts
    assert loaded.warnings == (
        f"{len(gone)} lines on abandoned branches (rewinds) were left out; each branch is its "
        f"own conversation: rewind-1 (from line {first + 1})",
    )
    assert pairing_problems(loaded.messages) == []


def test_each_abandoned_branch_is_its_own_conversation() -> None:
    lines = raw_lines(THINKING)
    ((first, second),) = forks(lines)
    convs = list_conversations(THINKING)
    assert [cid for cid, _ in convs] == ["main", "rewind-1"]
    asked = " ".join(lines[first]["message"]["content"].split())
    assert convs[1][1] == "rewound: " + asked[:59] + "…"
    branch = load_chat_file(THINKING, conversation="rewind-1")
    before = [d for d in lines[:second] if d.get("type") in ("user", "assistant")]
    assert [m.content for m in branch.messages if m.role is Role.USER] == [
        d["message"]["content"] for d in before if is_prompt(d)
    ]
    assert {m.id for m in branch.messages if m.role is Role.ASSISTANT} == {
        d["message"]["id"] for d in before if d["type"] == "assistant"
    }
    assert branch.warnings == ()


def test_parallel_tool_calls_are_siblings_not_rewinds() -> None:
    lines = raw_lines(SUBAGENT)
    parents = [d["parentUuid"] for d in lines]
    assert len(set(parents)) < len(parents)  # the tree forks at every parallel call...
    assert forks(lines) == []
    loaded = load_chat_file(SESSION, conversation="agent-a2271d1")
    assert loaded.warnings == ()  # ...yet nothing is abandoned
    assert len([m for m in loaded.messages if m.role is Role.TOOL]) == len(
        blocks(lines, "tool_result")
    )


def test_a_compact_boundary_continues_the_chain_through_its_logical_parent(
    tmp_path: Path,
) -> None:
    """Documented edit of a real session: a compact boundary (``parentUuid`` null,
    ``logicalParentUuid`` the last record before it) inserted before the last three lines,
    which now hang off it. The rewind before it must still be found."""
    text = THINKING.read_text().splitlines()
    lines = [json.loads(t) for t in text]
    at = len(lines) - 3
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "parentUuid": None,
        "logicalParentUuid": lines[at - 2]["uuid"],  # the stop-hook record before the caveat
        "uuid": "compact-boundary-1",
        "isSidechain": False,
        "sessionId": lines[at]["sessionId"],
        "content": "Conversation compacted",
    }
    assert lines[at]["parentUuid"] == lines[at - 2]["uuid"]
    lines[at]["parentUuid"] = boundary["uuid"]
    edited = [*text[:at], json.dumps(boundary), json.dumps(lines[at]), *text[at + 1 :]]
    path = tmp_path / THINKING.name
    path.write_text("\n".join(edited))
    assert load_chat_file(path).messages == load_chat_file(THINKING).messages
    assert load_chat_file(path).warnings == load_chat_file(THINKING).warnings


def test_a_retried_response_is_an_abandoned_branch(tmp_path: Path) -> None:
    """Documented edit of a real session: a copy of an assistant line with another uuid,
    ``message.id`` and text, written before the original (same parent), as a retry leaves."""
    path = PROJECT / "2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl"
    text = path.read_text().splitlines()
    lines = [json.loads(t) for t in text]
    k = next(i for i, d in enumerate(lines) if d["type"] == "assistant")
    retry = json.loads(text[k])
    retry["uuid"] = "retried-1"
    retry["message"]["id"] = "msg_retried"
    retry["message"]["content"] = [{"type": "text", "text": "An answer that was retried."}]
    edited = tmp_path / path.name
    edited.write_text("\n".join([*text[:k], json.dumps(retry), *text[k:]]))
    loaded = load_chat_file(edited)
    assert loaded.messages == load_chat_file(path).messages
    assert loaded.warnings == (
        "1 line on abandoned branches (rewinds) were left out; each branch is its own "
        f"conversation: rewind-1 (from line {k + 1})",
    )
    branch = load_chat(edited, conversation="rewind-1")
    assert branch[-1].id == "msg_retried"
    assert list_conversations(edited)[1] == ("rewind-1", f"abandoned response (line {k + 1})")


@st.composite
def record_trees(draw: st.DrawFn) -> list[tuple[int, dict[str, Any]]]:
    """Records in file order, each hanging off an earlier one (or none): any tree a session
    with rewinds, retries and parallel calls can make. Responses may span several lines."""
    n = draw(st.integers(1, 14))
    out: list[tuple[int, dict[str, Any]]] = []
    for i in range(n):
        kind = draw(st.sampled_from(["user", "assistant", "progress"]))
        parent = draw(st.none() | st.integers(0, i - 1)) if i else None
        record: dict[str, Any] = {"type": kind, "uuid": f"u{i}"}
        record["parentUuid"] = None if parent is None else f"u{parent}"
        if kind == "assistant":
            same = draw(st.booleans()) and any(d["type"] == "assistant" for _, d in out)
            mid = (
                next(d["message"]["id"] for _, d in reversed(out) if d["type"] == "assistant")
                if same
                else f"msg{i}"
            )
            record["message"] = {
                "role": "assistant",
                "id": mid,
                "content": [{"type": "text", "text": "a"}],
            }
        elif kind == "user":
            result = draw(st.booleans())
            content = (
                [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]
                if result
                else f"ask {i}"
            )
            record["message"] = {"role": "user", "content": content}
        out.append((i + 1, record))
    return out


@settings(max_examples=300, deadline=None)
@given(record_trees())
def test_every_message_line_is_kept_or_on_exactly_one_abandoned_branch(
    records: list[tuple[int, dict[str, Any]]],
) -> None:
    split = split_branches(records)
    kept = [n for n, _ in split.active]
    assert kept == sorted(kept)  # file order
    on_branches = [n for own in split.branches for n, _ in own]
    messages = [n for n, d in records if d["type"] in ("user", "assistant")]
    assert set(on_branches).isdisjoint(kept)
    assert sorted([*[n for n in kept if n in messages], *on_branches]) == messages
    assert split.dropped == len(on_branches)
    # The last message line and its ancestors are what the model saw last.
    by_uuid = {d["uuid"]: (n, d) for n, d in records}
    if messages:
        n, d = records[messages[-1] - 1]
        while d is not None:
            assert n in kept
            n, d = by_uuid.get(d["parentUuid"] or "", (0, None))
    for own, leaf in zip(split.branches, split.leaves, strict=True):
        view = [n for n, _ in branch_view(records, leaf)]
        assert own[-1][0] == records[leaf][0] and records[leaf][0] in view


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 20))
def test_a_session_without_forks_is_read_whole(n: int) -> None:
    records = [
        (
            i + 1,
            {
                "type": "user" if i % 2 == 0 else "assistant",
                "uuid": f"u{i}",
                "parentUuid": f"u{i - 1}" if i else None,
                "message": {"role": "user", "content": f"m{i}"}
                if i % 2 == 0
                else {"role": "assistant", "id": f"msg{i}", "content": []},
            },
        )
        for i in range(n)
    ]
    split = split_branches(records)
    assert split.active == tuple(records) and split.branches == () and split.dropped == 0
