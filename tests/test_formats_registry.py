"""The format registry: plug-in formats, detection, and the error when nothing matches."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import formats
from ctxlab.errors import ChatFormatError
from ctxlab.formats import (
    FORMATS,
    ChatFormat,
    LoadedChat,
    _registry,
    format_help,
    load_chat,
    load_chat_file,
)
from ctxlab.model import Message, Role


def test_every_format_is_registered_with_a_title_and_a_way_to_be_found() -> None:
    assert [name for name, _ in format_help()] == list(FORMATS)
    for fmt in _registry.registered():
        assert fmt.title and fmt.name in FORMATS
        found_by = (fmt.sniff, fmt.sniff_line, fmt.sniff_folder)
        assert any(found_by) or fmt.name == "ctxlab"  # ctxlab's dump reads as openai


def test_a_new_format_is_one_register_call(monkeypatch: pytest.MonkeyPatch) -> None:
    def read(doc: Any, options: Any) -> LoadedChat:
        return LoadedChat((Message(Role.USER, doc.value["say"], "m0"),), format="echo")

    fmt = ChatFormat(
        "echo",
        "test format",
        read,
        sniff=lambda v: isinstance(v, dict) and "say" in v,
        marks=frozenset({"say"}),
        order=1,
    )
    monkeypatch.setitem(_registry._REGISTRY, "echo", fmt)
    assert load_chat('{"say": "hi"}') == (Message(Role.USER, "hi", "m0"),)
    assert load_chat_file('{"say": "hi"}', fmt="echo").format == "echo"
    with pytest.raises(ValueError, match="already taken"):
        _registry.register(ChatFormat("echo", "other", lambda d, o: LoadedChat(())))


def test_unknown_input_names_the_keys_the_closest_formats_and_the_supported_list() -> None:
    with pytest.raises(ChatFormatError) as err:
        load_chat(b'{"contentz": [], "systemInstruction": {"parts": []}}')
    reason = err.value.reason
    assert err.value.where == "$"
    assert "found keys: contentz, systemInstruction" in reason
    assert "closest: gemini (shares systemInstruction)" in reason
    for name in ("openai", "anthropic", "gemini", "responses", "sharegpt", "chatgpt-export"):
        assert name in reason.split("Supported: ")[1]


def test_an_unknown_jsonl_line_names_its_line_and_the_line_formats() -> None:
    with pytest.raises(ChatFormatError) as err:
        load_chat(b'{"kind": "note", "payloadz": 1}\n{"kind": "note"}\n')
    assert err.value.where == "line 1"
    assert "found keys: kind, payloadz" in err.value.reason
    supported = err.value.reason.split("Supported: ")[1]
    assert {"openai-jsonl", "finetune-jsonl", "claude-code", "codex"} <= set(supported.split(", "))
    assert "no supported format uses these keys" in err.value.reason


def test_a_missing_key_is_reported_as_missing_not_null() -> None:
    with pytest.raises(ChatFormatError) as err:
        load_chat({"contents": [{"role": "user"}]})
    assert (err.value.where, err.value.reason) == (
        "$.contents[0].parts",
        "expected a list of parts, got missing",
    )
    with pytest.raises(ChatFormatError) as err:
        load_chat({"contents": [{"role": "user", "parts": None}]})
    assert err.value.reason == "expected a list of parts, got null"


def test_the_package_keeps_its_public_names() -> None:
    for name in (
        "load_chat",
        "dump_chat",
        "list_conversations",
        "detect_format",
        "messages_to_openai",
        "message_to_openai",
        "ChatFormatError",
        "FORMATS",
    ):
        assert name in formats.__all__ and hasattr(formats, name)
