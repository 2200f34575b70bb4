"""Shared fixtures: the default exact counter and hypothesis settings sized for 2 cores.

Hypothesis chat strategies live in ``tests/chatgen.py`` (``from chatgen import chats``).

A test run must leave the checkout as it found it (issue 26): the files ``git status`` reports
at the end of the session and not at its start fail the run, by name.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ctxlab.tokens import TokenCounter, get_counter

# Property tests run in CI on 2 cores: enough examples to find shape bugs, no deadline flakes.
settings.register_profile(
    "ctxlab",
    max_examples=int(os.environ.get("CTXLAB_HYPOTHESIS_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ctxlab")

ROOT = Path(__file__).resolve().parent.parent
_STATUS_AT_START = pytest.StashKey[set[str] | None]()


def _git_status() -> set[str] | None:
    """``git status --porcelain`` lines of the checkout; None outside a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return set(done.stdout.splitlines()) if done.returncode == 0 else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, hand out the longest files first: the install tests (minutes each)
    and the browser tests, then the rest in their order, so short files fill the end of the run
    instead of one worker finishing a long file alone (``--dist loadfile`` sends the files in
    the order collected, with ``--no-loadscope-reorder`` as scripts/test.sh runs it)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return
    browser = ROOT / "tests" / "browser"

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("install") is not None:
            return 0
        return 1 if browser in item.path.parents else 2

    items.sort(key=rank)  # stable: the order within each rank is kept


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") is None:  # the controller checks, not each worker
        session.config.stash[_STATUS_AT_START] = _git_status()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_STATUS_AT_START, None)
    after = _git_status() if before is not None else None
    if before is None or after is None:
        return
    dirtied = sorted(after - before)
    if dirtied:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        text = "the test run changed the checkout (git status):\n  " + "\n  ".join(dirtied)
        if reporter is not None:
            reporter.write_line(text, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def _count_store_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The persistent count store (ctxlab.count_store) of every test, and of every process a
    test starts, is a folder of this run: no test reads or writes the user's real cache."""
    folder = tmp_path_factory.mktemp("ctxlab-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CTXLAB_CACHE_DIR", str(folder))
        yield


@pytest.fixture
def empty_count_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A count store of this test alone, empty at its start (for tests that count what gets
    tokenized); returns its folder."""
    folder = tmp_path / "ctxlab-cache"
    monkeypatch.setenv("CTXLAB_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def _sigint_handler_restored() -> Iterator[None]:
    """Each test starts with the Ctrl-C handler the process started with: under pytest-xdist a
    worker runs files in another order than a serial run, so a handler an earlier file left
    behind would reach the tests that send themselves SIGINT (tests/test_corpus.py)."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not handler and handler is not None:
        signal.signal(signal.SIGINT, handler)


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The shared gpt-4o counter (o200k_base, OpenAI chat accounting)."""
    return get_counter("gpt-4o")
