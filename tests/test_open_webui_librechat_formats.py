"""Open WebUI and LibreChat exports, read from real files (LibreChat's importer test data).

Expected values come from the raw JSON, following each app's tree: Open WebUI's branch is the
parentId chain from currentId; LibreChat's main branch ends at the newest message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.formats import detect_format, list_conversations, load_chat_file
from ctxlab.model import Role

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
WEBUI = FIXTURES / "open_webui" / "openwebui-export.json"
LIBRE_TREE = FIXTURES / "librechat" / "librechat-export.json"
LIBRE_FLAT = FIXTURES / "librechat" / "librechat-opts-nonr-branches.json"


def _raw(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_an_open_webui_export_lists_its_chats() -> None:
    raw = _raw(WEBUI)
    assert detect_format(WEBUI) == "open-webui"
    assert list_conversations(WEBUI) == [(c["id"], c["title"]) for c in raw]


def test_each_open_webui_chat_is_its_branch_at_current_id() -> None:
    for chat in _raw(WEBUI):
        history = chat["chat"]["history"]
        chain = [history["currentId"]]
        while history["messages"][chain[-1]]["parentId"] is not None:
            chain.append(history["messages"][chain[-1]]["parentId"])
        chain.reverse()
        loaded = load_chat_file(WEBUI, conversation=chat["id"])
        assert loaded.format == "open-webui"
        firsts = [m for m in loaded.messages if m.role is not Role.TOOL and ":" not in m.id]
        assert [m.id for m in firsts] == chain
        for own in chain:
            m = history["messages"][own]
            got = next(x for x in loaded.messages if x.id == own)
            assert got.role.value == m["role"]
            if "output" not in m:
                assert got.content == m["content"]


def test_open_webui_output_items_become_calls_results_and_thinking() -> None:
    raw = {c["id"]: c for c in _raw(WEBUI)}
    tool = raw["tool-chat"]["chat"]["history"]["messages"]["ta2"]["output"]
    call = next(i for i in tool if i["type"] == "function_call")
    result = next(i for i in tool if i["type"] == "function_call_output")
    reply = next(i for i in tool if i["type"] == "message")
    loaded = load_chat_file(WEBUI, conversation="tool-chat")
    calls = [c for m in loaded.messages for c in m.tool_calls]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        (call["call_id"], call["name"], call["arguments"])
    ]
    tool_msg = next(m for m in loaded.messages if m.role is Role.TOOL)
    assert tool_msg.tool_call_id == call["call_id"]
    assert tool_msg.content == result["output"][0]["text"]
    assert loaded.messages[-1].content == reply["content"][0]["text"]
    reasoning = raw["reasoning-chat"]["chat"]["history"]["messages"]["ra2"]["output"][0]
    answer = load_chat_file(WEBUI, conversation="reasoning-chat").messages[-1]
    assert answer.content == "255"
    thinking = dict(answer.extra)["thinking"]
    assert [t["thinking"] for t in thinking] == [reasoning["content"][0]["text"]]


def _flat_libre(value: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(ms: list[dict[str, Any]]) -> None:
        for m in ms:
            out.append(m)
            walk(m.get("children") or [])

    walk(value.get("messagesTree") or value["messages"])
    return out


def _libre_branch(value: dict[str, Any]) -> list[str]:
    flat = _flat_libre(value)
    by_id = {m["messageId"]: m for m in flat}
    parents = {m["parentMessageId"] for m in flat}
    leaves = [m for m in flat if m["messageId"] not in parents]
    newest = max(leaves, key=lambda m: m["createdAt"])
    chain = [newest["messageId"]]
    while by_id[chain[-1]]["parentMessageId"] in by_id:
        chain.append(by_id[chain[-1]]["parentMessageId"])
    return chain[::-1]


def test_a_librechat_tree_export_reads_in_order() -> None:
    raw = _raw(LIBRE_TREE)
    assert detect_format(LIBRE_TREE) == "librechat"
    loaded = load_chat_file(LIBRE_TREE)
    flat = _flat_libre(raw)
    assert [m.id for m in loaded.messages] == _libre_branch(raw) == [m["messageId"] for m in flat]
    for got, m in zip(loaded.messages, flat, strict=True):
        assert got.content == m["text"]
        assert got.role is (Role.USER if m["isCreatedByUser"] else Role.ASSISTANT)
    assert not loaded.warnings


def test_a_flat_librechat_export_with_branches_reads_its_newest_branch() -> None:
    raw = _raw(LIBRE_FLAT)
    loaded = load_chat_file(LIBRE_FLAT)
    branch = _libre_branch(raw)
    assert [m.id for m in loaded.messages] == branch
    off = len(raw["messages"]) - len(branch)
    assert off and any(f"{off} messages on other branches" in w for w in loaded.warnings)
    labels = list_conversations(LIBRE_FLAT)
    assert [c for c, _ in labels] == ["main", "branch-1", "branch-2"][: len(labels)]
    others = {
        m.id for c, _ in labels[1:] for m in load_chat_file(LIBRE_FLAT, conversation=c).messages
    }
    assert others | set(branch) == {m["messageId"] for m in raw["messages"]}
