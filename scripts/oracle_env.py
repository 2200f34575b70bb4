#!/usr/bin/env python3
"""Create, or reuse, the pinned environment in which the framework oracle tests run the
frameworks' own code (LangChain, the OpenAI Agents SDK, LlamaIndex, Semantic Kernel, AutoGen,
Google ADK), and print its Python.

The pins are the ``frameworks`` extra of ``pyproject.toml``. The environment is a virtual
environment of its own (the frameworks weigh about 780 MB and are never imported by ctxlab or
its tests' process: the oracle scripts under ``tests/oracles/`` run in it as subprocesses),
at ``$CTXLAB_ORACLE_ENV`` or ``<user cache>/ctxlab/oracles-<hash of the pins>``. It is reused
while the pins are unchanged; a change of pins builds a new one and removes the old ones. It
is built in a temporary folder and renamed into place only when ``pip install`` and ``pip
check`` succeeded, so an interrupted build never leaves an environment that looks finished.
Concurrent callers wait on a lock file.

    python scripts/oracle_env.py          # build if needed; print the interpreter's path
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRA = "frameworks"
STAMP = "ctxlab-oracle-pins.txt"


def pins(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The requirements of the ``frameworks`` extra, in file order."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    found: list[str] = data["project"]["optional-dependencies"][EXTRA]
    return found


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ctxlab"


def env_dir(requirements: list[str]) -> Path:
    """Where the environment of ``requirements`` lives."""
    explicit = os.environ.get("CTXLAB_ORACLE_ENV")
    if explicit:
        return Path(explicit)
    digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:12]
    return _cache_root() / f"oracles-{digest}"


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def is_ready(env: Path, requirements: list[str]) -> bool:
    stamp = env / STAMP
    return (
        python_of(env).exists()
        and stamp.exists()
        and stamp.read_text(encoding="utf-8") == "\n".join(requirements)
    )


def _build(env: Path, requirements: list[str]) -> None:
    tmp = env.with_name(env.name + ".building")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"ctxlab: building the framework oracle environment in {env}", file=sys.stderr)
    venv.EnvBuilder(with_pip=True, clear=True).create(tmp)
    py = str(python_of(tmp))
    quiet = ["--quiet", "--disable-pip-version-check"]
    # --no-compile: pip would byte-compile all ~12,800 modules of the frameworks (about 30 s of
    # CPU, while ctxlab's own install runs beside it); the oracle scripts import a few hundred,
    # which Python compiles, and caches in the environment, when it first imports them.
    install = [py, "-m", "pip", "install", *quiet, "--no-compile", *requirements]
    subprocess.run(install, check=True)
    subprocess.run([py, "-m", "pip", "check"], check=True, stdout=subprocess.DEVNULL)
    (tmp / STAMP).write_text("\n".join(requirements), encoding="utf-8")
    shutil.rmtree(env, ignore_errors=True)
    tmp.rename(env)
    # a venv's scripts name its own folder: rebuilt paths would point at ".building"
    for script in (env / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            try:
                text = script.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if str(tmp) in text:
                script.write_text(text.replace(str(tmp), str(env)), encoding="utf-8")
    _remove_stale(env)


def _remove_stale(keep: Path) -> None:
    """Oracle environments of earlier pins (each is hundreds of MB)."""
    if os.environ.get("CTXLAB_ORACLE_ENV"):
        return
    for old in keep.parent.glob("oracles-*"):
        if old != keep and old.is_dir() and not old.name.endswith(".building"):
            shutil.rmtree(old, ignore_errors=True)


def ensure(requirements: list[str] | None = None) -> Path:
    """The oracle environment's Python, building the environment first if needed."""
    requirements = pins() if requirements is None else requirements
    env = env_dir(requirements)
    if is_ready(env, requirements):
        return python_of(env)
    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / f"{env.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_ready(env, requirements):
            _build(env, requirements)
    return python_of(env)


def main() -> int:
    print(ensure())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
