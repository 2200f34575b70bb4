"""Bounded caches: byte and entry bounds, LRU order, values too large to keep, values shared
while held and released with their last holder."""

from __future__ import annotations

import gc
import threading
import time
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.caches import ENV_BOUNDS, MB, BoundedCache, SharedWhileHeld, megabytes_from_env


def _text_cache(max_bytes: int, max_entries: int | None = None) -> BoundedCache[str, int]:
    return BoundedCache(max_bytes=max_bytes, weigh=lambda k, v: len(k), max_entries=max_entries)


def test_the_byte_bound_evicts_the_least_recently_used_first() -> None:
    cache = _text_cache(10)
    cache.put("aaaa", 1)
    cache.put("bbbb", 2)
    assert cache.get("aaaa") == 1  # now the most recently used
    cache.put("cccc", 3)  # 12 bytes > 10: the least recently used (bbbb) goes
    assert "bbbb" not in cache
    assert cache.get("aaaa") == 1
    assert cache.get("cccc") == 3
    assert cache.held_bytes == 8


def test_the_entry_bound_evicts_the_least_recently_used_first() -> None:
    cache: BoundedCache[str, int] = BoundedCache(max_entries=2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get_many(["a"])
    cache.put("c", 3)
    assert len(cache) == 2
    assert "b" not in cache
    assert cache.get_many(["a", "b", "c"]) == [1, None, 3]


def test_a_value_larger_than_the_bound_is_not_kept_and_evicts_nothing() -> None:
    cache = _text_cache(10)
    cache.put("small", 1)
    assert not cache.put("x" * 11, 2)
    assert "x" * 11 not in cache
    assert cache.get("small") == 1
    assert cache.held_bytes == 5


def test_replacing_a_key_counts_its_bytes_once() -> None:
    cache: BoundedCache[str, str] = BoundedCache(max_bytes=100, weigh=lambda k, v: len(v))
    cache.put("k", "x" * 40)
    cache.put("k", "y" * 30)
    assert cache.held_bytes == 30
    assert cache.get("k") == "y" * 30


def test_a_byte_bound_needs_a_weigh_function() -> None:
    with pytest.raises(ValueError, match="weigh"):
        BoundedCache(max_bytes=10)


@given(st.lists(st.tuples(st.text(max_size=8), st.booleans()), max_size=60))
def test_the_bounds_hold_after_any_sequence_of_puts_and_gets(
    ops: list[tuple[str, bool]],
) -> None:
    cache = _text_cache(16, max_entries=3)
    for key, is_put in ops:
        if is_put:
            cache.put(key, len(key))
        else:
            assert cache.get(key) in (None, len(key))
        assert cache.held_bytes <= 16
        assert len(cache) <= 3
        assert cache.held_bytes == sum(len(k) for k in cache._entries)


def test_get_or_build_builds_once_for_concurrent_callers() -> None:
    cache: BoundedCache[str, object] = BoundedCache(max_entries=4)
    calls = []

    def build() -> object:
        calls.append(1)
        time.sleep(0.05)
        return object()

    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_build("k", build)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert all(r is results[0] for r in results)


def test_get_or_build_keeps_nothing_when_the_build_fails() -> None:
    cache: BoundedCache[str, int] = BoundedCache(max_entries=4)

    def fail() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError):
        cache.get_or_build("k", fail)
    assert "k" not in cache
    assert cache.get_or_build("k", lambda: 7) == 7


@dataclass(frozen=True, slots=True, weakref_slot=True)
class _Chat:
    name: str


def test_a_shared_value_is_the_same_object_for_two_holders() -> None:
    shared: SharedWhileHeld[str, _Chat] = SharedWhileHeld()
    built = []

    def build() -> _Chat:
        built.append(1)
        return _Chat("big")

    first = shared.get_or_build("big", build)
    second = shared.get_or_build("big", build)
    assert first is second
    assert built == [1]


def test_a_shared_value_is_released_when_its_last_holder_drops_it() -> None:
    shared: SharedWhileHeld[str, _Chat] = SharedWhileHeld()
    first = shared.get_or_build("big", lambda: _Chat("big"))
    second = shared.get_or_build("big", lambda: _Chat("other"))
    del first
    gc.collect()
    assert shared.get("big") is second
    del second
    gc.collect()
    assert shared.get("big") is None
    assert len(shared) == 0
    assert shared.get_or_build("big", lambda: _Chat("again")).name == "again"


def test_bounds_come_from_the_environment_in_megabytes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, (default, what) in ENV_BOUNDS.items():
        assert what
        monkeypatch.delenv(name, raising=False)
        assert megabytes_from_env(name) == default * MB
        monkeypatch.setenv(name, "1.5")
        assert megabytes_from_env(name) == int(1.5 * MB)
        monkeypatch.setenv(name, "0")
        assert megabytes_from_env(name) == 0
        monkeypatch.setenv(name, "lots")
        assert megabytes_from_env(name) == default * MB
