"""The provider's billed numbers of one call, in every provider's spelling.

Read into :class:`~ctxlab.formats._values.CallUsage`:

* Anthropic (Messages responses, Claude Code ``message.usage``): ``input_tokens`` (uncached),
  ``cache_read_input_tokens``, ``cache_creation_input_tokens`` (of which
  ``cache_creation.ephemeral_1h_input_tokens`` were 1-hour writes), ``output_tokens``;
* OpenAI Chat Completions: ``prompt_tokens`` (cached and written included),
  ``completion_tokens``, ``prompt_tokens_details.cached_tokens`` and
  ``prompt_tokens_details.cache_write_tokens`` (GPT-5.6 and later bill cache writes);
* OpenAI Responses and Codex ``token_count``: ``input_tokens`` (cached and written included),
  ``output_tokens``, ``input_tokens_details.cached_tokens`` (Codex: ``cached_input_tokens``)
  and ``input_tokens_details.cache_write_tokens``;
* Gemini ``usageMetadata``: ``promptTokenCount``, ``candidatesTokenCount`` (+
  ``thoughtsTokenCount``), ``cachedContentTokenCount``.
"""

from __future__ import annotations

from typing import Any

from ctxlab.formats._common import _fail, _kind
from ctxlab.formats._values import CallUsage


def _int(d: dict[str, Any], key: str, where: str) -> int:
    value = d.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        _fail(f"{where}.{key}", f"expected a token count (a whole number >= 0), got {_kind(value)}")
    return value


def _nested(d: dict[str, Any], outer: str, key: str, where: str) -> int:
    inner = d.get(outer)
    return _int(inner, key, f"{where}.{outer}") if isinstance(inner, dict) else 0


def read_usage(value: object, where: str, message_id: str, provider: str) -> tuple[CallUsage, ...]:
    """The usage object at ``where`` for the call that produced ``message_id`` (``()`` if none).

    ``provider`` (``anthropic`` or ``openai``) says whether ``input_tokens`` includes the cache.
    """
    if value is None:
        return ()
    if not isinstance(value, dict):
        _fail(where, f"expected a usage object, got {_kind(value)}")
    if "prompt_tokens" in value:  # Chat Completions
        return (
            CallUsage(
                message_id,
                _int(value, "prompt_tokens", where),
                _int(value, "completion_tokens", where),
                _nested(value, "prompt_tokens_details", "cached_tokens", where),
                _nested(value, "prompt_tokens_details", "cache_write_tokens", where),
                "openai",
            ),
        )
    if "promptTokenCount" in value:  # Gemini
        return (
            CallUsage(
                message_id,
                _int(value, "promptTokenCount", where),
                _int(value, "candidatesTokenCount", where)
                + _int(value, "thoughtsTokenCount", where),
                _int(value, "cachedContentTokenCount", where),
                0,
                "openai",
            ),
        )
    if provider == "anthropic":
        return (
            CallUsage(
                message_id,
                _int(value, "input_tokens", where),
                _int(value, "output_tokens", where),
                _int(value, "cache_read_input_tokens", where),
                _int(value, "cache_creation_input_tokens", where),
                "anthropic",
                _nested(value, "cache_creation", "ephemeral_1h_input_tokens", where),
            ),
        )
    cached = _nested(value, "input_tokens_details", "cached_tokens", where) or _int(
        value, "cached_input_tokens", where
    )
    return (
        CallUsage(
            message_id,
            _int(value, "input_tokens", where),
            _int(value, "output_tokens", where),
            cached,
            _nested(value, "input_tokens_details", "cache_write_tokens", where),
            "openai",
        ),
    )
