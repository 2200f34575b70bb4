"""The CLI with framework policies: ``ctxlab strategies`` lists them in their own group with
framework, component, version and evidence; ``trim --strategy <policy> --param ... --json``
works like any strategy; ``export --target native`` prints the framework's own configuration."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stderr
from pathlib import Path

import pytest
from framework_policy import NAME, OTHER_NAME, PLACEHOLDER, registered

from ctxlab.cli import main

CHAT = "coding_agent_session"


@pytest.fixture(autouse=True)
def test_policies() -> Iterator[None]:
    with registered():
        yield


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    from contextlib import redirect_stdout

    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_strategies_lists_framework_policies_in_their_own_group() -> None:
    status, out, _ = _run("strategies")
    assert status == 0
    own, policies = out.split("framework policies (the frameworks' own policies, reproduced)")
    assert own.startswith("ctxlab strategies") and "window-drop: Window drop" in own
    assert NAME not in own
    lines = policies.strip().splitlines()
    assert lines[0].split() == ["name", "framework", "component", "version", "evidence"]
    rows = {line.split()[0]: line for line in lines[1 : lines.index("")]}
    other = [OTHER_NAME, "OtherFramework", "Compactor", "otherframework", "2.0", "documented"]
    assert rows[OTHER_NAME].split() == [*other, "only"]
    assert rows[NAME].split()[:4] == [NAME, "TestFramework", "WindowMemory", "testframework"]
    assert rows[NAME].endswith("ported from code")
    assert "not reproduced exactly: the placeholder's exact wording" in policies
    assert "--param trigger=<str>  default none" in policies


def test_trim_with_a_framework_policy_and_params_prints_the_context_as_json() -> None:
    status, out, err = _run(
        "trim",
        CHAT,
        "--strategy",
        NAME,
        "--param",
        "trigger=tokens=2000",
        "--param",
        "keep=2",
        "--json",
    )
    assert status == 0, err
    sent = json.loads(out)
    assert len(sent) == 3
    assert sent[0] == {"role": "user", "content": PLACEHOLDER.format(n=154)}


def test_trim_reports_a_framework_parameter_error_naming_the_parameter() -> None:
    status, _, err = _run("trim", CHAT, "--strategy", NAME, "--param", "trigger=lots")
    assert status == 2
    assert "trigger: cannot read 'lots'" in err


def test_export_native_prints_the_frameworks_configuration(tmp_path: Path) -> None:
    status, out, _ = _run("export", "--strategy", NAME, "--param", "keep=9", "--target", "native")
    assert status == 0
    assert out == (
        "from testframework import WindowMemory\n\n"
        "memory = WindowMemory(trigger=None, keep=9, compact=False)\n"
    )
    target = tmp_path / "memory.py"
    status, out, _ = _run(
        "export", "--strategy", OTHER_NAME, "--target", "native", "-o", str(target)
    )
    assert status == 0 and "(exact)" in out
    assert 'trigger=("tokens", 8000), keep=10, compact=True' in target.read_text()


def test_export_native_of_a_ctxlab_strategy_is_a_clear_error() -> None:
    status, out, err = _run("export", "--strategy", "window-drop", "--target", "native")
    assert status == 2 and out == ""
    assert (
        "native export is for framework policies; 'window-drop' is a ctxlab strategy: use "
        "--target ctxlab/langchain/semantic-kernel/autogen/openai-agents"
    ) in err


def test_export_ctxlab_target_builds_a_framework_policy_by_name() -> None:
    status, out, _ = _run(
        "export", "--strategy", NAME, "--param", "trigger=tokens=10", "--target", "ctxlab"
    )
    assert status == 0
    assert f"STRATEGY = build_strategy(\n    {NAME!r}," in out
    assert "'trigger': 'tokens=10'" in out


def test_existing_targets_still_export_ctxlab_strategies() -> None:
    status, out, _ = _run(
        "export", "--strategy", "window-drop", "--param", "budget=1234", "--target", "langchain"
    )
    assert status == 0 and "max_tokens=1234" in out
