"""The sample chats that ship with ctxlab, and the generated large chat.

A sample is a JSON file in ``ctxlab/sample_chats/`` (or its ``real/`` folder) holding
``{"title", "description", "source", "license", "messages"}``; the files are package data, so an
installed wheel has them too (a checkout also reaches them as ``sample_chats/``, a link). A
sample's *name* is the file stem, unique across both folders, and is what the app's ``?chat=``
URL parameter and the CLI speak. The large chat is not shipped: :func:`ensure_generated` writes
it on first use, into ``sample_chats/generated/`` in a source checkout, else into the user cache
dir (never into an installed package). The generator is deterministic (seeded), so every
machine gets byte-identical files.

This module does no Streamlit and no tokenization; listing reads only small files.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # POSIX: concurrent writers of a generated sample wait for the first (pytest-xdist workers)
    import fcntl
except ImportError:  # pragma: no cover - Windows: writes stay atomic, work may be repeated
    fcntl = None  # type: ignore[assignment]

from ctxlab.errors import UnknownNameError

__all__ = [
    "DEFAULT_SAMPLE",
    "GENERATED",
    "Sample",
    "ensure_generated",
    "ensure_large_chat",
    "generate_large_chat",
    "list_samples",
    "sample_path",
    "samples_dir",
]

DEFAULT_SAMPLE = "coding_agent_session"
"""The sample the app opens when the URL names none."""

GENERATOR_VERSION = "ctxlab.samples/1"
"""Written first in every generated file; a file with another value is rebuilt."""

_ORDER = (
    "coding_agent_session",
    "support_function_calls",
    "long_plain_chat",
    "secrets_in_tool_outputs",
    "compaction_chain",
    "hostile_content",
)


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample chat. ``path`` may not exist yet for a generated sample (see ``generated``)."""

    name: str
    title: str
    description: str
    path: Path
    messages_hint: int
    generated: bool = False
    source: str = ""
    license: str = ""


@dataclass(frozen=True, slots=True)
class _GeneratedSpec:
    title: str
    description: str
    messages: int
    seed: int


GENERATED: dict[str, _GeneratedSpec] = {
    "large_agent_10k": _GeneratedSpec(
        title="Large agent loop (10k messages, generated)",
        description=(
            "A long, deterministic coding-agent loop: about 10,000 messages of user requests, "
            "assistant reasoning and tool calls (read_file, grep, run_tests, edit_file, "
            "list_dir) with outputs from a few tokens to several thousand. Built on first use "
            "by ctxlab.samples; use it to feel how strategies scale."
        ),
        messages=10_000,
        seed=10_000,
    ),
}
"""Samples built on demand, by name."""


def samples_dir() -> Path:
    """The folder of the shipped sample chats (``CTXLAB_SAMPLES_DIR`` overrides it)."""
    override = os.environ.get("CTXLAB_SAMPLES_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent / "sample_chats"


def _in_source_checkout() -> bool:
    """True when ctxlab runs from its repository (a ``pyproject.toml`` beside the package)."""
    return (Path(__file__).resolve().parent.parent / "pyproject.toml").is_file()


def _order_key(sample: Sample) -> tuple[int, int, str]:
    if sample.name in _ORDER:
        return (0, _ORDER.index(sample.name), sample.name)
    return (2 if sample.generated else 1, 0, sample.name)


@functools.lru_cache(maxsize=64)
def _read_header(path: Path, mtime_ns: int) -> tuple[str, str, str, str, int]:
    """Title, description, source, licence and message count of a sample file."""
    del mtime_ns  # part of the cache key only
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        data = {"messages": data}
    messages = data.get("messages", [])
    source = str(data.get("source", ""))
    title = str(data.get("title") or path.stem.replace("_", " "))
    description = str(data.get("description") or (f"Real public chat from {source}"))
    return (
        title,
        description,
        source,
        str(data.get("license", "")),
        len(messages) if isinstance(messages, list) else 0,
    )


def _regular_file_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is a regular file whose real path lies inside ``folder``: a FIFO (which
    would block the listing of every page), a device or a symlink leading out is not a sample."""
    try:
        return path.is_file() and path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


def list_samples() -> list[Sample]:
    """Every sample, committed ones first (the default sample first), then generated ones.

    Returns:
        Samples in display order; the generated ones are listed whether or not they exist yet.
    """
    base = samples_dir()
    found: list[Sample] = []
    for folder in (base, base / "real"):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            if not _regular_file_inside(path, base):
                continue
            title, description, source, licence, count = _read_header(path, path.stat().st_mtime_ns)
            found.append(Sample(path.stem, title, description, path, count, False, source, licence))
    for name, spec in GENERATED.items():
        found.append(
            Sample(
                name,
                spec.title,
                spec.description,
                _generated_target(name),
                spec.messages,
                True,
                "generated by ctxlab.samples (seeded)",
                "MIT",
            )
        )
    return sorted(found, key=_order_key)


def sample_path(name: str) -> Path:
    """The file of the sample called ``name``, building it first when it is a generated one.

    Raises:
        UnknownNameError: no sample has that name; the message lists the known names.
    """
    if name in GENERATED:
        return ensure_generated(name)
    for sample in list_samples():
        if sample.name == name:
            return sample.path
    known = ", ".join(s.name for s in list_samples())
    raise UnknownNameError(f"unknown sample chat {name!r}; available: {known}")


def _cache_dirs() -> list[Path]:
    xdg = os.environ.get("XDG_CACHE_HOME")
    user_cache = (Path(xdg) if xdg else Path.home() / ".cache") / "ctxlab"
    others = [user_cache, Path(tempfile.gettempdir()) / "ctxlab"]
    if os.environ.get("CTXLAB_SAMPLES_DIR") or _in_source_checkout():
        return [samples_dir() / "generated", *others]
    return others


def _writable_dir(candidates: list[Path]) -> Path:
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    raise OSError("no writable cache folder for generated sample chats")


def _generated_target(name: str) -> Path:
    """Where a generated sample lives: an up-to-date existing file, else the first writable dir."""
    for folder in _cache_dirs():
        path = folder / f"{name}.json"
        if _is_current(path):
            return path
    return _cache_dirs()[0] / f"{name}.json"


def _is_current(path: Path) -> bool:
    """True when ``path`` exists and was written by this generator version (reads 200 bytes)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(200)
    except OSError:
        return False
    return (
        re.search(rb'"generator":\s*"' + re.escape(GENERATOR_VERSION.encode()) + rb'"', head)
        is not None
    )


def ensure_generated(name: str) -> Path:
    """The path of the generated sample ``name``, writing it first if missing or stale.

    Writing is atomic (a temporary file renamed into place), so concurrent callers never read a
    half-written chat.

    Raises:
        UnknownNameError: ``name`` is not a generated sample.
    """
    spec = GENERATED.get(name)
    if spec is None:
        known = ", ".join(GENERATED)
        raise UnknownNameError(f"unknown generated sample {name!r}; available: {known}")
    for folder in _cache_dirs():
        if _is_current(folder / f"{name}.json"):
            return folder / f"{name}.json"
    folder = _writable_dir(_cache_dirs())
    with _generation_lock(folder / f".{name}.lock"):
        return ensure_large_chat(folder / f"{name}.json", spec.messages, seed=spec.seed, spec=spec)


@contextlib.contextmanager
def _generation_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` so one process generates while the others wait and
    then find the file current (the write itself is atomic either way)."""
    if fcntl is None:
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_large_chat(
    path: Path | None = None,
    messages: int = 10_000,
    *,
    seed: int = 10_000,
    spec: _GeneratedSpec | None = None,
) -> Path:
    """Write the generated agent chat to ``path`` unless an up-to-date file is already there.

    Args:
        path: target file; default: where :func:`ensure_generated` keeps ``large_agent_10k``.
        messages: the minimum number of messages (the chat ends on a complete round).
        seed: the random seed; the same seed and size give byte-identical files.
        spec: title and description to store (defaults to the 10k sample's).

    Returns:
        The path of the file.
    """
    if path is None:
        return ensure_generated("large_agent_10k")
    path = Path(path)
    if _is_current(path) and _count_hint(path) >= messages:
        return path
    spec = spec or GENERATED["large_agent_10k"]
    chat = generate_large_chat(messages, seed=seed)
    document = {
        "generator": GENERATOR_VERSION,
        "message_count": len(chat),
        "title": spec.title,
        "description": spec.description,
        "source": f"generated by ctxlab.samples.generate_large_chat(messages={messages}, "
        f"seed={seed})",
        "license": "MIT",
        "messages": chat,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # one string from the C encoder: json.dump streams through the pure-Python one
            # (2.4x the time on a 20,000-message chat); the bytes are the same
            handle.write(json.dumps(document, ensure_ascii=False, separators=(",", ":")))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _count_hint(path: Path) -> int:
    """The ``message_count`` a generated file states in its first bytes (0 when absent)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(200).decode("utf-8", "replace")
    except OSError:
        return 0
    match = re.search(r'"message_count":\s*(\d+)', head)
    return int(match.group(1)) if match else 0


# --------------------------------------------------------------------------------------------
# The generator: a plausible agent loop over a small fictional repository.

_MODULES = (
    "orders/api.py",
    "orders/models.py",
    "orders/pricing.py",
    "orders/tax.py",
    "orders/inventory.py",
    "orders/notifications.py",
    "orders/db/session.py",
    "orders/db/migrations/0042_add_discount_codes.py",
    "orders/workers/fulfilment.py",
    "orders/utils/retry.py",
)
_TESTS = (
    "tests/test_api.py",
    "tests/test_pricing.py",
    "tests/test_tax.py",
    "tests/test_inventory.py",
    "tests/test_fulfilment.py",
    "tests/test_retry.py",
)
_SYMBOLS = (
    "apply_discount",
    "compute_tax",
    "reserve_stock",
    "release_stock",
    "send_order_email",
    "with_retry",
    "OrderLine",
    "Order.total",
    "get_session",
    "FulfilmentWorker.run_once",
    "round_money",
    "DiscountCode.is_valid",
)
_TASKS = (
    "The checkout total is off by one cent for some orders with a 15% discount code. "
    "Can you find out why and fix it?",
    "Orders with more than 100 lines time out in the fulfilment worker. Please investigate.",
    "Add a `--dry-run` flag to the fulfilment worker that logs what it would ship.",
    "tests/test_tax.py started failing on main after the Canadian GST change. Fix it.",
    "reserve_stock sometimes double-reserves under concurrent requests. Can you look?",
    "Refactor with_retry so it supports async functions as well, keep the sync API.",
    "The order confirmation email shows prices without the currency symbol for EUR.",
    "Migration 0042 fails on an empty database. Make it idempotent.",
    "Please add type hints to orders/pricing.py and make mypy pass in strict mode.",
    "Our p95 latency on POST /orders doubled last week. Profile the handler and propose a fix.",
)
_THOUGHTS = (
    "Let me look at how {sym} is implemented before changing anything.",
    "I'll search for every caller of {sym} to see what depends on the current behaviour.",
    "Running the relevant tests first to see the failure as it is now.",
    "The traceback points into {mod}; reading that file around the failing line.",
    "I think the problem is the order of rounding and discounting in {sym}. Checking the tests.",
    "Applying a minimal fix to {mod} and then re-running the tests.",
    "The first fix was incomplete: another caller of {sym} relies on the old rounding. "
    "Updating it too.",
)
_WORDS = (
    "order",
    "line",
    "quantity",
    "price",
    "discount",
    "tax",
    "total",
    "currency",
    "reserve",
    "stock",
    "session",
    "retry",
    "worker",
    "shipment",
    "invoice",
    "customer",
    "refund",
    "amount",
    "decimal",
    "rounding",
    "cents",
    "status",
    "event",
)


def _code_block(rng: random.Random, module: str, lines: int) -> str:
    out: list[str] = []
    start = rng.randint(1, 400)
    indent = 0
    for k in range(lines):
        n = start + k
        roll = rng.random()
        sym = rng.choice(_SYMBOLS).split(".")[-1]
        word, other = rng.choice(_WORDS), rng.choice(_WORDS)
        if roll < 0.12:
            indent = 0
            text = f"def {sym}_{word}({other}: Decimal, *, {word}: int = 0) -> Decimal:"
        elif roll < 0.2:
            indent = 1
            text = f'"""Return the {word} of the {other}, rounded half-up to cents."""'
        elif roll < 0.35:
            indent = min(indent + 1, 3)
            text = f"if {word}.{other} is None or {word}.{other} < 0:"
        elif roll < 0.45:
            text = f"raise ValueError(f'invalid {word}: {{{word}!r}} in {module}')"
        elif roll < 0.6:
            text = f"{word}_{other} = round_money({word} * (1 - {other}.rate))"
        elif roll < 0.7:
            text = f"logger.debug('{sym}: {word}=%s {other}=%s', {word}, {other})"
        elif roll < 0.8:
            indent = max(indent - 1, 1)
            text = f"return {word}_{other}"
        else:
            text = f"{word} = {other}.{rng.choice(_WORDS)} + Decimal('0.{rng.randint(1, 99):02d}')"
        out.append(f"{n:>5}\t{'    ' * indent}{text}")
    return f"# {module}\n" + "\n".join(out)


def _test_log(rng: random.Random, failing: bool) -> str:
    files = rng.sample(_TESTS, k=rng.randint(2, len(_TESTS)))
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
        "rootdir: /workspace/orders-service",
        "configfile: pyproject.toml",
        f"collected {sum(len(f) for f in files)} items",
        "",
    ]
    for f in files:
        dots = "".join("F" if failing and rng.random() < 0.08 else "." for _ in range(len(f)))
        lines.append(f"{f} {dots}")
    if failing:
        test = rng.choice(files)
        sym = rng.choice(_SYMBOLS)
        got, want = rng.randint(1000, 9999), rng.randint(1000, 9999)
        lines += [
            "",
            "=================================== FAILURES ===================================",
            f"_____________________________ test_{sym.replace('.', '_').lower()} "
            "_____________________________",
            "",
            "    def test_case():",
            f"        order = make_order(lines=[('SKU-{rng.randint(100, 999)}', 3, '19.99')])",
            f">       assert order.total == Decimal('{want / 100:.2f}')",
            f"E       AssertionError: assert Decimal('{got / 100:.2f}') == Decimal("
            f"'{want / 100:.2f}')",
            "",
            f"{test}:{rng.randint(10, 300)}: AssertionError",
            "=========================== short test summary info ============================",
            f"FAILED {test}::test_{sym.replace('.', '_').lower()} - AssertionError",
            f"========================= 1 failed, {rng.randint(20, 90)} passed in "
            f"{rng.uniform(0.8, 9.0):.2f}s =========================",
        ]
    else:
        lines.append(
            f"============================== {rng.randint(20, 90)} passed in "
            f"{rng.uniform(0.8, 9.0):.2f}s =============================="
        )
    return "\n".join(lines)


def _grep_output(rng: random.Random, pattern: str) -> str:
    hits = rng.randint(0, 14)
    if hits == 0:
        return f"(no matches for {pattern!r})"
    return "\n".join(
        f"{rng.choice(_MODULES + _TESTS)}:{rng.randint(1, 420)}:    "
        f"{rng.choice(_WORDS)} = {pattern}({rng.choice(_WORDS)}, {rng.choice(_WORDS)})"
        for _ in range(hits)
    )


def _tool_result(rng: random.Random, name: str, args: dict[str, Any], failing: bool) -> str:
    if name == "read_file":
        size = rng.choice((6, 10, 20, 30, 50, 90, 160))
        return _code_block(rng, str(args["path"]), size)
    if name == "grep":
        return _grep_output(rng, str(args["pattern"]))
    if name == "run_tests":
        return _test_log(rng, failing)
    if name == "edit_file":
        n = rng.randint(1, 400)
        return (
            f"Edited {args['path']}: replaced 1 occurrence (lines {n}-{n + rng.randint(0, 6)}).\n"
            f"--- a/{args['path']}\n+++ b/{args['path']}\n@@ -{n},3 +{n},3 @@\n"
            f"-    {args['old']}\n+    {args['new']}"
        )
    folder = str(args.get("path", "."))
    inside = [p for p in _MODULES + _TESTS if p.startswith(folder)] or list(_MODULES)
    files = "\n".join(sorted(rng.sample(inside, k=rng.randint(1, len(inside)))))
    return f"{folder}:\n{files}"


def _tool_args(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "read_file":
        return {"path": rng.choice(_MODULES + _TESTS)}
    if name == "grep":
        return {"pattern": rng.choice(_SYMBOLS).split(".")[-1], "path": "orders/"}
    if name == "run_tests":
        return {"target": rng.choice(_TESTS), "flags": ["-x", "-q"]}
    if name == "edit_file":
        word = rng.choice(_WORDS)
        return {
            "path": rng.choice(_MODULES),
            "old": f"{word} = round_money({word}) * rate",
            "new": f"{word} = round_money({word} * rate)",
        }
    return {"path": rng.choice(("orders/", "orders/db/", "tests/"))}


_TOOL_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("read_file", 5),
    ("grep", 3),
    ("run_tests", 2),
    ("edit_file", 2),
    ("list_dir", 1),
)


def generate_large_chat(messages: int = 10_000, *, seed: int = 10_000) -> list[dict[str, Any]]:
    """A deterministic agent chat in OpenAI JSON with at least ``messages`` messages.

    Invariants: ids are unique (``m000001``...), every assistant tool call is answered by one
    tool message right after it (in call order), and the chat ends on a complete round.

    Args:
        messages: minimum number of messages.
        seed: random seed.

    Returns:
        The messages as OpenAI Chat Completions dicts with ctxlab ``id`` fields.
    """
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    names = [n for n, w in _TOOL_WEIGHTS for _ in range(w)]

    def next_id() -> str:
        return f"m{len(out) + 1:06d}"

    out.append(
        {
            "id": next_id(),
            "role": "system",
            "content": (
                "You are a coding agent working in the orders-service repository "
                "(/workspace/orders-service, Python 3.11). Use the tools to read, search, edit "
                "and test code. Keep changes minimal and explain what you changed."
            ),
        }
    )
    call_no = 0
    while len(out) < messages:
        task = rng.choice(_TASKS)
        out.append({"id": next_id(), "role": "user", "content": task})
        failing = True
        for step in range(rng.randint(3, 12)):
            sym, mod = rng.choice(_SYMBOLS), rng.choice(_MODULES)
            thought = rng.choice(_THOUGHTS).format(sym=sym, mod=mod)
            calls = []
            for _ in range(1 if rng.random() < 0.8 else rng.randint(2, 3)):
                call_no += 1
                name = rng.choice(names)
                calls.append(
                    (f"call_{seed:x}{call_no:07d}", name, _tool_args(rng, name)),
                )
            out.append(
                {
                    "id": next_id(),
                    "role": "assistant",
                    "content": thought if rng.random() < 0.7 else None,
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)},
                        }
                        for cid, name, args in calls
                    ],
                }
            )
            for cid, name, args in calls:
                out.append(
                    {
                        "id": next_id(),
                        "role": "tool",
                        "tool_call_id": cid,
                        "content": _tool_result(rng, name, args, failing),
                    }
                )
            if step >= 2 and rng.random() < 0.4:
                failing = False
        out.append(
            {
                "id": next_id(),
                "role": "assistant",
                "content": (
                    f"Done. I changed {rng.choice(_MODULES)} so that "
                    f"{rng.choice(_SYMBOLS)} rounds once, after the "
                    f"{rng.choice(_WORDS)} is applied, and added a regression test in "
                    f"{rng.choice(_TESTS)}. The full suite passes "
                    f"({rng.randint(120, 480)} tests)."
                ),
            }
        )
    return out
