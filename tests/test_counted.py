"""CountedChat: prefix sums and round starts agree with direct counting."""

from __future__ import annotations

import pytest
from chatgen import chats
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.model import Message
from ctxlab.rounds import round_of_each_message, round_starts
from ctxlab.tokens import get_counter


@given(chats(max_turns=6), st.data())
def test_tokens_of_any_slice_equal_count_messages(
    chat: tuple[Message, ...], data: st.DataObject
) -> None:
    counter = get_counter("gpt-4o")
    counted = counter.counted(chat)
    assert len(counted) == len(chat)
    assert counted.total == counter.count_messages(chat)
    start = data.draw(st.integers(0, len(chat)))
    stop = data.draw(st.integers(start, len(chat)))
    assert counted.tokens(start, stop) == counter.count_messages(chat[start:stop])
    indices = data.draw(st.lists(st.integers(0, max(len(chat) - 1, 0)), unique=True))
    if chat:
        picked = [chat[i] for i in sorted(indices)]
        assert counted.tokens_of(sorted(indices)) == counter.count_messages(picked)


@given(chats(min_turns=1, max_turns=6), st.data())
def test_rounds_match_the_rounds_module(chat: tuple[Message, ...], data: st.DataObject) -> None:
    counted = get_counter("gpt-4o").counted(chat)
    assert list(counted.starts) == round_starts(chat)
    assert [(r.start, r.stop) for r in counted.rounds()] == [
        (a, b)
        for a, b in zip(round_starts(chat), [*round_starts(chat)[1:], len(chat)], strict=True)
    ]
    of = round_of_each_message(chat)
    i = data.draw(st.integers(0, len(chat) - 1))
    assert counted.round_containing(i) == of[i]
    stop = data.draw(st.integers(0, len(chat)))
    assert counted.rounds_in_prefix(stop) == len(set(of[:stop]))


@given(chats(max_turns=6))
def test_instruction_prefix_counts_system_messages(chat: tuple[Message, ...]) -> None:
    counted = get_counter("gpt-4o").counted(chat)
    count, tokens = counted.instruction_prefix()
    flags = [m.role.is_instruction for m in chat]
    assert count[-1] == sum(flags)
    assert tokens[-1] == sum(c for c, f in zip(counted.counts, flags, strict=True) if f)


def test_an_empty_chat_counts_only_reply_priming() -> None:
    counter = get_counter("gpt-4o")
    counted = counter.counted(())
    assert counted.total == counter.accounting.reply_priming
    assert counted.rounds() == []


def test_positions_map_every_id_to_its_index_once_per_chat() -> None:
    from ctxlab.counted import CountedChat
    from ctxlab.model import Message, Role

    messages = tuple(Message(Role.USER, f"m{i}", f"id-{i}") for i in range(5))
    chat = CountedChat(messages, (1,) * 5, 3)
    assert dict(chat.positions) == {f"id-{i}": i for i in range(5)}
    assert chat.positions is chat.positions  # built once
    with pytest.raises(TypeError):
        chat.positions["id-0"] = 9  # type: ignore[index]
