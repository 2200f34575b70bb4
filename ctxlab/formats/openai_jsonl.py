"""JSONL with one OpenAI message per line (``openai-jsonl``), e.g. a logged message stream.

Errors name the line (``line 12, $.content[0]``); a last line cut off mid-write (a logger that
was killed) is skipped with a warning naming it. A parsed list given with this format is read
as OpenAI messages.
"""

from __future__ import annotations

from typing import Any

from ctxlab.formats._messages import _read_messages
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _parse_lines_lenient
from ctxlab.formats._values import LoadedChat
from ctxlab.formats.openai import _load_openai, _raw_title


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """Every line is one message."""
    if not doc.jsonl:
        return LoadedChat(_load_openai(doc.value, doc.trusted), format="openai-jsonl")
    parsed, warnings = _parse_lines_lenient(doc.lines, doc.name)
    values = [value for _, value in parsed]
    messages = _read_messages(values, lambda i: f"line {parsed[i][0]}", trusted=True)
    return LoadedChat(messages, warnings=warnings, format="openai-jsonl")


def sniff_line(first: Any) -> bool:
    return isinstance(first, dict) and "role" in first and "messages" not in first


def conversations(doc: Document) -> list[tuple[str, str]]:
    if not doc.jsonl:
        return [("0", _raw_title(doc.value))]
    parsed, _ = _parse_lines_lenient(doc.lines, doc.name)
    return [("0", _raw_title([value for _, value in parsed]))]


register(
    ChatFormat(
        name="openai-jsonl",
        title="JSONL, one OpenAI message per line",
        read=read,
        sniff_line=sniff_line,
        conversations=conversations,
        marks=frozenset({"role", "content", "tool_calls", "tool_call_id"}),
        jsonl=True,
        order=91,
        shown=1,
    )
)
