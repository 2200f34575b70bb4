"""OpenAI Responses API (``responses``): input item lists, request bodies and response objects.

Accepted values:

* an input list: ``[{"role": "user", "content": ...}, {"type": "function_call", ...}, ...]``;
* a request body: ``{"model", "instructions", "input": <list or text>, "tools"}``
  (``instructions`` becomes the leading system message, ``tools`` the tool definitions);
* a response object: ``{"object": "response", "output": [...], "usage": {...}}`` (its items
  are the assistant's reply; ``usage`` is billed to the last assistant message).

How items become messages (:func:`items_to_messages`, shared with Codex rollouts):
``message`` items by role; ``function_call`` / ``custom_tool_call`` / ``local_shell_call``
items are tool calls of an assistant message (consecutive calls, and a call right after an
assistant message, join one message); their ``*_output`` items are tool messages answering the
call's ``call_id``. Built-in tool items (``web_search_call``, ``file_search_call``,
``code_interpreter_call``, ...) are assistant text holding their JSON, counted. ``reasoning``
items are kept in the next assistant message's ``extra["reasoning"]`` (summary and reasoning
text), shown and not counted: OpenAI discards the reasoning of earlier turns from the context
("reasoning tokens are discarded" after each turn,
https://platform.openai.com/docs/guides/reasoning#how-reasoning-works). Unknown item types are
kept as assistant text, counted, and warned about once per type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, Final

from ctxlab.formats._common import _MISSING, _compact_json, _fail, _got, _index_path, _kind
from ctxlab.formats._messages import _read_messages, _unknown_warnings
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._tools import read_tools
from ctxlab.formats._usage import read_usage
from ctxlab.formats._values import CallUsage, LoadedChat
from ctxlab.model import Message, Role

_CALLS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS: Final = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
_BUILT_IN: Final = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "computer_call",
        "computer_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "tool_search_call",
        "tool_search_output",
    }
)
ITEM_TYPES: Final = frozenset({"message", "reasoning", "item_reference"}) | _CALLS | _OUTPUTS
"""Item types that only the Responses API uses (detection evidence, besides built-ins)."""
_ROLES_OK: Final = frozenset({"user", "assistant", "system", "developer"})


@dataclasses.dataclass(slots=True)
class ItemReader:
    """Items read one at a time into OpenAI-shaped message dicts, then into messages.

    ``usage_at`` maps a dict's index to the billed usage of the call that produced it (the
    caller adds it with :meth:`bill_last_assistant`); ``unknown`` collects unknown content
    block types, ``unknown_items`` unknown item types (type -> first path).
    """

    api: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    paths: list[str] = dataclasses.field(default_factory=list)
    reasoning: list[str] = dataclasses.field(default_factory=list)
    unknown: dict[str, str] = dataclasses.field(default_factory=dict)
    unknown_items: dict[str, str] = dataclasses.field(default_factory=dict)
    usage_at: dict[int, tuple[str, Any, str]] = dataclasses.field(default_factory=dict)
    last_user_text: str | None = None

    def add(self, item: object, where: str) -> None:
        """Read one item (see the module docstring)."""
        if not isinstance(item, dict):
            _fail(where, f"expected a Responses item object, got {_kind(item)}")
        kind = item.get("type", "message" if "role" in item else _MISSING)
        if not isinstance(kind, str):
            _fail(f"{where}.type", f"expected an item type string, got {_got(kind)}")
        if kind == "message":
            self._message(item, where)
        elif kind in _CALLS:
            self._call(kind, item, where)
        elif kind in _OUTPUTS:
            self._output(item, where)
        elif kind == "reasoning":
            self.reasoning.extend(_reasoning_texts(item))
        elif kind == "item_reference":
            self.unknown_items.setdefault(kind, where)  # a pointer to stored state
        else:
            if kind not in _BUILT_IN:
                self.unknown_items.setdefault(kind, where)
            rest = {k: v for k, v in item.items() if k not in ("type", "id", "status")}
            entry = self._assistant(where)
            entry["content"] = _join(entry.get("content"), f"[{kind}] {_compact_json(rest, where)}")

    def add_user_text(self, text: str, where: str) -> None:
        """A user turn recorded only as an event (Codex ``user_message``), unless already read."""
        if self.last_user_text is not None:
            return
        self._append({"role": "user", "content": text}, where)
        self.last_user_text = text

    def _message(self, item: dict[str, Any], where: str) -> None:
        role = item.get("role", _MISSING)
        if not isinstance(role, str) or role not in _ROLES_OK:
            _fail(
                f"{where}.role", f"expected one of {', '.join(sorted(_ROLES_OK))}, got {_got(role)}"
            )
        entry: dict[str, Any] = {"role": role, "content": item.get("content")}
        if isinstance(item.get("id"), str):
            entry["id"] = item["id"]
        if role == "assistant":
            self._take_reasoning(entry)
        self._append(entry, where)
        self.last_user_text = "" if role == "user" else None

    def _call(self, kind: str, item: dict[str, Any], where: str) -> None:
        call_id = item.get("call_id", item.get("id"))
        if call_id is not None and not isinstance(call_id, str):
            _fail(f"{where}.call_id", f"expected a string, got {_kind(call_id)}")
        if kind == "local_shell_call":
            name, args = "local_shell", _compact_json(item.get("action"), f"{where}.action")
        else:
            name = item.get("name", _MISSING)
            if not isinstance(name, str):
                _fail(f"{where}.name", f"expected a tool name string, got {_got(name)}")
            raw = item.get("arguments" if kind == "function_call" else "input")
            args = raw if isinstance(raw, str) else _compact_json(raw, f"{where}.arguments")
        call_type = "custom" if kind == "custom_tool_call" else "function"
        entry = self._assistant(where, item.get("id"))
        call: dict[str, Any] = {"id": call_id, "type": call_type}
        call[call_type] = (
            {"name": name, "input": args}
            if call_type == "custom"
            else {"name": name, "arguments": args}
        )
        entry.setdefault("tool_calls", []).append(call)

    def _output(self, item: dict[str, Any], where: str) -> None:
        call_id = item.get("call_id")
        if call_id is not None and not isinstance(call_id, str):
            _fail(f"{where}.call_id", f"expected a string, got {_kind(call_id)}")
        output = item.get("output")
        if isinstance(output, dict):
            output = _compact_json(output, f"{where}.output")
        self._append({"role": "tool", "tool_call_id": call_id, "content": output}, where)
        self.last_user_text = None

    def _assistant(self, where: str, own: object = None) -> dict[str, Any]:
        """The assistant message the current call or text joins (a new one after other roles)."""
        if self.api and self.api[-1]["role"] == "assistant" and not self.reasoning:
            return self.api[-1]
        entry: dict[str, Any] = {"role": "assistant", "content": None}
        if isinstance(own, str):
            entry["id"] = own
        self._take_reasoning(entry)
        self._append(entry, where)
        self.last_user_text = None
        return entry

    def _take_reasoning(self, entry: dict[str, Any]) -> None:
        if self.reasoning:
            entry["reasoning"] = list(self.reasoning)
            self.reasoning.clear()

    def _append(self, entry: dict[str, Any], where: str) -> None:
        self.api.append(entry)
        self.paths.append(where)

    def bill_last_assistant(self, usage: object, where: str, provider: str = "openai") -> None:
        """Record ``usage`` for the latest assistant message (nothing when there is none)."""
        for i in range(len(self.api) - 1, -1, -1):
            if self.api[i]["role"] == "assistant":
                self.usage_at[i] = (where, usage, provider)
                return

    def finish(
        self, lead: Message | None = None
    ) -> tuple[tuple[Message, ...], tuple[CallUsage, ...], tuple[str, ...]]:
        """The messages, usage and warnings of everything read."""
        if self.reasoning:  # reasoning after the last assistant message: keep it visible
            if self.api and self.api[-1]["role"] == "assistant":
                self.api[-1].setdefault("reasoning", []).extend(self.reasoning)
            else:
                self._append(
                    {"role": "assistant", "content": None, "reasoning": list(self.reasoning)}, "$"
                )
            self.reasoning.clear()
        paths = self.paths
        messages = _read_messages(
            self.api, lambda i: paths[i], trusted=False, lead=lead, unknown=self.unknown
        )
        shift = 1 if lead is not None else 0
        usage: list[CallUsage] = []
        if len(messages) == len(self.api) + shift:  # one message per dict (no block splits)
            for i, (where, value, provider) in sorted(self.usage_at.items()):
                usage.extend(read_usage(value, where, messages[i + shift].id, provider))
        items = tuple(
            f"{where}: unknown item type {kind!r}, kept as assistant text and counted"
            if kind != "item_reference"
            else f"{where}: an item_reference points to state stored by OpenAI; not shown"
            for kind, where in self.unknown_items.items()
        )
        return messages, tuple(usage), items + _unknown_warnings(self.unknown)


def _join(content: object, text: str) -> str:
    return text if not content else f"{content}\n{text}" if isinstance(content, str) else text


def _reasoning_texts(item: dict[str, Any]) -> list[str]:
    """The readable text of a reasoning item: its summary, then any reasoning text; only
    encrypted content is shown as its size."""
    out: list[str] = []
    for key in ("summary", "content"):
        parts = item.get(key)
        if isinstance(parts, list):
            out.extend(
                p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    encrypted = item.get("encrypted_content")
    if not out and isinstance(encrypted, str) and encrypted:
        out.append(f"[encrypted reasoning, {len(encrypted):,} characters]")
    return out


def items_to_messages(
    items: Sequence[Any], path_of: Callable[[int], str], lead: Message | None = None
) -> tuple[tuple[Message, ...], tuple[CallUsage, ...], tuple[str, ...]]:
    """Messages of Responses items (see the module docstring)."""
    reader = ItemReader()
    for i, item in enumerate(items):
        reader.add(item, path_of(i))
    return reader.finish(lead)


def _instructions(value: dict[str, Any]) -> Message | None:
    text = value.get("instructions")
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        _fail("$.instructions", f"expected a string, got {_kind(text)}")
    return Message(Role.SYSTEM, text, "instructions")


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """An input list, a request body or a response object."""
    value = doc.value
    if isinstance(value, list):
        messages, usage, warnings = items_to_messages(value, _index_path("$"))
        return LoadedChat(messages, usage=usage, warnings=warnings, format="responses")
    if not isinstance(value, dict):
        _fail("$", f"expected a Responses input list, request or response, got {_kind(value)}")
    lead = _instructions(value)
    tools = read_tools(value.get("tools"), "$.tools")
    if "input" in value and not _is_response(value):
        items = value["input"]
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list):
            _fail("$.input", f"expected a list of items or a text, got {_kind(items)}")
        messages, usage, warnings = items_to_messages(items, _index_path("$.input"), lead)
        return LoadedChat(messages, tools, usage, warnings, format="responses")
    output = value.get("output", _MISSING)
    if not isinstance(output, list):
        _fail("$.output", f"expected a list of output items, got {_got(output)}")
    reader = ItemReader()
    for i, item in enumerate(output):
        reader.add(item, f"$.output[{i}]")
    if value.get("usage") is not None:
        reader.bill_last_assistant(value["usage"], "$.usage")
    messages, usage, warnings = reader.finish(lead)
    return LoadedChat(messages, tools, usage, warnings, format="responses")


def _is_response(value: dict[str, Any]) -> bool:
    return value.get("object") == "response" or (
        isinstance(value.get("output"), list) and "input" not in value
    )


def _looks_like_items(items: list[Any]) -> bool:
    for item in items[:50]:
        if isinstance(item, dict):
            kind = item.get("type")
            if isinstance(kind, str) and (kind in ITEM_TYPES or kind in _BUILT_IN):
                return kind != "message" or "role" in item
    return False


def sniff(value: Any) -> bool:
    if isinstance(value, list):
        return _looks_like_items(value)
    if not isinstance(value, dict) or "messages" in value or "contents" in value:
        return False
    if _is_response(value):
        return value.get("object", "response") == "response" and "choices" not in value
    items = value.get("input")
    return isinstance(items, list | str) and (
        "model" in value or "instructions" in value or "tools" in value
    )


register(
    ChatFormat(
        name="responses",
        title="OpenAI Responses API: input items, a request body, or a response with output",
        read=read,
        sniff=sniff,
        marks=frozenset({"input", "instructions", "output", "object", "previous_response_id"}),
        order=50,
        shown=8,
    )
)
