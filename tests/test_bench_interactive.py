"""Smoke test of bench/bench_interactive.py: ``--quick`` runs end to end and prints its tables.

Not a timing test: it checks that every action of issue 15's table and the memory row are
measured on a generated chat opened through the chats folder, and that the table's arithmetic
(median, ratio 100k / 1k) is right.
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
SCRIPT = ROOT / "bench" / "bench_interactive.py"


def _bench() -> ModuleType:
    return load_script(SCRIPT, "bench_interactive")


def test_quick_run_prints_every_action_and_the_memory_row(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--repeat", "1", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for label in (
        "Playground, budget change",
        "Replay, open at a 128k budget (new session, by URL)",
        "Replay, same configuration in another session (replay shared)",
        "Replay, one scrubber step",
        "Compare, 3 configurations (new session, by URL)",
        "Facts tab, first open after the chat is loaded",
        "Facts tab, first open in a new session",
        "Load and count the chat (first session)",
        "Pick the chat's facts (the app does it in the background; timed alone)",
    ):
        row = next((line for line in out.splitlines() if line.startswith(f"| {label} |")), None)
        assert row is not None, out
        assert re.search(r"\| \d+\.\d{3} s", row), row
    memory = next(line for line in out.splitlines() if "(1k) |" in line)
    assert memory.rstrip().endswith("| yes |"), memory  # three sessions share the chat
    assert (tmp_path / "bench_agent_1k.json").is_file()


def test_the_ratio_column_divides_the_largest_size_by_the_smallest() -> None:
    bench = _bench()
    rows = {1_000: {"playground": [0.1, 0.3, 0.2]}, 100_000: {"playground": [0.5, 0.3, 0.4]}}
    table = bench.timing_table(rows, (1_000, 100_000), "t")
    line = next(x for x in table.splitlines() if x.startswith("| Playground"))
    assert "0.200 s (0.10–0.30)" in line
    assert "0.400 s (0.30–0.50)" in line
    assert line.endswith("**2.0x** |")
    assert "Compare" not in table  # an action not measured gets no row
