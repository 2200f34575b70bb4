"""Shared fixtures: the default exact counter and hypothesis settings sized for 2 cores.

Hypothesis chat strategies live in ``tests/chatgen.py`` (``from chatgen import chats``).
"""

from __future__ import annotations

import os
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


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The shared gpt-4o counter (o200k_base, OpenAI chat accounting)."""
    return get_counter("gpt-4o")
