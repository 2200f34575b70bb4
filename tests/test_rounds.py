"""Rounds as DESIGN defines them: a round starts at each user message; tool results stay with
their calling assistant message; messages before the first user message are round 0."""

from __future__ import annotations

import itertools

from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given

from ctxlab.model import Message
from ctxlab.rounds import round_of_each_message, round_starts, split_rounds


def spans(messages: list[Message]) -> list[tuple[int, int, bool]]:
    return [(r.start, r.stop, r.is_preamble) for r in split_rounds(messages)]


def test_empty_chat_has_no_rounds() -> None:
    assert split_rounds([]) == []
    assert round_starts([]) == []


def test_each_user_message_starts_a_round_and_the_system_prompt_is_a_preamble() -> None:
    chat = [system("be brief"), user("hi", "u1"), assistant("hello", "a1"), user("bye", "u2")]
    assert spans(chat) == [(0, 1, True), (1, 3, False), (3, 4, False)]


def test_chat_starting_with_a_user_message_has_no_preamble() -> None:
    chat = [user("hi", "u1"), assistant("hello", "a1")]
    assert spans(chat) == [(0, 2, False)]


def test_messages_before_the_first_user_message_form_round_zero() -> None:
    chat = [system("s"), assistant("greeting", "a0"), user("hi", "u1")]
    assert spans(chat) == [(0, 2, True), (2, 3, False)]


def test_tool_calls_and_results_share_the_round_of_the_user_turn() -> None:
    chat = [
        user("weather?", "u1"),
        assistant("", "a1", call("c1", "get_weather")),
        tool("sunny", "t1", "c1"),
        assistant("it is sunny", "a2"),
        user("thanks", "u2"),
    ]
    assert spans(chat) == [(0, 4, False), (4, 5, False)]


def test_a_user_message_between_a_call_and_its_result_does_not_start_a_round() -> None:
    chat = [
        user("q", "u1"),
        assistant("", "a1", call("c1")),
        user("hurry up", "u2"),
        tool("result", "t1", "c1"),
        assistant("answer", "a2"),
        user("next", "u3"),
    ]
    assert spans(chat) == [(0, 5, False), (5, 6, False)]
    assert round_of_each_message(chat) == [0, 0, 0, 0, 0, 1]


@given(chats(max_turns=8))
def test_rounds_tile_the_chat_exactly(chat: tuple[Message, ...]) -> None:
    rounds = split_rounds(chat)
    if not chat:
        assert rounds == []
        return
    assert rounds[0].start == 0 and rounds[-1].stop == len(chat)
    for k, (a, b) in enumerate(itertools.pairwise(rounds)):
        assert a.stop == b.start and len(a) > 0 and a.index == k
    assert sum(len(r) for r in rounds) == len(chat)
    assert len(round_of_each_message(chat)) == len(chat)


@given(chats(max_turns=8))
def test_every_round_after_the_preamble_starts_at_a_user_message(
    chat: tuple[Message, ...],
) -> None:
    for r in split_rounds(chat):
        if not r.is_preamble:
            assert chat[r.start].role.value == "user"
    user_count = sum(m.role.value == "user" for m in chat)
    preamble = bool(chat) and chat[0].role.value != "user"
    assert len(split_rounds(chat)) == user_count + preamble


@given(chats(max_turns=8))
def test_a_tool_result_is_in_the_round_of_its_call(chat: tuple[Message, ...]) -> None:
    round_of = round_of_each_message(chat)
    caller = {c.id: i for i, m in enumerate(chat) for c in m.tool_calls}
    for i, m in enumerate(chat):
        if m.tool_call_id is not None:
            assert round_of[i] == round_of[caller[m.tool_call_id]]
