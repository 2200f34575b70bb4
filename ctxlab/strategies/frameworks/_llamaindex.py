"""What LlamaIndex's memories see of a chat, and how they count it (llama-index-core 0.14.25).

A ctxlab chat becomes the ``ChatMessage`` list a LlamaIndex user with an OpenAI model stores:
``from_openai_message_dict`` of llama-index-llms-openai (the reverse of its
``to_openai_message_dicts``) keeps ``role`` and ``content`` and puts every other field of the
OpenAI message in ``additional_kwargs``: ``tool_calls`` (``id``, ``type``, ``function`` with
``name`` and ``arguments``) on an assistant message, ``tool_call_id`` on a tool result, ``name``
where the message has one, ``function_call`` for the legacy format (a call without an id). An
assistant message that only calls tools has ``content`` None there (the API sends
``"content": null``), so it holds no text block: ``str(message.content)`` is ``"None"``.

The tokenizer is ``llama_index.core.utils.get_tokenizer()``: tiktoken's encoding for
``gpt-3.5-turbo`` (cl100k_base) with ``allowed_special="all"``, so a special token written in a
message (``<|endoftext|>``) is one token there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from ctxlab.encodings import load_encoding
from ctxlab.long_runs import count_tokens
from ctxlab.model import Message, Role
from ctxlab.tokens import get_counter

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "LLAMAINDEX_TOKENIZER",
    "additional_kwargs",
    "buffer_content",
    "llamaindex_tokens",
    "memory_message_tokens",
]

LLAMAINDEX_TOKENIZER = "tiktoken cl100k_base (get_tokenizer(), allowed_special='all')"


@cache
def _encoding() -> tiktoken.Encoding:
    return load_encoding("cl100k_base")


@cache
def _specials() -> re.Pattern[str]:
    names = sorted(_encoding().special_tokens_set, key=len, reverse=True)
    return re.compile("|".join(re.escape(n) for n in names))


def llamaindex_tokens(text: str) -> int:
    """``len(get_tokenizer()(text))`` of llama-index-core: cl100k, special tokens allowed.

    tiktoken encodes the text between special tokens as ordinary text and each special token
    as one token; that split is done here so long texts keep ctxlab's linear counting.
    """
    if "<|" not in text or _specials().search(text) is None:
        return get_counter("cl100k_base").count_text(text)
    encoding = _encoding()
    pieces = _specials().split(text)
    return sum(count_tokens(encoding, p) for p in pieces if p) + len(pieces) - 1


def buffer_content(message: Message) -> str | None:
    """``ChatMessage.content`` of ``message`` as LlamaIndex stores it: None for an assistant
    message that only calls tools (no text block), else the text."""
    if message.role is Role.ASSISTANT and message.tool_calls and not message.content:
        return None
    return message.content


def additional_kwargs(message: Message) -> dict[str, Any]:
    """The ``additional_kwargs`` of ``message``'s ``ChatMessage`` (the OpenAI message's fields
    other than role and content), in the order the OpenAI message has them."""
    out: dict[str, Any] = {}
    if message.name is not None:
        out["name"] = message.name
    calls = message.tool_calls
    if calls and len(calls) == 1 and calls[0].id is None:
        out["function_call"] = {"name": calls[0].name, "arguments": calls[0].arguments}
    elif calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": c.type,
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def memory_message_tokens(message: Message) -> int:
    """``Memory._estimate_token_count(chat_message)``: its text block's tokens plus the tokens
    of ``str(additional_kwargs)`` when there are any (tool calls are counted there, as the
    Python repr of the OpenAI dicts)."""
    content = buffer_content(message)
    tokens = llamaindex_tokens(content) if content else 0
    kwargs = additional_kwargs(message)
    if kwargs:
        tokens += llamaindex_tokens(str(kwargs))
    return tokens


def joined_content(messages: Sequence[Message]) -> str:
    """``" ".join(str(m.content) for m in messages)``: what ``ChatMemoryBuffer`` tokenizes."""
    return " ".join(str(buffer_content(m)) for m in messages)
