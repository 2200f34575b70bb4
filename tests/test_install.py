"""Issue 13 items 1, 2 and 4, as a new user meets them: set-up, the wheel, a plug-in.

* The Quickstart's first command, ``bash scripts/run_app.sh``, in a clean ``git clone`` with
  nothing but ``env -i PATH=/usr/bin:/bin`` and Debian's ``/usr/bin/python3``, serves the app.
* A wheel built from this tree carries the MIT licence (``License-Expression`` and the LICENSE
  file). Installed without extras into a fresh venv outside the repository (issue 25: the core
  install is the engine and the CLI), it has no Streamlit, pandas, Plotly, DuckDB or Arrow, runs
  ``ctxlab show`` on a sample, ``ctxlab.samples`` and ``ctxlab --version`` (pyproject.toml's
  version), and ``ctxlab app`` names the extra to install; installed with ``[app]``,
  ``ctxlab app`` serves the playground.
* A ten-line plug-in installed into that venv shows its strategy in ``ctxlab strategies``, in
  the CLI and in the app's strategy picker.

Slow by nature (they install packages; pip's cache keeps it to about a minute each): marked
``install`` so a quick local run can leave them out with ``-m "not install"``. Every server is
started in its own process group and stopped at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from install_support import free_port, http_get, serving

ROOT = Path(__file__).resolve().parents[1]
DEBIAN_PYTHON = Path("/usr/bin/python3")
BARE_ENV = ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin"]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
OPTIONAL_MODULES = ("streamlit", "pandas", "plotly", "duckdb", "pyarrow", "ray", "numpy")

pytestmark = pytest.mark.install

# What the venvs run sees none of this checkout (a PYTHONPATH pointing at it would make the
# installed package's tests pass on the repository's code).
INSTALLED_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _run(*command: str | Path, cwd: Path, timeout: float = 600) -> str:
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=INSTALLED_ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _assert_app_answers(base: str) -> None:
    """Health, the page shell, and a full run of the entry script (Streamlit's script check)."""
    assert http_get(f"{base}/_stcore/health") == (200, "ok")
    status, html = http_get(f"{base}/")
    assert status == 200 and "<title>" in html
    assert http_get(f"{base}/_stcore/script-health-check", timeout=120) == (200, "ok")


# -- item 1: the Quickstart on a bare PATH -----------------------------------------------------


def test_quickstart_run_app_serves_the_playground_from_a_clean_clone(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to clone")
    if not DEBIAN_PYTHON.exists():
        pytest.skip("needs /usr/bin/python3 (the stock Debian/Ubuntu interpreter)")
    version = _run(DEBIAN_PYTHON, "-c", "import sys; print(sys.version_info >= (3, 11))", cwd=ROOT)
    if version.strip() != "True":
        pytest.skip("/usr/bin/python3 is older than 3.11")
    clone = tmp_path / "clone"
    _run("git", "clone", "--quiet", ROOT, clone, cwd=tmp_path)
    port = free_port()
    command = [
        *BARE_ENV,
        "bash",
        "scripts/run_app.sh",
        f"--server.port={port}",
        "--server.scriptHealthCheckEnabled=true",
    ]
    with serving(command, cwd=clone, port=port, log=tmp_path / "run_app.log") as base:
        _assert_app_answers(base)
    config = (clone / ".venv" / "pyvenv.cfg").read_text(encoding="utf-8")
    assert "home = /usr/bin" in config  # the venv was made from Debian's python3, not a shim


# -- item 2: the wheel, outside the repository -------------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this tree, built from a copy without the tests and other repository files."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(
        ROOT,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "__pycache__",
            "build",
            "dist",
            "*.egg-info",
            "tests",
            "bench",
            "docs",
            "scripts",
            "test-artifacts",
            "generated",
            ".mypy_cache",
            ".ruff_cache",
        ),
    )
    dist = work / "dist"
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", dist, ".", cwd=source)
    (built,) = dist.glob("ctxlab-*.whl")
    return built


def _observe(*command: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=INSTALLED_ENV,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@dataclass(frozen=True)
class Installed:
    """The venv, and what it did while it held the core install only (before ``[app]``)."""

    venv: Path
    core: dict[str, subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A fresh venv (no system site-packages) outside the repository: ``pip install ctxlab``
    (the wheel, no extras), observed; then ``pip install 'ctxlab[app]'`` into the same venv, as
    a user adds the playground (one venv: the core's packages are installed once)."""
    where = tmp_path_factory.mktemp("venv")
    venv = where / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=where)
    python, ctxlab = venv / "bin/python", venv / "bin/ctxlab"
    # --no-compile: pip's byte-compiling of Streamlit, pandas and Arrow is a large part of an
    # install's time; the few modules the tests import compile when imported.
    pip: list[str | Path] = [python, "-m", "pip", "install", "--quiet", "--no-compile"]
    _run(*pip, wheel, cwd=where)
    core = {
        f"import {m}": _observe(python, "-c", f"import {m}", cwd=where) for m in OPTIONAL_MODULES
    }
    core["show"] = _observe(ctxlab, "show", "coding_agent_session", cwd=where)
    core["replay"] = _observe(
        ctxlab, "replay", "coding_agent_session", "--strategy", "window-drop", cwd=where
    )
    core["--version"] = _observe(ctxlab, "--version", cwd=where)
    core["__version__"] = _observe(
        python, "-c", "import ctxlab; print(ctxlab.__version__)", cwd=where
    )
    core["app"] = _observe(ctxlab, "app", cwd=where)
    _run(*pip, f"{wheel}[app]", cwd=where)
    return Installed(venv, core)


@pytest.fixture(scope="module")
def wheel_venv(installed: Installed) -> Path:
    """``pip install 'ctxlab[app]'``: the wheel with the playground."""
    return installed.venv


def test_the_wheel_carries_the_mit_licence(wheel: Path) -> None:
    info = f"ctxlab-{VERSION}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"{info}/METADATA").decode("utf-8")
        licence = archive.read(f"{info}/licenses/LICENSE").decode("utf-8")
    headers = metadata.split("\n\n", 1)[0].splitlines()
    assert "License-Expression: MIT" in headers
    assert "License-File: LICENSE" in headers
    assert not any(h.startswith("License: ") for h in headers)  # the legacy field is gone
    assert licence == (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_the_core_install_is_the_engine_and_cli_without_the_extras(installed: Installed) -> None:
    core = installed.core
    for module in OPTIONAL_MODULES:
        done = core[f"import {module}"]
        assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr, module
    shown = core["show"]
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("round") and "system" in shown.stdout
    replayed = core["replay"]  # window-drop: the array path's rows, computed without numpy
    assert replayed.returncode == 0 and "cost: $" in replayed.stdout, replayed.stderr
    assert (core["--version"].returncode, core["--version"].stdout) == (0, f"ctxlab {VERSION}\n")
    assert core["__version__"].stdout == f"{VERSION}\n"
    assert core["app"].returncode == 2
    assert core["app"].stderr == "ctxlab app needs the playground: pip install 'ctxlab[app]'\n"


def test_the_wheel_holds_the_samples_and_reads_one_outside_the_repo(wheel_venv: Path) -> None:
    outside = wheel_venv.parent
    where = _run(
        wheel_venv / "bin/python",
        "-c",
        "import ctxlab, ctxlab.samples as s; print(ctxlab.__file__); "
        "print(s.sample_path('coding_agent_session')); "
        "print(len([x for x in s.list_samples() if not x.generated]))",
        cwd=outside,
    ).split()
    assert str(wheel_venv) in where[0] and str(wheel_venv) in where[1]
    shipped = len(list((ROOT / "ctxlab/sample_chats").glob("*.json"))) + len(
        list((ROOT / "ctxlab/sample_chats/real").glob("*.json"))
    )
    assert int(where[2]) == shipped


def test_ctxlab_app_serves_the_packaged_playground(wheel_venv: Path, tmp_path: Path) -> None:
    port = free_port()
    command = [
        str(wheel_venv / "bin/ctxlab"),
        "app",
        f"--server.port={port}",
        "--server.scriptHealthCheckEnabled=true",
    ]
    log = tmp_path / "app.log"
    with serving(command, cwd=tmp_path, port=port, log=log, env=INSTALLED_ENV, timeout=120) as base:
        _assert_app_answers(base)


# -- item 4: a plug-in strategy ----------------------------------------------------------------

PLUGIN = """\
from dataclasses import dataclass

from ctxlab.strategies import Strategy, TrimResult, param, suffix_decisions


@dataclass(frozen=True)
class KeepLast(Strategy):
    name = "keep-last"
    title = "Keep last"
    summary = "Keep the last N messages."
    count: int = param(4, label="Messages kept", help="How many messages to keep.", min=1)

    def apply(self, messages, counter, summarizer=None):
        cut = max(len(messages) - self.count, 0)
        kept = tuple(messages[cut:])
        return TrimResult(
            kept, suffix_decisions([m.id for m in messages], cut),
            counter.count_messages(messages), counter.count_messages(kept), strategy=self.name,
        )
"""

PLUGIN_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "ctxlab-keep-last"
version = "0.1"

[project.entry-points."ctxlab.strategies"]
keep-last = "ctxlab_keep_last:KeepLast"
"""

PICKER_APPTEST = """\
import sys
from pathlib import Path

import ctxlab
from streamlit.testing.v1 import AppTest

at = AppTest.from_file(str(Path(ctxlab.__file__).parent / "playground/app.py"),
                       default_timeout=120)
at.run()
assert not at.exception, at.exception
picker = next(s for s in at.sidebar.selectbox if s.label == "Strategy")
for title in picker.options:  # the titles the picker shows
    print(title)
"""


@pytest.fixture(scope="module")
def plugin_venv(wheel_venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    package = tmp_path_factory.mktemp("plugin")
    (package / "pyproject.toml").write_text(PLUGIN_PYPROJECT, encoding="utf-8")
    (package / "ctxlab_keep_last.py").write_text(PLUGIN, encoding="utf-8")
    _run(wheel_venv / "bin/python", "-m", "pip", "install", "--quiet", ".", cwd=package)
    return wheel_venv


def test_a_plugin_strategy_is_listed_usable_and_in_the_picker(plugin_venv: Path) -> None:
    outside = plugin_venv.parent
    listed = _run(plugin_venv / "bin/ctxlab", "strategies", cwd=outside)
    assert "keep-last: Keep last" in listed and "--param count=<int>" in listed
    trimmed = _run(
        plugin_venv / "bin/ctxlab",
        "trim",
        "coding_agent_session",
        "--strategy",
        "keep-last",
        "--param",
        "count=3",
        cwd=outside,
    )
    assert "keep-last (count=3)" in trimmed
    script = outside / "picker.py"
    script.write_text(PICKER_APPTEST, encoding="utf-8")
    shown = _run(plugin_venv / "bin/python", script, cwd=outside).splitlines()
    assert "Keep last" in shown and "Window drop" in shown


def test_built_ins_enter_the_installed_registry_through_entry_points(plugin_venv: Path) -> None:
    names = _run(
        plugin_venv / "bin/python",
        "-c",
        "from importlib.metadata import entry_points; from ctxlab.strategies import "
        "strategy_names; eps = sorted(e.name for e in entry_points(group='ctxlab.strategies'));"
        " print(eps == sorted(strategy_names())); print(' '.join(eps))",
        cwd=plugin_venv.parent,
    ).splitlines()
    assert names[0] == "True"
    assert {"window-drop", "summarize", "keep-last"} <= set(names[1].split())
