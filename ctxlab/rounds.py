"""Rounds: the unit that round-wise strategies keep or drop.

A round starts at each user message and runs to the next one; messages before the first user
message form the first round (a *preamble*, usually the system prompt). A tool result always
travels with the assistant message that called it: a user message that stands between an
assistant's tool calls and their results does not start a round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.model import Message, Role

__all__ = ["Round", "round_of_each_message", "round_starts", "split_rounds"]


@dataclass(frozen=True, slots=True)
class Round:
    """Messages ``start`` (inclusive) to ``stop`` (exclusive) of a chat, numbered from 0."""

    index: int
    start: int
    stop: int
    is_preamble: bool = False

    def __len__(self) -> int:
        return self.stop - self.start

    def slice(self, messages: Sequence[Message]) -> Sequence[Message]:
        return messages[self.start : self.stop]


def round_starts(messages: Sequence[Message]) -> list[int]:
    """Index of the first message of every round, ascending; ``[0, ...]`` for a non-empty chat.

    O(n): a tool result pairs with the nearest assistant message before it that made tool calls
    (real chats reuse call ids, so pairing is by position, as the API does), and any round start
    between the two is withdrawn.
    """
    starts: list[int] = []
    last_caller = -1
    for i, message in enumerate(messages):
        role = message.role
        if role is Role.USER:
            starts.append(i)
        elif role is Role.ASSISTANT:
            if message.tool_calls:
                last_caller = i
        elif role.is_tool_result and last_caller >= 0:
            while starts and starts[-1] > last_caller:
                starts.pop()
    if messages and (not starts or starts[0] != 0):
        starts.insert(0, 0)
    return starts


def split_rounds(messages: Sequence[Message]) -> list[Round]:
    """The rounds of ``messages`` in order; they tile the chat exactly.

    >>> from ctxlab.model import Message, Role
    >>> chat = [Message(Role.SYSTEM, "be brief", "s"), Message(Role.USER, "hi", "u1"),
    ...         Message(Role.ASSISTANT, "hello", "a1"), Message(Role.USER, "bye", "u2")]
    >>> [(r.start, r.stop, r.is_preamble) for r in split_rounds(chat)]
    [(0, 1, True), (1, 3, False), (3, 4, False)]
    """
    starts = round_starts(messages)
    stops = [*starts[1:], len(messages)] if starts else []
    preamble = bool(messages) and messages[0].role is not Role.USER
    return [
        Round(index=k, start=a, stop=b, is_preamble=(k == 0 and preamble))
        for k, (a, b) in enumerate(zip(starts, stops, strict=True))
    ]


def round_of_each_message(messages: Sequence[Message]) -> list[int]:
    """For every message, the index of its round."""
    out: list[int] = []
    for r in split_rounds(messages):
        out.extend([r.index] * len(r))
    return out
