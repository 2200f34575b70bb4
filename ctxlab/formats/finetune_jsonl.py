"""Fine-tuning JSONL (``finetune-jsonl``): one ``{"messages": [...]}`` conversation per line.

Each line is a conversation; only the chosen one is parsed (and the last, to skip it with a
warning when it was cut off mid-write). A parsed list of such objects (the
same data as JSON) is read alike. A line's ``tools`` (a list, or that list as JSON text) are its
tool definitions. LLaMA-Factory's parts (``{"type": "text" | "reasoning" | "tool_call",
"value"}``) are read: text is text, reasoning is thinking (``extra``), tool calls are real
calls; id-less calls and results are paired in order (``call_<n>``).
"""

from __future__ import annotations

from typing import Any

from ctxlab.formats._common import _at, _fail, _index_path, _kind, _pick_conversation
from ctxlab.formats._messages import (
    _messages_list,
    _pair_by_order,
    _read_messages,
    _unknown_warnings,
)
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _complete_lines, _parse_json
from ctxlab.formats._tools import read_tools
from ctxlab.formats._values import LoadedChat
from ctxlab.formats.openai import _raw_title


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The chosen conversation (the first by default) and its tools."""
    warnings: tuple[str, ...] = ()
    if doc.jsonl:
        lines, warnings = _complete_lines(doc.lines, doc.name)
        k = _pick_conversation(options.conversation, len(lines))
        n, raw = lines[k]
        item, where, base = _parse_json(raw, n), f"line {n}", f"line {n}, $.messages"
        trusted = True
    else:
        value = doc.value
        if not isinstance(value, list):
            _fail("$", f"expected a list of conversations, got {_kind(value)}")
        k = _pick_conversation(options.conversation, len(value))
        item, where = value[k], f"$[{k}]"
        base, trusted = _at(where, ".messages"), doc.trusted
    msgs = _messages_list(item, where)
    unknown: dict[str, str] = {}
    messages = _read_messages(msgs, _index_path(base), trusted=trusted, unknown=unknown)
    tools = read_tools(item.get("tools"), _at(where, ".tools"))
    return LoadedChat(
        _pair_by_order(messages),
        tools,
        warnings=warnings + _unknown_warnings(unknown),
        format="finetune-jsonl",
    )


def sniff(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    first = value[0]
    return isinstance(first, dict) and "messages" in first and "role" not in first


def sniff_line(first: Any) -> bool:
    return isinstance(first, dict) and "messages" in first


def conversations(doc: Document) -> list[tuple[str, str]]:
    if doc.jsonl:
        items = [_parse_json(raw, n) for n, raw in _complete_lines(doc.lines, doc.name)[0]]
    else:
        items = list(doc.value or [])
    return [
        (str(i), _raw_title(c.get("messages") if isinstance(c, dict) else None))
        for i, c in enumerate(items)
    ]


register(
    ChatFormat(
        name="finetune-jsonl",
        title='fine-tuning JSONL, one {"messages": [...]} conversation per line',
        read=read,
        sniff=sniff,
        sniff_line=sniff_line,
        conversations=conversations,
        marks=frozenset({"messages", "tools"}),
        jsonl=True,
        order=40,
        shown=2,
    )
)
