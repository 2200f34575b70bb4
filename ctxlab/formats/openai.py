"""OpenAI Chat Completions JSON (``openai``): a list of messages or ``{"messages": [...]}``.

Other top-level keys (``model``, ...) are ignored, except ``tools`` (the tool definitions, see
:mod:`ctxlab.formats._tools`). A single message object (one JSONL line read as JSON) is a
one-message chat. This is also the fallback for any list: its items are read as messages.
"""

from __future__ import annotations

from typing import Any

from ctxlab.formats._common import _index_path, _title
from ctxlab.formats._messages import _messages_list, _read_messages, _unknown_warnings
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._tools import read_tools
from ctxlab.formats._values import LoadedChat
from ctxlab.model import Message

OPENAI_MARKS = frozenset({"messages", "role", "content", "tool_calls", "tool_call_id", "model"})


def _load_openai(
    value: object, trusted: bool, unknown: dict[str, str] | None = None
) -> tuple[Message, ...]:
    """The messages of an OpenAI chat value (see the module docstring)."""
    if isinstance(value, list):
        return _read_messages(value, _index_path("$"), trusted=trusted, unknown=unknown)
    if isinstance(value, dict) and "messages" not in value and "role" in value:
        return _read_messages([value], lambda _: "$", trusted=trusted, unknown=unknown)
    msgs = _messages_list(value, "$")
    return _read_messages(msgs, _index_path("$.messages"), trusted=trusted, unknown=unknown)


def _raw_title(msgs: object) -> str:
    """The first user message's text of raw OpenAI messages (never raises)."""
    if isinstance(msgs, list):
        for m in msgs:
            if isinstance(m, dict) and m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, str):
                    return _title(content)
                if isinstance(content, list):
                    texts = [b.get("text", b.get("value")) for b in content if isinstance(b, dict)]
                    return _title(" ".join(t for t in texts if isinstance(t, str)))
    return ""


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The chat and its ``tools``."""
    value = doc.value
    unknown: dict[str, str] = {}
    messages = _load_openai(value, doc.trusted, unknown)
    tools = read_tools(value.get("tools"), "$.tools") if isinstance(value, dict) else ()
    return LoadedChat(messages, tools, warnings=_unknown_warnings(unknown), format="openai")


def sniff(value: Any) -> bool:
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and ("messages" in value or "role" in value)


def conversations(doc: Document) -> list[tuple[str, str]]:
    value = doc.value
    msgs = value.get("messages") if isinstance(value, dict) else value
    return [("0", _raw_title(msgs))]


register(
    ChatFormat(
        name="openai",
        title='OpenAI Chat Completions JSON: a list of messages or {"messages": [...]}',
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=OPENAI_MARKS,
        order=90,
        shown=0,
    )
)
