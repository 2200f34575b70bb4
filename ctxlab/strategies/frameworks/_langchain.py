"""LangChain's own rules, shared by the three LangChain policies (not a strategy module).

Everything here reproduces ``langchain-core 1.8.3`` (``langchain_core/messages/utils.py``:
``count_tokens_approximately``, ``trim_messages`` with ``_first_max_tokens`` /
``_last_max_tokens`` and ``_default_text_splitter``, ``get_buffer_string(format="xml")``) and
``langchain 1.5.2`` (``langchain/agents/middleware/summarization.py``: ``DEFAULT_SUMMARY_PROMPT``
and the summary wrapper), both MIT-licensed, line for line where the result depends on it.

How a ctxlab message becomes a LangChain message (what ``langchain_openai`` builds from the
same Chat Completions dict, and ``convert_to_messages`` for every valid one): system ->
``SystemMessage``; developer -> ``SystemMessage`` whose OpenAI role stays ``developer``; user ->
``HumanMessage``; assistant -> ``AIMessage`` whose ``tool_calls`` hold the *parsed* arguments
(``parse_tool_call``: empty arguments -> ``{}``, a falsy JSON value -> ``{}``, text that is not
JSON or not a JSON object -> an invalid tool call, which no LangChain rule counts or renders);
an assistant message whose calls have no id (OpenAI's legacy ``function_call``) keeps its first
call in ``additional_kwargs["function_call"]`` and has no ``tool_calls``; tool ->
``ToolMessage(tool_call_id, name)``; function (legacy) -> ``FunctionMessage``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from typing import Any, Literal
from xml.sax.saxutils import escape, quoteattr

from ctxlab.model import Message, Role, ToolCall

__all__ = [
    "ANTHROPIC_CHARS_PER_TOKEN",
    "DEFAULT_SUMMARY_PROMPT",
    "LANGCHAIN_TYPES",
    "SUMMARY_PREFIX",
    "ListCounter",
    "TrimOutcome",
    "approx_counter",
    "approximate_tokens",
    "buffer_string_xml",
    "count_tokens_approximately",
    "lc_type",
    "legacy_function_call",
    "len_counter",
    "message_counter",
    "parse_type_list",
    "parsed_tool_calls",
    "trim_messages",
]

# langchain 1.5.2, langchain/agents/middleware/summarization.py (MIT): DEFAULT_SUMMARY_PROMPT.
DEFAULT_SUMMARY_PROMPT = """<role>
Context Extraction Assistant
</role>

<primary_objective>
Your sole objective in this task is to extract the highest quality/most relevant context from the conversation history below.
</primary_objective>

<objective_information>
You're nearing the total number of input tokens you can accept, so you must extract the highest quality/most relevant pieces of information from your conversation history.
This context will then overwrite the conversation history presented below. Because of this, ensure the context you extract is only the most important information to continue working toward your overall goal.
</objective_information>

<instructions>
The conversation history below will be replaced with the context you extract in this step.
You want to ensure that you don't repeat any actions you've already completed, so the context you extract from the conversation history should be focused on the most important information to your overall goal.

You should structure your summary using the following sections. Each section acts as a checklist - you must populate it with relevant information or explicitly state "None" if there is nothing to report for that section:

## SESSION INTENT

What is the user's primary goal or request? What overall task are you trying to accomplish? This should be concise but complete enough to understand the purpose of the entire session.

## SUMMARY

Extract and record all of the most important context from the conversation history. Include important choices, conclusions, or strategies determined during this conversation. Include the reasoning behind key decisions. Document any rejected options and why they were not pursued.

## ARTIFACTS

What artifacts, files, or resources were created, modified, or accessed during this conversation? For file modifications, list specific file paths and briefly describe the changes made to each. This section prevents silent loss of artifact information.

## NEXT STEPS

What specific tasks remain to be completed to achieve the session intent? What should you do next?

</instructions>

The user will message you with the full message history from which you'll extract context to create a replacement. Carefully read through it all and think deeply about what information is most important to your overall goal and should be saved:

With all of this in mind, please carefully read over the entire conversation history, and extract the most important and relevant context to replace it so that you can free up space in the conversation history.
Respond ONLY with the extracted context. Do not include any additional information, or text before or after the extracted context.

<messages>
Messages to summarize:
{messages}
</messages>"""  # noqa: E501

# summarization.py: SummarizationMiddleware._build_new_messages.
SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"
# summarization.py: _get_approximate_token_counter (models whose _llm_type starts with
# "anthropic-chat", i.e. ChatAnthropic).
ANTHROPIC_CHARS_PER_TOKEN = 3.3

LANGCHAIN_TYPES: dict[Role, str] = {
    Role.SYSTEM: "system",
    Role.DEVELOPER: "system",
    Role.USER: "human",
    Role.ASSISTANT: "ai",
    Role.TOOL: "tool",
    Role.FUNCTION: "function",
}
"""LangChain's message ``type`` for each ctxlab role (what ``start_on`` / ``end_on`` name)."""

# ``start_on`` / ``end_on`` accept LangChain's types; ctxlab's role names are aliases.
_TYPE_NAMES: dict[str, str] = {
    **{t: t for t in LANGCHAIN_TYPES.values()},
    **{r.value: t for r, t in LANGCHAIN_TYPES.items()},
}


def lc_type(message: Message) -> str:
    """The LangChain ``type`` of ``message``: system, human, ai, tool or function."""
    return LANGCHAIN_TYPES[message.role]


def parse_type_list(text: str) -> tuple[str, ...]:
    """``"human, tool"`` -> ``("human", "tool")`` (LangChain types, in order, no repeats).

    Raises:
        ValueError: a name is neither a LangChain type nor a ctxlab role.
    """
    out: list[str] = []
    for raw in text.split(","):
        name = raw.strip().lower()
        if not name:
            continue
        if name not in _TYPE_NAMES:
            known = ", ".join(sorted(set(LANGCHAIN_TYPES.values())))
            raise ValueError(f"unknown message type {name!r}; use {known}")
        if _TYPE_NAMES[name] not in out:
            out.append(_TYPE_NAMES[name])
    return tuple(out)


# -- tool calls as LangChain holds them ----------------------------------------------------------

_INVALID = object()


@lru_cache(maxsize=65_536)
def _parsed_args(arguments: str) -> Any:
    """``parse_tool_call``'s arguments (``langchain_core/output_parsers/openai_tools.py``): ``{}``
    for empty text or a falsy JSON value, the parsed object, or ``_INVALID`` when the text is
    not JSON (LangChain makes it an invalid tool call) or not a JSON object (``AIMessage``
    rejects ``args`` that are not a dict)."""
    if not arguments:
        return {}
    try:
        value = json.loads(arguments, strict=False)
    except ValueError:
        return _INVALID
    value = value or {}
    return value if isinstance(value, dict) else _INVALID


def legacy_function_call(message: Message) -> ToolCall | None:
    """The legacy ``function_call`` an assistant message carries (its calls have no id)."""
    if message.role is not Role.ASSISTANT or not message.tool_calls:
        return None
    if all(call.id is None for call in message.tool_calls):
        return message.tool_calls[0]
    return None


def parsed_tool_calls(message: Message) -> list[dict[str, Any]]:
    """``AIMessage.tool_calls`` of ``message``: ``{"name", "args", "id", "type"}`` dicts, in
    LangChain's key order, for the calls whose arguments parse (see :func:`_parsed_args`)."""
    if message.role is not Role.ASSISTANT or legacy_function_call(message) is not None:
        return []
    out: list[dict[str, Any]] = []
    for call in message.tool_calls:
        args = _parsed_args(call.arguments)
        if args is _INVALID:
            continue
        out.append({"name": call.name or "", "args": args, "id": call.id, "type": "tool_call"})
    return out


def _openai_role(message: Message) -> str:
    """``_get_message_openai_role``: a developer message stays ``developer``."""
    return message.role.value


# -- count_tokens_approximately ------------------------------------------------------------------


@lru_cache(maxsize=262_144)
def _message_chars(message: Message) -> int:
    """The characters ``count_tokens_approximately`` counts for one message: the content, the
    ``repr`` of an AI message's tool calls, a tool message's ``tool_call_id``, the OpenAI role
    and the name."""
    chars = len(message.content)
    if message.role is Role.ASSISTANT:
        calls = parsed_tool_calls(message)
        if calls:
            chars += len(repr(calls))
    if message.role is Role.TOOL:
        chars += len(message.tool_call_id or "")
    chars += len(_openai_role(message))
    if message.name:
        chars += len(message.name)
    return chars


def approximate_tokens(message: Message, chars_per_token: float = 4.0) -> int:
    """One message's share of :func:`count_tokens_approximately`: ``ceil(chars /
    chars_per_token) + 3`` (LangChain rounds up per message so the shares add up)."""
    return math.ceil(_message_chars(message) / chars_per_token) + 3


def count_tokens_approximately(messages: Sequence[Message], chars_per_token: float = 4.0) -> int:
    """``langchain_core.messages.utils.count_tokens_approximately(messages)`` (defaults:
    ``extra_tokens_per_message=3``, ``count_name=True``).

    ctxlab content is text, so the 85-token image charge never applies (an image reaches
    ctxlab as its text placeholder), and ctxlab chats carry no ``usage_metadata``, so the
    middleware's usage scaling (x1.0-1.25 from the last AI message's reported total) never
    applies either.
    """
    return sum(approximate_tokens(m, chars_per_token) for m in messages)


@dataclass(frozen=True, slots=True)
class ListCounter:
    """A LangChain ``token_counter`` over a list of messages, as additive parts: the list
    counts ``sum(per_message) + fixed`` (``fixed`` is ctxlab's reply priming for the model's
    own counter, 0 for the approximate one and for ``len``)."""

    per_message: Callable[[Message], int]
    fixed: int = 0

    def __call__(self, messages: Sequence[Message]) -> int:
        return sum(map(self.per_message, messages)) + self.fixed


def approx_counter(chars_per_token: float = 4.0) -> ListCounter:
    """``count_tokens_approximately`` (with ``chars_per_token``) as a :class:`ListCounter`."""
    if chars_per_token == 4.0:
        return ListCounter(approximate_tokens)
    return ListCounter(lambda m: approximate_tokens(m, chars_per_token))


def len_counter() -> ListCounter:
    """``token_counter=len``: every message counts 1."""
    return ListCounter(lambda m: 1)


def message_counter(count_message: Callable[[Message], int], reply_priming: int) -> ListCounter:
    """A model's own counter (``get_num_tokens_from_messages``), here ctxlab's."""
    return ListCounter(count_message, reply_priming)


# -- trim_messages -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrimOutcome:
    """What ``trim_messages`` returns, by position in its input.

    Attributes:
        kept: the positions returned, in order.
        partial: position -> the message with only part of its text (``allow_partial``).
    """

    kept: tuple[int, ...]
    partial: dict[int, Message]

    def messages(self, messages: Sequence[Message]) -> list[Message]:
        return [self.partial.get(i, messages[i]) for i in self.kept]


def _default_text_splitter(text: str) -> list[str]:
    """``_default_text_splitter``: split on newlines, keeping each newline on its line."""
    splits = text.split("\n")
    return [s + "\n" for s in splits[:-1]] + splits[-1:]


def _first_max_tokens(
    messages: Sequence[Message],
    *,
    max_tokens: int,
    counter: ListCounter,
    partial_strategy: Literal["first", "last"] | None,
    end_on: tuple[str, ...],
) -> tuple[int, Message | None]:
    """``_first_max_tokens``: the number of leading messages kept, and the partial message
    that replaces the last of them (or None). Same loops as LangChain; a list's count is read
    from prefix sums instead of recounted."""
    n = len(messages)
    if n == 0:
        return 0, None
    prefix = [0, *accumulate(map(counter.per_message, messages))]
    fixed = counter.fixed
    if prefix[n] + fixed <= max_tokens:
        idx = n
        if end_on:
            while idx > 0 and lc_type(messages[idx - 1]) not in end_on:
                idx -= 1
        return idx, None
    left, right = 0, n
    for _ in range(n.bit_length()):
        if left >= right:
            break
        mid = (left + right + 1) // 2
        if prefix[mid] + fixed <= max_tokens:
            left = mid
        else:
            right = mid - 1
    idx = left
    partial: Message | None = None
    cut_at = idx  # where a partial message would stand
    if partial_strategy and idx < n:
        excluded = messages[idx]
        text = excluded.content
        if text:
            splits = _default_text_splitter(text)
            base = prefix[idx] + fixed
            if partial_strategy == "last":
                splits = splits[::-1]
            left, right = 0, len(splits)
            for _ in range(len(splits).bit_length()):
                if left >= right:
                    break
                mid = (left + right + 1) // 2
                # LangChain measures the pieces joined in search order (reversed for "last").
                candidate = excluded.replace(content="".join(splits[:mid]))
                if base + counter.per_message(candidate) + fixed <= max_tokens:
                    left = mid
                else:
                    right = mid - 1
            if left > 0:
                pieces = splits[:left]
                if partial_strategy == "last":
                    pieces = pieces[::-1]
                partial = excluded.replace(content="".join(pieces))
                idx += 1
    if end_on:
        while idx > 0 and lc_type(messages[idx - 1]) not in end_on:
            idx -= 1
    if partial is not None and idx <= cut_at:
        partial = None  # end_on dropped it again
    return idx, partial


def trim_messages(
    messages: Sequence[Message],
    *,
    max_tokens: int,
    counter: ListCounter,
    strategy: Literal["first", "last"] = "last",
    allow_partial: bool = False,
    end_on: tuple[str, ...] = (),
    start_on: tuple[str, ...] = (),
    include_system: bool = False,
) -> TrimOutcome:
    """``langchain_core.messages.trim_messages`` with the default text splitter.

    Raises:
        ValueError: ``start_on`` or ``include_system`` with ``strategy="first"`` (LangChain's
            own checks).
    """
    if start_on and strategy == "first":
        raise ValueError("start_on parameter is only valid with strategy='last'")
    if include_system and strategy == "first":
        raise ValueError("include_system parameter is only valid with strategy='last'")
    if strategy == "first":
        idx, partial = _first_max_tokens(
            messages,
            max_tokens=max_tokens,
            counter=counter,
            partial_strategy="first" if allow_partial else None,
            end_on=end_on,
        )
        parts = {idx - 1: partial} if partial is not None else {}
        return TrimOutcome(tuple(range(idx)), parts)
    # _last_max_tokens
    end = len(messages)
    if end_on:
        while end > 0 and lc_type(messages[end - 1]) not in end_on:
            end -= 1
    start = 0
    remaining = max_tokens
    system = include_system and end > 0 and messages[0].role.is_instruction
    if system:
        start = 1
        remaining = max(0, max_tokens - counter(messages[:1]))
    reversed_messages = list(messages[start:end])[::-1]
    idx, partial = _first_max_tokens(
        reversed_messages,
        max_tokens=remaining,
        counter=counter,
        partial_strategy="last" if allow_partial else None,
        end_on=start_on,
    )
    kept = list(range(end - idx, end))
    parts = {end - idx: partial} if partial is not None else {}
    if system:
        kept.insert(0, 0)
    return TrimOutcome(tuple(kept), parts)


# -- get_buffer_string(format="xml") -------------------------------------------------------------

_TOOL_CALL_ID_DISPLAY_LIMIT = 64


def _display_tool_call_id(tool_call_id: str) -> str:
    if len(tool_call_id) > _TOOL_CALL_ID_DISPLAY_LIMIT:
        return f"{tool_call_id[:_TOOL_CALL_ID_DISPLAY_LIMIT]}..."
    return tool_call_id


def buffer_string_xml(messages: Sequence[Message]) -> str:
    """``get_buffer_string(messages, format="xml")`` with the default prefixes."""
    out: list[str] = []
    for m in messages:
        msg_type = quoteattr(lc_type(m))
        content_parts = [escape(m.content)] if m.content else []
        calls = parsed_tool_calls(m)
        legacy = legacy_function_call(m)
        if calls or legacy is not None:
            parts = [f"<message type={msg_type}>"]
            if content_parts:
                parts.append(f"  <content>{' '.join(content_parts)}</content>")
            if calls:
                for tc in calls:
                    tc_id = quoteattr(_display_tool_call_id(tc.get("id") or ""))
                    tc_name = quoteattr(str(tc.get("name") or ""))
                    tc_args = escape(json.dumps(tc.get("args", {}), ensure_ascii=False))
                    parts.append(f"  <tool_call id={tc_id} name={tc_name}>{tc_args}</tool_call>")
            elif legacy is not None:
                fc_name = quoteattr(str(legacy.name or ""))
                fc_args = escape(str(legacy.arguments or "{}"))
                parts.append(f"  <function_call name={fc_name}>{fc_args}</function_call>")
            parts.append("</message>")
            out.append("\n".join(parts))
        else:
            out.append(f"<message type={msg_type}>{' '.join(content_parts)}</message>")
    return "\n".join(out)
