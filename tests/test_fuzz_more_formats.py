"""Fuzzing the OpenCode, Open WebUI and LibreChat readers and the named refusals: a mutated
fixture loads (unique ids, usage on loaded messages) or raises a ChatFormatError naming a place;
no other exception escapes, whatever value replaces or deletes one value inside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab.errors import ChatFormatError
from ctxlab.formats import dump_chat, load_chat_file

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
FILES: dict[str, str] = {
    "opencode/ses_export_compacted.json": "opencode",
    "open_webui/openwebui-export.json": "open-webui",
    "librechat/librechat-export.json": "librechat",
    "librechat/librechat-opts-nonr-branches.json": "librechat",
    "named_refusals/openai-text.chunks.head.jsonl": "openai-jsonl",
    "named_refusals/anthropic-text.chunks.jsonl": "openai-jsonl",
    "named_refusals/gemini-stream-chunks.json": "gemini",
    "named_refusals/gemini-cli-logs.json": "openai",
}
KEYS = st.sampled_from(
    [
        "type",
        "role",
        "id",
        "info",
        "parts",
        "state",
        "status",
        "callID",
        "tool",
        "tokens",
        "messages",
        "history",
        "currentId",
        "parentId",
        "output",
        "content",
        "messageId",
        "parentMessageId",
        "children",
        "text",
        "object",
        "candidates",
        "summary",
        "error",
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
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return doc


def _check(source: Any, name: str | None, fmt: str) -> None:
    for kwargs in ({}, {"fmt": fmt}):
        try:
            loaded = load_chat_file(source, name=name, **kwargs)
        except ChatFormatError as exc:
            assert str(exc).strip()
            continue
        ids = [m.id for m in loaded.messages]
        assert len(set(ids)) == len(ids)
        dump_chat(loaded.messages)
        assert {u.message_id for u in loaded.usage} <= set(ids)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from(sorted(FILES)), st.data(), JSON, st.booleans())
def test_a_mutated_fixture_loads_or_names_the_place(
    fixture: str, data: st.DataObject, new: Any, delete: bool
) -> None:
    raw = (FIXTURES / fixture).read_text(encoding="utf-8")
    if fixture.endswith(".jsonl"):
        lines = raw.splitlines()
        k = data.draw(st.integers(0, len(lines) - 1))
        doc = json.loads(lines[k])
        lines[k] = json.dumps(_mutate(doc, data.draw(st.sampled_from(_paths(doc))), new, delete))
        mutated = "\n".join(lines).encode()
    else:
        doc = json.loads(raw)
        path = data.draw(st.sampled_from(_paths(doc)))
        mutated = json.dumps(_mutate(doc, path, new, delete)).encode()
    _check(mutated, Path(fixture).name, FILES[fixture])


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([f for f in sorted(FILES) if f.endswith(".json")]),
    st.data(),
    st.sampled_from([{1, 2}, float("nan"), b"bytes", (1, 2), object()]),
)
def test_parsed_values_that_are_not_json_load_or_name_the_place(
    fixture: str, data: st.DataObject, odd: Any
) -> None:
    doc = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    value = _mutate(doc, data.draw(st.sampled_from(_paths(doc))), odd, delete=False)
    _check(value, None, FILES[fixture])
