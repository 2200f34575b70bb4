"""The persistent count store: backends compared, and a re-open of the 100k chat in new processes.

Run ``PYTHONPATH=$PWD python bench/bench_count_store.py`` from the repository root (a few
minutes; ``--messages 10000`` for less). The chat is the project's generated agent chat
(:func:`ctxlab.samples.ensure_large_chat`), written once to ``--folder``; the store lives in a
fresh folder of its own (``CTXLAB_CACHE_DIR``), never in the user's cache.

Table 1, backends, on the chat's distinct texts' 16-byte keys: CPU to write every (key, count)
in one batch, then to read every key back from a new connection. SQLite is
:class:`ctxlab.count_store.CountStore` itself; LMDB (when ``lmdb`` is importable: not a
dependency) and DuckDB (a dependency) are written the simplest fast way each allows (LMDB: one
write transaction of ``put``s, ``getMulti``-less ``get`` loop; DuckDB: ``executemany`` of an
pandas frame inserted in one statement (its ``executemany`` took minutes), a temporary table
joined for the read).

Table 2, issue 26's figures, each in a new process (CPU of the child, user + system, or the
child's own ``time.process_time``): what parsing the chat and hashing its file cost alone; the
count of the chat after a "restart" (``load_chat`` done, then ``counted()`` timed on its own)
with an empty store and with the store the first run filled (one entry holds the whole chat's
counts); ``ctxlab show`` of a small sample, store off and shown before; and ``ctxlab show`` of
the 100k chat counted before but never shown (it parses) and shown before (it prints the kept
output: :mod:`ctxlab.show_cache`), against the small sample shown before.

Makes no assertions: tests/test_count_store.py checks the store.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctxlab.count_store import CountStore  # noqa: E402
from ctxlab.formats import load_chat  # noqa: E402
from ctxlab.samples import ensure_large_chat  # noqa: E402
from ctxlab.tokens import _CachingCounter, _text_key  # noqa: E402

SMALL_CHAT = ROOT / "ctxlab" / "sample_chats" / "coding_agent_session.json"


def _cpu() -> float:
    return time.process_time()


def backend_table(keys: list[bytes], folder: Path) -> None:
    items = [(k, i % 5000) for i, k in enumerate(keys)]
    rows: list[tuple[str, float, float]] = []

    store = CountStore(folder / "sqlite.sqlite3", "bench:sqlite", 1 << 30)
    start = _cpu()
    store.put_many(items)
    write = _cpu() - start
    store.close()
    start = _cpu()
    reader = CountStore(folder / "sqlite.sqlite3", "bench:sqlite", 1 << 30)
    found = reader.get_many(keys)
    rows.append(("SQLite (ctxlab.count_store)", write, _cpu() - start))
    assert found == [n for _, n in items]
    reader.close()

    try:
        import lmdb  # type: ignore[import-not-found]
    except ImportError:
        lmdb = None
    if lmdb is not None:
        start = _cpu()
        env = lmdb.open(str(folder / "lmdb"), map_size=1 << 30)
        with env.begin(write=True) as txn:
            for k, n in items:
                txn.put(k, n.to_bytes(8, "little"))
        env.close()
        write = _cpu() - start
        start = _cpu()
        env = lmdb.open(str(folder / "lmdb"), map_size=1 << 30, readonly=True)
        with env.begin() as txn:
            got = [txn.get(k) for k in keys]
        env.close()
        rows.append(("LMDB (not a dependency)", write, _cpu() - start))
        assert [int.from_bytes(g, "little") for g in got if g] == [n for _, n in items]

    import duckdb
    import pandas

    start = _cpu()
    con = duckdb.connect(str(folder / "duck.duckdb"))
    con.execute("CREATE TABLE counts (key BLOB PRIMARY KEY, n BIGINT)")
    frame = pandas.DataFrame({"key": keys, "n": [n for _, n in items]})  # noqa: F841
    con.execute("INSERT INTO counts SELECT key, n FROM frame")  # executemany: minutes
    con.close()
    write = _cpu() - start
    start = _cpu()
    con = duckdb.connect(str(folder / "duck.duckdb"))
    con.execute("CREATE TEMP TABLE wanted (key BLOB)")
    wanted_frame = pandas.DataFrame({"key": keys})  # noqa: F841 (DuckDB reads it by name)
    con.execute("INSERT INTO wanted SELECT key FROM wanted_frame")
    got_rows = con.execute("SELECT c.key, c.n FROM wanted w JOIN counts c USING (key)").fetchall()
    con.close()
    rows.append(("DuckDB (a dependency)", write, _cpu() - start))
    assert len(got_rows) == len(keys)

    print(f"| backend | write {len(keys):,} counts, CPU s | read them (new connection), CPU s |")
    print("|---|---:|---:|")
    for label, w, r in rows:
        print(f"| {label} | {w:.2f} | {r:.2f} |", flush=True)


_RECOUNT = """
import sys, time
from ctxlab.formats import load_chat
from ctxlab.tokens import get_counter
chat = load_chat(sys.argv[1])
counter = get_counter("gpt-4o")
start = time.process_time()
total = counter.counted(chat).total
print(time.process_time() - start, total, counter.texts_tokenized, counter.texts_from_store,
      counter.chats_from_store)
"""

_LOAD_AND_DIGEST = """
import hashlib, sys, time
from pathlib import Path
from ctxlab.formats import load_chat_file
start = time.process_time()
load_chat_file(Path(sys.argv[1]))
parse = time.process_time() - start
start = time.process_time()
hashlib.blake2b(Path(sys.argv[1]).read_bytes(), digest_size=16).digest()
print(parse, time.process_time() - start)
"""


def _child_cpu(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, check=True, cwd=ROOT
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def reopen_table(chat: Path, store_dir: Path) -> None:
    shutil.rmtree(store_dir, ignore_errors=True)
    # Every row names its store: this run's folder (never the user's cache), or none at all.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXLAB_CACHE_DIR": str(store_dir)}
    no_store = {**env, "CTXLAB_CACHE_DIR": ""}
    print("\n| figure | CPU s | ratio | detail |")
    print("|---|---:|---:|---|")
    _, out = _child_cpu(["-c", _LOAD_AND_DIGEST, str(chat)], no_store)
    parse, digest = (float(x) for x in out.split())
    print(f"| `load_chat_file` of the chat alone (store off) | {parse:.2f} | | |")
    print(f"| BLAKE2b of the file's bytes, read included | {digest:.2f} | | |", flush=True)
    _, out = _child_cpu(["-c", _RECOUNT, str(chat)], env)
    first, total, tokenized, _, _ = out.split()
    print(
        f"| count after a restart, empty store | {float(first):.2f} | 1.00x | "
        f"{int(tokenized):,} texts tokenized |",
        flush=True,
    )
    _, out = _child_cpu(["-c", _RECOUNT, str(chat)], env)
    again, total2, tokenized2, stored, chats = out.split()
    print(
        f"| count after a restart, warm store (goal <= 1.0 s) | {float(again):.2f} | "
        f"{float(again) / float(first):.2f}x | {int(tokenized2):,} tokenized, "
        f"{int(stored):,} texts and {int(chats)} chat from the store, "
        f"same total: {total == total2} |",
        flush=True,
    )
    show_small = ["-m", "ctxlab.cli", "show", str(SMALL_CHAT)]
    show_large = ["-m", "ctxlab.cli", "show", str(chat)]
    cold_small, _ = _child_cpu(show_small, no_store)
    _child_cpu(show_small, env)  # shown once: the next shows print the kept output
    small = min(_child_cpu(show_small, env)[0] for _ in range(2))
    print(f"| `ctxlab show` small sample, store off | {cold_small:.2f} | | |")
    print(f"| `ctxlab show` small sample, shown before (best of 2) | {small:.2f} | 1.00x | |")
    first_show, large_text = _child_cpu(show_large, env)
    print(
        f"| `ctxlab show` 100k chat, counted before, never shown | {first_show:.2f} | "
        f"{first_show / small:.2f}x | parses, reads the chat's counts |",
        flush=True,
    )
    time.sleep(2.0)  # the file's identity is kept once it has not changed for 2 s (show_cache)
    again_show, again_text = _child_cpu(show_large, env)
    large = min(again_show, _child_cpu(show_large, env)[0])
    print(
        f"| `ctxlab show` 100k chat, shown before (goal <= 1.5x, best of 2) | {large:.2f} | "
        f"{large / small:.2f}x | same output: {again_text == large_text} |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "ctxlab-bench-counters"
    )
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    chat = ensure_large_chat(args.folder / f"agent_{args.messages}.json", args.messages)
    messages = load_chat(chat)
    keys = [
        _text_key(t) for t in dict.fromkeys(t for m in messages for t in _CachingCounter._fields(m))
    ]
    with tempfile.TemporaryDirectory() as scratch:
        backend_table(keys, Path(scratch))
        reopen_table(chat, Path(scratch) / "store")


if __name__ == "__main__":
    main()
