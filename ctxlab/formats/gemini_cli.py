"""Gemini CLI chat sessions (``gemini-cli``): ``~/.gemini/tmp/<project>/chats/session-*.json``.

The schema is the recorder's own (google-gemini/gemini-cli @
5411f113cafae26161b4969b0237b8e1e024e2c2, ``packages/core/src/services/chatRecordingTypes.ts``
and ``chatRecordingService.ts``, Apache-2.0). A session is one JSON document
``{"sessionId", "projectHash", "startTime", "lastUpdated", "messages": [...]}``, or, in newer
releases, JSONL: a first line with ``sessionId`` and ``projectHash``, then one record a line —
a message (a later record with the same ``id`` replaces the earlier one), ``{"$set": {...}}``
(metadata; with ``messages`` it replaces them all) or ``{"$rewindTo": id}`` (the messages from
``id`` on are gone; all of them when ``id`` is unknown), replayed as ``loadConversationRecord``
does.

Each message has ``id``, ``timestamp``, ``type`` and ``content`` (a string, a part or a list of
parts, as the Gemini API's ``PartListUnion``):

* ``user`` becomes a user message;
* ``gemini`` becomes an assistant message; its ``toolCalls`` (``id``, ``name``, ``args``,
  ``result``) become tool calls, each followed by a tool message holding its ``result`` (the
  ``functionResponse`` parts the CLI sent back); ``thoughts`` (``subject``, ``description``)
  are kept as the message's thinking, shown apart and not counted, as for Claude Code;
  ``tokens`` (``input``, ``output``, ``cached``, ``thoughts``) is the call's billed usage;
* ``info``, ``error`` and ``warning`` are the CLI's own notices, never sent to the model: they
  are skipped and counted in the warnings.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ctxlab.formats._common import _fail, _kind, _title
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _parse_lines_lenient
from ctxlab.formats._usage import read_usage
from ctxlab.formats._values import CallUsage, LoadedChat
from ctxlab.model import Message, Role, ToolCall

_NOTICES: Final = frozenset({"info", "error", "warning"})


def _is_header(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("projectHash"), str)
    )


def sniff(value: Any) -> bool:
    return _is_header(value) and isinstance(value.get("messages"), list)


def sniff_line(first: Any) -> bool:
    return _is_header(first)


def _text(content: object, where: str) -> str:
    """The text of a ``PartListUnion``; non-text parts as visible placeholders."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    texts: list[str] = []
    for k, part in enumerate(parts):
        if isinstance(part, str):
            texts.append(part)
        elif not isinstance(part, dict):
            _fail(f"{where}[{k}]", f"expected a part object or string, got {_kind(part)}")
        elif isinstance(part.get("text"), str):
            if not part.get("thought"):
                texts.append(part["text"])
        elif isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"].get("response")
            output = response.get("output") if isinstance(response, dict) else None
            if isinstance(output, str) and set(response) <= {"output"}:
                texts.append(output)
            else:
                texts.append(json.dumps(response, ensure_ascii=False, sort_keys=True))
        elif isinstance(part.get("inlineData"), dict):
            texts.append(f"[{part['inlineData'].get('mimeType', 'inline data')}]")
        elif isinstance(part.get("fileData"), dict):
            texts.append(f"[file {part['fileData'].get('fileUri', '')}]")
    return "\n".join(texts)


def _replay(doc: Document) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]], list[str]]:
    """The session's metadata, its messages with their paths, and warnings about the file."""
    if not doc.jsonl:
        value = doc.value
        if not _is_header(value):
            _fail("$", "expected a Gemini CLI session with sessionId and projectHash")
        messages = value.get("messages")
        if not isinstance(messages, list):
            _fail("$.messages", f"expected a list of messages, got {_kind(messages)}")
        return value, [(f"$.messages[{k}]", m) for k, m in enumerate(messages)], []
    parsed, warnings = _parse_lines_lenient(doc.lines, doc.name)
    meta: dict[str, Any] = {}
    by_id: dict[str, tuple[str, dict[str, Any]]] = {}
    for n, record in parsed:
        where = f"line {n}"
        if not isinstance(record, dict):
            _fail(where, f"expected a session record object, got {_kind(record)}")
        if isinstance(record.get("$rewindTo"), str):
            ids = list(by_id)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            for gone in ids[cut:]:
                del by_id[gone]
        elif isinstance(record.get("id"), str):
            by_id[record["id"]] = (where, record)
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                by_id = {
                    m["id"]: (f"{where}, $.$set.messages[{k}]", m)
                    for k, m in enumerate(update["messages"])
                    if isinstance(m, dict) and isinstance(m.get("id"), str)
                }
            meta.update(update)
        elif _is_header(record):
            meta.update(record)
            for k, m in enumerate(record.get("messages") or []):
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    by_id[m["id"]] = (f"{where}, $.messages[{k}]", m)
    return meta, list(by_id.values()), list(warnings)


def _tool_calls(
    calls: object, where: str
) -> tuple[tuple[ToolCall, ...], list[tuple[str, str, str]]]:
    """The calls of a gemini message, and (call id, result text, path) of each result."""
    if calls is None:
        return (), []
    if not isinstance(calls, list):
        _fail(where, f"expected a list of tool calls, got {_kind(calls)}")
    out: list[ToolCall] = []
    results: list[tuple[str, str, str]] = []
    for k, call in enumerate(calls):
        at = f"{where}[{k}]"
        if not isinstance(call, dict):
            _fail(at, f"expected a tool call object, got {_kind(call)}")
        own, name = call.get("id"), call.get("name")
        if not isinstance(own, str):
            _fail(f"{at}.id", f"expected a call id string, got {_kind(own)}")
        if not isinstance(name, str):
            _fail(f"{at}.name", f"expected a tool name string, got {_kind(name)}")
        args = json.dumps(call.get("args") or {}, ensure_ascii=False, sort_keys=True)
        out.append(ToolCall(own, name, args))
        results.append((own, _text(call.get("result"), f"{at}.result"), f"{at}.result"))
    return tuple(out), results


def _usage(tokens: object, where: str, mid: str) -> tuple[CallUsage, ...]:
    if tokens is None:
        return ()
    if not isinstance(tokens, dict):
        _fail(where, f"expected a tokens object, got {_kind(tokens)}")
    gemini = {
        "promptTokenCount": tokens.get("input", 0),
        "candidatesTokenCount": tokens.get("output", 0),
        "thoughtsTokenCount": tokens.get("thoughts", 0),
        "cachedContentTokenCount": tokens.get("cached", 0),
    }
    return read_usage(gemini, where, mid, "openai")


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The session's user and model turns, tool results and recorded usage."""
    del options
    _, records, warnings = _replay(doc)
    messages: list[Message] = []
    usage: list[CallUsage] = []
    skipped: dict[str, int] = {}
    for where, record in records:
        kind = record.get("type")
        mid = record.get("id")
        if not isinstance(mid, str):
            _fail(f"{where}.id", f"expected a message id string, got {_kind(mid)}")
        if kind in _NOTICES:
            skipped[str(kind)] = skipped.get(str(kind), 0) + 1
            continue
        text = _text(record.get("content"), f"{where}.content")
        if kind == "user":
            messages.append(Message(Role.USER, text, mid))
        elif kind == "gemini":
            calls, results = _tool_calls(record.get("toolCalls"), f"{where}.toolCalls")
            thoughts = record.get("thoughts")
            extra = (
                (("thinking", tuple(thoughts)),) if isinstance(thoughts, list) and thoughts else ()
            )
            if isinstance(record.get("model"), str):
                extra = (*extra, ("model", record["model"]))
            messages.append(Message(Role.ASSISTANT, text, mid, tool_calls=calls, extra=extra))
            usage.extend(_usage(record.get("tokens"), f"{where}.tokens", mid))
            for own, result, _at in results:
                messages.append(Message(Role.TOOL, result, f"{mid}:{own}", tool_call_id=own))
        else:
            _fail(f"{where}.type", f"expected user, gemini, info, error or warning, got {kind!r}")
    for kind, count in skipped.items():
        warnings.append(
            f"skipped {count:,} {kind} entr{'y' if count == 1 else 'ies'} "
            "(Gemini CLI notices, never sent to the model)"
        )
    return LoadedChat(
        tuple(messages), usage=tuple(usage), warnings=tuple(warnings), format="gemini-cli"
    )


def conversations(doc: Document) -> list[tuple[str, str]]:
    _, records, _ = _replay(doc)
    first = next((r for _, r in records if r.get("type") == "user"), None)
    text = _text(first.get("content"), "$") if first else ""
    return [("0", _title(text))]


register(
    ChatFormat(
        name="gemini-cli",
        title="Gemini CLI chat session (~/.gemini/tmp/<project>/chats/session-*.json)",
        read=read,
        sniff=sniff,
        sniff_line=sniff_line,
        conversations=conversations,
        marks=frozenset({"sessionId", "projectHash", "messages"}),
        order=15,
        shown=12,
    )
)
