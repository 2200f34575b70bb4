"""Writing chats: ctxlab's own JSON and OpenAI Chat Completions request messages.

Invariant: ``load_chat(dump_chat(ms)) == ms`` for messages with unique ids, ``extra`` included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson

from ctxlab.formats._messages import _API_EXTRA_KEYS, _MESSAGE_KEYS
from ctxlab.model import Message, ToolCall


def _tool_call_to_openai(tc: ToolCall) -> dict[str, Any]:
    if tc.type == "custom":
        return {"id": tc.id, "type": "custom", "custom": {"name": tc.name, "input": tc.arguments}}
    return {
        "id": tc.id,
        "type": tc.type,
        "function": {"name": tc.name, "arguments": tc.arguments},
    }


def message_to_openai(m: Message, *, ctxlab_fields: bool) -> dict[str, Any]:
    """One message as an OpenAI Chat Completions message dict.

    With ``ctxlab_fields=False`` it is exactly what an API call sends: role, content, name,
    tool calls (a single id-less call as legacy ``function_call``), tool_call_id, and only the
    ``extra`` keys the API accepts (``refusal``, ``audio``). With ``ctxlab_fields=True`` it also
    holds ``id``, the compaction fields when set, and every ``extra`` key (known fields win over
    an ``extra`` key of the same name). An assistant's empty content next to tool calls is
    written as null, as the API returns it.
    """
    d: dict[str, Any] = {"id": m.id} if ctxlab_fields else {}
    d["role"] = m.role.value
    d["content"] = None if not m.content and m.tool_calls else m.content
    if m.name is not None:
        d["name"] = m.name
    if m.tool_calls:
        only = m.tool_calls[0]
        if len(m.tool_calls) == 1 and only.id is None and only.type == "function":
            d["function_call"] = {"name": only.name, "arguments": only.arguments}
        else:
            d["tool_calls"] = [_tool_call_to_openai(tc) for tc in m.tool_calls]
    if m.tool_call_id is not None:
        d["tool_call_id"] = m.tool_call_id
    if ctxlab_fields:
        if m.is_compaction:
            d["is_compaction"] = True
        if m.is_summary:
            d["is_summary"] = True
        if m.compaction_meta is not None:
            d["compaction_meta"] = {
                "tail_start_id": m.compaction_meta.tail_start_id,
                "previous_compaction_id": m.compaction_meta.previous_compaction_id,
                "summary_text": m.compaction_meta.summary_text,
            }
    for key, value in m.extra:
        if key not in _MESSAGE_KEYS and (ctxlab_fields or key in _API_EXTRA_KEYS):
            d.setdefault(key, value)
    return d


def messages_to_openai(
    ms: Sequence[Message], *, ctxlab_fields: bool = False
) -> list[dict[str, Any]]:
    """:func:`message_to_openai` of each message: the ``messages`` of an API request."""
    return [message_to_openai(m, ctxlab_fields=ctxlab_fields) for m in ms]


def dump_chat(messages: Sequence[Message], *, indent: int | None = 2) -> str:
    """ctxlab's JSON for ``messages``: ``{"messages": [...]}`` with ctxlab's fields.

    :func:`load_chat` reads it back to equal messages (``extra`` included).
    """
    doc = {"messages": messages_to_openai(messages, ctxlab_fields=True)}
    if indent in (None, 2):
        try:
            option = orjson.OPT_INDENT_2 if indent == 2 else 0
            return orjson.dumps(doc, option=option).decode()
        except orjson.JSONEncodeError:
            pass  # integers beyond 64 bits or deep nesting in `extra`: the stdlib copes
    return json.dumps(doc, indent=indent, ensure_ascii=False)
