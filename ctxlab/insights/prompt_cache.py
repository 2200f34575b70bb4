"""Prompt caching: how much of each call a provider's prompt cache can serve, and bills as cached.

Providers cache prompts by exact prefix. :func:`cacheable_prefix` compares two calls message by
message in the form sent; :func:`prefix_between` answers the same for a replay's calls described
as :class:`~ctxlab.strategies.base.Projection` (chat positions), in O(1) per call, so a replay of
every turn stays linear; :func:`cached_input_tokens` applies OpenAI's billing rule.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.counted import CountedChat
from ctxlab.model import Message
from ctxlab.strategies.base import Projection

if TYPE_CHECKING:
    from ctxlab.tokens import TokenCounter

__all__ = [
    "CacheStep",
    "Context",
    "cache_series",
    "cacheable_prefix",
    "cached_input_tokens",
    "prefix_between",
    "sent_form",
]


def sent_form(m: Message) -> tuple[object, ...]:
    """What a provider receives of ``m`` (ids and ctxlab's own fields aside). :func:`_sent_at`
    builds the same tuple for a stand-in without building the stand-in."""
    return (m.role, m.content, m.name, m.tool_calls, m.tool_call_id)


def _common_prefix_length(previous: Sequence[Message], following: Sequence[Message]) -> int:
    limit = min(len(previous), len(following))
    prev, nxt = tuple(previous[:limit]), tuple(following[:limit])
    if prev == nxt:  # the usual case between two calls: C-speed identity comparisons
        return limit
    k = 0
    while k < limit and (prev[k] is nxt[k] or sent_form(prev[k]) == sent_form(nxt[k])):
        k += 1
    return k


def cacheable_prefix(
    previous_call: Sequence[Message], next_call: Sequence[Message], counter: TokenCounter
) -> int:
    """Tokens at the start of ``next_call`` identical to the start of ``previous_call``.

    Providers cache prompts by exact prefix, so this is the most a prompt cache can serve. The
    comparison is by whole messages in the form sent (role, content, name, tool calls): the first
    message that differs ends the prefix. Zero when either call is empty.
    """
    k = _common_prefix_length(previous_call, next_call)
    return sum(counter.counts(next_call[:k])) if k else 0


def cached_input_tokens(prefix_tokens: int, provider: str = "openai") -> int:
    """The part of a cacheable prefix a provider actually bills as cached.

    OpenAI caches prompts of at least 1,024 tokens, in increments of 128 tokens.
    """
    if provider != "openai":
        return prefix_tokens
    if prefix_tokens < 1024:
        return 0
    return prefix_tokens - (prefix_tokens - 1024) % 128


@dataclass(frozen=True, slots=True)
class CacheStep:
    """One call of a replay: tokens sent, the cacheable prefix and the part billed as cached."""

    call: int
    tokens_sent: int
    prefix_tokens: int
    cached_tokens: int

    @property
    def breaks_cache(self) -> bool:
        """True when less than half of what the previous call sent could be served from cache."""
        return self.call > 1 and self.cached_tokens == 0


def cache_series(contexts: Sequence[Sequence[Message]], counter: TokenCounter) -> list[CacheStep]:
    """:class:`CacheStep` for each call of a replay, given the context sent at each call."""
    steps: list[CacheStep] = []
    previous: Sequence[Message] = ()
    for number, context in enumerate(contexts, start=1):
        prefix = cacheable_prefix(previous, context, counter) if previous else 0
        steps.append(
            CacheStep(number, counter.count_messages(context), prefix, cached_input_tokens(prefix))
        )
        previous = context
    return steps


Context = Projection | tuple[Message, ...]


def _element(p: Projection, instructions: tuple[int, ...], j: int) -> int:
    """The chat position of the ``j``-th message a described projection sends."""
    assert p.start is not None
    return instructions[j] if j < p.pinned else p.start + j - p.pinned


def _offset(p: Projection, instructions: tuple[int, ...], position: int) -> int | None:
    """Where chat ``position`` stands in a described projection's context, if it is sent."""
    assert p.start is not None
    if p.start <= position < p.end:
        return p.pinned + position - p.start
    head = instructions[: p.pinned]
    k = bisect_left(head, position)
    return k if k < len(head) and head[k] == position else None


def _projected_prefix(chat: CountedChat, previous: Projection, current: Projection) -> int:
    """Tokens of the longest common prefix of two described projections of one chat.

    Both contexts are chat positions (pinned instructions, then a run) with the first few of a
    shared list of edit sites replaced; the walk only visits the pinned heads (a message or
    two), so a whole replay stays linear.
    """
    assert previous.start is not None and current.start is not None
    start, pinned = current.start, current.pinned
    # only pinned heads are looked up in the instruction positions
    instructions = chat.instruction_positions() if previous.pinned or pinned else ()
    if previous.pinned == pinned and previous.start == start and previous.edited == current.edited:
        # The common step (the same pinned head, the same front, no new stand-in): the shorter
        # context is a prefix of the longer. What the general walk below finds in this case.
        run_end = min(previous.end, current.end)
        if not pinned and (current.edits is None or not current.edited):
            return chat.prefix[run_end] - chat.prefix[start]
        return _tokens_of_first(chat, current, instructions, pinned + run_end - start)
    edits = current.edits
    if previous.pinned == pinned and edits is None and previous.edits is None:
        # A moved front (window-drop, sliding-window): the same pinned head, then runs from
        # different positions, which end the prefix at once unless their first messages read
        # the same (then the walk below goes on).
        limit = pinned + min(previous.end - previous.start, current.end - start)
        if pinned < limit:
            before, after = chat.messages[previous.start], chat.messages[start]
            if before is not after and sent_form(before) != sent_form(after):
                return _tokens_of_first(chat, current, instructions, pinned)
    if not pinned and not previous.pinned and previous.start == start and previous.edits is edits:
        # The same front, one context with more stand-ins (clear-tool-results clearing one more
        # result): both agree up to the first site one replaced and the other did not, and
        # differ there unless the original already reads as the stand-in (the walk below).
        assert edits is not None  # edited differs, so one of them has stand-ins
        site = edits.positions[min(previous.edited, current.edited)]
        m = site - start
        inside = 0 <= m < min(previous.end, current.end) - start
        if inside and chat.messages[site].content != edits.content:
            return _tokens_of_first(chat, current, instructions, m)
    length_p = previous.pinned + previous.end - previous.start
    length_c = current.pinned + current.end - current.start
    limit = min(length_p, length_c)
    heads = max(previous.pinned, current.pinned)
    m = 0
    while m < min(heads, limit) and _element(previous, instructions, m) == _element(
        current, instructions, m
    ):
        m += 1
    if m == min(heads, limit) and m < limit:
        # both runs from here on: aligned either everywhere or nowhere
        aligned = previous.start - previous.pinned == current.start - current.pinned
        m = limit if aligned else m
    edits = current.edits
    if edits is not None and previous.edited != current.edited:
        # the first edit site one context replaced and the other did not
        site = edits.positions[min(previous.edited, current.edited)]
        for ctx in (previous, current):
            at = _offset(ctx, instructions, site)
            if at is not None:
                m = min(m, at)
    # Different positions can still hold identical messages (providers cache by content): go on
    # while they match. A moved front differs at once, so this is O(1) in practice.
    while m < limit and _sent_at(chat, previous, instructions, m) == _sent_at(
        chat, current, instructions, m
    ):
        m += 1
    return _tokens_of_first(chat, current, instructions, m)


def _sent_at(
    chat: CountedChat, p: Projection, instructions: tuple[int, ...], j: int
) -> tuple[object, ...]:
    """The ``j``-th message of a described projection in the form sent (:func:`sent_form`;
    a stand-in's is the original's with the stand-in content, built without copying the
    message)."""
    position = _element(p, instructions, j)
    message = chat.messages[position]
    content = message.content
    edits = p.edits
    if edits is not None and p.edited:
        k = bisect_left(edits.positions, position, 0, p.edited)
        if k < p.edited and edits.positions[k] == position:
            content = edits.content
    return (message.role, content, message.name, message.tool_calls, message.tool_call_id)


def _tokens_of_first(
    chat: CountedChat, p: Projection, instructions: tuple[int, ...], m: int
) -> int:
    """Tokens of the first ``m`` messages of a described projection (no reply priming)."""
    assert p.start is not None
    head = min(m, p.pinned)
    tokens = chat.instruction_prefix()[1][instructions[head - 1] + 1] if head else 0
    run_end = p.start + max(m - p.pinned, 0)
    tokens += chat.prefix[run_end] - chat.prefix[p.start]
    if p.edits is not None and p.edited:
        positions = p.edits.positions
        lo = bisect_left(positions, p.start, 0, p.edited)
        hi = bisect_left(positions, run_end, 0, p.edited)
        tokens -= p.edits.saved_prefix[hi] - p.edits.saved_prefix[lo]
    return tokens


def prefix_between(
    chat: CountedChat, counter: TokenCounter, previous: Context, current: Context
) -> int | None:
    """Cacheable prefix (tokens) between two calls of a replay of ``chat``.

    A call is either the exact context (a tuple of messages) or a :class:`Projection` that
    describes it by chat positions; None when one is described and the other not.
    """
    if isinstance(previous, tuple) and isinstance(current, tuple):
        return cacheable_prefix(previous, current, counter)
    if isinstance(previous, Projection) and isinstance(current, Projection):
        return _projected_prefix(chat, previous, current)
    return None
