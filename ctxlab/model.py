"""The pure values at the centre of ctxlab: roles, messages, tool calls, compaction metadata.

These types hold no I/O and know nothing of files, tokenizers or Streamlit. Identity is data:
every :class:`Message` carries a stable ``id`` that decisions, caches and the UI refer to.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["CompactionMeta", "Message", "Role", "ToolCall"]


class Role(StrEnum):
    """Who wrote a message.

    ``FUNCTION`` is OpenAI's legacy reply to an assistant ``function_call``; it is kept as read
    (real chats use it) and treated as a tool result everywhere.

    Attributes:
        is_tool_result: TOOL or FUNCTION.
        is_instruction: system-like roles, SYSTEM or DEVELOPER.
    """

    is_tool_result: bool
    is_instruction: bool

    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    FUNCTION = "function"


# Plain attributes, set once per member: strategies read them for every message of 100k-message
# chats, where an enum property (hashing the member) costs more than the trim itself.
for _role in Role:
    _role.is_tool_result = _role in (Role.TOOL, Role.FUNCTION)
    _role.is_instruction = _role in (Role.SYSTEM, Role.DEVELOPER)
del _role


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call an assistant message makes.

    ``id`` is None only for the legacy single ``function_call`` format, which has no ids.
    ``arguments`` is the raw JSON text the model produced (it may be invalid JSON; kept as is).
    """

    id: str | None
    name: str
    arguments: str = ""
    type: str = "function"


@dataclass(frozen=True, slots=True)
class CompactionMeta:
    """Metadata of a compaction pair (the compaction_meta seed).

    ``tail_start_id`` is the first message kept verbatim after the compaction;
    ``previous_compaction_id`` links to the compaction this one updated; ``summary_text`` stores
    the summary for reuse by the next, incremental compaction.
    """

    tail_start_id: str | None
    previous_compaction_id: str | None = None
    summary_text: str | None = None

    @classmethod
    def new(cls, tail_start_id: str | None) -> CompactionMeta:
        return cls(tail_start_id=tail_start_id)

    def with_previous(self, previous_id: str) -> CompactionMeta:
        return dataclasses.replace(self, previous_compaction_id=previous_id)

    def with_summary(self, summary: str) -> CompactionMeta:
        return dataclasses.replace(self, summary_text=summary)


@dataclass(frozen=True, slots=True, weakref_slot=True)
class Message:
    """One chat message; immutable.

    ``content`` is always text: ``""`` when an assistant only calls tools, and non-text parts are
    rendered as visible placeholders such as ``[image]`` by the loader.
    """

    role: Role
    content: str
    id: str
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_compaction: bool = False
    is_summary: bool = False
    compaction_meta: CompactionMeta | None = None
    # Fields of the source message that ctxlab does not model, kept so a dump loses nothing
    # (e.g. ``refusal``, ``audio``). Never used for counting or trimming.
    extra: tuple[tuple[str, Any], ...] = field(default=(), compare=False, repr=False)

    # weakref_slot: token counters keep a message's count only while the message lives.

    def __hash__(self) -> int:
        # id + content identify a message in practice and both hashes are cached by CPython, so
        # hashing a Message is O(1) after first use: counters key their caches on messages.
        return hash((self.id, self.content))

    @property
    def is_tool_result(self) -> bool:
        return self.role.is_tool_result

    def replace(self, **changes: Any) -> Message:
        """A copy with ``changes`` applied (messages are immutable)."""
        return dataclasses.replace(self, **changes)

    def preview(self, width: int = 80) -> str:
        """One line of text for tables and hovers: content, else the tool calls it makes."""
        text = self.content
        if not text and self.tool_calls:
            text = ", ".join(f"{c.name}({c.arguments})" for c in self.tool_calls)
        text = " ".join(text.split())
        return text if len(text) <= width else text[: max(width - 1, 0)] + "…"
