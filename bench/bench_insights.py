"""ctxlab insights benchmark: fact picking, fact retention and validation at 1k, 10k, 100k messages.

Run ``python bench/bench_insights.py`` (``--sizes 1000,10000`` to pick sizes, ``--only validate``
or ``--only facts`` for one section). The chats are the
generated agent loop of :func:`ctxlab.samples.generate_large_chat` (the ``large_agent_10k``
sample at 10k: about 8 MB of tool output). "before" is the picker as it was before issue 15,
kept verbatim in ``tests/test_facts_pinned.py`` as the reference the new one must equal; both
run in the same process, so their ratio is meaningful on a noisy machine. Prints a markdown table.

The validate section times ``ctxlab.validate.validate`` for the three providers (openai,
anthropic, gemini) in turn, as the Compare page's provider badges do, against the pre-issue-15
validator pinned in ``tests/validate_reference.py`` (asserted to return the same Problems).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

from ctxlab.formats import load_chat
from ctxlab.insights import extract_facts, fact_retention
from ctxlab.model import Message
from ctxlab.samples import generate_large_chat
from ctxlab.tokens import get_counter
from ctxlab.validate import PROVIDERS, Problem, validate

ROOT = Path(__file__).resolve().parent.parent


def _reference() -> Callable[[Sequence[Message]], object]:
    """``old_extract_facts`` from tests/test_facts_pinned.py (the pre-issue-15 picker)."""
    spec = importlib.util.spec_from_file_location(
        "facts_reference", ROOT / "tests" / "test_facts_pinned.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.old_extract_facts  # type: ignore[no-any-return]


def _validate_reference() -> Callable[..., tuple[object, ...]]:
    """``validate`` from tests/validate_reference.py (the pre-issue-15 validator)."""
    spec = importlib.util.spec_from_file_location(
        "validate_reference", ROOT / "tests" / "validate_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module.validate  # type: ignore[no-any-return]


# Wall time, or with --cpu this process's CPU time, which a busy shared machine stretches less.
_clock: Callable[[], float] = time.perf_counter


def median_time(
    fn: Callable[[], object], runs: int, setup: Callable[[], object] | None = None
) -> float:
    times = []
    for _ in range(runs):
        if setup is not None:
            setup()
        start = _clock()
        fn()
        times.append(_clock() - start)
    return statistics.median(times)


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def row(n: int, runs: int, with_before: bool) -> list[str]:
    messages = load_chat(orjson.dumps({"messages": generate_large_chat(n)}))
    tool_mb = sum(len(m.content) for m in messages if m.role.value == "tool") / 1e6
    facts = extract_facts(messages)
    t_new = median_time(lambda: extract_facts(messages), runs)
    before = "—"
    ratio = "—"
    if with_before:
        old = _reference()
        assert old(messages) == facts, "the fast picker must find the same facts"
        t_old = median_time(lambda: old(messages), max(1, runs // 2))
        before = fmt_s(t_old)
        ratio = f"{t_old / t_new:,.1f}x"
    half = messages[len(messages) // 2 :]
    t_keep = median_time(lambda: fact_retention(messages, half, facts), runs)
    return [
        f"{len(messages):,}",
        f"{tool_mb:,.1f} MB",
        f"{len(facts):,}",
        fmt_s(t_new),
        before,
        ratio,
        fmt_s(t_keep),
    ]


def _all_providers(
    check: Callable[..., tuple[object, ...]], messages: Sequence[Message], **options: object
) -> list[tuple[object, ...]]:
    return [check(messages, provider=p, **options) for p in PROVIDERS]


def _fields(problems: Sequence[tuple[object, ...]]) -> list[list[tuple[object, ...]]]:
    return [
        [(p.code, p.severity, p.message_id, p.text, p.provider_error) for p in found]  # type: ignore[attr-defined]
        for found in problems
    ]


def _forget() -> None:
    """Make validate() forget the last context it scanned (it keeps one: a tiny other one)."""
    validate(())


def _each_forgotten(messages: Sequence[Message]) -> list[tuple[Problem, ...]]:
    """Three providers, each scanning the messages itself (no reuse between providers)."""
    found = []
    for p in PROVIDERS:
        _forget()
        found.append(validate(messages, provider=p))
    return found


def validate_row(n: int, runs: int, with_before: bool) -> list[str]:
    """Three providers' validation of a new ``n``-message context: each provider scanning it
    (nothing reused), the three in a row (one scan, as the Compare page does for a trim result)
    and the same with a budget and the model's window (the counter's counts cached, as in the
    app); before: the pinned pre-issue-15 validator, the same ways."""
    messages = load_chat(orjson.dumps({"messages": generate_large_chat(n)}))
    counter = get_counter("gpt-4o")
    counter.count_messages(messages)  # the app's counter has counted the chat already
    options = {"budget": 96_000, "counter": counter, "window": 128_000}
    found = _each_forgotten(messages)
    assert _fields(found) == _fields(_all_providers(validate, messages))
    t_each = median_time(lambda: _each_forgotten(messages), runs)
    t_row = median_time(lambda: _all_providers(validate, messages), runs, _forget)
    t_budget = median_time(lambda: _all_providers(validate, messages, **options), runs, _forget)
    cells = [f"{len(messages):,}", f"{sum(len(f) for f in found):,}"]
    cells += [fmt_s(t_each), fmt_s(t_row), fmt_s(t_budget)]
    if not with_before:
        return [*cells, "—", "—", "—"]
    old = _validate_reference()
    assert _fields(_all_providers(old, messages)) == _fields(found), "same Problems"
    t_old = median_time(lambda: _all_providers(old, messages), runs)
    t_old_budget = median_time(lambda: _all_providers(old, messages, **options), runs)
    return [
        *cells,
        fmt_s(t_old),
        fmt_s(t_old_budget),
        f"{t_old / t_each:,.1f}x / {t_old / t_row:,.1f}x / {t_old_budget / t_budget:,.1f}x",
    ]


VALIDATE_HEADERS = [
    "messages",
    "problems (3 providers)",
    "validate x3, each scanning",
    "validate x3 in a row",
    "in a row + budget + window",
    "before (pre-issue-15)",
    "before + budget + window",
    "speedup (each / in a row / budget)",
]


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print("| " + " | ".join(headers) + " |")
    print("|" + "|".join("---" for _ in headers) + "|")
    for cells in rows:
        print("| " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--runs", type=int, default=5, help="repetitions (median)")
    parser.add_argument(
        "--no-before", action="store_true", help="skip the slow pre-issue-15 reference"
    )
    parser.add_argument("--cpu", action="store_true", help="time with CPU time, not wall time")
    parser.add_argument(
        "--only", default="facts,validate", help="comma-separated sections (facts, validate)"
    )
    args = parser.parse_args(argv)
    sections = {s.strip() for s in args.only.split(",")}
    global _clock
    if args.cpu:
        _clock = time.process_time
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    print("# ctxlab insights benchmark\n")
    print(f"times: {'CPU time (--cpu)' if args.cpu else 'wall time'}, median of {args.runs}\n")
    if "validate" in sections:
        rows = [validate_row(n, args.runs, not args.no_before) for n in sizes]
        print("## Validation, three providers in turn\n")
        print_table(VALIDATE_HEADERS, rows)
        print()
    if "facts" not in sections:
        return 0
    rows = [row(n, args.runs, not args.no_before) for n in sizes]
    headers = [
        "messages",
        "tool output",
        "facts (limit 300)",
        "extract_facts",
        "before (pre-issue-15)",
        "speedup",
        "fact_retention (context: last half)",
    ]
    print("## Facts\n")
    print_table(headers, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
