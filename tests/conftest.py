"""Shared fixtures: the default exact counter and hypothesis settings sized for 2 cores.

Hypothesis chat strategies live in ``tests/chatgen.py`` (``from chatgen import chats``).
"""

from __future__ import annotations

import os

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


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The shared gpt-4o counter (o200k_base, OpenAI chat accounting)."""
    return get_counter("gpt-4o")
