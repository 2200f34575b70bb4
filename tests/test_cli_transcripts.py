"""The ``ctxlab`` command on agent transcripts: folders, formats, tools, provider usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab.cli import main
from ctxlab.formats import FORMATS
from ctxlab.tokens import get_counter

FORMATS_DIR = Path(__file__).parent / "fixtures" / "formats"
PROJECT = FORMATS_DIR / "claude_code" / "project"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_show_on_a_claude_code_project_folder_lists_its_sessions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "show", str(PROJECT))
    assert code == 0 and err == ""
    assert out.startswith("sessions (pick one with --conversation ID")
    for session in PROJECT.glob("*.jsonl"):
        assert session.stem in out
    assert "provider usage:" in out
    code, picked, _ = run(capsys, "show", str(PROJECT), "--conversation", "1")
    assert code == 0 and "sessions (" not in picked


def test_help_names_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for name in FORMATS:
        assert f"  {name} " in out
    for command in ("show", "trim", "replay"):
        _, sub, _ = run(capsys, command, "--help")
        assert all(name in "".join(sub.split()) for name in FORMATS)  # wrapped at hyphens


def test_show_counts_tool_definitions_in_every_request(capsys: pytest.CaptureFixture[str]) -> None:
    path = FORMATS_DIR / "responses" / "tool_output_request.json"
    raw = json.loads(path.read_text())
    code, out, _ = run(capsys, "show", str(path))
    counter = get_counter("gpt-4o")
    tools = counter.count_tools(
        [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["parameters"],
                },
            }
            for t in raw["tools"]
        ]
    )
    assert code == 0
    assert f"tools: 2 definitions (get_user_country, final_result), {tools:,} tokens" in out


def test_trim_budgets_include_the_tool_definitions(capsys: pytest.CaptureFixture[str]) -> None:
    path = FORMATS_DIR / "responses" / "tool_output_request.json"
    code, out, _ = run(
        capsys, "trim", str(path), "--strategy", "window-drop", "--param", "budget=100000", "--json"
    )
    assert code == 0 and len(json.loads(out)) == 3
    code, out, _ = run(
        capsys, "trim", str(path), "--strategy", "window-drop", "--param", "budget=60"
    )
    assert code == 0
    tokens_line = next(line for line in out.splitlines() if line.startswith("tokens:"))
    after = int(tokens_line.split("-> ")[1].split(" ")[0].replace(",", ""))
    assert after > 60  # the last round plus 54 tokens of tools is over budget: kept anyway
