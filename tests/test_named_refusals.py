"""Files ctxlab recognises but does not read are refused by name, at the place that shows it.

The real files are under tests/fixtures/formats/named_refusals (provenance beside them); each
test reads the raw file with json to check the marker the refusal names is really there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.errors import ChatFormatError
from ctxlab.formats import detect_format, load_chat
from ctxlab.formats._shapes import SHAPES

FIXTURES = Path(__file__).parent / "fixtures" / "formats"
HERE = FIXTURES / "named_refusals"


def _first_line(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def _refusal(source: Any) -> str:
    with pytest.raises(ChatFormatError) as info:
        load_chat(source)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("name", "place", "what"),
    [
        ("anthropic-text.chunks.jsonl", "line 1, $.type", "Anthropic Messages stream events"),
        ("openai-text.chunks.head.jsonl", "line 1, $.object", "Chat Completions stream chunks"),
        ("openai-custom-tool.1.chunks.jsonl", "line 1, $.type", "Responses API stream events"),
        ("agent-resume-session.head.jsonl", "line 1, $.method", "Gemini CLI recorded-responses"),
        ("gemini-stream-chunks.json", "$[0].candidates", "streamGenerateContent chunk array"),
        ("gemini-cli-logs.json", "$[0].messageId", "Gemini CLI's logs.json"),
        ("hf-rows-duorc.json", "$.rows[0].row", "Hugging Face datasets-server rows"),
        ("claude-settings-hooks.json", "$.hooks", "a Claude Code settings file"),
    ],
)
def test_a_real_file_of_a_known_shape_is_refused_by_name(name: str, place: str, what: str) -> None:
    message = _refusal(HERE / name)
    assert message.startswith(f"{name}: {place}: this is ")
    assert what in message
    assert "found keys" not in message


def test_the_markers_named_are_in_the_raw_files() -> None:
    assert _first_line(HERE / "anthropic-text.chunks.jsonl")["type"] == "message_start"
    assert _first_line(HERE / "openai-text.chunks.head.jsonl")["object"] == "chat.completion.chunk"
    assert _first_line(HERE / "openai-custom-tool.1.chunks.jsonl")["type"] == "response.created"
    assert _first_line(HERE / "agent-resume-session.head.jsonl")["method"] == (
        "generateContentStream"
    )
    logs = json.loads((HERE / "gemini-cli-logs.json").read_text(encoding="utf-8"))
    assert logs[0]["messageId"] == 0 and logs[0]["type"] == "user"
    rows = json.loads((HERE / "hf-rows-duorc.json").read_text(encoding="utf-8"))
    assert rows["rows"][0]["row_idx"] == 150 and rows["features"]
    chunks = json.loads((HERE / "gemini-stream-chunks.json").read_text(encoding="utf-8"))
    assert chunks == _first_line(HERE / "agent-resume-session.head.jsonl")["response"]


def test_the_same_events_given_as_a_json_list_are_refused_the_same_way() -> None:
    lines = (HERE / "anthropic-text.chunks.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    message = _refusal(json.dumps(events).encode())
    assert message.startswith("$[0].type: this is Anthropic Messages stream events")
    chunks = [
        json.loads(x)
        for x in (HERE / "openai-text.chunks.head.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert _refusal(chunks).startswith("$[0].object: this is OpenAI Chat Completions")
    # One chunk alone would otherwise be read as a Chat Completions response.
    assert _refusal(chunks[1]).startswith("$.object: this is OpenAI Chat Completions")


def test_a_recognised_shape_is_unknown_to_detect_format() -> None:
    assert detect_format(HERE / "gemini-stream-chunks.json") == "unknown"
    assert detect_format(HERE / "openai-custom-tool.1.chunks.jsonl") == "unknown"


# Shapes with no permissively licensed real file: values written after each app's writer.
SILLYTAVERN = (
    # SillyTavern's saveChat(): a header line, then one message a line.
    b'{"user_name":"unused","character_name":"unused","create_date":"2025-09-26@07h04m12s",'
    b'"chat_metadata":{"integrity":"x"}}\n'
    b'{"name":"Seraphina","is_user":false,"is_system":false,"send_date":"2025-09-26T07:04:12Z",'
    b'"mes":"Welcome, traveler.","extra":{}}\n'
)


@pytest.mark.parametrize(
    ("source", "place", "what"),
    [
        (SILLYTAVERN, "line 1, $.character_name", "a SillyTavern chat"),
        (SILLYTAVERN.split(b"\n", 1)[1], "$.mes", "a SillyTavern chat"),
        (
            {"numStartups": 12, "installMethod": "native", "projects": {"/home/dev": {}}},
            "$.numStartups",
            "Claude Code's ~/.claude.json",
        ),
        (
            {"permissions": {"allow": ["Bash(npm run test:*)"], "deny": []}, "model": "opus"},
            "$.permissions",
            "a Claude Code settings file",
        ),
    ],
)
def test_other_known_shapes_are_refused_by_name(source: Any, place: str, what: str) -> None:
    if isinstance(source, bytes):
        message = _refusal(source)
    else:
        message = _refusal(json.dumps(source).encode())
    assert message.startswith(f"{place}: this is ")
    assert what in message


def test_no_fixture_a_format_reads_matches_a_known_shape() -> None:
    """The predicates are narrow: every fixture file that loads today still loads."""
    from ctxlab.formats._shapes import recognise

    checked = 0
    for path in sorted(FIXTURES.rglob("*.json")) + sorted(FIXTURES.rglob("*.jsonl")):
        if HERE in path.parents or path.name.startswith(("task_metadata", "ui_messages")):
            continue
        text = path.read_text(encoding="utf-8")
        try:
            value = json.loads(text)
            lines = False
        except json.JSONDecodeError:
            value = json.loads(text.splitlines()[0])
            lines = True
        assert recognise(value, lines=lines) is None, path
        checked += 1
    assert checked > 20


def test_every_shape_says_what_it_is_and_what_to_do() -> None:
    for shape in SHAPES:
        assert shape.what and shape.advice and (shape.value or shape.line)
