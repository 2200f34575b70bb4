"""scripts/_venv.sh without a real install: which Python it picks, and the python3-venv path.

Stub commands on the PATH stand in for a Python without its venv module, for ``id``, ``sudo``
and ``apt-get``; nothing is installed, the stubs record how they were called.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

NO_VENV_PYTHON = """#!/bin/bash
# A Python 3.11 whose venv/ensurepip modules are missing (Debian without python3-venv).
for arg in "$@"; do
    case "$arg" in
        *ensurepip*) exit 1 ;;
        *"version_info[1]"*) echo 11; exit 0 ;;
        *version_info*) exit 0 ;;
    esac
done
[ "$1" = "--version" ] && echo "Python 3.11.2"
exit 0
"""
RECORDER = '#!/bin/bash\necho "$(basename "$0") $*" >> "{log}"\n'


def _stubs(tmp_path: Path, uid: str, with_sudo: bool) -> tuple[Path, Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    scripts = {"python3": NO_VENV_PYTHON, "id": f"#!/bin/bash\necho {uid}\n"}
    scripts["apt-get"] = RECORDER.format(log=log)
    if with_sudo:
        scripts["sudo"] = RECORDER.format(log=log)
    for name, text in scripts.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    return bin_dir, log


def _source_and_run(bin_dir: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    # Only the stubs and bash's own tools: no system python3 may be found behind the stub.
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("bash", "env", "cat", "rm", "basename", "dirname"):
        for folder in ("/usr/bin", "/bin"):
            if Path(folder, tool).exists():
                (tools / tool).symlink_to(Path(folder, tool))
                break
    script = f". '{ROOT / 'scripts/_venv.sh'}'; ctxlab_venv"
    return subprocess.run(
        [str(tools / "bash"), "-c", script],
        cwd=tmp_path,
        env={"PATH": f"{bin_dir}{os.pathsep}{tools}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_without_root_or_sudo_it_prints_the_command_to_run(tmp_path: Path) -> None:
    bin_dir, log = _stubs(tmp_path, uid="1000", with_sudo=False)
    done = _source_and_run(bin_dir, tmp_path)
    assert done.returncode != 0
    assert "sudo apt-get install python3-venv" in done.stderr
    assert not log.exists()  # nothing was run
    assert not (tmp_path / ".venv").exists()


def test_with_sudo_it_installs_python3_venv_through_apt(tmp_path: Path) -> None:
    bin_dir, log = _stubs(tmp_path, uid="1000", with_sudo=True)
    done = _source_and_run(bin_dir, tmp_path)
    calls = log.read_text(encoding="utf-8").splitlines()
    assert any(
        c.startswith("sudo env DEBIAN_FRONTEND=noninteractive apt-get update") for c in calls
    )
    assert any(
        c.startswith("sudo env DEBIAN_FRONTEND=noninteractive apt-get install")
        and c.endswith("python3-venv")
        for c in calls
    )
    # the stub Python still has no venv afterwards: the script says exactly what to run
    assert done.returncode != 0
    assert "apt-get install python3.11-venv" in done.stderr


def test_an_active_venv_is_used_as_it_is(tmp_path: Path) -> None:
    venv = tmp_path / "active"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin/python"
    python.write_text("#!/bin/bash\nexit 0\n", encoding="utf-8")  # answers: Python >= 3.11
    python.chmod(0o755)
    script = f". '{ROOT / 'scripts/_venv.sh'}'; ctxlab_venv && echo \"$PY\""
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(venv)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(str(python))
    assert not (tmp_path / ".venv").exists()
