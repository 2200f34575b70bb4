"""Anthropic Messages (``anthropic``): ``{"system": ..., "messages": [...]}``, content as blocks.

``system`` (a string or a list of text blocks) becomes a leading system message; blocks are
read by the shared content reader (``tool_use`` -> tool calls, ``tool_result`` -> tool messages
first; thinking and server-tool blocks as counted text, see :mod:`ctxlab.formats._messages`).
``tools`` are the request's tool definitions. A response object (``"type": "message"``, a
``content`` list and ``usage``) is one assistant message with its billed usage.
"""

from __future__ import annotations

from typing import Any

from ctxlab.formats._common import _index_path
from ctxlab.formats._messages import (
    _messages_list,
    _read_content,
    _read_messages,
    _unknown_warnings,
)
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._tools import read_tools
from ctxlab.formats._usage import read_usage
from ctxlab.formats._values import LoadedChat
from ctxlab.formats.openai import conversations
from ctxlab.model import Message, Role


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The conversation of a request body, or the one message of a response."""
    value = doc.value
    unknown: dict[str, str] = {}
    if isinstance(value, list):
        messages = _read_messages(value, _index_path("$"), trusted=doc.trusted, unknown=unknown)
        return LoadedChat(messages, warnings=_unknown_warnings(unknown), format="anthropic")
    if _is_response(value):
        one = {"role": value.get("role", "assistant"), "content": value.get("content")}
        if isinstance(value.get("id"), str):
            one["id"] = value["id"]
        messages = _read_messages([one], lambda _: "$", trusted=doc.trusted, unknown=unknown)
        usage = read_usage(value.get("usage"), "$.usage", messages[-1].id, "anthropic")
        warnings = _unknown_warnings(unknown)
        return LoadedChat(messages, usage=usage, warnings=warnings, format="anthropic")
    msgs = _messages_list(value, "$")
    assert isinstance(value, dict)  # checked by _messages_list
    lead = None
    system = value.get("system")
    if system is not None:
        text = _read_content(system, "$.system", nested=True).text
        if text:
            lead = Message(Role.SYSTEM, text, "m0")
    messages = _read_messages(
        msgs, _index_path("$.messages"), trusted=doc.trusted, lead=lead, unknown=unknown
    )
    tools = read_tools(value.get("tools"), "$.tools")
    return LoadedChat(messages, tools, warnings=_unknown_warnings(unknown), format="anthropic")


def _is_response(value: object) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") == "message"
        and isinstance(value.get("content"), list)
        and "messages" not in value
    )


def sniff(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    return ("messages" in value and "system" in value) or _is_response(value)


register(
    ChatFormat(
        name="anthropic",
        title='Anthropic Messages: {"system", "messages"} with content blocks, or a response',
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=frozenset({"messages", "system", "tools", "max_tokens", "stop_reason"}),
        order=80,
        shown=3,
    )
)
