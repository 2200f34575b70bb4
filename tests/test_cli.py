"""The ``ctxlab`` command: show, trim, replay, strategies; one-line errors with exit status 2."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab.cli import main
from ctxlab.formats import dump_chat, load_chat
from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies import get_strategy_class, parameters, strategy_names

SECRET = "sk-proj-THISISAPLANTEDSECRETKEY0123456789abcdef"


def _chat() -> tuple[Message, ...]:
    out: list[Message] = [Message(Role.SYSTEM, "You are a helpful travel agent.", "sys")]
    for k in range(6):
        out.append(
            Message(Role.USER, f"Question {k}: what is the weather in city {k}? " * 5, f"u{k}")
        )
        call = ToolCall(f"call{k}", "get_weather", json.dumps({"city": f"city {k}"}))
        out.append(Message(Role.ASSISTANT, "", f"c{k}", tool_calls=(call,)))
        out.append(
            Message(
                Role.TOOL,
                f"weather report {k}: sunny, 20 C. " * 20,
                f"t{k}",
                tool_call_id=f"call{k}",
            )
        )
        out.append(Message(Role.ASSISTANT, f"In city {k} it is sunny and 20 C.", f"a{k}"))
    return tuple(out)


@pytest.fixture
def chat_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(dump_chat(_chat()))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- show --------------------------------------------------------------------------------------


def test_show_lists_rounds_roles_tokens_and_totals(
    capsys: pytest.CaptureFixture[str], chat_file: Path
) -> None:
    code, out, err = run(capsys, "show", str(chat_file))
    assert code == 0 and err == ""
    assert "0 (preamble)" in out
    assert "user, assistant×2, tool" in out
    assert "25 messages in 7 rounds" in out
    assert "validator: no problems" in out


def test_show_counts_with_the_chosen_model(
    capsys: pytest.CaptureFixture[str], chat_file: Path
) -> None:
    _, out4o, _ = run(capsys, "show", str(chat_file))
    code, out4, _ = run(capsys, "show", str(chat_file), "--model", "gpt-4")
    assert code == 0
    assert "cl100k_base" in out4 and "o200k_base" in out4o


# -- trim --------------------------------------------------------------------------------------


def test_trim_reports_dropped_and_kept_rounds_and_saved_tokens(
    capsys: pytest.CaptureFixture[str], chat_file: Path
) -> None:
    code, out, err = run(
        capsys, "trim", str(chat_file), "--strategy", "window-drop", "--param", "budget=600"
    )
    assert code == 0, err
    assert "dropped" in out and "kept" in out
    assert "tokens: " in out and " -> " in out and "saved" in out
    assert "strategy: window-drop (budget=600, keep_system=false)" in out


def test_trim_rounds_flag_prints_one_line_per_round(
    capsys: pytest.CaptureFixture[str], chat_file: Path
) -> None:
    _, grouped, _ = run(capsys, "trim", str(chat_file), "--strategy", "window-drop")
    _, each, _ = run(capsys, "trim", str(chat_file), "--strategy", "window-drop", "--rounds")
    # default budget keeps everything: one run of rounds, or seven lines with --rounds
    assert sum(" kept " in line for line in grouped.splitlines()) == 1
    assert sum(" kept " in line for line in each.splitlines()) == 7


def test_trim_json_prints_only_the_context_and_it_loads_back(
    capsys: pytest.CaptureFixture[str], chat_file: Path
) -> None:
    code, out, _ = run(
        capsys,
        "trim",
        str(chat_file),
        "--strategy",
        "window-drop",
        "--param",
        "budget=600",
        "--json",
    )
    assert code == 0
    payload = json.loads(out)
    assert isinstance(payload, list) and payload
    back = load_chat(out.encode())
    assert [m.role for m in back] == [Role(p["role"]) for p in payload]
    assert back[0].role is Role.USER  # whole rounds dropped from the front
    assert all("id" not in p for p in payload)  # exactly what the API receives


@pytest.mark.parametrize("name", strategy_names())
def test_every_registered_strategy_trims_from_the_command_line(
    capsys: pytest.CaptureFixture[str], chat_file: Path, name: str
) -> None:
    code, out, err = run(capsys, "trim", str(chat_file), "--strategy", name)
    assert code == 0, err
    assert f"strategy: {name}" in out


def test_parameters_are_coerced_from_text(
    capsys: pytest.CaptureFixture[str], chat_file: Path
) -> None:
    code, out, _ = run(
        capsys,
        "trim",
        str(chat_file),
        "--strategy",
        "sliding-window",
        "--param",
        "window=3",
        "--param",
        "trigger_at=none",
    )
    assert code == 0
    assert "window=3, trigger_at=none" in out  # the text --param reads back


@pytest.mark.skipif("summarize" not in strategy_names(), reason="summarize not registered")
def test_summarize_uses_the_offline_summarizer_and_shows_the_request(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chat = list(_chat())
    chat[3] = chat[3].replace(content=f"token={SECRET}")
    path = tmp_path / "secret.json"
    path.write_text(dump_chat(chat))
    code, out, err = run(
        capsys,
        "trim",
        str(path),
        "--strategy",
        "summarize",
        "--param",
        "trigger_token_budget=200",
        "--param",
        "keep_recent_messages=4",
        "--show-request",
    )
    assert code == 0, err
    assert '"messages"' in out and "summarized" in out
    assert SECRET not in out


# -- replay ------------------------------------------------------------------------------------


def test_replay_prints_calls_and_writes_csv(
    capsys: pytest.CaptureFixture[str], chat_file: Path, tmp_path: Path
) -> None:
    target = tmp_path / "replay.csv"
    code, out, err = run(
        capsys,
        "replay",
        str(chat_file),
        "--strategy",
        "window-drop",
        "--param",
        "budget=600",
        "--csv",
        str(target),
    )
    assert code == 0, err
    assert "calls: 12" in out and "cost: $" in out
    with target.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12 and rows[0]["turn"] == "1"
    assert int(rows[-1]["tokens_sent"]) <= int(rows[-1]["tokens_untrimmed"])


def test_long_replay_prints_a_summary_not_every_call(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chat = [
        Message(Role.USER if k % 2 == 0 else Role.ASSISTANT, f"text {k}", f"m{k}")
        for k in range(100)
    ]
    path = tmp_path / "long.json"
    path.write_text(dump_chat(chat))
    code, out, _ = run(capsys, "replay", str(path), "--strategy", "window-drop")
    assert code == 0
    assert "(30 calls)" in out
    assert len(out.splitlines()) < 30


# -- strategies --------------------------------------------------------------------------------


def test_strategies_lists_every_strategy_and_parameter_from_the_registry(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "strategies")
    assert code == 0
    for name in strategy_names():
        assert f"{name}: " in out
        for info in parameters(get_strategy_class(name)):
            assert f"--param {info.name}=" in out
    assert "default 8000, >= 1 tokens" in out  # window-drop's budget


# -- errors: one line on stderr, exit 2 ----------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["show", "{missing}"], "no such file"),
        (["show", "{bad}"], "invalid JSON"),
        (["trim", "{chat}", "--strategy", "nope"], "unknown strategy 'nope'"),
        (["trim", "{chat}", "--strategy", "window-drop", "--param", "budgt=3"], "no parameter"),
        (["trim", "{chat}", "--strategy", "window-drop", "--param", "budget=lots"], "budget"),
        (["trim", "{chat}", "--strategy", "window-drop", "--param", "budget=0"], ">= 1"),
        (["trim", "{chat}", "--strategy", "window-drop", "--param", "budget"], "key=value"),
        (["trim", "{chat}", "--model", "llama-3"], "--strategy"),
        (["show", "{chat}", "--model", "llama-3"], "unknown model"),
        (["show", "{chat}", "--format", "yaml"], "invalid choice"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_input_gives_one_error_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
    chat_file: Path,
    tmp_path: Path,
    argv: list[str],
    fragment: str,
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    names = {"chat": str(chat_file), "bad": str(bad), "missing": str(tmp_path / "nope.json")}
    code, out, err = run(capsys, *(a.format(**names) for a in argv))
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxlab: error: ")
    assert fragment in lines[0]
    assert "Traceback" not in err


def test_help_works_for_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in ([], ["show"], ["trim"], ["replay"], ["strategies"]):
        code, out, _ = run(capsys, *argv, "--help")
        assert code == 0 and "usage: ctxlab" in out


# -- the installed command ---------------------------------------------------------------------


def test_console_script_runs_and_fails_cleanly(chat_file: Path, tmp_path: Path) -> None:
    exe = shutil.which("ctxlab")
    prefix = [exe] if exe else [sys.executable, "-m", "ctxlab.cli"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    ok = subprocess.run(
        [*prefix, "trim", str(chat_file), "--strategy", "window-drop", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert len(load_chat(ok.stdout.encode())) > 0
    bad = subprocess.run(
        [*prefix, "show", str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and bad.stderr.startswith("ctxlab: error:")


def test_samples_are_listed_and_usable_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxlab.samples import list_samples

    code, out, _ = run(capsys, "samples")
    assert code == 0
    listed = [line.split(":", 1)[0] for line in out.splitlines()]
    assert listed == [s.name for s in list_samples()]
    code, out, err = run(capsys, "show", "support_function_calls")
    assert code == 0, err
    assert out.startswith("round")
    code, _, err = run(capsys, "show", "no_such_sample_or_file")
    assert code == 2 and "ctxlab samples" in err


def test_unknown_arguments_are_refused_except_by_app(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "strategies", "--server.port=1")
    assert code == 2 and "unrecognized arguments: --server.port=1" in err


# -- what the command prints from a file never drives the terminal (issue 22) ----------------------

TERMINAL_TRICKS = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eexe.txt\x7f"


def _no_control_characters(text: str) -> None:
    assert not any(
        (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2066"
        for c in text
    ), repr(text)


def test_show_prints_a_files_escape_sequences_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chat = [
        {"role": "user", "content": f"hi {TERMINAL_TRICKS}", "name": f"n{TERMINAL_TRICKS}"},
        {"role": "assistant", "content": "ok"},
    ]
    path = tmp_path / "tricks.json"
    path.write_text(json.dumps(chat), encoding="utf-8")
    for argv in (["show", str(path)], ["trim", str(path), "--strategy", "window-drop", "--json"]):
        assert main(argv) == 0
        out, err = capsys.readouterr()
        _no_control_characters(out + err)
    assert main(["trim", str(path), "--strategy", "window-drop", "--json"]) == 0
    sent = json.loads(capsys.readouterr().out)  # still JSON, meaning the same text
    assert sent[0]["content"] == f"hi {TERMINAL_TRICKS}"


def test_a_load_error_quoting_a_files_keys_prints_them_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({f"k{TERMINAL_TRICKS}": 1}), encoding="utf-8")
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ctxlab: error: keys.json") and err.count("\n") == 1
    _no_control_characters(err.rstrip("\n"))
    assert "\\u001b]0;pwned\\u0007" in err and "\\u202e" in err


def test_report_errors_prints_a_files_escape_sequences_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "chats"
    corpus.mkdir()
    (corpus / "ok.json").write_text(dump_chat(_chat()), encoding="utf-8")
    (corpus / "bad.json").write_text(json.dumps({f"=k{TERMINAL_TRICKS}": 1}), encoding="utf-8")
    db = str(tmp_path / "fleet.duckdb")
    grid = "window-drop:budget=1000"
    assert main(["eval", str(corpus), "--grid", grid, "--db", db, "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["report", db, "--errors"]) == 0
    out = capsys.readouterr().out
    assert "error: bad.json" in out and "\\u001b[2J" in out
    _no_control_characters(out)
