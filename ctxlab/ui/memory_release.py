"""The server gives back the memory of sessions that left.

What a session opens (its chat, the chat's counts, replays and results derived from it) is kept
only while some session holds it (:mod:`ctxlab.caches`, :class:`~ctxlab.tokens.TokenCounter`).
A session holds it through its ``st.session_state``, which Streamlit keeps for
``server.disconnectedSessionTTL`` seconds (120 by default) after the browser disconnects, so a
reconnecting tab finds it. Streamlit's store of disconnected sessions drops an expired one only
when it is next written to (the next session to disconnect): the state of the last viewers to
leave would stay until someone else came and went.

Nor does that lazy drop shut the session down: the files and download callables Streamlit keeps
per session (a download button's callable refers to the chat) stay registered for good, and the
server's send loop keeps the last session it served referenced until it serves another.

One watcher thread per server process therefore asks the server's event loop, every quarter of
the TTL (at least every 30 s), to drop the sessions whose TTL has passed, shut them down as
Streamlit does for a session it closes, and empty their state, their widgets' metadata (whose
callback arguments hold the page's chat; ``SessionState.clear`` keeps it) and their fragments
(closures over the page's globals); when no session is left at all, the per-text token counts
go too; when it dropped any, it collects
garbage (replays refer back to their chat, a cycle only the collector frees) and asks glibc's
allocator to return its free pages to the system (``malloc_trim``), so the server's resident
size falls back instead of staying at its peak.

The store and the loop are reached through Streamlit's runtime internals (``Runtime``'s
``_session_mgr._session_storage`` and ``_async_objs.eventloop``), read defensively: if a
Streamlit release renames them, the watcher does nothing and memory is released at Streamlit's
own pace (``tests/browser/test_memory.py`` would show it).

The server itself should run on the C library's allocator (``PYTHONMALLOC=malloc``, which
:mod:`ctxlab.launch` sets): Python's arenas are returned only when empty, and a few small
survivors keep most of them.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import ctypes.util
import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import streamlit as st

__all__ = ["reap_expired_sessions", "release_freed_memory", "watch_sessions"]

_LOGGER = logging.getLogger(__name__)
_TRAILING_RELEASES = 2
_STARTED = threading.Event()
_START_LOCK = threading.Lock()


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None on a C library without it (musl, macOS, Windows)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 64 * 1024
"""Blocks this large or larger get pages of their own from glibc, returned whole when freed."""
ARENA_MAX = 2
"""glibc heaps ("arenas") the server's threads share."""


def tune_allocator() -> bool:
    """Make glibc return what a session freed (True when it could).

    glibc's defaults suit a process that keeps what it allocates: it raises its threshold for
    giving a large block pages of its own each time such a block is freed (up to 32 MB), so a
    chat's large strings and buffers land in its heaps, where one small survivor keeps a page;
    and every thread that allocates may get a heap of its own (8 per core), each keeping freed
    memory. A fixed threshold and two heaps let a server that served six large chats shrink
    back when they left. An operator who set ``MALLOC_MMAP_THRESHOLD_`` or
    ``MALLOC_ARENA_MAX`` keeps their choice.
    """
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt: Callable[[int, int], int] = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return False
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    if "MALLOC_ARENA_MAX" not in os.environ:
        mallopt(_M_ARENA_MAX, ARENA_MAX)
    return True


def release_freed_memory() -> None:
    """Drop the engine's memos of released chats (and the per-text counts when no session is
    left), collect garbage (cycles included), then return the allocator's free pages to the
    system where the C library allows it."""
    from ctxlab.tokens import compact_shared_counters
    from ctxlab.validate import forget_kept

    forget_kept()
    compact_shared_counters(forget_texts=_sessions_left() == 0)
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _sessions_left() -> int | None:
    """Sessions the server holds (connected or kept for a reconnect), None when unknown."""
    try:
        from streamlit.runtime import Runtime
    except ImportError:  # pragma: no cover - streamlit ships it
        return None
    if not Runtime.exists():
        return None
    count = getattr(getattr(Runtime.instance(), "_session_mgr", None), "num_sessions", None)
    try:
        return int(count()) if callable(count) else None
    except Exception:  # a renamed internal: keep the counts rather than guess
        return None


def _session_store() -> tuple[Any, Any] | None:
    """Streamlit's store of disconnected sessions and the server's event loop, or None."""
    try:
        from streamlit.runtime import Runtime
    except ImportError:  # pragma: no cover - streamlit ships it
        return None
    if not Runtime.exists():
        return None
    runtime = Runtime.instance()
    manager = getattr(runtime, "_session_mgr", None)
    storage = getattr(manager, "_session_storage", None)
    cache = getattr(storage, "_cache", None)
    loop = getattr(getattr(runtime, "_async_objs", None), "eventloop", None)
    if not callable(getattr(cache, "expire", None)) or loop is None:
        return None
    return cache, loop


def _reap(cache: Any) -> int:
    """On the event loop (the only thread touching the store): drop and shut down the expired
    sessions, as Streamlit's ``close_session`` does for a stored one."""
    removed = cache.expire()
    for _, info in removed:
        session = getattr(info, "session", None)
        if session is not None:
            session.shutdown()
            # The server's send loop keeps the last session it served in a local variable
            # until it serves another: a shut-down session's state must not hold its chat.
            state = getattr(session, "session_state", None)
            clear = getattr(state, "clear", None)
            if callable(clear):
                clear()
            # SessionState.clear() empties the widgets' values but not their metadata, whose
            # callbacks and callback arguments (a button's on_click args hold the page's
            # Workspace, its functions the page's globals) keep the session's chat alive.
            widgets = getattr(state, "_new_widget_state", None)
            metadata = getattr(widgets, "widget_metadata", None)
            if isinstance(metadata, dict):
                metadata.clear()
            # The session's fragments are closures over the page's globals (its Workspace).
            fragments = getattr(session, "_fragment_storage", None)
            for forget in ("clear", "clear_outside_wrappers"):
                method = getattr(fragments, forget, None)
                if callable(method):
                    method()
    return len(removed)


def reap_expired_sessions(timeout_s: float = 30.0) -> int:
    """Drop and shut down the disconnected sessions whose TTL has passed; how many."""
    found = _session_store()
    if found is None:
        return 0
    cache, loop = found
    done: concurrent.futures.Future[int] = concurrent.futures.Future()

    def on_loop() -> None:
        try:
            done.set_result(_reap(cache))
        except Exception as exc:
            done.set_exception(exc)

    try:
        loop.call_soon_threadsafe(on_loop)
    except RuntimeError:  # the loop is closed: the server is stopping
        return 0
    return done.result(timeout_s)


def _check_interval_s() -> float:
    try:
        ttl = float(st.get_option("server.disconnectedSessionTTL"))
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - option always exists
        ttl = 120.0
    return min(30.0, max(1.0, ttl / 4))


def _watch(interval_s: float) -> None:
    trailing = 0
    while True:
        time.sleep(interval_s)
        try:
            if reap_expired_sessions():
                release_freed_memory()
                trailing = _TRAILING_RELEASES
            elif trailing:
                # What the reaped sessions' threads and the send loop let go of after the
                # reap is returned too.
                trailing -= 1
                release_freed_memory()
        except Exception:  # never let the watcher die: memory would only stay longer
            _LOGGER.exception("releasing the memory of sessions that left failed")


def watch_sessions() -> None:
    """Start this server's watcher thread (once per process; nothing outside a server, e.g.
    under AppTest)."""
    if _STARTED.is_set() or _session_store() is None:
        return
    with _START_LOCK:
        if _STARTED.is_set():
            return
        tune_allocator()
        thread = threading.Thread(
            target=_watch, args=(_check_interval_s(),), name="ctxlab-release", daemon=True
        )
        thread.start()
        _STARTED.set()
