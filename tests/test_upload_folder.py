"""Upload folders: private, removed with their owner, at exit, and by the start-up sweep."""

from __future__ import annotations

import gc
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from ctxlab.corpus.upload_folder import PREFIX, UploadFolder, sweep_stale

ROOT = Path(__file__).resolve().parent.parent


def test_a_folder_is_private_and_goes_with_its_owner(tmp_path: Path) -> None:
    folder = UploadFolder(tmp_path)
    path = folder.path
    (path / "chats").mkdir()
    (path / "chats" / "a.json").write_text("[]")
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    assert path.name.startswith(f"{PREFIX}{os.getpid()}-")
    del folder
    gc.collect()
    assert not path.exists()


def test_remove_is_immediate_and_idempotent(tmp_path: Path) -> None:
    folder = UploadFolder(tmp_path)
    folder.remove()
    folder.remove()
    assert folder.removed and not folder.path.exists()


def test_folders_are_removed_when_the_interpreter_exits(tmp_path: Path) -> None:
    code = (
        "import sys; from ctxlab.corpus.upload_folder import UploadFolder; "
        "keep = UploadFolder(sys.argv[1]); (keep.path / 'x.json').write_text('[]'); "
        "print(keep.path, flush=True)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert not Path(run.stdout.strip()).exists()
    assert list(tmp_path.iterdir()) == []


def test_the_sweep_removes_folders_of_dead_processes_and_old_ones_only(tmp_path: Path) -> None:
    killed = subprocess.Popen([sys.executable, "-c", "pass"])
    killed.wait()
    dead = tmp_path / f"{PREFIX}{killed.pid}-abc"
    (dead / "chats").mkdir(parents=True)
    unnamed = tmp_path / f"{PREFIX}x-abc"
    unnamed.mkdir()
    mine = UploadFolder(tmp_path)
    old = UploadFolder(tmp_path)
    a_day_ago = time.time() - 2 * 86_400
    os.utime(old.path, (a_day_ago, a_day_ago))
    other = tmp_path / "someone-else"
    other.mkdir()
    link = tmp_path / f"{PREFIX}1-link"
    link.symlink_to(other)
    removed = sweep_stale(parent=tmp_path)
    assert sorted(removed) == sorted([dead, unnamed, old.path])
    assert mine.path.exists() and other.exists() and link.is_symlink()
