"""CountedChat: prefix sums and round starts agree with direct counting."""

from __future__ import annotations

import threading

import pytest
from chatgen import chats
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.counted import CountedChat, wait_for_prefetch
from ctxlab.model import Message, Role
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


def _messy_chat(kinds: list[str]) -> tuple[Message, ...]:
    """Messages of the given kinds in any order: tool results far from their calls, user
    messages between calls and results (which withdraw those users' round starts)."""
    from ctxlab.model import Role, ToolCall

    out = []
    for i, kind in enumerate(kinds):
        if kind == "caller":
            out.append(
                Message(Role.ASSISTANT, "", f"m{i}", tool_calls=(ToolCall(f"c{i}", "f", "{}"),))
            )
        elif kind == "tool":
            out.append(Message(Role.TOOL, f"result {i}", f"m{i}", tool_call_id=f"c{i}"))
        else:
            out.append(Message(Role(kind), f"text {i}", f"m{i}"))
    return tuple(out)


@given(
    st.lists(st.sampled_from(["user", "assistant", "caller", "tool", "system"]), max_size=40),
    st.data(),
)
def test_a_head_equals_counting_the_prefix_afresh(kinds: list[str], data: st.DataObject) -> None:
    chat = _messy_chat(kinds)
    counter = get_counter("gpt-4o")
    counted = counter.counted(chat).with_overhead(data.draw(st.integers(0, 50)))
    n = data.draw(st.integers(0, len(chat)))
    head = counted.head(n)
    fresh = counter.counted(chat[:n]).with_overhead(counted.overhead)
    assert head.messages == fresh.messages
    assert head.counts == fresh.counts
    assert head.prefix == fresh.prefix
    assert head.starts == fresh.starts == tuple(round_starts(chat[:n]))
    assert (head.reply_priming, head.overhead, head.total) == (
        fresh.reply_priming,
        fresh.overhead,
        fresh.total,
    )
    assert head.ids == fresh.ids
    # a view of the whole chat's positions, read below n: the same mapping as a fresh dict
    assert dict(head.positions) == dict(fresh.positions)
    for m in chat:
        assert (m.id in head.positions) == (m.id in fresh.positions)
        assert head.positions.get(m.id) == fresh.positions.get(m.id)
    assert len(head.positions) == len(fresh.positions)


def test_a_head_of_a_chat_that_repeats_an_id_builds_its_own_positions() -> None:
    chat = _messy_chat(["user", "assistant", "user", "assistant"])
    chat = (*chat[:3], Message(Role.ASSISTANT, "again", chat[0].id))  # the first id, repeated
    counted = get_counter("gpt-4o").counted(chat)
    head = counted.head(2)
    assert dict(head.positions) == {chat[0].id: 0, chat[1].id: 1}
    assert counted.positions[chat[0].id] == 3  # the whole chat's: the later message


def test_a_head_keeps_the_round_a_later_tool_result_withdraws() -> None:
    # The user message at 4 stands between a call (3) and its result (6): in the whole chat it
    # starts no round; in the first five messages, where the result is not yet, it does.
    chat = _messy_chat(["user", "assistant", "user", "caller", "user", "assistant", "tool"])
    counted = get_counter("gpt-4o").counted(chat)
    assert counted.starts == (0, 2)
    assert counted.head(5).starts == (0, 2, 4) == tuple(round_starts(chat[:5]))
    assert counted.head(7).starts == counted.starts
    assert counted.head(0).starts == ()


def _small_chat() -> CountedChat:
    messages = tuple(Message(Role.USER, f"m{i}", f"id{i}") for i in range(4))
    return CountedChat(messages, (3,) * 4, 3)


def test_a_prefetched_table_is_built_once_and_a_caller_waits_for_it() -> None:
    chat = _small_chat()
    started, release = threading.Event(), threading.Event()
    builds: list[int] = []

    def build(c: CountedChat) -> int:
        builds.append(1)
        started.set()
        release.wait(5)
        return len(c)

    chat.prefetch("n", build)
    assert started.wait(5)
    chat.prefetch("n", build)  # already being built: not scheduled again
    answer: list[int] = []
    asker = threading.Thread(target=lambda: answer.append(chat.derived("n", build)))
    asker.start()
    asker.join(0.2)
    assert asker.is_alive()  # it waits for the background build instead of starting its own
    release.set()
    asker.join(5)
    assert answer == [4]
    assert builds == [1]
    assert wait_for_prefetch(5)
    chat.prefetch("n", build)  # built: nothing to do
    assert builds == [1]


def test_a_failing_prefetch_raises_to_whoever_asks_for_the_table() -> None:
    chat = _small_chat()

    def build(c: CountedChat) -> int:
        raise ValueError("no table for you")

    chat.prefetch("broken", build)
    assert wait_for_prefetch(5)  # a failed build is finished too
    with pytest.raises(ValueError, match="no table for you"):
        chat.derived("broken", build)


def test_wait_for_prefetch_says_when_the_time_ran_out() -> None:
    chat = _small_chat()
    release = threading.Event()
    chat.prefetch("slow", lambda c: release.wait(5))
    assert not wait_for_prefetch(0.05)
    release.set()
    assert wait_for_prefetch(5)
    assert chat.derived("slow", lambda c: False) is True
