"""Issue 13 items 1, 2 and 4, as a new user meets them: set-up, the wheel, a plug-in.

* The Quickstart's first command, ``bash scripts/run_app.sh``, in a clean ``git clone`` with
  nothing but ``env -i PATH=/usr/bin:/bin`` and Debian's ``/usr/bin/python3``, serves the app.
* A wheel built from this tree, installed into a fresh venv outside the repository, runs
  ``ctxlab show`` on a sample, ``ctxlab.samples`` and ``ctxlab app``.
* A ten-line plug-in installed into that venv shows its strategy in ``ctxlab strategies``, in
  the CLI and in the app's strategy picker.

Slow by nature (they install packages): marked ``install`` so a quick local run can leave them
out with ``-m "not install"``. When ``scripts/test.sh`` runs them it names the wheelhouse its own
install used (``CTXLAB_TEST_WHEELHOUSE``, see ``scripts/_venv.sh``): the clone's ``run_app.sh``
and the wheel's venv then install from it with no index (resolving against this machine's
indexes costs minutes of network waits); without it they resolve online. Every server is
started in its own process group and stopped at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from install_support import free_port, http_get, serving

ROOT = Path(__file__).resolve().parents[1]
DEBIAN_PYTHON = Path("/usr/bin/python3")
BARE_ENV = ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin"]

pytestmark = pytest.mark.install


def _wheelhouse() -> Path | None:
    """The wheels scripts/test.sh installed ctxlab[test] from, when it names a complete one."""
    named = os.environ.get("CTXLAB_TEST_WHEELHOUSE", "")
    return Path(named) if named and Path(named).is_dir() else None


def _from_wheelhouse() -> list[str]:
    """pip install options: no index and the wheelhouse, when there is one."""
    house = _wheelhouse()
    return ["--no-index", "--find-links", str(house)] if house else []


def _run(*command: str | Path, cwd: Path, timeout: float = 600) -> str:
    # without PYTHONPATH: a checkout on it (a worktree run) would shadow the installed wheel
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
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
    house = _wheelhouse()
    command = [
        *BARE_ENV,
        *([f"CTXLAB_WHEELHOUSE={house}"] if house else []),
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
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv (no system site-packages) with the wheel of this tree installed."""
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
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *_from_wheelhouse()]
    _run(*build, "-w", dist, ".", cwd=source)
    (wheel,) = dist.glob("ctxlab-*.whl")
    venv = work / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=work)
    install = [venv / "bin/python", "-m", "pip", "install", "--quiet", "--no-compile"]
    _run(*install, *_from_wheelhouse(), wheel, cwd=work)
    yield venv


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
    shown = _run(wheel_venv / "bin/ctxlab", "show", "coding_agent_session", cwd=outside)
    assert shown.startswith("round") and "system" in shown


def test_ctxlab_app_serves_the_packaged_playground(wheel_venv: Path, tmp_path: Path) -> None:
    port = free_port()
    command = [
        str(wheel_venv / "bin/ctxlab"),
        "app",
        f"--server.port={port}",
        "--server.scriptHealthCheckEnabled=true",
    ]
    with serving(command, cwd=tmp_path, port=port, log=tmp_path / "app.log", timeout=120) as base:
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
    install = [wheel_venv / "bin/python", "-m", "pip", "install", "--quiet"]
    _run(*install, *_from_wheelhouse(), ".", cwd=package)
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
