"""Token disagreement: the real tokenizer against the chars/4 heuristic, message by message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.insights.facts import searchable_text
from ctxlab.model import Message, Role

if TYPE_CHECKING:
    from ctxlab.tokens import TokenCounter

__all__ = ["TokenDisagreement", "token_disagreement"]


@dataclass(frozen=True, slots=True)
class TokenDisagreement:
    """One message counted three ways."""

    message_id: str
    role: Role
    exact: int  # the real tokenizer, chat-format overhead included
    heuristic: int  # characters / 4 of the text, as most libraries default to
    overhead: int  # chat-format tokens (per-message, name, tool-call framing)

    @property
    def error(self) -> int:
        """Heuristic minus exact: negative means a chars/4 budget would trim too late."""
        return self.heuristic - self.exact


def token_disagreement(
    messages: Sequence[Message], counter: TokenCounter
) -> list[TokenDisagreement]:
    """Per message: exact count, the chars/4 heuristic of its text, and the format overhead."""
    exact = counter.counts(messages)
    out: list[TokenDisagreement] = []
    for message, n in zip(messages, exact, strict=True):
        text = searchable_text(message)
        heuristic = -(-len(text) // 4)
        text_tokens = counter.count_text(message.content) + sum(
            counter.count_text(c.name) + counter.count_text(c.arguments) for c in message.tool_calls
        )
        out.append(TokenDisagreement(message.id, message.role, n, heuristic, n - text_tokens))
    return out
