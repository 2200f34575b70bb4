"""A delayed prefetch (``CountedChat.prefetch(..., delay_s=)``): it waits, unless someone needs
the table or prefetches it without delay, and it is dropped with a chat released meanwhile."""

from __future__ import annotations

import gc
import threading

from ctxlab.counted import CountedChat, wait_for_prefetch
from ctxlab.model import Message, Role

HOUR = 3_600.0  # a delay no test waits for


def _chat() -> CountedChat:
    messages = tuple(Message(role=Role.USER, content=f"m{i}", id=f"m{i}") for i in range(4))
    return CountedChat(messages, (5, 6, 7, 8), 3)


def test_a_delayed_table_is_built_at_once_when_asked_for_and_only_once() -> None:
    chat = _chat()
    built: list[int] = []

    def build(c: CountedChat) -> int:
        built.append(1)
        return sum(c.counts)

    chat.prefetch("total", build, delay_s=HOUR)
    assert built == []  # waiting: nothing built yet
    assert chat.derived("total", build) == 26  # asked for: started now, and waited for
    assert built == [1]
    chat.prefetch("total", build, delay_s=HOUR)  # built: nothing to do
    assert chat.derived("total", build) == 26
    assert built == [1]


def test_a_prefetch_without_delay_starts_a_waiting_one() -> None:
    chat = _chat()
    started = threading.Event()

    def build(c: CountedChat) -> int:
        started.set()
        return len(c)

    chat.prefetch("n", build, delay_s=HOUR)
    chat.prefetch("n", build)  # the next run: no more waiting
    assert started.wait(60)
    assert wait_for_prefetch(60)
    assert chat.derived("n", lambda c: -1) == 4  # the prefetched table, not a new build


def test_a_chat_released_while_its_prefetch_waits_is_never_built() -> None:
    built: list[int] = []
    chat = _chat()
    chat.prefetch("n", lambda c: built.append(1), delay_s=HOUR)
    del chat
    gc.collect()
    assert wait_for_prefetch(60)  # the dropped job is not waited for (nor its hour)
    assert built == []


def test_an_error_in_a_delayed_build_reaches_whoever_asks() -> None:
    chat = _chat()

    def broken(c: CountedChat) -> int:
        raise ValueError("no table")

    chat.prefetch("bad", broken, delay_s=HOUR)
    try:
        chat.derived("bad", broken)
    except ValueError as exc:
        assert str(exc) == "no table"
    else:  # pragma: no cover - the assertion below explains
        raise AssertionError("the build's error was not raised to the caller")


def test_wait_for_prefetch_can_end_the_delays_first() -> None:
    chat = _chat()
    chat.prefetch("n", len, delay_s=HOUR)
    assert wait_for_prefetch(60, start_delayed=True)  # built now, not in an hour
    assert chat.derived("n", lambda c: -1) == 4
