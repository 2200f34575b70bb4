"""What :func:`~ctxlab.formats.detect_format` says about an OpenAI-looking value.

Loading does not need this: the OpenAI and Anthropic readers read content blocks alike. For
display, a message list that uses Anthropic-only blocks is called ``anthropic`` and ctxlab's own
dump is called ``ctxlab``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxlab.formats._messages import _ANTHROPIC_BLOCKS, _OPENAI_PARTS


def refine_openai(value: object) -> str:
    """``anthropic``, ``ctxlab`` or ``openai`` for a value the ``openai`` sniffer accepted."""
    msgs = value.get("messages") if isinstance(value, dict) else value
    if isinstance(msgs, list) and _has_anthropic_blocks(msgs):
        return "anthropic"
    if isinstance(value, dict) and isinstance(msgs, list) and _looks_like_ctxlab(value, msgs):
        return "ctxlab"
    return "openai"


def _has_anthropic_blocks(msgs: Sequence[Any]) -> bool:
    """Whether messages use Anthropic-only blocks before any OpenAI-only marker."""
    for m in msgs:
        if not isinstance(m, dict):
            return False
        if "tool_calls" in m or "function_call" in m or m.get("role") in ("tool", "function"):
            return False
        content = m.get("content")
        if isinstance(content, list):
            for block in content:
                kind = block.get("type") if isinstance(block, dict) else None
                if not isinstance(kind, str):
                    continue
                if kind in _ANTHROPIC_BLOCKS:
                    return True
                if kind in _OPENAI_PARTS:
                    return False
    return False


def _looks_like_ctxlab(doc: dict[Any, Any], msgs: list[Any]) -> bool:
    """ctxlab's dump: only ``messages``, and each message carries a string ``id``."""
    if set(doc) != {"messages"} or not msgs:
        return False
    return all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in msgs[:50])
