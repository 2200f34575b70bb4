"""An OpenAI ``chat.completion`` response (``chat-completion``), as a pasted API reply.

``{"object": "chat.completion", "choices": [{"message": {...}}], "usage": {...}}``: the first
choice's message is the conversation (one assistant message, with its tool calls); ``usage`` is
its billed usage (``prompt_tokens`` includes ``prompt_tokens_details.cached_tokens``). The
message's id is the response's ``id``. Other choices (``n > 1``) are alternatives to the same
reply and are not read.
"""

from __future__ import annotations

from typing import Any

from ctxlab.formats._common import _MISSING, _fail, _got, _kind
from ctxlab.formats._messages import _read_messages, _unknown_warnings
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._usage import read_usage
from ctxlab.formats._values import LoadedChat


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The first choice's message and the response's usage."""
    value = doc.value
    if not isinstance(value, dict):
        _fail("$", f'expected a chat.completion object with "choices", got {_kind(value)}')
    choices = value.get("choices", _MISSING)
    if not isinstance(choices, list) or not choices:
        _fail("$.choices", f"expected a non-empty list of choices, got {_got(choices)}")
    first = choices[0]
    if not isinstance(first, dict):
        _fail("$.choices[0]", f"expected a choice object, got {_kind(first)}")
    message = first.get("message", _MISSING)
    if not isinstance(message, dict):
        _fail("$.choices[0].message", f"expected a message object, got {_got(message)}")
    if isinstance(value.get("id"), str) and "id" not in message:
        message = {**message, "id": value["id"]}
    unknown: dict[str, str] = {}
    messages = _read_messages(
        [message], lambda _: "$.choices[0].message", trusted=doc.trusted, unknown=unknown
    )
    usage = read_usage(value.get("usage"), "$.usage", messages[-1].id, "openai")
    return LoadedChat(
        messages, usage=usage, warnings=_unknown_warnings(unknown), format="chat-completion"
    )


def sniff(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("choices"), list)
        and "messages" not in value
    )


register(
    ChatFormat(
        name="chat-completion",
        title="an OpenAI chat.completion response object (choices[].message, usage)",
        read=read,
        sniff=sniff,
        marks=frozenset({"choices", "object", "usage", "system_fingerprint"}),
        order=45,
        shown=10,
    )
)
