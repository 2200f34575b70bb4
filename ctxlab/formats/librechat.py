"""LibreChat conversation exports (``librechat``): a conversation's "Export" as JSON.

The export is ``{"conversationId", "title", "endpoint", "options", "recursive", "messagesTree"
| "messages"}`` (shape from LibreChat's own importer, danny-avila/LibreChat, MIT,
``api/server/utils/import/importers.js`` and its ``__data__`` test exports). ``recursive``
exports nest replies under ``children``; flat ones list messages with ``parentMessageId``
(``00000000-0000-0000-0000-000000000000`` for the root). The messages form a tree: the default
conversation (``main``) is the branch ending at the last message written (by ``createdAt``, then
file order), as LibreChat shows it; every other leaf is its own conversation ``branch-<k>``.

A message is the user's when ``isCreatedByUser``, else the model's; its ``text`` is the content,
or, for agents' messages, its ``content`` parts: ``text``, ``think`` (kept apart as thinking,
not counted) and ``tool_call`` (a call, followed by a tool message with its ``output``).
"""

from __future__ import annotations

from typing import Any, Final

from ctxlab.formats._common import _compact_json, _fail, _kind, _pick_conversation, _title
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._values import LoadedChat
from ctxlab.model import Message, Role, ToolCall

NO_PARENT: Final = "00000000-0000-0000-0000-000000000000"


def sniff(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("conversationId"), str):
        return False
    messages = value.get("messagesTree", value.get("messages"))
    if not isinstance(messages, list):
        return False
    first = messages[0] if messages else None
    return first is None or (isinstance(first, dict) and "messageId" in first)


def _flatten(value: dict[str, Any]) -> list[tuple[str, dict[str, Any], str | None]]:
    """``(path, message, parent id)`` of every message, parents before children."""
    key = "messagesTree" if "messagesTree" in value else "messages"
    out: list[tuple[str, dict[str, Any], str | None]] = []
    stack: list[tuple[str, Any, str | None]] = [
        (f"$.{key}[{k}]", m, None) for k, m in enumerate(value[key])
    ]
    stack.reverse()  # popped in file order
    while stack:
        where, m, parent = stack.pop()
        if not isinstance(m, dict):
            _fail(where, f"expected a message object, got {_kind(m)}")
        own = m.get("messageId")
        if not isinstance(own, str):
            _fail(f"{where}.messageId", f"expected a string, got {_kind(own)}")
        if parent is None:
            given = m.get("parentMessageId")
            parent = given if isinstance(given, str) and given != NO_PARENT else None
        out.append((where, m, parent))
        children = m.get("children")
        if isinstance(children, list):
            nested = [(f"{where}.children[{j}]", c, own) for j, c in enumerate(children)]
            stack.extend(reversed(nested))
    return out


def _leaves(flat: list[tuple[str, dict[str, Any], str | None]]) -> list[int]:
    """Positions of the leaves, the newest (the main branch's) first."""
    parents = {parent for _, _, parent in flat if parent is not None}
    leaves = [k for k, (_, m, _) in enumerate(flat) if m["messageId"] not in parents]

    def newest(k: int) -> tuple[str, int]:
        created = flat[k][1].get("createdAt")
        return (created if isinstance(created, str) else "", k)

    return sorted(leaves, key=newest, reverse=True)


def _chain(flat: list[tuple[str, dict[str, Any], str | None]], leaf: int) -> list[int]:
    position = {m["messageId"]: k for k, (_, m, _) in enumerate(flat)}
    chain: list[int] = []
    seen: set[int] = set()
    k: int | None = leaf
    while k is not None and k not in seen:
        seen.add(k)
        chain.append(k)
        parent = flat[k][2]
        k = position.get(parent) if parent is not None else None
    return chain[::-1]


def _messages(where: str, m: dict[str, Any]) -> list[Message]:
    own = m["messageId"]
    role = Role.USER if m.get("isCreatedByUser") is True else Role.ASSISTANT
    text = m.get("text")
    content = m.get("content")
    if not isinstance(content, list) or (isinstance(text, str) and text):
        return [Message(role, text if isinstance(text, str) else "", own)]
    texts: list[str] = []
    thinking: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for j, part in enumerate(content):
        if not isinstance(part, dict):
            _fail(f"{where}.content[{j}]", f"expected a content part object, got {_kind(part)}")
        kind = part.get("type")
        value = part.get(kind) if isinstance(kind, str) else None
        if kind == "text":
            texts.append(value if isinstance(value, str) else _value_text(value))
        elif kind == "think":
            thinking.append({"type": "thinking", "thinking": _value_text(value)})
        elif kind == "tool_call" and isinstance(value, dict):
            call_id = value.get("id")
            name = value.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                _fail(f"{where}.content[{j}].tool_call", "expected a tool call with id and name")
            args = value.get("args")
            arguments = (
                args
                if isinstance(args, str)
                else _compact_json(args or {}, f"{where}.content[{j}].tool_call.args")
            )
            calls.append(ToolCall(call_id, name, arguments))
            output = value.get("output")
            results.append(
                Message(
                    Role.TOOL,
                    output if isinstance(output, str) else "",
                    f"{own}:{call_id}",
                    tool_call_id=call_id,
                )
            )
        elif kind in ("image_file", "image_url"):
            texts.append("[image]")
    extra = (("thinking", tuple(thinking)),) if thinking else ()
    return [Message(role, "\n".join(texts), own, tool_calls=tuple(calls), extra=extra), *results]


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("value"), str):
        return str(value["value"])
    return ""


def _labels(value: dict[str, Any]) -> list[tuple[str, str]]:
    flat = _flatten(value)
    leaves = _leaves(flat)
    title = value.get("title")
    out = [("main", _title(title) if isinstance(title, str) else "")]
    for k, leaf in enumerate(leaves[1:], 1):
        text = flat[leaf][1].get("text")
        out.append((f"branch-{k}", _title(text) if isinstance(text, str) else ""))
    return out


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The branch ending at the newest message (``main``) or another leaf (``branch-<k>``)."""
    value = doc.value
    if not sniff(value):
        _fail("$", "expected a LibreChat export with conversationId and messages")
    flat = _flatten(value)
    if not flat:
        return LoadedChat((), format="librechat")
    leaves = _leaves(flat)
    labels = _labels(value)
    k = _pick_conversation(options.conversation, len(labels), labels)
    chain = _chain(flat, leaves[k])
    out: list[Message] = []
    for position in chain:
        where, m, _ = flat[position]
        out.extend(_messages(where, m))
    warnings = []
    off = len(flat) - len(chain)
    if off:
        warnings.append(
            f"{off} messages on other branches (regenerations, edits) were left out; each "
            "other branch is its own conversation (branch-<k>)"
        )
    return LoadedChat(tuple(out), warnings=tuple(warnings), format="librechat")


def conversations(doc: Document) -> list[tuple[str, str]]:
    return _labels(doc.value) if sniff(doc.value) else []


register(
    ChatFormat(
        name="librechat",
        title="LibreChat conversation export (conversationId with messages or messagesTree)",
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=frozenset({"conversationId", "messagesTree", "messages", "endpoint"}),
        order=13,
        shown=17,
    )
)
