"""The provider's billed prompt of each call beside ctxlab's count of the same call.

A transcript that records usage (Claude Code ``message.usage``, Codex ``token_count``, a
response's ``usage``) says what each call was billed. The call that produced assistant message
``i`` sent ``messages[:i]`` (plus the tool definitions), so ctxlab's count of that request is
``counted.tokens(0, i)``. The difference is what the transcript does not show or what the
tokenizers disagree on, and the two can be told apart in numbers:

* a **hidden fixed part** (a system prompt, tool schemas the file does not record) costs the
  same on every call: it is the difference at the first call;
* a **tokenizer mismatch** grows with the chat: it is the ratio of the billed growth to the
  counted growth between the first and the last call (1.0 when the tokenizers agree; Anthropic
  models counted with an OpenAI encoding typically give more than 1).

Pure functions over values; the app's Replay page draws :func:`compare_usage`'s rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ctxlab.formats import CallUsage
from ctxlab.model import Message
from ctxlab.tokens import TokenCounter

__all__ = ["CallComparison", "UsageComparison", "compare_usage"]


@dataclasses.dataclass(frozen=True, slots=True)
class CallComparison:
    """One call: the billed prompt and ctxlab's count of the request that produced ``message_id``.

    Attributes:
        index: position of the assistant message the call produced.
        billed_prompt: every input token the provider billed (cached included).
        counted_prompt: ctxlab's count of ``messages[:index]`` as one request (tools included).
        output_tokens: the billed output tokens.
    """

    message_id: str
    index: int
    billed_prompt: int
    counted_prompt: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def difference(self) -> int:
        """Billed minus counted: positive when the provider saw more than ctxlab counts."""
        return self.billed_prompt - self.counted_prompt


@dataclasses.dataclass(frozen=True, slots=True)
class UsageComparison:
    """Every call compared, and the difference explained (see the module docstring).

    Attributes:
        calls: one row per recorded call whose message is in the chat, in chat order.
        hidden_fixed: the difference at the first call (tokens the transcript does not show).
        tokenizer_ratio: billed growth / counted growth from the first to the last call; None
            with fewer than two calls or no growth.
        unmatched: usage entries whose message id is not in the chat.
    """

    calls: tuple[CallComparison, ...]
    hidden_fixed: int | None
    tokenizer_ratio: float | None
    unmatched: tuple[str, ...] = ()

    def summary(self) -> str:
        """One sentence that says which part of the difference is which, in numbers."""
        if not self.calls:
            return "The transcript records no usage for these messages."
        first = self.calls[0]
        parts = [
            f"{len(self.calls)} calls; at the first, the provider billed {first.billed_prompt:,} "
            f"prompt tokens and ctxlab counts {first.counted_prompt:,}: "
            f"{first.difference:+,} tokens the transcript does not show (system prompt, tool "
            "schemas) or counts differently"
        ]
        if self.tokenizer_ratio is not None:
            parts.append(
                f"as the chat grows, the provider counts {self.tokenizer_ratio:.2f} tokens per "
                "token ctxlab counts (1.00 = same tokenizer)"
            )
        return "; ".join(parts) + "."


def compare_usage(
    messages: Sequence[Message], usage: Sequence[CallUsage], counter: TokenCounter
) -> UsageComparison:
    """Compare each recorded call with ctxlab's count of the request that produced it.

    ``counter`` should be the one the budgets use (with the tool definitions, see
    :func:`ctxlab.tool_overhead.with_tools`), so that the counted prompt includes them.
    """
    chat = counter.counted(messages)
    position = {m.id: i for i, m in enumerate(chat.messages)}
    calls: list[CallComparison] = []
    unmatched: list[str] = []
    for u in usage:
        i = position.get(u.message_id)
        if i is None:
            unmatched.append(u.message_id)
            continue
        calls.append(
            CallComparison(
                u.message_id,
                i,
                u.prompt_tokens,
                chat.tokens(0, i),
                u.output_tokens,
                u.cache_read_input_tokens,
                u.cache_creation_input_tokens,
            )
        )
    calls.sort(key=lambda c: c.index)
    hidden = calls[0].difference if calls else None
    ratio = None
    if len(calls) >= 2:
        counted = calls[-1].counted_prompt - calls[0].counted_prompt
        billed = calls[-1].billed_prompt - calls[0].billed_prompt
        ratio = billed / counted if counted > 0 else None
    return UsageComparison(tuple(calls), hidden, ratio, tuple(unmatched))
