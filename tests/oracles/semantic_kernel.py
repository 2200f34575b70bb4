"""Oracle: Semantic Kernel 1.45.0's chat history reducers on ctxlab's chats.

Runs only in the framework environment (``scripts/oracle_env.py``); never imports ctxlab.
Reads ``{"cases": [{"chat": [...neutral messages...], "reducer": "truncation" |
"summarization", "params": {...}, "summary": "..."}]}`` on stdin and prints one result per
case: the reduced history (ctxlab ids, or the summary's role/text/metadata) and the messages
the summarization service received, serialised as SK's OpenAI connector sends them
(``ChatMessageContent.to_dict``).

A chat is mapped onto SK ``ChatMessageContent`` the way SK's OpenAI connector builds them from
the same OpenAI messages: an assistant message holds one ``FunctionCallContent`` per tool call
(id ``legacy_function_call`` for the legacy ``function_call``, as the connector names it) then
its text; a tool (or legacy function) reply is a TOOL message with one
``FunctionResultContent``; a ctxlab summary (``is_summary``) carries SK's ``__summary__``
metadata.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

# This file is named like the package it tests: Python puts the script's folder first on the
# path, where ``import semantic_kernel`` would find this file instead of the framework.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(__file__)]

from pydantic import Field  # noqa: E402
from semantic_kernel.connectors.ai.chat_completion_client_base import (  # noqa: E402
    ChatCompletionClientBase,
)
from semantic_kernel.contents import (  # noqa: E402
    ChatHistorySummarizationReducer,
    ChatHistoryTruncationReducer,
    ChatMessageContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
)
from semantic_kernel.contents.utils.author_role import AuthorRole  # noqa: E402

LEGACY_ID = "legacy_function_call"
ROLES = {
    "system": AuthorRole.SYSTEM,
    "developer": AuthorRole.DEVELOPER,
    "user": AuthorRole.USER,
    "assistant": AuthorRole.ASSISTANT,
    "tool": AuthorRole.TOOL,
    "function": AuthorRole.TOOL,
}


class FixedSummaryService(ChatCompletionClientBase):
    """Answers every request with a fixed assistant message; records what it was sent."""

    summary: str = ""
    fail: bool = False
    received: list[list[dict[str, Any]]] = Field(default_factory=list)

    async def _inner_get_chat_message_contents(self, chat_history, settings):  # type: ignore[no-untyped-def]
        self.received.append(
            [
                {"ctxlab_id": m.metadata.get("ctxlab_id"), "body": m.to_dict()}
                for m in chat_history.messages
            ]
        )
        if self.fail:
            raise RuntimeError("summarizer down")
        return [ChatMessageContent(role=AuthorRole.ASSISTANT, content=self.summary)]


def to_sk(message: dict[str, Any]) -> ChatMessageContent:
    role = ROLES[message["role"]]
    metadata: dict[str, Any] = {"ctxlab_id": message["id"]}
    if message.get("is_summary"):
        metadata["__summary__"] = True
    content = message["content"]
    if role is AuthorRole.TOOL:
        result = FunctionResultContent(
            id=message.get("tool_call_id") or LEGACY_ID,
            function_name=message.get("name") or "",
            result=content,
        )
        return ChatMessageContent(role=role, items=[result], metadata=metadata)
    calls = message.get("tool_calls") or []
    if calls:
        items: list[Any] = [
            FunctionCallContent(id=c["id"] or LEGACY_ID, name=c["name"], arguments=c["arguments"])
            for c in calls
        ]
        if content:
            items.append(TextContent(text=content))
        return ChatMessageContent(
            role=role, items=items, metadata=metadata, name=message.get("name")
        )
    return ChatMessageContent(
        role=role, content=content, metadata=metadata, name=message.get("name")
    )


def describe(message: ChatMessageContent) -> dict[str, Any]:
    if "ctxlab_id" in message.metadata:
        return {"id": message.metadata["ctxlab_id"]}
    return {
        "id": None,
        "role": message.role.value,
        "content": message.content,
        "summary": bool(message.metadata.get("__summary__")),
    }


async def run(case: dict[str, Any]) -> dict[str, Any]:
    params = case["params"]
    history = [to_sk(m) for m in case["chat"]]
    service = FixedSummaryService(ai_model_id="fixed")
    service.summary = case.get("summary", "")
    service.fail = bool(case.get("fail"))
    reducer: Any
    if case["reducer"] == "truncation":
        reducer = ChatHistoryTruncationReducer(
            target_count=params["target_count"], threshold_count=params["threshold_count"]
        )
    else:
        reducer = ChatHistorySummarizationReducer(
            service=service,
            target_count=params["target_count"],
            threshold_count=params["threshold_count"],
            use_single_summary=params["use_single_summary"],
            include_function_content_in_summary=params["include_function_content_in_summary"],
            fail_on_error=params["fail_on_error"],
        )
    reducer.messages = history
    error = None
    try:
        reduced = await reducer.reduce()
    except Exception as exc:  # the reducer's own error is part of the result
        reduced = None
        error = type(exc).__name__
    return {
        "reduced": reduced is not None,
        "error": error,
        "history": [describe(m) for m in reducer.messages],
        "requests": service.received,
    }


def main() -> None:
    cases = json.load(sys.stdin)["cases"]
    results = [asyncio.run(run(case)) for case in cases]
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
