"""ChatGPT data export (``chatgpt-export``): ``conversations.json`` from "Export data".

A list of conversations (or one), each a tree of nodes in ``mapping``; the current branch of the
chosen conversation is read (see :func:`_load_chatgpt`). The file holds many conversations:
:func:`conversations` lists them by id and title.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ctxlab.formats._common import _fail, _key_path, _kind, _opt_str, _pick_conversation, _read_id
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._values import LoadedChat
from ctxlab.model import Message, Role

_CHATGPT_ROLES: Final[dict[str, Role]] = {
    "system": Role.SYSTEM,
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "tool": Role.TOOL,
}


def _chatgpt_labels(convs: Sequence[Any]) -> list[tuple[str | None, str | None]]:
    labels: list[tuple[str | None, str | None]] = []
    for c in convs:
        if isinstance(c, dict):
            cid = _read_id(c.get("conversation_id")) or _read_id(c.get("id"))
            title = c.get("title")
            labels.append((cid, title if isinstance(title, str) else None))
        else:
            labels.append((None, None))
    return labels


def _load_chatgpt(value: object, conversation: int | str | None) -> tuple[Message, ...]:
    """ChatGPT data export (``conversations.json``): the current branch of one conversation.

    Walks ``parent`` links from ``current_node`` to the root (without ``current_node``: from
    the root along the last child), then reads the messages root first, skipping empty nodes,
    hidden messages and empty system messages. Message ids are the export's message ids.
    """
    convs = value if isinstance(value, list) else [value]
    k = _pick_conversation(conversation, len(convs), _chatgpt_labels(convs))
    where = f"$[{k}]" if isinstance(value, list) else "$"
    conv = convs[k]
    if not isinstance(conv, dict):
        _fail(where, f'expected a conversation object with "mapping", got {_kind(conv)}')
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        what = "missing" if mapping is None else _kind(mapping)
        _fail(f"{where}.mapping", f"expected an object of nodes, got {what}")
    out: list[Message] = []
    seen: dict[str, int] = {}
    for node_id in _chatgpt_branch(mapping, conv.get("current_node"), where):
        here = f"{where}.mapping{_key_path(node_id)}"
        node = mapping[node_id]
        msg = node.get("message")
        if msg is None:
            continue
        message = _chatgpt_message(msg, f"{here}.message", node_id)
        if message is None:
            continue
        if message.id in seen:
            _fail(f"{here}.message.id", f"duplicate message id {message.id!r}")
        seen[message.id] = len(out)
        out.append(message)
    return tuple(out)


def _chatgpt_branch(mapping: dict[Any, Any], current: object, where: str) -> list[str]:
    """Node ids from the root to ``current`` (or along last children when there is none)."""
    for node_id, node in mapping.items():
        if not isinstance(node, dict):
            _fail(
                f"{where}.mapping{_key_path(str(node_id))}",
                f"expected a node object, got {_kind(node)}",
            )
    if current is None:
        current = _chatgpt_last_leaf(mapping, where)
    if not isinstance(current, str):
        _fail(f"{where}.current_node", f"expected a node id string, got {_kind(current)}")
    if current not in mapping:
        _fail(f"{where}.current_node", f"node {current!r} is not in the mapping")
    chain: list[str] = [current]
    seen = {current}
    parent = mapping[current].get("parent")
    while parent is not None:
        if not isinstance(parent, str) or parent not in mapping:
            _fail(
                f"{where}.mapping{_key_path(chain[-1])}.parent",
                f"expected the id of a node in the mapping, got {parent!r}",
            )
        if parent in seen:
            _fail(f"{where}.mapping", f"the parent links loop at node {parent!r}")
        seen.add(parent)
        chain.append(parent)
        parent = mapping[parent].get("parent")
    chain.reverse()
    return chain


def _chatgpt_last_leaf(mapping: dict[Any, Any], where: str) -> str:
    """The leaf reached from the root by always taking the last child."""
    roots = [nid for nid, node in mapping.items() if node.get("parent") is None]
    if not roots or not isinstance(roots[0], str):
        _fail(f"{where}.mapping", "no root node (a node whose parent is null)")
    current: str = roots[0]
    seen = {current}
    while True:
        children = mapping[current].get("children")
        if not isinstance(children, list) or not children:
            return current
        child = children[-1]
        if not isinstance(child, str) or child not in mapping or child in seen:
            return current
        seen.add(child)
        current = child


def _chatgpt_message(msg: object, where: str, node_id: str) -> Message | None:
    """One export message, or None when it is hidden or an empty system message."""
    if not isinstance(msg, dict):
        _fail(where, f"expected a message object, got {_kind(msg)}")
    meta = msg.get("metadata")
    if isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation") is True:
        return None
    author = msg.get("author")
    if not isinstance(author, dict):
        _fail(f"{where}.author", f"expected an author object, got {_kind(author)}")
    role_name = author.get("role")
    role = _CHATGPT_ROLES.get(role_name) if isinstance(role_name, str) else None
    if role is None:
        _fail(
            f"{where}.author.role",
            f"expected one of {', '.join(_CHATGPT_ROLES)}, got {role_name!r}",
        )
    text = _chatgpt_text(msg.get("content"), f"{where}.content")
    if role is Role.SYSTEM and not text.strip():
        return None
    name = _opt_str(author.get("name"), f"{where}.author.name") if role is Role.TOOL else None
    own = _read_id(msg.get("id")) or node_id
    return Message(role, text, own, name=name)


def _chatgpt_text(content: object, where: str) -> str:
    """The text of an export message's ``content`` object, by ``content_type``."""
    if not isinstance(content, dict):
        _fail(where, f"expected a content object, got {_kind(content)}")
    ctype = content.get("content_type")
    if not isinstance(ctype, str):
        _fail(f"{where}.content_type", f"expected a string, got {_kind(ctype)}")
    if ctype in ("text", "multimodal_text"):
        parts = content.get("parts")
        if parts is None:
            return ""
        if not isinstance(parts, list):
            _fail(f"{where}.parts", f"expected a list, got {_kind(parts)}")
        return "\n".join(
            p if isinstance(p, str) else _asset_placeholder(p) for p in parts if p != ""
        )
    for key in ("text", "result") if ctype in ("code", "execution_output") else ("result", "text"):
        if isinstance(content.get(key), str):
            return str(content[key])
    return f"[{ctype}]"


def _asset_placeholder(part: object) -> str:
    kind = part.get("content_type") if isinstance(part, dict) else None
    if isinstance(kind, str) and "image" in kind:
        return "[image]"
    if isinstance(kind, str) and "audio" in kind:
        return "[audio]"
    return "[file]"


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The current branch of the chosen conversation."""
    return LoadedChat(_load_chatgpt(doc.value, options.conversation), format="chatgpt-export")


def sniff(value: Any) -> bool:
    first = value[0] if isinstance(value, list) and value else value
    return isinstance(first, dict) and "mapping" in first


def conversations(doc: Document) -> list[tuple[str, str]]:
    value = doc.value
    convs = value if isinstance(value, list) else [value]
    return [
        (cid or str(i), title or "(untitled)")
        for i, (cid, title) in enumerate(_chatgpt_labels(convs))
    ]


register(
    ChatFormat(
        name="chatgpt-export",
        title="ChatGPT data export (conversations.json: mapping trees)",
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=frozenset({"mapping", "current_node", "title", "conversation_id"}),
        order=10,
        shown=5,
    )
)
