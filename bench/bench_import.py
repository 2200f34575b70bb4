"""How long ctxlab takes to start: import times, ``ctxlab strategies`` and ``ctxlab show``.

Run ``python bench/bench_import.py`` from the repository root, or ``--root DIR`` to measure
another checkout (e.g. an older commit unpacked with ``git archive``) with the same method;
``--root`` twice (``--root OLD --root .``) compares two checkouts side by side, their runs
interleaved so that a shared machine's load falls on both alike.
Prints markdown tables: the cumulative import time ``python -X importtime`` reports for
``ctxlab``, ``ctxlab.cli`` and ``ctxlab.strategies`` (median of ``--runs`` fresh
interpreters), the wall time of ``ctxlab strategies`` and of ``ctxlab show`` on a small sample
chat (and, because a shared machine stretches wall time, the CPU time of the same runs; on an
idle machine wall time is about the CPU time), the same for ``python -c pass`` (the floor: the
interpreter and site start-up), and whether ``openai``/``streamlit`` were imported. Makes no
assertions: ``tests/test_lean_import.py`` guards what must not be imported.

Every figure is taken twice. **Bytecode cached** is what a user sees: an installed package has
its ``.pyc`` files, and a checkout writes them at its first run; the children write and read
them under a temporary ``PYTHONPYCACHEPREFIX`` (warmed by one unmeasured run), so the checkout
is left as it was. **Compiled each start** is a machine with ``PYTHONDONTWRITEBYTECODE=1`` and
no ``__pycache__`` (such as the sandbox these figures were first taken in): every ctxlab module
is compiled from source at every start, tens of milliseconds. The ``ctxlab show`` figures have
the tokenizer's caches warm (the rank file and ctxlab's decoded ranks, see
:mod:`ctxlab.encodings`); the row marked *first run* gives each run an empty
``TIKTOKEN_CACHE_DIR``, as a first use does. ``ctxlab show`` is taken with the persistent count
store off (it counts the chat) and on, in a folder of this benchmark's own, after a first show
(it prints the kept output, :mod:`ctxlab.show_cache`); the last table divides each by the CPU
of ``python -c "import tiktoken; tiktoken.get_encoding('o200k_base')"``, issue 26's reference
for start-up (goal: at most 1.2x).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    "import ctxlab": "import ctxlab",
    "import ctxlab.strategies; discover()": "import ctxlab.strategies as s\ns.discover()",
    "import ctxlab.cli": "import ctxlab.cli",
}
PROBE = "import sys\nprint(' '.join(m for m in ('openai', 'streamlit') if m in sys.modules))"


def _env(root: Path, pycache: Path | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The children's environment: ``root`` first on the path; bytecode written and read under
    ``pycache``, or (None) never written, so each start compiles what has no ``.pyc``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pycache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env.update(extra or {})
    return env


def import_ms(code: str, root: Path, pycache: Path | None) -> tuple[float, set[str]]:
    """Import time (ms) of everything ``code`` imports, and the heavy modules it loaded.

    The sum of the cumulative times ``-X importtime`` reports for the top-level imports (those
    ``code`` itself triggers, directly or inside a call such as ``discover()``).
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"{code}\n{PROBE}"],
        capture_output=True,
        text=True,
        env=_env(root, pycache),
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
SHOW = f"`ctxlab show {SMALL_CHAT.rsplit('/', 1)[-1]}`"
TIKTOKEN = "`python -c \"import tiktoken; tiktoken.get_encoding('o200k_base')\"`"
COMMANDS: dict[str, tuple[list[str], bool, bool]] = {
    # label: (python arguments, whether each run gets an empty tiktoken cache, whether the
    # persistent count store is on: a folder of this benchmark's own, never the user's cache)
    "`python -c pass` (interpreter start-up, the floor)": (["-c", "pass"], False, False),
    "`ctxlab strategies`": (["-m", "ctxlab.cli", "strategies"], False, False),
    f"{SHOW}, store off (counts)": (["-m", "ctxlab.cli", "show", SMALL_CHAT], False, False),
    f"{SHOW}, shown before (store on)": (["-m", "ctxlab.cli", "show", SMALL_CHAT], False, True),
    f"{SHOW}, first run (empty tiktoken cache, store off)": (
        ["-m", "ctxlab.cli", "show", SMALL_CHAT],
        True,
        False,
    ),
    # Last: tiktoken finds the rank file offline only once ctxlab has placed it in its cache.
    f"{TIKTOKEN} (issue 26: show <= 1.2x this)": (
        ["-c", "import tiktoken; tiktoken.get_encoding('o200k_base')"],
        False,
        False,
    ),
}


def command_ms(
    args: list[str], root: Path, pycache: Path | None, empty_cache: bool, store: Path | None
) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of ``python <args>`` in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="bench-import-tiktoken-") as folder:
        extra = {"TIKTOKEN_CACHE_DIR": folder} if empty_cache else {}
        extra["CTXLAB_CACHE_DIR"] = "" if store is None else str(store)
        env = _env(root, pycache, extra)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], capture_output=True, env=env, cwd=root, check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def _median_cell(runs: list[tuple[float, float]]) -> str:
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    return f"{wall:.0f} | {cpu:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        type=Path,
        action="append",
        help="checkout to measure (default: this one); repeat to compare checkouts side by side, "
        "their runs interleaved so that the machine's load falls on each alike",
    )
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per figure")
    args = parser.parse_args()
    roots: list[Path] = [r.resolve() for r in args.root or [ROOT]]
    names = [r.name for r in roots]
    print(f"python: {sys.version.split()[0]}  runs: {args.runs} (median)")
    for name, root in zip(names, roots, strict=True):
        print(f"checkout {name}: {root}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with (
        tempfile.TemporaryDirectory(prefix="bench-import-pycache-") as folder,
        tempfile.TemporaryDirectory(prefix="bench-import-store-") as store_folder,
    ):
        pycache = Path(folder)
        stores = {root: Path(store_folder) / str(k) for k, root in enumerate(roots)}
        for root in roots:  # warm the bytecode, tiktoken and count store caches
            for command, _, store_on in COMMANDS.values():
                command_ms(command, root, pycache, False, stores[root] if store_on else None)
        for mode, title in ((pycache, "bytecode cached"), (None, "compiled each start")):
            print(f"\n**{title}**\n")
            heads = " | ".join(f"{name} ms" for name in names)
            print(f"| import | {heads} | heavy modules loaded |")
            print("|---|" + "---:|" * len(roots) + "---|")
            for label, code in CASES.items():
                times: list[list[float]] = [[] for _ in roots]
                heavy: set[str] = set()
                for _ in range(args.runs):
                    for k, root in enumerate(roots):
                        ms, loaded = import_ms(code, root, mode)
                        times[k].append(ms)
                        heavy |= loaded
                cells = " | ".join(f"{statistics.median(t):.0f}" for t in times)
                print(f"| {label} | {cells} | {', '.join(sorted(heavy)) or '-'} |")
            heads = " | ".join(f"{name} wall ms | CPU ms" for name in names)
            print(f"\n| command (process start included) | {heads} |")
            print("|---|" + "---:|---:|" * len(roots))
            medians: dict[str, list[float]] = {}
            for label, (command, empty_cache, store_on) in COMMANDS.items():
                runs: list[list[tuple[float, float]]] = [[] for _ in roots]
                for _ in range(args.runs):
                    for k, root in enumerate(roots):
                        store = stores[root] if store_on else None
                        runs[k].append(command_ms(command, root, mode, empty_cache, store))
                medians[label] = [statistics.median(c for _, c in r) for r in runs]
                print(f"| {label} | {' | '.join(_median_cell(r) for r in runs)} |")
            reference = next(v for k, v in medians.items() if k.startswith(TIKTOKEN))
            print(f"\n| CPU ratio to {TIKTOKEN} | {' | '.join(names)} |")
            print("|---|" + "---:|" * len(roots))
            for label, cpu in medians.items():
                if label.startswith(SHOW):
                    ratios = " | ".join(
                        f"{c / r:.2f}x" for c, r in zip(cpu, reference, strict=True)
                    )
                    print(f"| {label} | {ratios} |")
    print(f"\nload average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
