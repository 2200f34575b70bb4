"""What the Anthropic policies share: the Claude models of ctxlab's catalog, Claude Code's
rough token estimate, the conversation as a summarizer receives it, and request JSON.

The four Anthropic policies (``claude-code-auto-compact``, ``anthropic-clear-tool-uses``,
``anthropic-clear-thinking``, ``anthropic-compact``) run on closed code: Claude Code's binary
and Anthropic's API. What is reproduced is what the research read from the binary's strings
(Claude Code 2.1.197) or the API reference (``/work/shared/research/policies.md`` sections
2a-2d); everything else is listed in each policy's ``unpublished``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.catalog import CATALOG, ModelInfo
from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role
from ctxlab.redaction import REDACTED, merge_counts, redact_patterns

__all__ = [
    "CLAUDE_MODELS",
    "DEFAULT_CLAUDE_MODEL",
    "ConversationText",
    "claude_model",
    "conversation_for_summarizer",
    "pretty_json",
    "rough_message_tokens",
    "rough_tokens",
]

CLAUDE_MODELS: tuple[str, ...] = tuple(m.name for m in CATALOG.models if m.provider == "anthropic")
"""The Claude models of ctxlab's catalog, in catalog order (the pickers' choices)."""

DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-5"


def claude_model(name: str, parameter: str = "model") -> ModelInfo:
    """The catalog entry of the Claude model ``name``; ParameterError naming ``parameter``."""
    info = CATALOG.get(name)
    if info is None or info.provider != "anthropic":
        known = ", ".join(CLAUDE_MODELS)
        raise ParameterError(f"Model ({parameter}) must be a Claude model of the catalog ({known})")
    return info


# Claude Code's rough estimate (research 2d, "Count"): text at 4 characters a token, JSON at 2,
# an image or a document at a flat 2,000. Its rounding is JavaScript's Math.round.
_IMAGE_TOKENS = 2000
_PLACEHOLDER_LINE = re.compile(r"^\[(?:image|document)\]$", re.MULTILINE)


def _js_round(value: float) -> int:
    """``Math.round``: halves round up (Python's ``round`` rounds them to even)."""
    return int(value + 0.5)


def rough_tokens(text: str, chars_per_token: int = 4) -> int:
    """``Math.round(text.length / chars_per_token)``, with each ``[image]`` / ``[document]``
    placeholder line ctxlab's readers leave for a media block counted as 2,000 tokens."""
    placeholders = _PLACEHOLDER_LINE.findall(text)
    if not placeholders:
        return _js_round(len(text) / chars_per_token)
    rest = len(text) - sum(len(p) for p in placeholders)
    return _js_round(rest / chars_per_token) + _IMAGE_TOKENS * len(placeholders)


def rough_message_tokens(message: Message) -> int:
    """Claude Code's estimate of one message: its text at chars/4, each tool call's input
    (JSON) at chars/2 with its name at chars/4."""
    total = rough_tokens(message.content)
    for call in message.tool_calls:
        total += rough_tokens(call.name) + rough_tokens(call.arguments, 2)
    return total


class ConversationText:
    """The conversation as text messages for ctxlab's summarizers (which speak Chat
    Completions): tool calls and results become text, tool results travel as user messages,
    as they do in the Anthropic Messages API (a ``tool_result`` block in a user turn)."""

    def __init__(self, *, redact_tool_content: bool, redact_secrets: bool) -> None:
        self.redact_tool_content = redact_tool_content
        self.redact_secrets = redact_secrets
        self.redactions: dict[str, int] = {}

    def _mask(self, text: str) -> str:
        if not self.redact_secrets:
            return text
        masked = redact_patterns(text)
        self.redactions = merge_counts(self.redactions, masked.counts)
        return masked.text

    def message(self, message: Message, names: Mapping[str | None, str]) -> dict[str, str]:
        """``{"role", "content"}`` of one message."""
        if message.role.is_tool_result:
            name = names.get(message.tool_call_id) or message.name or "tool"
            body = REDACTED if self.redact_tool_content else message.content
            return {"role": "user", "content": self._mask(f"[tool_result {name}]\n{body}")}
        parts = [message.content] if message.content else []
        for call in message.tool_calls:
            arguments = REDACTED if self.redact_tool_content else call.arguments
            parts.append(f"[tool_use {call.name}] {arguments}")
        role = "assistant" if message.role is Role.ASSISTANT else message.role.value
        if role not in ("user", "assistant", "system"):
            role = "system"  # a developer message: the system slot of the summarizer call
        return {"role": role, "content": self._mask("\n".join(parts))}


def conversation_for_summarizer(
    messages: Sequence[Message], *, redact_tool_content: bool, redact_secrets: bool
) -> tuple[tuple[dict[str, str], ...], dict[str, int]]:
    """Every message of ``messages`` as text messages (see :class:`ConversationText`), and
    how many spans each redaction rule masked."""
    names: dict[str | None, str] = {}
    for message in messages:
        for call in message.tool_calls:
            names[call.id] = call.name
    text = ConversationText(redact_tool_content=redact_tool_content, redact_secrets=redact_secrets)
    out = tuple(text.message(m, names) for m in messages)
    if redact_tool_content:
        count = sum(1 for m in messages if m.is_tool_result)
        if count:  # counted as ctxlab's transcript counts role redaction
            text.redactions = merge_counts(text.redactions, {"role:tool": count})
    return out, text.redactions


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON, as a request body is shown."""
    return json.dumps(value, indent=2, ensure_ascii=False)
