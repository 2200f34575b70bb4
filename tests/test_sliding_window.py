"""SlidingWindow against an independent transcription of the seed."""

from __future__ import annotations

from chatgen import chats
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.model import Message
from ctxlab.strategies.base import Decision
from ctxlab.strategies.sliding_window import SlidingWindow
from ctxlab.tokens import get_counter


def seed_oracle(chat: tuple[Message, ...], window: int, trigger_at: int | None) -> list[str]:
    """The seed, transcribed: the trigger must be > window else it is window + 1; when the
    non-system count reaches it, keep only the last `window` non-system messages."""
    trigger = trigger_at if trigger_at is not None and trigger_at > window else window + 1
    permanent = [m.role.value in ("system", "developer") for m in chat]
    others = [m for m, p in zip(chat, permanent, strict=True) if not p]
    if len(others) < trigger:
        return [m.id for m in chat]
    keep = {m.id for m in others[len(others) - window :]} if window else set()
    return [m.id for m, p in zip(chat, permanent, strict=True) if p or m.id in keep]


params = st.tuples(st.integers(0, 12), st.one_of(st.none(), st.integers(0, 20)))


@given(chats(max_turns=7), params)
def test_matches_the_seed_for_every_window_and_trigger(
    chat: tuple[Message, ...], p: tuple[int, int | None]
) -> None:
    window, trigger_at = p
    counter = get_counter("gpt-4o")
    result = SlidingWindow(window, trigger_at).apply(chat, counter)
    assert [m.id for m in result.messages] == seed_oracle(chat, window, trigger_at)
    assert set(result.decisions) == {m.id for m in chat}
    for m in chat:
        if m.role.value == "system":
            assert result.decisions[m.id] is Decision.PINNED
    assert result.tokens_after == counter.count_messages(result.messages)


def test_a_trigger_at_or_below_the_window_is_clamped_to_window_plus_one() -> None:
    assert SlidingWindow(5, 3).trigger == 6
    assert SlidingWindow(5, 5).trigger == 6
    assert SlidingWindow(5, None).trigger == 6
    assert SlidingWindow(5, 9).trigger == 9
