"""``ctxlab show CHAT --model claude-... --provider-count`` against a fake endpoint.

The endpoint is tests/fake_counting.py on 127.0.0.1, reached through ``ANTHROPIC_BASE_URL`` /
``GOOGLE_GEMINI_BASE_URL`` (the operator's override); the key comes from the environment.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxlab.cli import main
from ctxlab.provider_count import COUNTS

if TYPE_CHECKING:
    from fake_counting import FakeCounting

pytest_plugins = ["fake_counting"]

KEY = "cli-key-Hx42-never-printed"
SAMPLE = "support_function_calls"


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    COUNTS.clear()
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _total(out: str) -> int:
    match = re.search(r"^total: .*?, ([\d,]+) tokens", out, re.MULTILINE)
    assert match, out
    return int(match.group(1).replace(",", ""))


PARAMETERS = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
REQUEST = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Find it. My key: sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q": "it"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "found"},
        {"role": "assistant", "content": "Found."},
    ],
    "tools": [
        {
            "type": "function",
            "function": {"name": "search", "description": "Search.", "parameters": PARAMETERS},
        }
    ],
}


def test_show_prints_the_providers_count_beside_ctxlabs(
    capsys: pytest.CaptureFixture[str],
    fake_counting: FakeCounting,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    chat = tmp_path / "request.json"
    chat.write_text(json.dumps(REQUEST), encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_counting.base_url)
    code, out, err = run(
        capsys, "show", str(chat), "--model", "claude-sonnet-4-5", "--provider-count"
    )
    assert (code, err) == (0, "")
    ours = _total(out)
    low = (41_230 - ours) / 41_230
    assert (
        f"provider count: Anthropic counts 41,230 tokens; ctxlab's approximate count is "
        f"{ours:,} ({low:.1%} low). 1 credential-looking span masked before sending." in out
    )
    [got] = fake_counting.requests
    assert got.headers["x-api-key"] == KEY and got.query == ""
    assert got.body["model"] == "claude-sonnet-4-5"
    assert got.body["system"] == [{"type": "text", "text": "Be brief."}]
    assert got.body["tools"] == [
        {"name": "search", "description": "Search.", "input_schema": PARAMETERS}
    ]
    assert got.body["messages"][1]["content"][0]["input"] == {"q": "it"}
    assert b"sk-proj-AbCdEf" not in got.raw
    assert KEY not in out + err


def test_show_counts_with_gemini_through_its_header(
    capsys: pytest.CaptureFixture[str],
    fake_counting: FakeCounting,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_counting.base_url)
    code, out, _ = run(capsys, "show", SAMPLE, "--model", "gemini-2.5-pro", "--provider-count")
    assert code == 0 and "provider count: Gemini counts 41,230 tokens" in out
    [got] = fake_counting.requests
    assert got.path == "/v1beta/models/gemini-2.5-pro:countTokens"
    assert got.headers["x-goog-api-key"] == KEY and got.query == ""


def test_a_refusal_is_one_line_and_ctxlabs_count_stays(
    capsys: pytest.CaptureFixture[str],
    fake_counting: FakeCounting,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_counting.base_url)
    fake_counting.script("401")
    code, out, err = run(capsys, "show", SAMPLE, "--model", "claude-sonnet-4-5", "--provider-count")
    assert code == 2
    assert err == (
        "ctxlab: error: provider count: Anthropic's count_tokens refused the request: 401 "
        "invalid x-api-key [REDACTED]\n"
    )
    assert _total(out) > 0 and "validator:" in out and "provider count:" not in out
    assert KEY not in out + err


def test_no_key_or_another_provider_sends_nothing(
    capsys: pytest.CaptureFixture[str],
    fake_counting: FakeCounting,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_counting.base_url)
    code, out, err = run(capsys, "show", SAMPLE, "--model", "claude-sonnet-4-5", "--provider-count")
    assert code == 2 and "no Anthropic API key (set ANTHROPIC_API_KEY" in err
    code, out, err = run(capsys, "show", SAMPLE, "--model", "gpt-4o", "--provider-count")
    assert code == 2 and "gpt-4o is not an Anthropic or Gemini model" in err
    assert _total(out) > 0
    assert fake_counting.requests == []


def test_without_the_option_nothing_is_sent(
    capsys: pytest.CaptureFixture[str],
    fake_counting: FakeCounting,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_counting.base_url)
    code, out, _ = run(capsys, "show", SAMPLE, "--model", "claude-sonnet-4-5")
    assert code == 0 and "provider count" not in out
    assert fake_counting.requests == []
