"""Smoke test of bench/bench_import.py: one run per figure, both bytecode modes, every row.

Not a timing test: it checks that the script runs end to end against this checkout, prints a
row per import case and per command in each mode, and that each cell is a number; and that the
children's environment says what the table says (bytecode written under the temporary prefix,
or never written).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from app_support import load_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "bench_import.py"


def _bench() -> ModuleType:
    return load_script(SCRIPT, "bench_import")


def test_one_run_prints_every_row_in_both_modes() -> None:
    bench = _bench()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modes = done.stdout.split("**compiled each start**")
    assert len(modes) == 2 and "**bytecode cached**" in modes[0]
    for text in modes:
        for label in [*bench.CASES, *bench.COMMANDS]:
            row = next((line for line in text.splitlines() if line.startswith(f"| {label} |")), "")
            assert row, label
            cells = [c.strip() for c in row.strip("|").split("|")[1:]]
            numbers = cells if label in bench.COMMANDS else cells[:1]
            assert numbers and all(re.fullmatch(r"\d+", c) for c in numbers), row


def test_the_children_write_bytecode_only_in_the_cached_mode(tmp_path: Path) -> None:
    bench = _bench()
    cached = bench._env(ROOT, tmp_path)
    assert cached["PYTHONPYCACHEPREFIX"] == str(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in cached
    compiled = bench._env(ROOT, None, {"TIKTOKEN_CACHE_DIR": "x"})
    assert compiled["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "PYTHONPYCACHEPREFIX" not in compiled
    assert compiled["TIKTOKEN_CACHE_DIR"] == "x"
    assert compiled["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT)
