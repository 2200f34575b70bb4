"""Issue 13 item 8: the files a maintained project keeps, and that they tell the truth.

The pre-commit configuration is valid and runs ruff format, ruff check and mypy; every path the
architecture and contributing guides name exists (a module may be a file or a package), so the
guides cannot silently drift from the code.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
_PATH = re.compile(r"`((?:ctxlab|tests|scripts|pages|bench)/[\w./-]*|app\.py|pyproject\.toml)`")


def test_pre_commit_config_is_valid_and_runs_the_three_checks() -> None:
    config = ROOT / ".pre-commit-config.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    hooks = [h for repo in yaml.safe_load(config.read_text())["repos"] for h in repo["hooks"]]
    entries = {" ".join(h["entry"].split()[:2]) for h in hooks}
    assert {"ruff format", "ruff check", "mypy"} <= entries


def _exists(path: str) -> bool:
    target = ROOT / path.rstrip("/")
    if target.exists() or "<" in path:
        return True
    # one module per concept: a module may have become a package, or the reverse
    return target.with_suffix("").is_dir() or target.with_suffix(".py").exists()


@pytest.mark.parametrize("guide", ["ARCHITECTURE.md", "CONTRIBUTING.md"])
def test_every_path_a_guide_names_exists(guide: str) -> None:
    text = (ROOT / guide).read_text(encoding="utf-8")
    named = set(_PATH.findall(text))
    assert named, f"{guide} names no path"
    missing = sorted(p for p in named if not _exists(p))
    assert not missing, f"{guide} names paths that do not exist: {missing}"


def test_the_changelog_has_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^## Unreleased$", text, flags=re.M)
