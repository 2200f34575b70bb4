"""``ctxlab app``: start the Streamlit playground shipped inside the package.

The playground's files are the repository's ``app.py``, ``pages/`` and ``.streamlit/`` (the
files people edit). ``ctxlab/playground/`` holds symbolic links to them, and a wheel build
copies what they point to, so an installed wheel carries the same app without a second copy in
the repository. Streamlit reads ``.streamlit/config.toml`` only from the working directory, so
its settings are passed as command-line flags instead; arguments given by the user come last
and win. This module never imports Streamlit: it runs ``python -m streamlit run`` in its place.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.errors import CtxlabError

__all__ = [
    "SERVER_ENVIRONMENT",
    "config_flags",
    "playground_dir",
    "run_app",
    "server_environment",
    "streamlit_command",
]

SERVER_ENVIRONMENT: dict[str, str] = {"PYTHONMALLOC": "malloc"}
"""Settings the playground's server process starts with unless the environment sets them.

``PYTHONMALLOC=malloc``: Python's own small-object allocator keeps a 1 MiB arena while any one
object in it lives, so a server whose visitors opened large chats and left kept most of their
memory (six viewers of 50,000-message chats: 1.96x the idle server's memory after they left);
with the C library's allocator, which ctxlab's server trims once sessions leave
(:mod:`ctxlab.ui.memory_release`), it keeps 1.33x, at no measurable cost in speed.
"""


def server_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (this process's environment by default) with :data:`SERVER_ENVIRONMENT`'s
    settings added where ``base`` has none (an operator's own choice wins)."""
    env = dict(os.environ if base is None else base)
    for name, value in SERVER_ENVIRONMENT.items():
        env.setdefault(name, value)
    return env


def playground_dir() -> Path:
    """The folder holding the playground's entry script ``app.py``, ``pages/`` and config."""
    return Path(__file__).resolve().parent / "playground"


def config_flags(config: Mapping[str, Any]) -> list[str]:
    """Streamlit's ``config.toml`` content as ``--section.option=value`` flags, in file order.

    >>> config_flags({"server": {"headless": True, "port": 8501}, "theme": {"base": "light"}})
    ['--server.headless=true', '--server.port=8501', '--theme.base=light']
    """
    flags: list[str] = []
    for section, options in config.items():
        if not isinstance(options, Mapping):
            continue
        for option, value in options.items():
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{option}={text}")
    return flags


def streamlit_command(extra: Sequence[str] = (), python: str | None = None) -> list[str]:
    """The command that serves the packaged playground on 127.0.0.1 (``extra`` flags last).

    Raises:
        CtxlabError: the playground files are missing from this installation.
    """
    folder = playground_dir()
    entry = folder / "app.py"
    if not entry.is_file():
        raise CtxlabError(
            f"the playground is not installed: {entry} is missing (reinstall ctxlab, or run "
            "scripts/run_app.sh from a checkout)"
        )
    config_file = folder / ".streamlit" / "config.toml"
    config = tomllib.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
    return [
        python or sys.executable,
        "-m",
        "streamlit",
        "run",
        str(entry),
        "--server.address=127.0.0.1",
        "--browser.gatherUsageStats=false",
        *config_flags(config),
        *extra,
    ]


def run_app(extra: Sequence[str] = ()) -> int:
    """Serve the playground until interrupted, in :func:`server_environment`; on POSIX the
    process becomes Streamlit's."""
    command = streamlit_command(extra)
    env = server_environment()
    sys.stdout.flush()
    if os.name == "posix":
        os.execve(command[0], command, env)
    return subprocess.call(command, env=env)
