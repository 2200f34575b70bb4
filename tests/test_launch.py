"""`ctxlab app`'s command: the packaged entry, the repo's config as flags, user args last."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from ctxlab.launch import config_flags, playground_dir, streamlit_command

ROOT = Path(__file__).resolve().parents[1]


def test_the_packaged_playground_is_the_repositorys_app_and_pages() -> None:
    folder = playground_dir()
    assert (folder / "app.py").resolve() == (ROOT / "app.py").resolve()
    assert (folder / "pages").resolve() == (ROOT / "pages").resolve()
    packaged = sorted(p.name for p in (folder / "pages").glob("*.py"))
    assert packaged == sorted(p.name for p in (ROOT / "pages").glob("*.py"))


def test_the_command_runs_streamlit_on_the_entry_with_the_config_then_the_user_args() -> None:
    command = streamlit_command(["--server.port=8600"], python="py")
    assert command[:5] == ["py", "-m", "streamlit", "run", str(playground_dir() / "app.py")]
    config = tomllib.loads((ROOT / ".streamlit/config.toml").read_text(encoding="utf-8"))
    flags = config_flags(config)
    assert flags and all(flag in command for flag in flags)
    assert "--server.maxUploadSize=200" in flags  # the limit the Playground states
    assert command[-1] == "--server.port=8600"  # after every config flag: the user's wins


def test_config_flags_write_booleans_as_streamlit_reads_them() -> None:
    assert config_flags({"server": {"headless": True}, "browser": {"x": False}, "top": 1}) == [
        "--server.headless=true",
        "--browser.x=false",
    ]
    assert sys.executable  # the default interpreter is the running one
    assert streamlit_command()[0] == sys.executable


def test_the_server_starts_with_the_c_allocator_unless_the_operator_chose() -> None:
    from ctxlab.launch import server_environment

    assert server_environment({})["PYTHONMALLOC"] == "malloc"
    assert server_environment({"PYTHONMALLOC": "pymalloc"})["PYTHONMALLOC"] == "pymalloc"
    assert server_environment({"PATH": "/bin"})["PATH"] == "/bin"


def test_ctxlab_app_execs_streamlit_in_the_server_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxlab import launch

    seen: dict[str, object] = {}

    class Replaced(Exception):
        """execve does not return: the process became Streamlit's."""

    def fake_execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        seen.update(path=path, argv=argv, env=env)
        raise Replaced

    monkeypatch.delenv("PYTHONMALLOC", raising=False)
    monkeypatch.setattr(launch.os, "execve", fake_execve)
    with pytest.raises(Replaced):
        launch.run_app(["--server.port=8601"])
    assert seen["argv"] == launch.streamlit_command(["--server.port=8601"])
    env = seen["env"]
    assert isinstance(env, dict) and env["PYTHONMALLOC"] == "malloc"
