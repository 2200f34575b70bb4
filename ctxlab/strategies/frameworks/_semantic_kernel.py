"""Semantic Kernel's chat history reducers, ported from ``semantic-kernel`` 1.45.0 (MIT).

Source: ``semantic_kernel/contents/history_reducer/chat_history_reducer_utils.py``,
``chat_history_truncation_reducer.py`` and ``chat_history_summarization_reducer.py``, and
``ChatMessageContent.to_dict`` (the body SK's OpenAI connector sends). The functions here keep
SK's names and its exact index arithmetic, including its quirks (kept on purpose: they are what
SK's users meet).

How a ctxlab message maps onto SK (as SK's OpenAI connector builds ``ChatMessageContent`` from
the same OpenAI messages): an assistant message with tool calls holds one
``FunctionCallContent`` per call (id ``legacy_function_call`` for the legacy ``function_call``,
the connector's own name for it) plus its text; a tool or legacy function reply is a TOOL
message with one ``FunctionResultContent``; a ctxlab summary (``is_summary``) is a message
with SK's ``__summary__`` metadata; developer and system are SK's DEVELOPER and SYSTEM roles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ctxlab.model import Message, Role

__all__ = [
    "DEFAULT_SUMMARIZATION_PROMPT",
    "LEGACY_FUNCTION_CALL_ID",
    "SK_VERSION",
    "contains_function_call_or_result",
    "extract_range",
    "get_call_result_pairs",
    "locate_safe_reduction_index",
    "locate_summarization_boundary",
    "message_body",
    "summary_id",
]

SK_VERSION = "semantic-kernel 1.45.0"
SK_SOURCE = "semantic_kernel/contents/history_reducer/*.py (semantic-kernel 1.45.0, PyPI)"

LEGACY_FUNCTION_CALL_ID = "legacy_function_call"
"""The id SK's OpenAI connector gives a legacy ``function_call`` (it has none)."""

# Quoted from semantic_kernel/contents/history_reducer/chat_history_summarization_reducer.py
# (semantic-kernel 1.45.0, MIT), leading and trailing newlines included.
DEFAULT_SUMMARIZATION_PROMPT = """
Provide a concise and complete summarization of the entire dialog that does not exceed 5 sentences.

This summary must always:
- Consider both user and assistant interactions
- Maintain continuity for the purpose of further dialog
- Include details from any existing summary
- Focus on the most significant aspects of the dialog

This summary must never:
- Critique, correct, interpret, presume, or assume
- Identify faults, mistakes, misunderstanding, or correctness
- Analyze what has not occurred
- Exclude details from any existing summary
"""


def contains_function_call_or_result(message: Message) -> bool:
    """SK's test: a TOOL message, or one holding a function call or result."""
    return message.role.is_tool_result or bool(message.tool_calls)


def _call_ids(message: Message) -> list[str]:
    return [c.id if c.id is not None else LEGACY_FUNCTION_CALL_ID for c in message.tool_calls]


def _result_id(message: Message) -> str | None:
    if not message.role.is_tool_result:
        return None
    return message.tool_call_id if message.tool_call_id is not None else LEGACY_FUNCTION_CALL_ID


def get_call_result_pairs(history: Sequence[Message]) -> list[tuple[int, int]]:
    """SK's ``get_call_result_pairs``: every (call index, result index).

    As in SK, a call id seen twice maps to its *last* call message, and each id pairs with
    its first result only (tau-bench reuses ids).
    """
    call_ids_seen: dict[str, int] = {}
    for i, message in enumerate(history):
        for call_id in _call_ids(message):
            call_ids_seen[call_id] = i
    pairs: list[tuple[int, int]] = []
    for j, message in enumerate(history):
        result_id = _result_id(message)
        if result_id is not None and result_id in call_ids_seen:
            pairs.append((call_ids_seen.pop(result_id), j))
    return pairs


def locate_summarization_boundary(history: Sequence[Message]) -> int:
    """SK's ``locate_summarization_boundary``: the index of the first message that is not a
    summary (only *leading* summaries count)."""
    for index, message in enumerate(history):
        if not message.is_summary:
            return index
    return len(history)


def locate_safe_reduction_index(
    history: Sequence[Message],
    target_count: int,
    threshold_count: int = 0,
    offset_count: int = 0,
    has_system_message: bool = False,
) -> int | None:
    """SK's ``locate_safe_reduction_index``: where the kept tail starts, or None.

    With ``has_system_message`` the target drops by one (the system message is put back in
    front); ``len - target`` steps back while it and the message before both hold function
    content; then a user message between there and ``len - threshold - target`` is preferred
    (the latest one found scanning back).
    """
    if has_system_message:
        target_count -= 1
        if target_count <= 0:
            return len(history)
    total_count = len(history)
    threshold_index = total_count - (threshold_count or 0) - target_count
    if threshold_index <= offset_count:
        return None
    message_index = total_count - target_count
    while message_index >= offset_count:
        message = history[message_index]
        if message.role.is_instruction:
            break
        if not contains_function_call_or_result(message):
            break
        previous = message_index - 1
        if previous < offset_count or not contains_function_call_or_result(history[previous]):
            break
        message_index -= 1
    target_index = message_index
    while message_index >= threshold_index:
        if history[message_index].role is Role.USER:
            return message_index
        message_index -= 1
    return target_index


def extract_range(
    history: Sequence[Message],
    start: int,
    end: int,
    *,
    skip_function_content: bool,
    preserve_pairs: bool,
) -> list[int]:
    """SK's ``extract_range`` as the indexes of the messages it returns, in its order.

    System and developer messages are always skipped; ``skip_function_content`` is SK's
    ``filter_func=contains_function_call_or_result``. With ``preserve_pairs`` a call and its
    result within ``[start, end)`` are taken together, the result right after the call: as in
    SK, a call message with several results is mapped to its *last* result only, so that one
    moves up behind the call and the others follow later (SK reorders them).
    """
    sliced = list(range(start, end))
    pair_map: dict[int, int] = {}
    if preserve_pairs:
        for call_index, result_index in get_call_result_pairs(history):
            pair_map[call_index] = result_index
            pair_map[result_index] = call_index
    extracted: list[int] = []
    i = 0
    while i < len(sliced):
        index = sliced[i]
        message = history[index]
        if skip_function_content and contains_function_call_or_result(message):
            i += 1
            continue
        if message.role.is_instruction:
            i += 1
            continue
        if preserve_pairs and index in pair_map:
            paired = pair_map[index]
            if start <= paired < end:
                if skip_function_content and (
                    contains_function_call_or_result(history[paired])
                    or contains_function_call_or_result(message)
                ):
                    i += 1
                    if paired in sliced:
                        sliced.remove(paired)
                    continue
                extracted.append(index)
                if paired > index:
                    extracted.append(paired)
                    if paired in sliced:
                        sliced.remove(paired)
                i += 1
                continue
            extracted.append(index)
            i += 1
        else:
            extracted.append(index)
            i += 1
    return extracted


def message_body(message: Message) -> dict[str, Any]:
    """The message as SK's OpenAI connector sends it (``ChatMessageContent.to_dict``).

    An assistant message with calls is sent as its ``tool_calls`` only: SK leaves its text
    out. ctxlab adds ``"content": ""`` there, because its summarizer requests always carry
    a content (an API takes an empty content beside tool calls as no content).
    """
    role = Role.TOOL if message.role.is_tool_result else message.role
    body: dict[str, Any] = {"role": role.value}
    if role is Role.ASSISTANT and message.tool_calls:
        body["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call, call_id in zip(message.tool_calls, _call_ids(message), strict=True)
        ]
        body["content"] = ""
    else:
        body["content"] = message.content
    if role is Role.TOOL:
        body["tool_call_id"] = _result_id(message) or ""
    elif message.name:
        body["name"] = message.name
    return body


def summary_id(covered: Sequence[Message], summary: str, taken: set[str]) -> str:
    """A deterministic id for SK's summary message, unique in the history."""
    seed = "\x1f".join([*(m.id for m in covered), summary])
    while True:
        digest = hashlib.sha256(seed.encode()).hexdigest()[:16]
        candidate = f"sk-summary-{digest}"
        if candidate not in taken:
            return candidate
        seed += "\x1f"
