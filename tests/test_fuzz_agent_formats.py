"""Fuzzing the agent and provider readers: mutated real fixtures load or raise ChatFormatError.

Each example takes a fixture of a new format (Claude Code, Codex, Responses, Gemini,
chat.completion, Anthropic server tools, ShareGPT / LLaMA-Factory tool data), replaces or deletes
one value somewhere inside it (in one JSONL line for JSONL files), and loads the result with
auto-detection and with the format named. The only outcomes allowed: a LoadedChat whose message
ids are unique, or a ChatFormatError that names a place.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab.errors import ChatFormatError
from ctxlab.formats import LoadedChat, dump_chat, load_chat_file

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
FILES: dict[str, str] = {
    "claude_code/summary_session.jsonl": "claude-code",
    "claude_code/project/94604a7b-062f-4369-bdf0-da948381c3e5.jsonl": "claude-code",
    "claude_code/sidechain.jsonl": "claude-code",
    "claude_code/thinking_session.jsonl": "claude-code",
    "codex/turn_two.jsonl": "codex",
    "codex/turn_two_compacted.jsonl": "codex",
    "codex/turn_two_replaced.jsonl": "codex",
    "responses/tool_output_request.json": "responses",
    "responses/reasoning_response.json": "responses",
    "gemini/tool_output_request.json": "gemini",
    "gemini/tool_output_response.json": "gemini",
    "chat_completion/tool_calls_response.json": "chat-completion",
    "anthropic_server_tools/code_execution_response.json": "anthropic",
    "anthropic_server_tools/thinking_request.json": "anthropic",
    "llama_factory/glaive_toolcall_first3.json": "sharegpt",
    "llama_factory/reason_tool_use_first3.jsonl": "finetune-jsonl",
    "claude_ai_export/conversations.json": "claude-ai-export",
    "claude_ai_export/artifacts.json": "claude-ai-export",
}
KEYS = st.sampled_from(
    [
        "type",
        "role",
        "content",
        "message",
        "payload",
        "parts",
        "functionCall",
        "id",
        "call_id",
        "name",
        "arguments",
        "output",
        "usage",
        "text",
        "value",
        "isSidechain",
        "tool_use_id",
        "input",
        "choices",
        "contents",
        "from",
        "tools",
        "summary",
        "agentId",
        "uuid",
    ]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12) | KEYS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:6]):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(doc: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if delete and isinstance(parent, dict):
        del parent[last]
    else:
        parent[last] = new
    return doc


def check(data: bytes, name: str, fmt: str) -> None:
    for kwargs in ({}, {"fmt": fmt}):
        try:
            loaded = load_chat_file(data, name=name, **kwargs)
        except ChatFormatError as exc:
            assert exc.where and exc.where.strip() and str(exc).strip(), repr(exc)
            continue
        assert isinstance(loaded, LoadedChat)
        ids = [m.id for m in loaded.messages]
        assert len(set(ids)) == len(ids)
        dump_chat(loaded.messages)  # what was loaded can be written out again
        assert all(u.message_id in set(ids) for u in loaded.usage)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from(sorted(FILES)), st.data(), JSON, st.booleans())
def test_a_mutated_fixture_loads_or_names_the_place(
    fixture: str, data: st.DataObject, new: Any, delete: bool
) -> None:
    raw = (FIXTURES / fixture).read_bytes()
    name = Path(fixture).name
    if fixture.endswith(".jsonl"):
        lines = raw.decode().splitlines()
        k = data.draw(st.integers(0, len(lines) - 1))
        doc = json.loads(lines[k])
        path = data.draw(st.sampled_from(_paths(doc)))
        lines[k] = json.dumps(_mutate(doc, path, new, delete))
        mutated = "\n".join(lines).encode()
    else:
        doc = json.loads(raw)
        path = data.draw(st.sampled_from(_paths(doc)))
        mutated = json.dumps(_mutate(doc, path, new, delete)).encode()
    check(mutated, name, FILES[fixture])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.dictionaries(KEYS, JSON, max_size=5), min_size=1, max_size=5),
    st.sampled_from(["claude-code", "codex", "finetune-jsonl", "openai-jsonl"]),
)
def test_random_jsonl_lines_load_or_name_the_place(lines: list[dict[str, Any]], fmt: str) -> None:
    data = "\n".join(json.dumps(line) for line in lines).encode()
    check(data, "x.jsonl", fmt)


@settings(max_examples=150, deadline=None)
@given(
    JSON,
    st.sampled_from(
        ["responses", "gemini", "chat-completion", "anthropic", "sharegpt", "claude-ai-export"]
    ),
)
def test_random_values_load_or_name_the_place(value: Any, fmt: str) -> None:
    check(json.dumps(value).encode(), "x.json", fmt)


def _parsed(fixture: str) -> Any:
    raw = (FIXTURES / fixture).read_text()
    if fixture.endswith(".jsonl"):
        return [json.loads(line) for line in raw.splitlines() if line.strip()]
    return json.loads(raw)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(FILES)),
    st.data(),
    st.sampled_from([{1, 2}, float("nan"), float("inf"), b"bytes", (1, 2), object()]),
)
def test_parsed_values_that_are_not_json_load_or_name_the_place(
    fixture: str, data: st.DataObject, odd: Any
) -> None:
    """Values handed over already parsed (the app, a notebook) may hold any Python object."""
    doc = _parsed(fixture)
    path = data.draw(st.sampled_from(_paths(doc)))
    value = _mutate(doc, path, odd, delete=False)
    for kwargs in ({}, {"fmt": FILES[fixture]}):
        try:
            loaded = load_chat_file(value, **kwargs)
        except ChatFormatError as exc:
            assert str(exc).strip()
            continue
        ids = [m.id for m in loaded.messages]
        assert len(set(ids)) == len(ids)
        dump_chat(loaded.messages)  # what was loaded can be written out again
