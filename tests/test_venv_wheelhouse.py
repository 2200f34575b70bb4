"""scripts/_venv.sh's wheelhouse: a fresh clone installs ctxlab from wheels resolved once.

A stub ``python`` in a fake venv records every ``-m pip`` call (and ``pip wheel`` leaves two fake
wheels, one of them ctxlab's own); everything else it hands to the real interpreter, so the
script's own Python one-liners (reading pyproject.toml's build backend) really run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The build backend the wheelhouse must hold for an editable install: pyproject's own.
BACKEND = " ".join(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
)

STUB_PYTHON = """#!/bin/bash
if [ "$1" = -m ] && [ "$2" = pip ]; then
    echo "pip ${{*:3}}" >> "{log}"
    if [ "$3" = wheel ]; then
        [ -n "$FAIL_WHEEL" ] && exit 1
        while [ $# -gt 0 ]; do
            if [ "$1" = -w ]; then
                touch "$2/dep-1.0-py3-none-any.whl" "$2/ctxlab-0.1.0-py3-none-any.whl"
            fi
            shift
        done
    fi
    exit 0
fi
case "$2" in
    *sys.prefix*) echo "{venv}"; exit 0 ;;
    "import ctxlab") exit 1 ;;
esac
exec "{real}" "$@"
"""


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project folder with this repo's pyproject.toml, a stub venv and its call log."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "pip.log"
    python = venv / "bin/python"
    python.write_text(STUB_PYTHON.format(log=log, venv=venv, real=sys.executable), encoding="utf-8")
    python.chmod(0o755)
    return project, venv, log


def _install(
    project: Path, venv: Path, env: dict[str, str], extras: str = "test"
) -> subprocess.CompletedProcess[str]:
    (venv / f".ctxlab-install-{extras}").unlink(missing_ok=True)  # as if pyproject changed
    script = f". '{ROOT / 'scripts/_venv.sh'}'; ctxlab_venv && ctxlab_install {extras}"
    return subprocess.run(
        ["bash", "-c", script],
        cwd=project,
        env={"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(venv), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _calls(log: Path) -> list[str]:
    calls = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return [c for c in calls if not c.startswith("pip config")]


def test_the_first_install_fills_the_wheelhouse_and_later_ones_need_no_index(
    tmp_path: Path,
) -> None:
    project, venv, log = _project(tmp_path)
    cache = tmp_path / "cache"
    stale = cache / "ctxlab" / "wheels-test-1"  # an earlier key's wheels
    stale.mkdir(parents=True)
    other_extra = cache / "ctxlab" / "wheels-base-1"
    other_extra.mkdir()
    env = {"XDG_CACHE_HOME": str(cache)}

    done = _install(project, venv, env)
    assert done.returncode == 0, done.stderr
    (house,) = (cache / "ctxlab").glob("wheels-test-*")
    wheel, install = _calls(log)
    assert wheel.startswith("pip wheel") and f".[test] {BACKEND} wheel" in wheel
    assert install.endswith(f"--no-compile --no-index --find-links {house} -e .[test]")
    assert sorted(p.name for p in house.iterdir()) == ["dep-1.0-py3-none-any.whl"]
    assert not stale.exists() and other_extra.exists()
    assert (venv / ".ctxlab-install-test").exists()

    done = _install(project, venv, env)
    assert done.returncode == 0, done.stderr
    assert _calls(log) == [
        "pip install --quiet --disable-pip-version-check --no-compile --no-index "
        f"--find-links {house} -e .[test]"
    ]


def test_a_failed_resolution_leaves_no_wheelhouse_and_installs_from_the_index(
    tmp_path: Path,
) -> None:
    project, venv, log = _project(tmp_path)
    cache = tmp_path / "cache"
    done = _install(project, venv, {"XDG_CACHE_HOME": str(cache), "FAIL_WHEEL": "1"})
    assert done.returncode == 0, done.stderr
    wheel, install = _calls(log)
    assert wheel.startswith("pip wheel")
    assert install == "pip install --quiet --disable-pip-version-check --no-compile -e .[test]"
    assert list((cache / "ctxlab").iterdir()) == []  # not even a half-filled folder


def test_an_empty_ctxlab_wheelhouse_always_resolves_against_the_index(tmp_path: Path) -> None:
    project, venv, log = _project(tmp_path)
    cache = tmp_path / "cache"
    done = _install(project, venv, {"XDG_CACHE_HOME": str(cache), "CTXLAB_WHEELHOUSE": ""})
    assert done.returncode == 0, done.stderr
    assert _calls(log) == [
        "pip install --quiet --disable-pip-version-check --no-compile -e .[test]"
    ]
    assert not cache.exists()


def test_a_named_wheelhouse_is_used_and_its_neighbours_are_left_alone(tmp_path: Path) -> None:
    project, venv, log = _project(tmp_path)
    neighbour = tmp_path / "my-things"
    neighbour.mkdir()
    house = tmp_path / "my-wheels"
    done = _install(project, venv, {"CTXLAB_WHEELHOUSE": str(house)}, extras="")
    assert done.returncode == 0, done.stderr
    wheel, install = _calls(log)
    assert wheel.startswith("pip wheel") and f" . {BACKEND} wheel" in wheel
    assert install.endswith(f"--no-index --find-links {house} -e .")
    assert house.is_dir() and neighbour.is_dir()
