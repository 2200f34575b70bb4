"""ctxlab app benchmark: the cost of a click and the memory of a session, at 1k to 100k messages.

Run ``python bench/bench_interactive.py`` (sizes 1k, 10k, 100k messages; about ten minutes on
2 cores), ``--quick`` (1k only, two repetitions: the smoke profile the tests run) or
``--browser`` (the same actions in Chromium, key press to idle page; marked as such).

Every action runs the real page files through Streamlit's ``AppTest`` (the Playground, Replay and
Compare pages), on the project's generated agent chat (:func:`ctxlab.samples.ensure_large_chat`)
opened the way users open a large chat: a file of the server's chats folder
(``CTXLAB_CHATS_DIR``) named by ``?chat=NAME``. A figure is the median wall time of a few script
runs (the run that follows the widget change, or a new session's first run once the chat is
loaded in the process). A page opened at a configuration no session computed before pays for
computing it (a replay of every assistant turn, three trims): those rows say so, and a second
row gives the same page in another session once it is computed. Clicks are timed once the
background work after the chat's first run (fact picking) is done. The column that matters is
**100k / 1k**: the goal is at most 2x.

Memory is measured in a child process per size (so that nothing else is loaded): tracemalloc's
traced bytes and the RSS delta of one open Playground session against those of the loaded
messages alone, and of three sessions of the same chat (which should share the parsed chat).

Prints markdown tables; makes no timing assertion. See ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The app counts as on a first open: never the persistent count store (ctxlab.count_store),
# here or in the servers started below (they inherit the environment).
os.environ["CTXLAB_CACHE_DIR"] = ""
PLAYGROUND = "pages/0_Playground.py"
REPLAY = "pages/2_Replay.py"
COMPARE = "pages/1_Compare.py"
MODEL = "gpt-4o"
REPLAY_BUDGET = 128_000
SIZES = (1_000, 10_000, 100_000)
TIMEOUT_S = 600.0

ACTIONS = (
    ("playground", "Playground, budget change"),
    ("replay-open", "Replay, open at a 128k budget (new session, by URL)"),
    ("replay-again", "Replay, same configuration in another session (replay shared)"),
    ("replay-nav", "Replay, opened from the sidebar (chat loaded)"),
    ("replay-step", "Replay, one scrubber step"),
    ("compare", "Compare, 3 configurations (new session, by URL)"),
    ("compare-nav", "Compare, 3 configurations, opened from the sidebar"),
    ("facts-cold", "Facts tab, first open after the chat is loaded"),
    ("facts", "Facts tab, first open in a new session"),
)
ONCE_PER_CHAT = (
    ("load", "Load and count the chat (first session)"),
    ("facts-pick", "Pick the chat's facts (the app does it in the background; timed alone)"),
)
"""Work done once per chat, off the click path (linear in the chat by nature)."""


def _label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def chat_name(n: int) -> str:
    """The chats-folder name of the generated chat of ``n`` messages."""
    return f"bench_agent_{_label(n)}"


def default_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    try:
        target = base / "ctxlab" / "bench-interactive"
        target.mkdir(parents=True, exist_ok=True)
        return target
    except OSError:
        return Path(tempfile.gettempdir()) / "ctxlab-bench-interactive"


def ensure_chats(folder: Path, sizes: Sequence[int]) -> dict[int, Path]:
    """The generated chats (seeded, byte-identical on every machine) in ``folder``."""
    from ctxlab.samples import ensure_large_chat

    folder.mkdir(parents=True, exist_ok=True)
    return {n: ensure_large_chat(folder / f"{chat_name(n)}.json", n) for n in sizes}


# -- AppTest timings ----------------------------------------------------------------------------


def _page(path: str, **query: str) -> Any:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT_S)
    for key, value in query.items():
        at.query_params[key] = value
    return at


def _timed_run(at: Any) -> float:
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the page raised: {at.exception[0].value}")
    return elapsed


def _budget_box(at: Any) -> Any:
    for widget in at.sidebar.number_input:
        if widget.key and ".budget@" in str(widget.key) and not str(widget.key).endswith(".scale"):
            return widget
    raise LookupError("no budget number box in the sidebar")


def _budgets(repeat: int) -> Iterator[int]:
    """Distinct realistic budgets, so that no repetition is answered by the previous one."""
    for i in range(repeat):
        yield 96_000 + 4_000 * i


def playground_budget_change(name: str, repeat: int) -> list[float]:
    """A budget typed in the Playground's number box: the rerun that follows."""
    at = _page(PLAYGROUND, chat=name, strategy="window-drop", model=MODEL, budget="64000")
    _timed_run(at)
    times = []
    for budget in _budgets(repeat):
        _budget_box(at).set_value(budget)
        times.append(_timed_run(at))
    return times


def replay_open(name: str, repeat: int) -> tuple[list[float], list[float], Any]:
    """A new session's first run of the Replay page (chat already loaded): at a budget no
    session replayed before (about 128k; the replay is computed), then again at the same
    budget in another session (the replay is shared)."""
    first, again, at = [], [], None
    for i in range(repeat):
        budget = str(REPLAY_BUDGET + 1_000 * i)
        for times in (first, again):
            at = _page(REPLAY, chat=name, strategy="window-drop", model=MODEL, budget=budget)
            times.append(_timed_run(at))
    return first, again, at


def replay_step(at: Any, repeat: int) -> list[float]:
    """One step back on the turn scrubber of an open Replay page."""
    slider = at.slider(key="replay-turn")
    turn = int(slider.value)
    times = []
    for _ in range(repeat):
        turn = max(1, turn - 1)
        at.slider(key="replay-turn").set_value(turn)
        times.append(_timed_run(at))
    return times


def compare_three(name: str, repeat: int) -> list[float]:
    """A new session's first run of Compare with three configurations no session computed
    before (chat already loaded)."""
    times = []
    for budget in _budgets(repeat):
        query = {
            "chat": name,
            "strategy": "window-drop",
            "model": MODEL,
            "cmp": "3",
            "cmp1": "window-drop",
            "cmp1.budget": str(budget),
            "cmp2": "trim-last",
            "cmp2.budget": str(budget),
            "cmp3": "clear-tool-results",
            "cmp3.trigger_tokens": str(budget),
        }
        times.append(_timed_run(_page(COMPARE, **query)))
    return times


def facts_first_open(name: str, repeat: int) -> list[float]:
    """The Facts tab opened for the first time in a session, each time at a new budget."""
    times = []
    for budget in _budgets(repeat):
        at = _page(PLAYGROUND, chat=name, strategy="window-drop", model=MODEL, budget=str(budget))
        _timed_run(at)
        at.session_state["pg-tabs"] = "Facts"
        times.append(_timed_run(at))
    return times


def apptest_row(name: str, path: Path, repeat: int, only: set[str]) -> dict[str, list[float]]:
    """Every action's run times on chat ``name``."""
    from ctxlab.counted import wait_for_prefetch
    from ctxlab.formats import load_chat
    from ctxlab.insights import extract_facts

    out: dict[str, list[float]] = {}
    # The first session loads and counts the chat, then the facts are picked in the
    # background: work done once per chat, reported apart. Clicks are timed on an idle process.
    out["load"] = [_timed_run(_page(PLAYGROUND, chat=name, strategy="window-drop", model=MODEL))]
    if not wait_for_prefetch(TIMEOUT_S, start_delayed=True):
        raise RuntimeError("the background fact picking did not finish")
    messages = load_chat(path)
    out["facts-pick"] = []
    for _ in range(3):  # the pick alone, timed like the clicks: a median of runs
        start = time.perf_counter()
        extract_facts(messages)
        out["facts-pick"].append(time.perf_counter() - start)
    if "playground" in only:
        out["playground"] = playground_budget_change(name, repeat)
    if "replay-open" in only or "replay-step" in only:
        opened, again, at = replay_open(
            name, max(1, repeat // 2) if "replay-open" not in only else repeat
        )
        if "replay-open" in only:
            out["replay-open"], out["replay-again"] = opened, again
        if "replay-step" in only:
            out["replay-step"] = replay_step(at, repeat)
    if "compare" in only:
        out["compare"] = compare_three(name, repeat)
    if "facts" in only:
        # Each open, at a new budget, checks the facts picked for the chat against the context.
        times = facts_first_open(name, repeat + 1)
        out["facts-cold"], out["facts"] = times[:1], times[1:]
    return out


# -- Chromium timings ---------------------------------------------------------------------------


def _server_cpu_seconds() -> float:
    """CPU time used so far by the app's server processes (``streamlit run``), from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            cmdline = (stat.parent / "cmdline").read_bytes()
            if b"streamlit" not in cmdline or b"run" not in cmdline:
                continue
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total


def wait_server_idle(window_s: float = 0.5, limit_s: float = TIMEOUT_S) -> None:
    """Wait until the server uses under a tenth of a core over ``window_s`` (the background
    fact picking after a chat's first run is done): clicks are timed on an idle server."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        before = _server_cpu_seconds()
        time.sleep(window_s)
        if _server_cpu_seconds() - before < 0.1 * window_s:
            return
    raise RuntimeError("the app's server never went idle")


def browser_rows(
    sizes: Sequence[int], repeat: int, only: set[str], folder: Path
) -> dict[int, dict[str, list[float]]]:
    """The same actions in Chromium: key press (or click, or page open) to idle page.

    A figure runs from the action to the end of the script run it causes with every element
    rendered (no fixed settling pause included); the page then settles, untimed. One browser
    context serves every page, as a user's browser does (Streamlit's scripts come from its
    cache after the first page). Pages open two ways: from the sidebar in the session that
    loaded the chat (the natural click path), and by URL in a new tab (a new session, so
    Streamlit's own page start-up, about 1.5 s here, is included).
    """
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from browser_support import (  # type: ignore[import-not-found]
        APP_IDLE,
        RERUN_DONE,
        SKELETON,
        arm_rerun_watch,
        serve_app,
        slider_input,
        wait_for_app,
    )
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
    from playwright.sync_api import expect, sync_playwright

    from ctxlab.ui.insights_view import FACTS_PREFETCH_DELAY_S

    timeout = TIMEOUT_S * 1000

    no_skeleton = f"() => document.querySelectorAll({SKELETON!r}).length === 0"

    def rendered(page: Any) -> float:
        """When no element waits for its frontend code any more (polled every 20 ms)."""
        page.wait_for_function(no_skeleton, timeout=timeout, polling=20)
        return time.perf_counter()

    def timed_rerun(page: Any, action: Callable[[], object], limit: float = timeout) -> float:
        arm_rerun_watch(page)
        start = time.perf_counter()
        action()
        page.wait_for_function(RERUN_DONE, timeout=limit, polling=20)
        elapsed = rendered(page) - start
        wait_for_app(page, timeout)
        return elapsed

    def timed_open(page: Any, url: str) -> float:
        start = time.perf_counter()
        page.goto(url, wait_until="domcontentloaded")
        expect(page.locator(APP_IDLE)).to_be_attached(timeout=timeout)
        elapsed = rendered(page) - start
        wait_for_app(page, timeout)
        return elapsed

    def timed_nav(page: Any, title: str) -> float:
        link = page.locator("[data-testid='stSidebarNav'] a", has_text=title).first
        return timed_rerun(page, link.click)

    def scrubber_steps(page: Any) -> list[float]:
        """Steps back on the scrubber. Now and then headless Chromium starts no run for a key
        press (tests/browser/test_click_paths.py's ``step_back`` retries for the same reason):
        such a step is not timed, and another one is."""
        scrubber = slider_input(page, "Turn")
        times: list[float] = []
        for _ in range(3 * repeat):
            try:
                times.append(timed_rerun(page, lambda: scrubber.press("ArrowLeft"), 10_000))
            except PlaywrightTimeoutError:
                wait_for_app(page, timeout)
            if len(times) == repeat:
                return times
        raise RuntimeError(f"only {len(times)} of {repeat} scrubber steps started a run")

    out: dict[int, dict[str, list[float]]] = {}
    log = Path(tempfile.gettempdir()) / "ctxlab-bench-interactive-server.log"
    env = {"CTXLAB_CHATS_DIR": str(folder), "PYTHONPATH": str(ROOT)}
    with serve_app(log, env) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(timeout)
        common = f"chat={{name}}&strategy=window-drop&model={MODEL}"
        compare_query = (
            "&cmp=3&cmp1=window-drop&cmp1.budget={budget}&cmp2=trim-last&cmp2.budget={budget}"
            "&cmp3=clear-tool-results&cmp3.trigger_tokens={budget}"
        )
        try:
            for n in sizes:
                name = chat_name(n)
                query = common.format(name=name)
                row: dict[str, list[float]] = {}
                page = context.new_page()
                timed_open(page, f"{base}/?{query}&budget=64000")  # loads and counts the chat
                # The facts are picked in the background from a few seconds after that first
                # run (insights_view.FACTS_PREFETCH_DELAY_S): wait for the pick to begin, then
                # for the server to be idle.
                time.sleep(FACTS_PREFETCH_DELAY_S + 0.5)
                wait_server_idle()
                if "playground" in only:
                    box = page.get_by_label("Token budget", exact=True).first
                    row["playground"] = []
                    for budget in _budgets(repeat):
                        box.fill(str(budget))
                        row["playground"].append(
                            timed_rerun(page, lambda box=box: box.press("Enter"))
                        )
                if "facts" in only:
                    tab = page.get_by_role("tab", name="Facts", exact=True).first
                    row["facts-cold"] = [timed_rerun(page, tab.click)]
                if "replay-open" in only or "replay-step" in only:
                    # From the sidebar: the session's budget (the last one typed above).
                    row["replay-nav"] = [timed_nav(page, "Replay")]
                    if "replay-step" in only:
                        row["replay-step"] = scrubber_steps(page)
                    page.close()
                    page = context.new_page()
                    url = f"{base}/Replay?{query}&budget={REPLAY_BUDGET}"
                    row["replay-open"] = [timed_open(page, url)]
                if "compare" in only:
                    # A new session by URL, then away and back by the sidebar (3 configurations
                    # kept in the session, their results computed by the first open).
                    row["compare"], row["compare-nav"] = [], []
                    for budget in _budgets(repeat):
                        url = f"{base}/Compare?{query}" + compare_query.format(budget=budget)
                        row["compare"].append(timed_open(page, url))
                        timed_nav(page, "Playground")
                        row["compare-nav"].append(timed_nav(page, "Compare"))
                        if f"cmp1.budget={budget}" not in page.url:
                            raise RuntimeError(f"Compare lost its configurations: {page.url}")
                page.close()
                out[n] = row
        finally:
            browser.close()
    return out


# -- memory (child process) ---------------------------------------------------------------------


def _rss() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _settle() -> tuple[int, int]:
    gc.collect()
    return tracemalloc.get_traced_memory()[0], _rss()


def memory_child(path: Path, name: str) -> dict[str, Any]:
    """In a fresh process: bytes held by one and by three open sessions, and by the messages.

    A small sample runs first so that every module the page imports is loaded before the
    baseline; the sessions are kept alive while they are measured.
    """
    from ctxlab.formats import load_chat_file

    _timed_run(_page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop"))
    tracemalloc.start()
    traced0, rss0 = _settle()
    sessions = [_page(PLAYGROUND, chat=name, strategy="window-drop", model=MODEL)]
    _timed_run(sessions[0])
    traced1, rss1 = _settle()
    for _ in range(2):
        sessions.append(_page(PLAYGROUND, chat=name, strategy="window-drop", model=MODEL))
        _timed_run(sessions[-1])
    traced3, rss3 = _settle()
    chats = [s.session_state["ctx.chat"].messages for s in sessions]
    shared = all(c is chats[0] for c in chats)
    loaded = load_chat_file(path, name=path.name)
    traced4, rss4 = _settle()
    messages = len(loaded.messages)
    del loaded
    return {
        "messages": messages,
        "loaded_traced": traced4 - traced3,
        "loaded_rss": rss4 - rss3,
        "one_traced": traced1 - traced0,
        "one_rss": rss1 - rss0,
        "three_traced": traced3 - traced0,
        "three_rss": rss3 - rss0,
        "shared": shared,
    }


def memory_row(path: Path, name: str) -> dict[str, Any]:
    """:func:`memory_child` in a child process (nothing of this process's caches counts)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXLAB_CHATS_DIR": str(path.parent)}
    done = subprocess.run(
        [sys.executable, __file__, "--memory-child", str(path), name],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"memory child failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- tables -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cell:
    times: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def text(self) -> str:
        if not self.times:
            return "—"
        lo, hi = min(self.times), max(self.times)
        spread = f" ({lo:.2f}–{hi:.2f})" if len(self.times) > 1 else ""
        return f"{self.median:.3f} s{spread}"


def timing_table(
    rows: dict[int, dict[str, list[float]]],
    sizes: Sequence[int],
    title: str,
    actions: Sequence[tuple[str, str]] = ACTIONS,
) -> str:
    head = ["action", *(f"{_label(n)} messages" for n in sizes)]
    ratio = len(sizes) > 1
    if ratio:
        head.append(f"{_label(sizes[-1])} / {_label(sizes[0])}")
    lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key, label in actions:
        if not any(key in rows.get(n, {}) for n in sizes):
            continue
        cells = [Cell(tuple(rows.get(n, {}).get(key, ()))) for n in sizes]
        line = [label, *(c.text() for c in cells)]
        if ratio:
            first, last = cells[0], cells[-1]
            line.append(
                f"**{last.median / first.median:.1f}x**" if first.times and last.times else "—"
            )
        lines.append("| " + " | ".join(line) + " |")
    return "\n".join(lines)


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:,.1f} MB"


def memory_table(rows: dict[int, dict[str, Any]]) -> str:
    head = (
        "| messages | loaded messages (traced / RSS) | one session (traced / RSS) | "
        "one session / messages | three sessions (traced / RSS) | chat shared |"
    )
    lines = ["### Server memory per open Playground session (AppTest, child process)", "", head]
    lines.append("|---|---|---|---|---|---|")
    for n, r in rows.items():
        ratio = r["one_traced"] / max(r["loaded_traced"], 1)
        lines.append(
            f"| {r['messages']:,} ({_label(n)}) | "
            f"{_mb(r['loaded_traced'])} / {_mb(r['loaded_rss'])}"
            f" | {_mb(r['one_traced'])} / {_mb(r['one_rss'])} | **{ratio:.2f}x** | "
            f"{_mb(r['three_traced'])} / {_mb(r['three_rss'])} | "
            f"{'yes' if r['shared'] else 'no'} |"
        )
    return "\n".join(lines)


def environment() -> str:
    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "—"

    rows = [
        ("python", platform.python_version()),
        ("platform", platform.platform()),
        ("cpu count", str(os.cpu_count())),
        *((pkg, version(pkg)) for pkg in ("ctxlab", "streamlit", "pandas", "plotly")),
    ]
    return "\n".join(["|  | version |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])


def _quiet_streamlit() -> None:
    """AppTest outside a server logs "missing ScriptRunContext" for cached calls: noise here."""
    import streamlit.logger

    streamlit.logger.set_log_level("error")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k only, 2 repetitions")
    parser.add_argument("--sizes", default=None, help="comma-separated message counts")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions per action")
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated: playground,replay-open,replay-step,compare,facts,memory",
    )
    parser.add_argument("--browser", action="store_true", help="also time Chromium (playwright)")
    parser.add_argument(
        "--browser-only", action="store_true", help="only the Chromium run (implies --browser)"
    )
    parser.add_argument("--dir", type=Path, default=None, help="where the generated chats live")
    parser.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    _quiet_streamlit()
    if args.memory_child:
        print(json.dumps(memory_child(Path(args.memory_child[0]), args.memory_child[1])))
        return 0

    sizes = (1_000,) if args.quick else SIZES
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    repeat = args.repeat or (2 if args.quick else 3)
    keys = {k for k, _ in ACTIONS if k != "facts-cold"} | {"memory"}
    only = set(args.only.split(",")) if args.only else keys
    if only - keys:
        parser.error(f"unknown --only entries: {sorted(only - keys)}")
    folder = args.dir or default_dir()
    paths = ensure_chats(folder, sizes)
    os.environ["CTXLAB_CHATS_DIR"] = str(folder)

    print("## ctxlab interactive benchmark\n")
    print(environment() + "\n")
    if not args.browser_only:
        rows: dict[int, dict[str, list[float]]] = {}
        for n in sizes:
            rows[n] = apptest_row(chat_name(n), paths[n], repeat, only)
            print(f"<!-- {_label(n)} done -->", file=sys.stderr, flush=True)
        title = "AppTest: script time of the run after the action (median of runs, min–max)"
        print(timing_table(rows, sizes, title) + "\n")
        once = "Once per chat, off the click path (AppTest process)"
        print(timing_table(rows, sizes, once, ONCE_PER_CHAT) + "\n")
        if "memory" in only:
            memory = {n: memory_row(paths[n], chat_name(n)) for n in sizes}
            print(memory_table(memory) + "\n")
    if args.browser or args.browser_only:
        brow = browser_rows(sizes, repeat, only, folder)
        title = "Chromium run: key press / click / page open to idle page (median, min–max)"
        print(timing_table(brow, sizes, title) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
