"""Open WebUI chat exports (``open-webui``): Settings > Chats > Export, or one chat's "Export".

The export is a list of chats ``{"id", "title", "chat": {"title", "models", "history":
{"currentId", "messages": {id: message}}}, ...}`` (a single chat object reads too). Each chat is
a tree: ``history.messages`` holds every message by id with its ``parentId``; the conversation
is the chain from ``currentId`` (the branch on screen) back to the root, as Open WebUI builds the
request. Messages on other branches (regenerations, edits) are left out with a warning.

A message's ``content`` is the text. Assistant messages of newer releases also keep ``output``,
the Responses-style items the reply was built from (``reasoning``, ``function_call``,
``function_call_output``, ``message``); when present they are what is read: the calls become
tool calls followed by their results, reasoning is kept apart as thinking (not counted). Without
``output``, the ``<details type="reasoning">`` block Open WebUI puts in ``content`` is moved to
the thinking the same way. Shape from Open WebUI's export and the test data of LibreChat's Open
WebUI importer (danny-avila/LibreChat, MIT, ``api/server/utils/import/__data__``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ctxlab.formats._common import _fail, _kind, _pick_conversation, _title
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._values import LoadedChat
from ctxlab.model import Message, Role, ToolCall

_REASONING: Final = re.compile(r'<details type="reasoning"[^>]*>(.*?)</details>\s*', re.S)
_SUMMARY: Final = re.compile(r"<summary>.*?</summary>", re.S)
_ROLES: Final = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM}


def _is_chat(item: Any) -> bool:
    chat = item.get("chat") if isinstance(item, dict) else None
    history = chat.get("history") if isinstance(chat, dict) else None
    return isinstance(history, dict) and isinstance(history.get("messages"), dict)


def sniff(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and _is_chat(value[0])
    return _is_chat(value)


def _chats(value: Any) -> list[tuple[str, dict[str, Any]]]:
    items = value if isinstance(value, list) else [value]
    out = []
    for k, item in enumerate(items):
        where = f"$[{k}]" if isinstance(value, list) else "$"
        if not _is_chat(item):
            _fail(f"{where}.chat.history", "expected an Open WebUI chat with history.messages")
        out.append((where, item))
    return out


def _labels(chats: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    out = []
    for k, (_, item) in enumerate(chats):
        own = item.get("id")
        title = item.get("title") or item["chat"].get("title")
        out.append((own if isinstance(own, str) else str(k), _title(_text(title))))
    return out


def _branch(history: dict[str, Any], where: str) -> list[str]:
    """Ids from the root to ``currentId``."""
    messages = history["messages"]
    current = history.get("currentId")
    if not isinstance(current, str) or current not in messages:
        _fail(f"{where}.currentId", "expected the id of a message in history.messages")
    chain: list[str] = []
    seen: set[str] = set()
    node: Any = current
    while isinstance(node, str) and node in messages and node not in seen:
        seen.add(node)
        chain.append(node)
        entry = messages[node]
        node = entry.get("parentId") if isinstance(entry, dict) else None
    chain.reverse()
    return chain


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _from_output(own: str, output: list[Any], where: str) -> list[Message]:
    """An assistant reply from its ``output`` items."""
    out: list[Message] = []
    texts: list[str] = []
    thinking: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    results: list[tuple[str, str]] = []

    def flush() -> None:
        if not (texts or calls or thinking):
            return
        mid = own if not out else f"{own}:{len(out)}"
        extra = (("thinking", tuple(thinking)),) if thinking else ()
        out.append(
            Message(Role.ASSISTANT, "\n".join(texts), mid, tool_calls=tuple(calls), extra=extra)
        )
        for call_id, result in results:
            out.append(Message(Role.TOOL, result, f"{mid}:{call_id}", tool_call_id=call_id))
        texts.clear()
        thinking.clear()
        calls.clear()
        results.clear()

    for j, item in enumerate(output):
        if not isinstance(item, dict):
            _fail(f"{where}.output[{j}]", f"expected an output item object, got {_kind(item)}")
        kind = item.get("type")
        if kind == "reasoning":
            thinking.append({"type": "thinking", "thinking": _text(item.get("content"))})
        elif kind == "function_call":
            if results:  # a call after results: the model was called again
                flush()
            call_id, name = item.get("call_id"), item.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                _fail(f"{where}.output[{j}]", "expected a function_call with call_id and name")
            args = item.get("arguments")
            calls.append(ToolCall(call_id, name, args if isinstance(args, str) else "{}"))
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                _fail(f"{where}.output[{j}].call_id", f"expected a string, got {_kind(call_id)}")
            results.append((call_id, _text(item.get("output"))))
        elif kind == "message":
            if results:
                flush()
            texts.append(_text(item.get("content")))
    flush()
    return out


def _message(own: str, m: dict[str, Any], where: str) -> list[Message]:
    raw_role = m.get("role")
    role = _ROLES.get(raw_role) if isinstance(raw_role, str) else None
    if role is None:
        _fail(f"{where}.role", f"expected user, assistant or system, got {m.get('role')!r}")
    output = m.get("output")
    if role is Role.ASSISTANT and isinstance(output, list) and output:
        return _from_output(own, output, where)
    content = _text(m.get("content"))
    extra: tuple[tuple[str, Any], ...] = ()
    if role is Role.ASSISTANT:
        found = [_SUMMARY.sub("", r).strip() for r in _REASONING.findall(content)]
        if found:
            content = _REASONING.sub("", content)
            extra = (("thinking", tuple({"type": "thinking", "thinking": t} for t in found)),)
    return [Message(role, content, own, extra=extra)]


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """One chat of the export (the first by default): its branch on screen."""
    chats = _chats(doc.value)
    labels = _labels(chats)
    k = _pick_conversation(options.conversation, len(chats), labels)
    where, item = chats[k]
    history = item["chat"]["history"]
    at = f"{where}.chat.history"
    chain = _branch(history, at)
    out: list[Message] = []
    for own in chain:
        m = history["messages"][own]
        here = f"{at}.messages[{json.dumps(own)}]"
        if not isinstance(m, dict):
            _fail(here, f"expected a message object, got {_kind(m)}")
        out.extend(_message(own, m, here))
    warnings = []
    off = len(history["messages"]) - len(chain)
    if off:
        warnings.append(
            f"{off} messages on other branches (regenerations, edits) were left out; the "
            "conversation is the branch ending at currentId"
        )
    if len(chats) > 1:
        warnings.append(f"the export holds {len(chats)} chats; this is {labels[k][0]!r}")
    return LoadedChat(tuple(out), warnings=tuple(warnings), format="open-webui")


def conversations(doc: Document) -> list[tuple[str, str]]:
    return _labels(_chats(doc.value))


register(
    ChatFormat(
        name="open-webui",
        title="Open WebUI chat export (a list of chats with history.messages)",
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=frozenset({"chat", "history", "currentId", "user_id"}),
        order=12,
        shown=16,
    )
)
