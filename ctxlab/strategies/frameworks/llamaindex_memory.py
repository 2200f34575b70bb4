"""LlamaIndex ``Memory`` (llama-index-core 0.14.25): the FIFO queue flushed in chunks.

``llama_index/core/memory/memory.py``: every ``aput(message)`` stores the message as ACTIVE and
runs ``_manage_queue``: when the active messages count more than ``token_limit *
chat_history_token_ratio``, the oldest are taken in chunks of at least ``token_flush_size``
tokens, the chunk is extended until the remaining queue starts on a user message, at least
one full turn (a user message and what follows it) stays, and the chunk is archived (status
ARCHIVED) and handed to the memory blocks. ``aget()`` returns the active messages (plus the
memory blocks' content in the system message: ``Memory.from_defaults`` has none, so archived
messages are simply gone from the context). Each message counts the tokens of its text blocks
plus ``len(tokenizer(str(additional_kwargs)))``; ``ToolCallBlock`` and ``CachePoint`` blocks
count nothing.

The chat is put one message at a time, as it grew; the system message is an ordinary message
of the queue (archived like any other).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision, TrimResult, check_params, check_whole_numbers, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._llamaindex import memory_message_tokens

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["LlamaIndexMemory", "memory_active_start"]

DEFAULT_TOKEN_LIMIT = 30000
DEFAULT_FLUSH_SIZE = int(DEFAULT_TOKEN_LIMIT * 0.1)


def _manage_queue(
    roles: Sequence[Role], weights: Sequence[int], start: int, stop: int, limit: float, flush: int
) -> int:
    """One ``Memory._manage_queue`` over the active messages ``[start, stop)``; the new start
    (every message before it archived). Mirrors the source line by line, on indices."""
    # newest first, oldest last (the source's reversed_queue)
    queue = list(range(stop - 1, start - 1, -1))
    if not queue:
        return start
    tokens_to_remove = sum(weights[i] for i in queue) - limit
    while tokens_to_remove > 0:
        if len(queue) <= 1:
            break
        to_flush: list[int] = []
        flushed = 0
        while flushed < flush and queue and len(queue) > 1:
            index = queue.pop()
            to_flush.append(index)
            flushed += weights[index]
        if not queue and to_flush:
            queue.append(to_flush.pop())
        if queue:
            # the remaining queue must start on a user message
            while queue and roles[queue[-1]] is not Role.USER and len(queue) > 1:
                to_flush.append(queue.pop())
            # keep at least one full conversation turn
            if (not queue or (len(queue) == 1 and roles[queue[0]] is not Role.USER)) and to_flush:
                if queue and roles[queue[0]] is not Role.USER:
                    to_flush.append(queue.pop(0))
                turn_start = next(
                    (
                        i
                        for i in range(len(to_flush) - 1, -1, -1)
                        if roles[to_flush[i]] is Role.USER
                    ),
                    -1,
                )
                if turn_start >= 0:
                    turn = to_flush[turn_start:]
                    to_flush = to_flush[:turn_start]
                    queue = turn[::-1] + queue
        # archive_oldest_messages(n=len(to_flush)): the oldest active messages
        start += len(to_flush)
        tokens_to_remove = sum(weights[i] for i in queue) - limit
        if not to_flush:
            break
    return start


def memory_active_start(
    messages: Sequence[Message],
    token_limit: int,
    chat_history_token_ratio: float,
    token_flush_size: int,
) -> int:
    """Index of the first message still ACTIVE after every message was ``aput`` in order."""
    roles = [m.role for m in messages]
    weights = [memory_message_tokens(m) for m in messages]
    limit = token_limit * chat_history_token_ratio
    start = 0
    active_tokens = 0
    for stop in range(1, len(messages) + 1):
        active_tokens += weights[stop - 1]
        if active_tokens > limit:  # _manage_queue does nothing otherwise
            new_start = _manage_queue(roles, weights, start, stop, limit, token_flush_size)
            active_tokens -= sum(weights[start:new_start])
            start = new_start
    return start


@dataclass(frozen=True, slots=True)
class LlamaIndexMemory(FrameworkStrategy):
    """LlamaIndex's ``Memory``: the active queue flushed to the archive in chunks, starting
    on a user message. Rewrites its stored queue (state)."""

    name: ClassVar[str] = "llamaindex-memory"
    title: ClassVar[str] = "LlamaIndex · Memory"
    summary: ClassVar[str] = (
        "LlamaIndex's Memory: past 70% of token_limit (21,000 of 30,000 tokens), the oldest "
        "messages are archived in chunks of 3,000 tokens."
    )
    explanation: ClassVar[str] = (
        "Memory (LlamaIndex's recommended memory) keeps a FIFO queue of messages in a SQL "
        "store. Each message put checks the queue: over token_limit × "
        "chat_history_token_ratio (30,000 × 0.7 = 21,000 tokens), the oldest messages are "
        "archived in chunks of at least token_flush_size (3,000) tokens, the queue is made to "
        "start on a user message, and at least one full turn stays. Archived messages go to "
        "the memory blocks (fact extraction, vector memory, static text); Memory.from_defaults "
        "has none, so they are simply gone from the context. It counts text and "
        "str(additional_kwargs) with tiktoken cl100k, so tool calls count as their Python repr."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="LlamaIndex",
        component="Memory",
        version="llama-index-core 0.14.25",
        source="llama_index/core/memory/memory.py (Memory.from_defaults, aput, "
        "_manage_queue, aget, _estimate_token_count)",
        evidence="oracle",
        counter="tiktoken cl100k_base per message: its text blocks plus "
        "str(additional_kwargs) (tool calls as the repr of the OpenAI dicts); ToolCallBlock "
        "and CachePoint blocks count nothing",
        persists="state",
        unpublished=(
            "The chat is stored as a LlamaIndex user with an OpenAI model stores it "
            "(llama-index-llms-openai from_openai_message_dict): tool calls and tool_call_id "
            "in additional_kwargs, content None for an assistant message that only calls tools.",
            "Messages are put one at a time (aput), as the chat grew; an agent that puts a "
            "whole step with aput_messages checks the queue once per step instead.",
            "No memory blocks (Memory.from_defaults' default): what is archived is not "
            "summarized or retrieved back into the context.",
        ),
    )

    token_limit: int = param(
        DEFAULT_TOKEN_LIMIT,
        label="Token limit (tokens)",
        help="Memory's token_limit: the whole memory (chat history plus memory blocks).",
        min=1,
        step=1000,
        unit="tokens",
    )
    chat_history_token_ratio: float = param(
        0.7,
        label="Chat history token ratio",
        help="The share of token_limit the active chat history may hold before it is flushed.",
        min=0.0,
        max=1.0,
        step=0.05,
    )
    token_flush_size: int = param(
        DEFAULT_FLUSH_SIZE,
        label="Token flush size (tokens)",
        help="The least tokens flushed to the archive at a time. Over token_limit, LlamaIndex "
        "uses 70% of token_limit; below 1, 10% of it.",
        step=500,
        unit="tokens",
    )

    def __post_init__(self) -> None:
        check_whole_numbers(self, "token_limit", "token_flush_size")
        ratio = self.chat_history_token_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, int | float):
            raise ParameterError(f"chat_history_token_ratio must be a number, got {ratio!r}")
        check_params(self)

    @property
    def effective_flush_size(self) -> int:
        """``from_defaults`` then the model validator: over ``token_limit`` it becomes 70% of
        the limit, below 1 it becomes 10%."""
        flush = self.token_flush_size
        if flush > self.token_limit:
            flush = int(self.token_limit * 0.7)
        if flush < 1:
            flush = int(self.token_limit * 0.1)
        return flush

    @property
    def threshold(self) -> float:
        """``token_limit * chat_history_token_ratio``: the queue is flushed above it."""
        return self.token_limit * self.chat_history_token_ratio

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int:
        """Memory's count of all the messages (the sum of ``_estimate_token_count``)."""
        return sum(memory_message_tokens(m) for m in messages)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        start = memory_active_start(
            messages, self.token_limit, self.chat_history_token_ratio, self.effective_flush_size
        )
        kept = tuple(messages[start:])
        decisions = {m.id: Decision.DROPPED for m in messages[:start]}
        decisions.update((m.id, Decision.KEPT) for m in kept)
        warnings: list[str] = []
        active = self.estimate(kept, counter)
        if active > self.threshold:
            warnings.append(
                f"The active queue still counts {active:,} tokens in LlamaIndex's count, over "
                f"{self._threshold_words()}: Memory keeps at least one full turn (a user "
                "message and what follows it)."
            )
        if kept and kept[0].role is not Role.USER and start:
            warnings.append(
                f"The active queue starts with a {kept[0].role.value} message (id "
                f"{kept[0].id!r}): no user message was left to start it."
            )
        return TrimResult(
            messages=kept,
            decisions=decisions,
            tokens_before=counter.count_messages(messages),
            tokens_after=counter.count_messages(kept),
            replace=True,
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def _threshold_words(self) -> str:
        return (
            f"{self.threshold:,.0f} tokens (token_limit {self.token_limit:,} × "
            f"chat_history_token_ratio {self.chat_history_token_ratio:g})"
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        estimate = self.estimate(messages, counter)
        exact = counter.count_messages(messages)
        fires = estimate > self.threshold and len(messages) > 1
        verb = "Flushes" if fires else "Would flush"
        text = (
            f"{verb} above {self._threshold_words()}, in chunks of at least "
            f"{self.effective_flush_size:,}; LlamaIndex counts {estimate:,} tokens on this "
            f"chat (text + str(additional_kwargs), tiktoken cl100k); the model sees {exact:,}."
        )
        return TriggerReport(
            fires=fires,
            threshold=int(self.threshold),
            unit="tokens",
            estimate=estimate,
            exact=exact,
            text=text,
            framework="LlamaIndex",
        )

    def config_code(self) -> str:
        return (
            "from llama_index.core.memory import Memory\n"
            "\n"
            "memory = Memory.from_defaults(\n"
            '    session_id="my_session",\n'
            f"    token_limit={self.token_limit},\n"
            f"    chat_history_token_ratio={self.chat_history_token_ratio!r},\n"
            f"    token_flush_size={self.token_flush_size},\n"
            ")\n"
            "# await memory.aput(message) for each message, as the chat grows, then:\n"
            "messages = await memory.aget()\n"
        )
