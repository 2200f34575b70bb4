"""The OpenAI Agents SDK's session history with ``SessionSettings(limit=N)`` (openai-agents 0.24.0).

What a run sends (``agents/run_internal/session_persistence.py``, ``prepare_input_with_session``):
the last ``limit`` stored items (``SQLiteSession.get_items``; ``None`` = all), then the run's
new input; ``drop_orphan_function_calls`` (``agents/run_internal/items.py``) removes stored
``function_call`` items whose output is nowhere in the list and, because ``limit`` pruned the
history, stored ``function_call_output`` items whose call is no longer there (the fix of
openai/openai-agents-python#4322); ``deduplicate_input_items_preferring_latest`` then keeps one
item per ``call_id`` (a call at its earliest position with its latest value, an output at its
latest position). Messages are never de-duplicated.

How a ctxlab chat becomes the SDK's stored items (the way the SDK stores a run): a leading
system/developer message is the agent's ``instructions`` (sent apart, never trimmed); a user
message is ``{"role": "user", "content": text}``; a later system/developer message is
``{"role": ..., "content": text}``; an assistant message is one ``message`` item holding its
text (when it has text, or has no tool call) followed by one ``function_call`` item per tool
call; a tool result is one ``function_call_output``. A legacy ``function_call`` (no id) gets
``call_<message id>``, and an id-less result answers the latest such call. When the chat ends
with a user message, that message is the run's new input (never trimmed); otherwise the run's
input is empty and the model sees the stored session alone.

Decisions are per ctxlab message: KEPT when every item of the message is sent, together;
DROPPED when none is; CLEARED when only some are (an assistant message whose text fell outside
the limit while its calls are inside it, or whose call was dropped as an orphan): the message
is then sent as a stand-in holding exactly the items kept (same id, listed in ``inserted``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ctxlab.errors import ParameterError
from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.base import Decision, TrimResult, check_params, param
from ctxlab.strategies.frameworks import FrameworkPolicy, FrameworkStrategy, TriggerReport

if TYPE_CHECKING:
    from ctxlab.summarizers import Summarizer
    from ctxlab.tokens import TokenCounter

__all__ = [
    "OpenAIAgentsSession",
    "SessionItem",
    "prepared_input",
    "session_items",
]


@dataclass(frozen=True, slots=True)
class SessionItem:
    """One Responses item of the SDK's session, with the ctxlab message it comes from.

    ``part`` is 0 for a message's text item and ``k + 1`` for its ``k``-th tool call (0 for a
    user, system or tool-result message, which is one item).
    """

    item: Mapping[str, Any]
    source: int
    part: int

    @property
    def kind(self) -> str:
        """The item's ``type`` (``message`` for a role-only message item)."""
        return str(self.item.get("type", "message"))

    @property
    def call_id(self) -> str | None:
        value = self.item.get("call_id")
        return value if isinstance(value, str) else None


def _text_item(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def session_items(
    messages: Sequence[Message],
) -> tuple[int | None, tuple[SessionItem, ...], tuple[SessionItem, ...]]:
    """``(instructions, stored, new_input)``: the index of the message that becomes the agent's
    ``instructions`` (None when the chat has no leading system prompt), the stored session
    items, and the run's new input (the chat's last message when it is a user message)."""
    instructions = 0 if messages and messages[0].role.is_instruction else None
    start = 1 if instructions is not None else 0
    items: list[SessionItem] = []
    legacy_call: str | None = None
    for i in range(start, len(messages)):
        m = messages[i]
        role = m.role
        if role is Role.USER or role.is_instruction:
            items.append(SessionItem({"role": role.value, "content": m.content}, i, 0))
        elif role is Role.ASSISTANT:
            if m.content or not m.tool_calls:
                items.append(SessionItem(_text_item(m.content), i, 0))
            for k, call in enumerate(m.tool_calls):
                call_id = call.id
                if call_id is None:
                    call_id = legacy_call = f"call_{m.id}"
                item = {
                    "type": "function_call",
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
                items.append(SessionItem(item, i, k + 1))
        else:
            call_id = m.tool_call_id or legacy_call or f"call_{m.id}"
            item = {"type": "function_call_output", "call_id": call_id, "output": m.content}
            items.append(SessionItem(item, i, 0))
    new_input: tuple[SessionItem, ...] = ()
    if items and messages[-1].role is Role.USER and items[-1].source == len(messages) - 1:
        new_input = (items.pop(),)
    return instructions, tuple(items), new_input


def _history(stored: Sequence[SessionItem], limit: int | None) -> Sequence[SessionItem]:
    """``SQLiteSession.get_items(limit)``: all items, the last ``limit``, or (``limit <= 0``)
    SQLite's ``LIMIT`` semantics: none for 0, all for a negative limit."""
    if limit is None or limit < 0:
        return stored
    if limit == 0:
        return ()
    return stored[-limit:]


def _orphans(
    history: Sequence[SessionItem], new_input: Sequence[SessionItem], limit: int | None
) -> tuple[set[int], set[int]]:
    """``drop_orphan_function_calls`` over ``history + new_input`` (only the stored history is
    pruned, never the new input): the indexes of the calls dropped (no output anywhere in the
    list) and of the outputs dropped (their call cut off by ``limit``; only with a limit)."""
    items = [*history, *new_input]
    completed = {s.call_id for s in items if s.kind == "function_call_output" and s.call_id}
    calls = {
        index
        for index, s in enumerate(history)
        if s.kind == "function_call" and s.call_id not in completed
    }
    outputs: set[int] = set()
    if limit is not None:  # the fix of #4322: outputs whose calls the limit cut off
        available = {
            s.call_id
            for index, s in enumerate(items)
            if index not in calls and s.kind == "function_call" and s.call_id
        }
        outputs = {
            index
            for index, s in enumerate(history)
            if s.kind == "function_call_output" and s.call_id and s.call_id not in available
        }
    return calls, outputs


def prepared_input(
    stored: Sequence[SessionItem], new_input: Sequence[SessionItem], limit: int | None
) -> list[SessionItem]:
    """The items the model receives, in order (``prepare_input_with_session`` with no
    ``session_input_callback``): history, new input, orphan clean-up, de-duplication."""
    history = _history(stored, limit)
    calls, outputs = _orphans(history, new_input, limit)
    dropped = calls | outputs
    items = [*history, *new_input]
    filtered = [s for index, s in enumerate(items) if index not in dropped]
    return _deduplicate_preferring_latest(filtered)


def _dedupe_key(s: SessionItem) -> str | None:
    if "role" in s.item or s.call_id is None:
        return None
    return f"call_id:{s.kind}:{s.call_id}"


def _deduplicate_preferring_latest(items: Sequence[SessionItem]) -> list[SessionItem]:
    """``deduplicate_input_items_preferring_latest``: one item per key; a call stays at its
    earliest position (it must precede its output) with the latest value, an output moves to
    its latest position."""
    latest: dict[str, SessionItem] = {}
    anchor: dict[str, int] = {}
    for index, s in enumerate(items):
        key = _dedupe_key(s)
        if key is None:
            continue
        latest[key] = s
        if key not in anchor or s.kind != "function_call":
            anchor[key] = index
    out: list[SessionItem] = []
    for index, s in enumerate(items):
        key = _dedupe_key(s)
        if key is None:
            out.append(s)
        elif anchor[key] == index:
            out.append(latest[key])
    return out


def _stand_in(message: Message, parts: Sequence[SessionItem]) -> Message:
    """``message`` holding only the items in ``parts`` (its text, some of its calls)."""
    kept = {s.part for s in parts}
    if message.role is not Role.ASSISTANT:
        return message
    calls: tuple[ToolCall, ...] = tuple(
        c for k, c in enumerate(message.tool_calls) if k + 1 in kept
    )
    text = message.content if 0 in kept else ""
    return message.replace(content=text, tool_calls=calls)


def _limit_text(limit: int | None) -> str:
    return "limit=None" if limit is None else f"limit={limit}"


@dataclass(frozen=True, slots=True)
class OpenAIAgentsSession(FrameworkStrategy):
    """The Agents SDK's ``SessionSettings(limit=N)``: the last N stored items (see the module
    docstring for the mapping and the per-message rule)."""

    name: ClassVar[str] = "openai-agents-session"
    title: ClassVar[str] = "OpenAI Agents SDK · SessionSettings(limit)"
    summary: ClassVar[str] = (
        "The Agents SDK sends the last `limit` stored session items, minus orphan tool calls."
    )
    explanation: ClassVar[str] = (
        "An Agents SDK session stores every Responses item of a run: your message, the "
        "assistant's text, each tool call and each tool output, one item each. With "
        "SessionSettings(limit=N) a run sends only the last N stored items (plus the new "
        "input); the default limit=None sends them all. The SDK then drops tool calls whose "
        "output is not sent and, since 0.24.0, outputs whose call the limit cut off "
        "(openai/openai-agents-python#4322). The stored session is never rewritten. A ctxlab "
        "message that is several items (text plus tool calls) can be sent in part: it is then "
        "shown as a stand-in holding the items kept."
    )
    framework_policy: ClassVar[FrameworkPolicy] = FrameworkPolicy(
        framework="OpenAI Agents SDK",
        component="SessionSettings(limit)",
        version="openai-agents 0.24.0",
        source=(
            "agents/memory/session_settings.py, memory/sqlite_session.py (get_items), "
            "run_internal/session_persistence.py (prepare_input_with_session), "
            "run_internal/items.py (drop_orphan_function_calls, "
            "deduplicate_input_items_preferring_latest)"
        ),
        evidence="oracle",
        counter="none: stored items are counted, not tokens",
        persists="view",
        unpublished=(
            "How a ctxlab chat maps onto stored Responses items is ctxlab's choice (module "
            "docstring): items the SDK stores but ctxlab chats do not hold (reasoning, hosted "
            "tool calls, item ids) are absent, so a real session's item count can be higher.",
        ),
    )

    limit: int | None = param(
        None,
        label="limit (items)",
        help="SessionSettings.limit: how many of the newest stored items a run sends. "
        "None (the SDK's default) sends every item.",
        step=1,
        unit="items",
    )

    def __post_init__(self) -> None:
        if self.limit is not None and (
            isinstance(self.limit, bool) or not isinstance(self.limit, int)
        ):
            raise ParameterError(f"limit must be a whole number or None, got {self.limit!r}")
        check_params(self)

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        instructions, stored, new_input = session_items(messages)
        sent = prepared_input(stored, new_input, self.limit)
        items_of: dict[int, int] = {}
        for s in (*stored, *new_input):
            items_of[s.source] = items_of.get(s.source, 0) + 1
        # consecutive sent items of one message, in the message's own order, form one message
        # of the context (de-duplication can move a call before its message's text)
        groups: list[tuple[int, list[SessionItem]]] = []
        for s in sent:
            if groups and groups[-1][0] == s.source and groups[-1][1][-1].part < s.part:
                groups[-1][1].append(s)
            else:
                groups.append((s.source, [s]))
        groups_of: dict[int, int] = {}
        for source, _ in groups:
            groups_of[source] = groups_of.get(source, 0) + 1
        out: list[Message] = []
        inserted: list[Message] = []
        decisions = dict.fromkeys((m.id for m in messages), Decision.DROPPED)
        if instructions is not None:
            out.append(messages[instructions])
            decisions[messages[instructions].id] = Decision.PINNED
        seen: dict[int, int] = {}
        for source, parts in groups:
            message = messages[source]
            whole = groups_of[source] == 1 and len(parts) == items_of[source]
            if whole and {s.part for s in parts} == _parts(message):
                out.append(message)
                decisions[message.id] = Decision.KEPT
                continue
            stand_in = _stand_in(message, parts)
            n = seen.get(source, 0)
            seen[source] = n + 1
            if n:
                stand_in = stand_in.replace(id=f"{message.id}#{n + 1}")
            out.append(stand_in)
            inserted.append(stand_in)
            decisions[message.id] = Decision.CLEARED
        warnings = self._warnings(stored, new_input)
        return TrimResult(
            messages=tuple(out),
            decisions=decisions,
            tokens_before=counter.count_messages(messages),
            tokens_after=counter.count_messages(out),
            inserted=tuple(inserted),
            warnings=tuple(warnings),
            strategy=self.name,
        )

    def _warnings(
        self,
        stored: Sequence[SessionItem],
        new_input: Sequence[SessionItem],
    ) -> list[str]:
        history = _history(stored, self.limit)
        limited = [*history, *new_input]
        calls, outputs = _orphans(history, new_input, self.limit)
        warnings: list[str] = []
        if calls:
            warnings.append(
                f"The SDK drops {len(calls)} tool call(s) within the limit whose output is not "
                "sent (drop_orphan_function_calls)."
            )
        if outputs:
            warnings.append(
                f"The SDK drops {len(outputs)} tool output(s) whose call {_limit_text(self.limit)}"
                " cut off (the fix of openai/openai-agents-python#4322, in 0.24.0; older "
                "versions sent them and the API answered 400)."
            )
        sent = prepared_input(stored, new_input, self.limit)
        repeated = len(limited) - len(calls | outputs) - len(sent)
        if repeated:
            warnings.append(
                f"This chat reuses tool-call ids: the SDK de-duplicates by call_id and sends "
                f"{repeated} item(s) fewer (deduplicate_input_items_preferring_latest)."
            )
        return warnings

    def estimate(self, messages: Sequence[Message], counter: TokenCounter) -> int | None:
        return None

    def trigger_report(self, messages: Sequence[Message], counter: TokenCounter) -> TriggerReport:
        _, stored, new_input = session_items(messages)
        exact = counter.count_messages(messages)
        n = len(stored)
        new = " plus the new user message" if new_input else ""
        if self.limit is None or self.limit < 0:
            merged = self.apply(messages, counter).decision_counts()
            if merged[Decision.DROPPED] or merged[Decision.CLEARED]:
                # reused call ids: the SDK's merge de-duplicates items even without a limit
                text = (
                    f"No limit: {_limit_text(self.limit)} (the SDK's default) keeps all {n:,} "
                    f"stored items{new}, but this chat reuses tool-call ids and the SDK's "
                    "de-duplication of items by call_id leaves some out on every run."
                )
                return TriggerReport(True, None, "items", n, exact, text, "OpenAI Agents SDK")
            text = (
                f"Never trims: {_limit_text(self.limit)} (the SDK's default) sends all {n:,} "
                f"stored items{new}; set limit=N to send only the last N."
            )
            return TriggerReport(False, None, "items", n, exact, text, "OpenAI Agents SDK")
        fires = n > self.limit
        if fires:
            text = (
                f"Trims every run: limit={self.limit:,} sends the last {self.limit:,} of this "
                f"chat's {n:,} stored items{new}, minus orphaned tool calls and outputs."
            )
        else:
            text = (
                f"Does not trim yet: limit={self.limit:,} items and this chat stores {n:,}; it "
                f"starts dropping at {self.limit + 1:,}."
            )
        return TriggerReport(fires, self.limit, "items", n, exact, text, "OpenAI Agents SDK")

    def config_code(self) -> str:
        limit = "None" if self.limit is None else str(self.limit)
        return (
            "from agents import Agent, RunConfig, Runner, SQLiteSession\n"
            "from agents.memory import SessionSettings\n"
            "\n"
            'session = SQLiteSession("conversation_123", "conversations.db")\n'
            "result = await Runner.run(\n"
            "    agent,\n"
            "    user_input,\n"
            "    session=session,\n"
            f"    run_config=RunConfig(session_settings=SessionSettings(limit={limit})),\n"
            ")\n"
        )


def _parts(message: Message) -> set[int]:
    """The ``part`` numbers of every item ``message`` becomes."""
    if message.role is not Role.ASSISTANT:
        return {0}
    parts = {k + 1 for k in range(len(message.tool_calls))}
    if message.content or not message.tool_calls:
        parts.add(0)
    return parts
