"""claude.ai data export (``claude-ai-export``): ``conversations.json`` from Settings > Export.

A list of conversations (or one) ``{"uuid", "name", "chat_messages": [...]}``; each message
has ``sender`` (``human`` / ``assistant``), ``text`` and, in newer exports, ``content`` blocks,
plus ``attachments`` (with the ``extracted_content`` the model read) and ``files``.

* Edited or retried turns make the messages a tree: the current branch is read, from
  ``current_leaf_message_uuid`` up the ``parent_message_uuid`` links.
* Without such links (the 2024 exports: ``text`` only, no ``content`` blocks), messages are read
  in ``created_at`` order, file order among equal times: real exports list them out of order
  (a later exchange can come first), which a warning reports. When a time is missing or
  unreadable, file order is kept.
* ``content`` blocks are read when present, else ``text``. claude.ai runs its tools itself, so
  one assistant message holds ``tool_use`` *and* ``tool_result`` blocks: it is split at each
  result into assistant message, tool message, assistant message..., in order, so calls and
  results pair up. Exports carry no call ids where the blocks have none: calls get
  ``claude-ai-call-<n>`` and each result answers the earliest unanswered call.
* A tool result's content is counted text: text parts as they are, search hits as their
  titles, URLs and text; the keys the app adds for itself (``uuid``, timestamps, ``flags``,
  ``is_citable``...) are left out, and ``token_budget`` blocks (timestamps only, recorded
  between tool calls) are skipped.
* An attachment's ``extracted_content`` was sent to the model: it follows the message's text
  as ``[attachment <file_name>]`` and its content; a file without content is ``[file <name>]``.
* Thinking blocks go to ``extra["thinking"]`` (not counted, see :mod:`ctxlab.formats._messages`).

:func:`conversations` lists the export's conversations by ``uuid`` and ``name``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from ctxlab.formats._common import (
    _MISSING,
    _fail,
    _got,
    _kind,
    _pick_conversation,
    _read_id,
)
from ctxlab.formats._messages import (
    _pair_by_order,
    _read_messages,
    _server_result_text,
    _unknown_warnings,
)
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._values import LoadedChat

_SENDERS = {"human": "user", "user": "user", "assistant": "assistant"}
_APP_BLOCKS: Final = frozenset({"token_budget"})
"""Blocks the app records between others (timestamps only); the model never reads them."""
_APP_KEYS: Final = frozenset(
    {
        "uuid",
        "start_timestamp",
        "stop_timestamp",
        "flags",
        "is_missing",
        "is_citable",
        "prompt_context_metadata",
        "favicon_url",
    }
)
"""Keys the app adds to tool-result parts for its own display; not part of what was read."""


def _labels(convs: Sequence[Any]) -> list[tuple[str | None, str | None]]:
    out: list[tuple[str | None, str | None]] = []
    for c in convs:
        if isinstance(c, dict):
            name = c.get("name")
            out.append((_read_id(c.get("uuid")), name if isinstance(name, str) else None))
        else:
            out.append((None, None))
    return out


def _attachments(message: dict[str, Any], where: str) -> list[str]:
    out: list[str] = []
    for key in ("attachments", "files"):
        items = message.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            _fail(f"{where}.{key}", f"expected a list, got {_kind(items)}")
        for item in items:
            if not isinstance(item, dict):
                continue
            name = item.get("file_name", "")
            content = item.get("extracted_content")
            if isinstance(content, str) and content:
                out.append(f"[attachment {name}]\n{content}")
            elif key == "files" or not isinstance(content, str):
                out.append(f"[file {name}]")
    return out


def _is_app_block(kind: object) -> bool:
    return isinstance(kind, str) and kind in _APP_BLOCKS


def _without_app_keys(value: object) -> object:
    """``value`` without the keys the claude.ai app adds for itself (ids, timestamps, flags)."""
    if isinstance(value, dict):
        return {k: _without_app_keys(v) for k, v in value.items() if k not in _APP_KEYS}
    if isinstance(value, list):
        return [_without_app_keys(v) for v in value]
    return value


def _result_text(block: dict[str, Any]) -> str:
    """A tool result's text: text parts as they are, other parts (search hits) as their
    titles, URLs and text, one ``key: value`` per line."""
    content = block.get("content")
    if isinstance(content, list):
        content = [
            item["text"]
            if isinstance(item, dict)
            and item.get("type") == "text"
            and isinstance(item.get("text"), str)
            else _without_app_keys(item)
            for item in content
        ]
    text = _server_result_text("tool_result", {"content": content})
    return text.removeprefix("[tool_result]").removeprefix("\n")


def _segments(message: dict[str, Any], role: str, where: str) -> list[dict[str, Any]]:
    """The API messages one export message stands for (split at tool results)."""
    content = message.get("content")
    extra_text = _attachments(message, where)
    if not isinstance(content, list) or not content:
        text = message.get("text", "")
        if not isinstance(text, str):
            _fail(f"{where}.text", f"expected a string, got {_kind(text)}")
        return [{"role": role, "content": "\n".join([text, *extra_text]) if extra_text else text}]
    out: list[dict[str, Any]] = []
    blocks: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if blocks:
                out.append({"role": role, "content": blocks})
                blocks = []
            call_id = block.get("tool_use_id")
            out.append(
                {
                    "role": "tool",
                    "content": _result_text(block),
                    "tool_call_id": call_id if isinstance(call_id, str) else None,
                    **({"name": block["name"]} if isinstance(block.get("name"), str) else {}),
                }
            )
        elif not (isinstance(block, dict) and _is_app_block(block.get("type"))):
            blocks.append(block)
    if extra_text:
        blocks.extend({"type": "text", "text": t} for t in extra_text)
    if blocks:
        out.append({"role": role, "content": blocks})
    return out


def _branch(messages: list[Any], leaf: object) -> list[int] | None:
    """Indices of the current branch: from ``current_leaf_message_uuid`` up the
    ``parent_message_uuid`` links, root first; None when the export has no such links (or they
    do not lead anywhere)."""
    if not isinstance(leaf, str):
        return None
    index = {
        m["uuid"]: i
        for i, m in enumerate(messages)
        if isinstance(m, dict) and isinstance(m.get("uuid"), str)
    }
    chain: list[int] = []
    seen: set[str] = set()
    current: object = leaf
    while isinstance(current, str) and current in index and current not in seen:
        seen.add(current)
        i = index[current]
        chain.append(i)
        current = messages[i].get("parent_message_uuid")
    return chain[::-1] or None


def _created(message: object) -> datetime | None:
    """A message's ``created_at`` as an aware time (naive ones taken as UTC), else None."""
    stamp = message.get("created_at") if isinstance(message, dict) else None
    if not isinstance(stamp, str):
        return None
    try:
        value = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _time_order(messages: list[Any]) -> tuple[list[int], bool]:
    """Indices in ``created_at`` order (stable), and whether that differs from file order;
    file order when any time is missing or unreadable."""
    stamps = [_created(m) for m in messages]
    everything = list(range(len(messages)))
    known = [s for s in stamps if s is not None]
    if len(known) != len(stamps):
        return everything, False
    order = sorted(everything, key=known.__getitem__)
    return order, order != everything


def _load(value: object, conversation: int | str | None) -> LoadedChat:
    convs = value if isinstance(value, list) else [value]
    k = _pick_conversation(conversation, len(convs), _labels(convs))
    where = f"$[{k}]" if isinstance(value, list) else "$"
    conv = convs[k]
    if not isinstance(conv, dict):
        _fail(where, f'expected a conversation object with "chat_messages", got {_kind(conv)}')
    messages = conv.get("chat_messages", _MISSING)
    if not isinstance(messages, list):
        _fail(f"{where}.chat_messages", f"expected a list of messages, got {_got(messages)}")
    api: list[dict[str, Any]] = []
    paths: list[str] = []
    notes: tuple[str, ...] = ()
    order = _branch(messages, conv.get("current_leaf_message_uuid"))
    if order is None:
        order, moved = _time_order(messages)
        if moved:
            notes = (
                f"{where}.chat_messages: the export lists these messages out of order; "
                "they are read in created_at order",
            )
    for i in order:
        message = messages[i]
        here = f"{where}.chat_messages[{i}]"
        if not isinstance(message, dict):
            _fail(here, f"expected a message object, got {_kind(message)}")
        sender = message.get("sender", _MISSING)
        role = _SENDERS.get(sender) if isinstance(sender, str) else None
        if role is None:
            _fail(f"{here}.sender", f"expected human or assistant, got {_got(sender)}")
        segments = _segments(message, role, here)
        own = _read_id(message.get("uuid"))
        if own is not None:
            segments[-1]["id"] = own
        api.extend(segments)
        paths.extend([here] * len(segments))
    unknown: dict[str, str] = {}
    read = _read_messages(api, lambda j: paths[j], trusted=False, unknown=unknown)
    return LoadedChat(
        _pair_by_order(read, "claude-ai-call-"),
        warnings=notes + _unknown_warnings(unknown),
        format="claude-ai-export",
    )


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The chosen conversation (the first by default)."""
    return _load(doc.value, options.conversation)


def sniff(value: Any) -> bool:
    first = value[0] if isinstance(value, list) and value else value
    return isinstance(first, dict) and "chat_messages" in first


def conversations(doc: Document) -> list[tuple[str, str]]:
    value = doc.value
    convs = value if isinstance(value, list) else [value]
    return [(cid or str(i), name or "(untitled)") for i, (cid, name) in enumerate(_labels(convs))]


register(
    ChatFormat(
        name="claude-ai-export",
        title="claude.ai data export (conversations.json: chat_messages with sender)",
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=frozenset({"chat_messages", "uuid", "name", "sender", "account"}),
        order=11,
        shown=11,
    )
)
