"""LlamaIndex ``ChatMemoryBuffer.get()`` (llama-index-core 0.14.25), decided by its own count.

``llama_index/core/memory/chat_memory_buffer.py``: the whole history is counted as
``len(tokenizer(" ".join(str(m.content) for m in messages)))`` (plus ``initial_token_count``);
while that is over ``token_limit`` and more than one message is left, the oldest message is
dropped, and then every message that now leads while it is an ASSISTANT or TOOL message (a
FUNCTION message is not skipped). If even the last message alone is over the limit, the last
message is returned anyway. Only content is counted: tool calls live in ``additional_kwargs``
and cost nothing there (run-llama/llama_index#21950). The system message is an ordinary
message of the history: it is kept only while it fits with everything after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, ClassVar

from ctxlab.catalog import CATALOG
from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.strategies.base import Decision, TrimResult, check_params, check_whole_numbers, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport
from ctxlab.strategies.frameworks._llamaindex import (
    LLAMAINDEX_TOKENIZER,
    buffer_content,
    llamaindex_tokens,
)

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = ["LlamaIndexChatMemoryBuffer", "buffer_start"]

DEFAULT_TOKEN_LIMIT = 3000
DEFAULT_TOKEN_LIMIT_RATIO = 0.75
ISSUE_21950 = "run-llama/llama_index#21950"
_SKIPPED_AT_START = (Role.ASSISTANT, Role.TOOL)


def _candidates(messages: Sequence[Message]) -> list[int]:
    """The start indices ``get()``'s loop tries, in order: 0, every later message that is not
    ASSISTANT or TOOL, and the last message (tried whatever its role)."""
    n = len(messages)
    if n <= 1:
        return [0] if n else []
    middle = [k for k in range(1, n - 1) if messages[k].role not in _SKIPPED_AT_START]
    return [0, *middle, n - 1]


def buffer_start(messages: Sequence[Message], token_limit: int, initial_token_count: int) -> int:
    """Index of the first message ``ChatMemoryBuffer.get()`` returns (``len`` when empty).

    The loop stops at the first start it tries whose joined content fits, so this is the first
    fitting candidate, or the last message when none fits. Counting the joined text of every
    candidate is quadratic; the joined text of a later start is a suffix of the whole, whose
    count only shrinks as it does, so the first fitting candidate is found by a gallop from an
    estimate (the per-message counts' suffix sums) and a binary search, each step counting the
    exact joined text as LlamaIndex does.
    """
    n = len(messages)
    if n == 0:
        return 0
    contents = [str(buffer_content(m)) for m in messages]
    offsets = [0, *accumulate(len(c) + 1 for c in contents)]
    joined = " ".join(contents)
    candidates = _candidates(messages)
    exact_cache: dict[int, int] = {}

    def fits(j: int) -> bool:
        k = candidates[j]
        if k not in exact_cache:
            exact_cache[k] = llamaindex_tokens(joined[offsets[k] :]) + initial_token_count
        return exact_cache[k] <= token_limit

    per_message = [llamaindex_tokens(c) for c in contents]
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + per_message[i]
    guess = next(
        (j for j, k in enumerate(candidates) if suffix[k] + initial_token_count <= token_limit),
        len(candidates) - 1,
    )
    last = len(candidates) - 1
    if fits(guess):
        # the first fitting candidate is at or before the guess: gallop towards 0
        hi, step = guess, 1
        lo = hi - step
        while lo >= 0 and fits(lo):
            hi, step = lo, step * 2
            lo = hi - step
        lo = max(lo, -1)  # candidates[lo] does not fit (or lo is -1); candidates[hi] fits
    else:
        lo, step = guess, 1
        hi = lo + step
        while hi <= last and not fits(hi):
            lo, step = hi, step * 2
            hi = lo + step
        if hi > last:
            hi = last + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return candidates[hi] if hi <= last else n - 1


@dataclass(frozen=True, slots=True)
class LlamaIndexChatMemoryBuffer(FrameworkStrategy):
    """LlamaIndex's ``ChatMemoryBuffer``: the newest messages whose content fits, never
    starting on an assistant or tool message. A view: the stored history stays full."""

    name: ClassVar[str] = "llamaindex-chat-memory-buffer"
    title: ClassVar[str] = "LlamaIndex · ChatMemoryBuffer"
    summary: ClassVar[str] = (
        "LlamaIndex's ChatMemoryBuffer.get(): the newest messages whose content fits "
        "token_limit (3,000), counted without tool calls."
    )
    explanation: ClassVar[str] = (
        "ChatMemoryBuffer (deprecated in favour of Memory, still widely used) returns the "
        "newest messages whose joined content fits token_limit: 3,000 tokens, or 75% of the "
        "LLM's context window when you pass an llm. It drops the oldest message while over "
        "the limit, and any assistant or tool message that would then lead; if even the last "
        "message is over the limit, it returns that message alone. It counts message content "
        "only, with tiktoken cl100k: tool calls and their arguments cost nothing in its count "
        "(llama_index#21950), so on an agent chat it keeps more than the limit. A system "
        "message is an ordinary history message there: it is dropped like any other."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="LlamaIndex",
        component="ChatMemoryBuffer",
        version="llama-index-core 0.14.25",
        source="llama_index/core/memory/chat_memory_buffer.py (ChatMemoryBuffer.get, "
        "from_defaults); llama_index/core/utils.py (get_tokenizer)",
        evidence="oracle",
        counter="tiktoken cl100k_base over the message contents joined with spaces "
        "(str(content): an assistant message that only calls tools counts as 'None'); tool "
        "calls in additional_kwargs are not counted",
        persists="view",
        unpublished=(
            "The chat is stored as a LlamaIndex user with an OpenAI model stores it "
            "(llama-index-llms-openai from_openai_message_dict): tool calls in "
            "additional_kwargs, content None for an assistant message that only calls tools.",
            "With llm set, the context window is ctxlab's catalog figure for that model "
            "(LlamaIndex reads llm.metadata.context_window, the same figure for OpenAI models).",
        ),
        known_issues=(
            f"{ISSUE_21950}: tool calls (additional_kwargs) are not counted, so the buffer "
            "can send far more than token_limit on an agent chat.",
        ),
    )

    token_limit: int | None = param(
        None,
        label="Token limit (tokens)",
        help="ChatMemoryBuffer's token_limit. Empty: LlamaIndex's default, 3,000, or 75% of "
        "the LLM's context window when an llm is set.",
        min=1,
        step=100,
        unit="tokens",
    )
    llm: str = param(
        "",
        label="LLM (llm)",
        help="The LLM passed to ChatMemoryBuffer.from_defaults(llm=...): the default "
        "token_limit becomes 75% of its context window. Empty: no LLM.",
        choices=("", *CATALOG.names()),
    )
    initial_token_count: int = param(
        0,
        label="Initial token count (tokens)",
        help="get(initial_token_count=...): tokens already used elsewhere in the prompt, "
        "added to the count.",
        min=0,
        step=100,
        unit="tokens",
    )

    def __post_init__(self) -> None:
        check_whole_numbers(self, "token_limit", "initial_token_count", optional=True)
        check_params(self)
        if self.initial_token_count > self.effective_token_limit:
            raise ParameterError(
                f"initial_token_count ({self.initial_token_count:,}) exceeds the token limit "
                f"({self.effective_token_limit:,}): LlamaIndex raises 'Initial token count "
                "exceeds token limit'"
            )

    @property
    def effective_token_limit(self) -> int:
        """``from_defaults``: the given limit, else 75% of the LLM's window, else 3,000."""
        if self.token_limit is not None:
            return self.token_limit
        if self.llm:
            info = CATALOG.get(self.llm)
            if info is None:
                raise ParameterError(f"llm: unknown model {self.llm!r}")
            return int(info.context_window * DEFAULT_TOKEN_LIMIT_RATIO)
        return DEFAULT_TOKEN_LIMIT

    def _limit_words(self) -> str:
        limit = self.effective_token_limit
        if self.token_limit is not None:
            return f"token_limit {limit:,}"
        if self.llm:
            info = CATALOG.get(self.llm)
            window = info.context_window if info is not None else 0
            return f"token_limit {limit:,} (75% of {self.llm}'s {window:,}-token window)"
        return f"token_limit {limit:,} (LlamaIndex's default)"

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int:
        """ChatMemoryBuffer's count of the whole history (plus ``initial_token_count``)."""
        if not messages:
            return self.initial_token_count
        joined = " ".join(str(buffer_content(m)) for m in messages)
        return llamaindex_tokens(joined) + self.initial_token_count

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        limit = self.effective_token_limit
        start = buffer_start(messages, limit, self.initial_token_count)
        kept = tuple(messages[start:])
        decisions = {m.id: Decision.DROPPED for m in messages[:start]}
        decisions.update((m.id, Decision.KEPT) for m in kept)
        warnings: list[str] = []
        if kept and self.estimate(kept, counter) > limit:
            warnings.append(
                f"The last message alone counts {self.estimate(kept, counter):,} tokens in "
                f"LlamaIndex's count, over {self._limit_words()}: ChatMemoryBuffer returns it "
                "anyway, so that the LLM reports the overflow."
            )
        uncounted = sum(1 for m in kept if m.tool_calls)
        if uncounted:
            warnings.append(
                f"{uncounted:,} kept message{'s' if uncounted != 1 else ''} call tools: "
                "ChatMemoryBuffer counts content only, so their tool calls were not counted "
                f"against the limit ({ISSUE_21950})."
            )
        if kept and kept[0].role.is_tool_result:
            warnings.append(
                f"The kept messages start with a {kept[0].role.value} result (id "
                f"{kept[0].id!r}) whose call was dropped: ChatMemoryBuffer skips only "
                "ASSISTANT and TOOL messages at the start."
            )
        return TrimResult(
            messages=kept,
            decisions=decisions,
            tokens_before=counter.count_messages(messages),
            tokens_after=counter.count_messages(kept),
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        limit = self.effective_token_limit
        estimate = self.estimate(messages, counter)
        exact = counter.count_messages(messages)
        fires = estimate > limit and len(messages) > 1
        counted = f"content only, {LLAMAINDEX_TOKENIZER.split(' (')[0]}"
        if any(m.tool_calls for m in messages):
            counted += f"; tool calls not counted, {ISSUE_21950}"
        verb = "Drops the oldest messages" if fires else "Keeps every message"
        text = (
            f"{verb} at {self._limit_words()}: LlamaIndex counts {estimate:,} tokens "
            f"({counted}); the model sees {exact:,}."
        )
        return TriggerReport(
            fires=fires,
            threshold=limit,
            unit="tokens",
            estimate=estimate,
            exact=exact,
            text=text,
            framework="LlamaIndex",
        )

    def config_code(self) -> str:
        args: list[str] = []
        lines = ["from llama_index.core.memory import ChatMemoryBuffer"]
        if self.llm:
            lines.append("from llama_index.llms.openai import OpenAI  # or your LLM class")
            args.append(f'llm=OpenAI(model="{self.llm}")')
        if self.token_limit is not None:
            args.append(f"token_limit={self.token_limit}")
        lines += [
            "",
            f"memory = ChatMemoryBuffer.from_defaults({', '.join(args)})",
            "# memory.put(message) for each message of the chat, then:",
        ]
        if self.initial_token_count:
            lines.append(f"messages = memory.get(initial_token_count={self.initial_token_count})")
        else:
            lines.append("messages = memory.get()")
        return "\n".join(lines) + "\n"
