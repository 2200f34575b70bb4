"""How long ctxlab takes to start: import times, ``ctxlab strategies`` and ``ctxlab show``.

Run ``python bench/bench_import.py`` from the repository root, or ``--root DIR`` to measure
another checkout (e.g. an older commit unpacked with ``git archive``) with the same method.
Prints a markdown table: the cumulative import time ``python -X importtime`` reports for
``ctxlab``, ``ctxlab.cli`` and ``ctxlab.strategies`` (median of ``--runs`` fresh
interpreters), the wall time of ``ctxlab strategies`` and of ``ctxlab show`` on a small sample
chat (and, because a shared machine stretches wall time, the CPU time of the same runs; on an
idle machine wall time is about the CPU time), the same for ``python -c pass`` (the floor: the
interpreter and site start-up), and whether ``openai``/``streamlit`` were imported. Makes no
assertions: ``tests/test_lean_import.py`` guards what must not be imported.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "import ctxlab": "import ctxlab",
    "import ctxlab.strategies; discover()": "import ctxlab.strategies as s\ns.discover()",
    "import ctxlab.cli": "import ctxlab.cli",
}
PROBE = "import sys\nprint(' '.join(m for m in ('openai', 'streamlit') if m in sys.modules))"


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def import_ms(code: str, root: Path) -> tuple[float, set[str]]:
    """Import time (ms) of everything ``code`` imports, and the heavy modules it loaded.

    The sum of the cumulative times ``-X importtime`` reports for the top-level imports (those
    ``code`` itself triggers, directly or inside a call such as ``discover()``).
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"{code}\n{PROBE}"],
        capture_output=True,
        text=True,
        env=_env(root),
        cwd=root,
        check=True,
    )
    micros = 0
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        if parts[2].startswith(" ") and not parts[2].startswith("  ") and parts[2] != " sys":
            micros += int(parts[1])
    return micros / 1000, set(done.stdout.split())


SMALL_CHAT = "ctxlab/sample_chats/support_function_calls.json"
COMMANDS = {
    "`python -c pass` (interpreter start-up, the floor)": ["-c", "pass"],
    "`ctxlab strategies`": ["-m", "ctxlab.cli", "strategies"],
    f"`ctxlab show {SMALL_CHAT.rsplit('/', 1)[-1]}`": ["-m", "ctxlab.cli", "show", SMALL_CHAT],
}


def command_ms(args: list[str], root: Path) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of ``python <args>`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, *args], capture_output=True, env=_env(root), cwd=root, check=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to measure")
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per figure")
    args = parser.parse_args()
    root: Path = args.root.resolve()
    print(f"checkout: {root}  python: {sys.version.split()[0]}  runs: {args.runs} (median)\n")
    print("| what | ms | heavy modules loaded |")
    print("|---|---:|---|")
    for label, code in CASES.items():
        times, heavy = [], set()
        for _ in range(args.runs):
            ms, loaded = import_ms(code, root)
            times.append(ms)
            heavy |= loaded
        print(f"| {label} | {statistics.median(times):.0f} | {', '.join(sorted(heavy)) or '-'} |")
    print("\n| command (process start included) | wall ms | CPU ms |")
    print("|---|---:|---:|")
    for label, command in COMMANDS.items():
        runs = [command_ms(command, root) for _ in range(args.runs)]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"| {label} | {wall:.0f} | {cpu:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
