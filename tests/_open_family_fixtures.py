"""Fixture chats and OpenAI-shape requests shared by the open-family tokenizer tests."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.errors import ChatFormatError
from ctxlab.formats import load_chat_file
from ctxlab.model import Message, Role

ROOT = Path(__file__).resolve().parent.parent
CHAT_FILES = sorted(
    [
        *glob.glob(str(ROOT / "tests/fixtures/real_chats/*.json")),
        *glob.glob(str(ROOT / "tests/fixtures/formats/**/*.json"), recursive=True),
        *glob.glob(str(ROOT / "tests/fixtures/formats/**/*.jsonl"), recursive=True),
        *glob.glob(str(ROOT / "ctxlab/sample_chats/*.json")),
    ]
)


def load(path: str) -> tuple[tuple[Message, ...], list[dict[str, Any]]]:
    """The chat of a fixture file and its tool definitions; skips a file that is no chat (a
    Cline task folder's metadata files, which the loader refuses by name)."""
    try:
        chat = load_chat_file(path)
    except ChatFormatError as error:
        pytest.skip(f"not a chat: {error}")
    return tuple(chat.messages), [dict(t.to_openai()) for t in chat.tools]


def api_messages(messages: tuple[Message, ...], *, parse_arguments: bool) -> list[dict[str, Any]]:
    """The request's messages as an OpenAI-compatible server hands them to the template."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = {Role.DEVELOPER: "system", Role.FUNCTION: "tool"}.get(m.role, m.role.value)
        entry: dict[str, Any] = {"role": role, "content": m.content}
        if m.tool_calls:
            calls = []
            for c in m.tool_calls:
                args: Any = c.arguments
                if parse_arguments:
                    args = json.loads(c.arguments)
                calls.append(
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": args},
                    }
                )
            entry["tool_calls"] = calls
        if m.tool_call_id is not None:
            entry["tool_call_id"] = m.tool_call_id
        out.append(entry)
    return out
