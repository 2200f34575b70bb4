"""The core install and its extras, checked in this environment (tests/test_install.py checks
real installs): pyproject.toml's extras hold what ctxlab.extras names; the chat commands run
with every optional package blocked; a command whose extra is missing prints one line naming
it; ``--version`` and ``ctxlab.__version__`` are the installed distribution's."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

import ctxlab
from ctxlab.cli import main
from ctxlab.extras import EXTRAS, missing_extra

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
OPTIONAL = ("streamlit", "plotly", "pandas", "duckdb", "pyarrow", "ray")
# Not a core dependency either: only replay's array path uses it, and falls back without it.
ARRAYS = "numpy"
# The exact tokenizers' extras and the catalog tooling: none of the core commands needs them.
TOKENIZERS = ("mistral_common", "sentencepiece", "llama_models", "genai_prices")


def _name(requirement: str) -> str:
    """``"duckdb>=1.1"`` -> ``"duckdb"``; ``"ctxlab[fleet]"`` -> ``"ctxlab"``."""
    match = re.match(r"[A-Za-z0-9_.-]+", requirement)
    assert match, requirement
    return match.group(0).lower().replace("_", "-")


def _installs(extra: str) -> set[str]:
    """The distributions ``ctxlab[extra]`` adds, following ``ctxlab[...]`` references."""
    found: set[str] = set()
    for requirement in PYPROJECT["project"]["optional-dependencies"][extra]:
        if _name(requirement) == "ctxlab":
            inner = re.search(r"\[(.*)\]", requirement)
            assert inner, requirement
            for name in inner.group(1).split(","):
                found |= _installs(name.strip())
        else:
            found.add(_name(requirement))
    return found


def test_the_core_dependencies_hold_no_optional_package() -> None:
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    assert core.isdisjoint(OPTIONAL)


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_each_extra_installs_the_modules_the_cli_checks_for(extra: str) -> None:
    assert set(EXTRAS[extra].modules) <= _installs(extra)


def test_the_test_extra_installs_every_optional_package() -> None:
    assert set(OPTIONAL) <= _installs("test")
    assert {"app", "fleet", "ray"} <= set(PYPROJECT["project"]["optional-dependencies"])


def test_the_license_is_an_spdx_expression_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Copyright (c) 2026 the ctxlab authors" in text
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"]


# -- the chat commands with no optional package ------------------------------------------------

BLOCKED_RUN = """\
import sys

BLOCKED = {blocked!r}

# As if not installed: importing one raises ModuleNotFoundError, importlib.util.find_spec
# answers None.
for name in BLOCKED:
    sys.modules[name] = None

from ctxlab.cli import main

commands = [
    ["--version"],
    ["show", "coding_agent_session"],
    ["trim", "coding_agent_session", "--strategy", "summarize"],
    ["replay", "coding_agent_session", "--strategy", "window-drop", "--csv", {csv!r}],
    ["strategies"],
    ["export", "--strategy", "window-drop", "--target", "langchain"],
    ["samples"],
    ["models"],
]
for command in commands:
    try:
        status = main(command)
    except SystemExit as exc:
        status = exc.code
    print("STATUS", " ".join(command[:1]), status, file=sys.stderr)
loaded = sorted(m for m, v in sys.modules.items() if m.split(".")[0] in BLOCKED and v is not None)
print("LOADED", loaded, file=sys.stderr)
"""


def test_the_chat_commands_run_with_every_optional_package_blocked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked_csv = tmp_path / "blocked.csv"
    script = BLOCKED_RUN.format(blocked=(*OPTIONAL, ARRAYS, *TOKENIZERS), csv=str(blocked_csv))
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    statuses = [line for line in done.stderr.splitlines() if line.startswith("STATUS")]
    assert statuses == [
        f"STATUS {name} 0"
        for name in (
            "--version",
            "show",
            "trim",
            "replay",
            "strategies",
            "export",
            "samples",
            "models",
        )
    ], done.stderr
    assert "LOADED []" in done.stderr
    assert "Traceback" not in done.stderr
    # window-drop's replay, costed call by call without numpy, gives the array path's rows
    with_numpy = tmp_path / "with_numpy.csv"
    argv = ["replay", "coding_agent_session", "--strategy", "window-drop", "--csv"]
    assert main([*argv, str(with_numpy)]) == 0
    capsys.readouterr()
    assert blocked_csv.read_bytes() == with_numpy.read_bytes()
    assert len(with_numpy.read_bytes().splitlines()) > 10


# -- a missing extra: one line, exit 2 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "blocked", "line"),
    [
        (["app"], "streamlit", "ctxlab app needs the playground: pip install 'ctxlab[app]'"),
        (
            ["eval", "chats/", "--db", "r.duckdb", "--grid", "window-drop:budget=1000"],
            "duckdb",
            "ctxlab eval needs fleet evaluation (DuckDB): pip install 'ctxlab[fleet]'",
        ),
        (
            ["eval", "chats/", "--db", "r.duckdb", "--ray", "--grid", "window-drop:budget=1000"],
            "ray",
            "ctxlab eval --ray needs Ray: pip install 'ctxlab[ray]'",
        ),
        (
            ["report", "r.duckdb"],
            "pyarrow",
            "ctxlab report needs fleet evaluation (DuckDB): pip install 'ctxlab[fleet]'",
        ),
    ],
    ids=["app", "eval", "eval-ray", "report"],
)
def test_a_command_without_its_extra_names_the_extra(
    argv: list[str],
    blocked: str,
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, blocked, None)  # what importing an absent package sees
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == line + "\n"
    assert not list(tmp_path.iterdir())  # nothing was started or written


def test_an_installed_extra_is_not_reported_missing() -> None:
    for name in EXTRAS:
        assert missing_extra(name, "x") is None  # the test extra installs every one


def test_the_fleet_page_names_the_fleet_extra_when_duckdb_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app_support import page

    monkeypatch.setitem(sys.modules, "duckdb", None)
    at = page("pages/5_Fleet.py")
    at.run()
    assert not at.exception
    # notices.info shows the sentence literally (its Markdown characters escaped)
    assert [info.value.replace("\\", "") for info in at.info] == [
        "The Fleet page needs fleet evaluation (DuckDB): pip install 'ctxlab[fleet]'"
    ]


# -- the version -------------------------------------------------------------------------------


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    installed = importlib.metadata.version("ctxlab")
    assert ctxlab.__version__ == installed
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ctxlab {installed}\n"


def test_version_is_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--version" in capsys.readouterr().out


def test_importing_ctxlab_does_not_look_the_version_up() -> None:
    code = textwrap.dedent(
        """
        import sys
        import ctxlab
        print("ctxlab._version" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "False"


def _distribution_of(module: str) -> str:
    """The distribution that installs top-level ``module`` here (``mistral_common`` ->
    ``mistral-common``)."""
    found = importlib.metadata.packages_distributions().get(module)
    assert found, f"{module} is installed by no distribution here"
    return found[0].lower().replace("_", "-")


def test_every_tokenizer_family_names_an_extra_that_installs_what_it_needs() -> None:
    from ctxlab.tokenizer_families import FAMILIES

    extras = PYPROJECT["project"]["optional-dependencies"]
    core = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    for family in FAMILIES.values():
        assert family.extra in extras, family.name
        needed = {_distribution_of(module) for module in family.requires} - core
        assert needed <= _installs(family.extra), family.name
        assert needed <= _installs("open-models"), family.name
        assert needed <= _installs("test"), family.name
