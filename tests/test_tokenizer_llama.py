"""Llama 3 and Llama 4 counters against Meta's ``llama-models`` chat formats.

The reference of a chat is ``ChatFormat.encode_dialog_prompt`` of the same messages. Llama 4's
``chat_format.py`` imports torch for images only; torch is not a dependency of llama-models (it
is its ``torch`` extra, about 1 GB), so the test imports that module with stand-in ``torch`` and
``torchvision`` modules, which the text path never touches.

Tool definitions have no place in ``ChatFormat``; the reference request carries them the way
``llama3_1/prompt_format.md`` shows, as indented JSON in a user message, which is what
:meth:`LlamaCounter.count_tools` counts.
"""

from __future__ import annotations

import functools
import json
import sys
import types
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("llama_models")

from llama_models.datatypes import RawMessage
from llama_models.datatypes import ToolCall as RawToolCall
from pydantic import ValidationError

from ctxlab.catalog import CATALOG
from ctxlab.formats import load_chat_file
from ctxlab.model import Message, Role, ToolCall
from ctxlab.tokenizer_families import FAMILIES, TokenizerFamily
from ctxlab.tokens import ApproxCounter, new_counter

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_CHATS = sorted(
    [
        *ROOT.glob("tests/fixtures/real_chats/*.json"),
        *ROOT.glob("ctxlab/sample_chats/*.json"),
        *ROOT.glob("ctxlab/sample_chats/real/*.json"),
        ROOT / "tests/fixtures/formats/chat_completion/tool_calls_request.json",
        ROOT / "tests/fixtures/formats/openai.json",
        ROOT / "tests/fixtures/formats/legacy_function_call.json",
        ROOT / "tests/fixtures/formats/anthropic.json",
        ROOT / "tests/fixtures/formats/gemini/tool_output_request.json",
        ROOT / "tests/fixtures/formats/responses/tool_output_request.json",
        ROOT / "tests/fixtures/formats/codex/turn_two.jsonl",
        ROOT / "tests/fixtures/formats/claude_code/thinking_session.jsonl",
        ROOT / "tests/fixtures/formats/llama_factory/glaive_toolcall_first3.json",
    ]
)
LLAMA_FAMILIES = ["llama3-tiktoken", "llama4-tiktoken"]


class _StandIn(types.ModuleType):
    """A module whose every attribute is a fresh class: enough for annotations and imports."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


@functools.cache
def reference_format(family: str) -> Any:
    """llama-models' ``ChatFormat`` of the family, with its own tokenizer."""
    if family == "llama3-tiktoken":
        from llama_models.llama3.chat_format import ChatFormat as Llama3Format
        from llama_models.llama3.tokenizer import Tokenizer as Llama3Tokenizer

        return Llama3Format(Llama3Tokenizer.get_instance())
    names = ["torch", "torchvision", "torchvision.transforms", "torchvision.transforms.functional"]
    stand_ins = {name: _StandIn(name) for name in names}
    with mock.patch.dict(sys.modules, stand_ins):
        from llama_models.llama4.chat_format import ChatFormat as Llama4Format
        from llama_models.llama4.tokenizer import Tokenizer as Llama4Tokenizer

        return Llama4Format(Llama4Tokenizer.get_instance())


def _arguments(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def _raw_call(call: ToolCall) -> RawToolCall:
    fields = {"call_id": call.id or "", "tool_name": call.name}
    arguments = _arguments(call.arguments)
    try:
        return RawToolCall(**fields, arguments=arguments)
    except ValidationError:
        # llama-models' ToolCall type admits two levels of nesting; a deeper arguments object
        # (tau-bench's) is built unvalidated and encoded by the same ToolUtils code.
        return RawToolCall.model_construct(**fields, arguments=arguments, arguments_json=None)


def _raw(message: Message) -> RawMessage:
    if message.role in (Role.SYSTEM, Role.DEVELOPER):
        role = "system"
    elif message.role in (Role.TOOL, Role.FUNCTION):
        role = "tool"
    else:
        role = message.role.value
    calls = [_raw_call(c) for c in message.tool_calls]
    return RawMessage(role=role, content=message.content, tool_calls=calls)


def reference_count(family: str, messages: tuple[Message, ...], tools: list[dict[str, Any]]) -> int:
    raw = [_raw(m) for m in messages]
    if tools:
        text = "\n\n".join(json.dumps(tool, indent=4) for tool in tools)
        raw.insert(0, RawMessage(role="user", content=text))
    return len(reference_format(family).encode_dialog_prompt(raw).tokens)


@pytest.mark.parametrize("family", LLAMA_FAMILIES)
@pytest.mark.parametrize("path", FIXTURE_CHATS, ids=lambda p: p.name)
def test_fixture_chat_equals_reference(family: str, path: Path) -> None:
    loaded = load_chat_file(path)
    tools = [t.to_openai() for t in loaded.tools]
    counter = new_counter(family)
    expected = reference_count(family, loaded.messages, tools)
    assert counter.count_messages(loaded.messages) + counter.count_tools(tools) == expected
    # each message is encoded on its own: the per-message counts add up to the total
    assert counter.count_messages(loaded.messages) == (
        sum(counter.counts(loaded.messages)) + counter.accounting.reply_priming
    )


@pytest.mark.parametrize("family", LLAMA_FAMILIES)
def test_builtin_tools_and_non_object_arguments(family: str) -> None:
    calls = (
        ToolCall("1", "brave_search", '{"query": "gold price"}'),
        ToolCall("2", "code_interpreter", '{"code": "print(7)"}'),
        ToolCall("3", "custom", "[1, 2]"),
        ToolCall("4", "broken", "{not json"),
    )
    for call in calls:
        chat = (
            Message(Role.DEVELOPER, "Environment: ipython", "s"),
            Message(Role.USER, "go", "u"),
            Message(Role.ASSISTANT, "", "a", tool_calls=(call,)),
            Message(Role.FUNCTION, "7", "t", tool_call_id=call.id),
        )
        assert new_counter(family).count_messages(chat) == reference_count(family, chat, []), call


SAMPLE_TEXTS = [
    "def f(x):\n        return [i ** 2 for i in range(x)]\n\n\tif x:\n\t\tpass\n",
    "東京都の天気は晴れです。한국어 텍스트와 中文混合 text.",
    "3.14159265358979 1234567890 0x1F -42 1e-9 2026-12-02T11:30:00Z",
    "<|begin_of_text|><|eot_id|> <|header_start|> special tokens as text",
    "a" * 60_000 + " " * 30_000 + "b" * 10,
    "word " * 90_000,
]


def _reference_tokenizer(family: str) -> Any:
    return reference_format(family).tokenizer


@pytest.mark.parametrize("family", LLAMA_FAMILIES)
@pytest.mark.parametrize("text", SAMPLE_TEXTS, ids=lambda t: t[:12])
def test_ids_equal_reference(family: str, text: str) -> None:
    counter = new_counter(family)
    expected = _reference_tokenizer(family).encode(text, bos=False, eos=False)
    assert counter.encode(text) == expected  # type: ignore[attr-defined]
    assert counter.count_text(text) == len(expected)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300), st.sampled_from(LLAMA_FAMILIES))
def test_hypothesis_texts_equal_reference(text: str, family: str) -> None:
    expected = _reference_tokenizer(family).encode(text, bos=False, eos=False)
    assert new_counter(family).encode(text) == expected  # type: ignore[attr-defined]


def test_catalog_llama_models_name_a_llama_family() -> None:
    models = [m for m in CATALOG if m.provider == "meta"]
    assert {m.tokenizer for m in models} == set(LLAMA_FAMILIES)
    for m in models:
        assert FAMILIES[m.tokenizer].extra == "llama"
        assert new_counter(m.name).is_exact


def test_without_the_extra_the_model_is_approximate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TokenizerFamily, "available", lambda self: False)
    model = next(m for m in CATALOG if m.provider == "meta")
    counter = new_counter(model.name)
    assert isinstance(counter, ApproxCounter)
    assert "pip install 'ctxlab[llama]'" in counter.label
    assert model.exact_hint == "pip install 'ctxlab[llama]'"
    assert not model.is_exact


@pytest.mark.parametrize("family", LLAMA_FAMILIES)
def test_count_namespace_names_family_and_vocabulary(family: str) -> None:
    namespace = new_counter(family).count_namespace  # type: ignore[attr-defined]
    name, digest = namespace.rsplit(":", 1)
    assert name == family
    assert len(digest) == 16 and int(digest, 16) >= 0


def test_counts_are_shared_through_the_count_store(empty_count_store: Path) -> None:
    text = "a text counted by one counter and read back by another"
    first = new_counter("llama4-tiktoken")
    n = first.count_text(text)
    second = new_counter("llama4-tiktoken")
    assert second.count_text(text) == n
    assert second.texts_from_store == 1  # type: ignore[attr-defined]
