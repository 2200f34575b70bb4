"""``-`` as CHAT: every command that takes a chat reads it from standard input, JSON or JSONL
detected as for a file, and its errors name ``<stdin>`` and the line.

Run as a user runs it: ``python -m ctxlab ... -`` with the chat piped in. What a command prints
for standard input is compared with what it prints for the same bytes in a file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "ctxlab" / "sample_chats" / "coding_agent_session.json"
CLAUDE_CODE = ROOT / "tests" / "fixtures" / "formats" / "claude_code" / "thinking_session.jsonl"


def _ctxlab(*args: str, stdin: bytes = b"", cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "ctxlab", *args],
        input=stdin.decode("utf-8"),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _jsonl_chat(tmp_path: Path) -> Path:
    """The sample chat's messages, one JSON object a line (OpenAI JSONL), as a file."""
    messages = json.loads(SAMPLE.read_bytes())["messages"]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("kind", "command"),
    [
        ("json", ["show"]),
        ("jsonl", ["show"]),
        ("json", ["trim", "--strategy", "window-drop", "--param", "budget=4000"]),
        ("jsonl", ["trim", "--strategy", "window-drop", "--json"]),
        ("jsonl", ["replay", "--strategy", "sliding-window", "--all"]),
    ],
    ids=["show-json", "show-jsonl", "trim-json", "trim-jsonl-json-out", "replay-jsonl"],
)
def test_a_chat_on_stdin_reads_as_the_same_file_does(
    kind: str, command: list[str], tmp_path: Path
) -> None:
    path = SAMPLE if kind == "json" else _jsonl_chat(tmp_path)
    from_file = _ctxlab(command[0], str(path), *command[1:])
    from_stdin = _ctxlab(command[0], "-", *command[1:], stdin=path.read_bytes())
    assert from_file.returncode == 0, from_file.stderr
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout
    assert from_stdin.stdout.strip()


def test_a_claude_code_session_on_stdin_is_detected(tmp_path: Path) -> None:
    # Its own format (not OpenAI's), found by sniffing the first line as for the file; the file
    # is copied alone so no sub-agent files lie beside it.
    alone = tmp_path / CLAUDE_CODE.name
    alone.write_bytes(CLAUDE_CODE.read_bytes())
    from_file = _ctxlab("show", str(alone))
    from_stdin = _ctxlab("show", "-", stdin=alone.read_bytes())
    assert from_file.returncode == 0 and from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout
    assert "total:" in from_stdin.stdout


def test_an_invalid_line_on_stdin_is_named_by_line() -> None:
    lines = [
        json.dumps({"role": "user", "content": "hi"}),
        '{"role": "assistant", "content": oops}',
        json.dumps({"role": "user", "content": "again"}),
    ]
    done = _ctxlab("show", "-", stdin="\n".join(lines).encode() + b"\n")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("ctxlab: error: <stdin>: line 2: invalid JSON")
    assert done.stderr.count("\n") == 1


def test_a_bad_field_on_stdin_is_named_by_its_path() -> None:
    chat = {"messages": [{"role": "user", "content": "hi"}, {"role": 5, "content": "x"}]}
    done = _ctxlab("trim", "-", "--strategy", "window-drop", stdin=json.dumps(chat).encode())
    assert done.returncode == 2
    assert done.stderr.startswith("ctxlab: error: <stdin>: $.messages[1].role:")


def test_empty_stdin_is_an_error_naming_stdin() -> None:
    done = _ctxlab("replay", "-", "--strategy", "window-drop")
    assert done.returncode == 2
    assert done.stderr == "ctxlab: error: <stdin>: empty input: expected a JSON or JSONL chat\n"


def test_the_help_says_dash_reads_stdin() -> None:
    done = _ctxlab("show", "--help")
    assert done.returncode == 0
    assert "- to read the chat from standard input" in " ".join(done.stdout.split())
