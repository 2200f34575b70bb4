"""Oracle: AutoGen's own model contexts (autogen-core 0.7.5) on ctxlab's chats.

Runs only in the framework environment (never imports ctxlab). Reads
``{"cases": [{"policy", "chat", "counts", "fixed", "params", "window"}, ...]}`` on stdin: the
chat as neutral Chat Completions dicts, ctxlab's token count of each message and the request's
fixed tokens (reply priming), so the duck-typed model client counts exactly what ctxlab's
counter would. Each case adds every message to a fresh context with ``add_message`` and prints
what ``await ctx.get_messages()`` returned, each AutoGen message named by the ctxlab ids it
was built from (an inserted message by its type, content and source).

The mapping (as ``AssistantAgent`` records a conversation): a leading system message is the
agent's system message, outside the context; a later one a SystemMessage; user ->
UserMessage(source=name or "user"); assistant text -> AssistantMessage(content=str); assistant
with tool calls -> AssistantMessage(content=[FunctionCall...], thought=text or None); a run of
consecutive tool results -> ONE FunctionExecutionResultMessage.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from autogen_core import FunctionCall
from autogen_core.model_context import (
    BufferedChatCompletionContext,
    ChatCompletionContext,
    HeadAndTailChatCompletionContext,
    TokenLimitedChatCompletionContext,
)
from autogen_core.models import (
    AssistantMessage,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    SystemMessage,
    UserMessage,
)


class CountingClient:
    """Duck-typed model client: ``count_tokens`` is the fixed part plus each message's count
    (the sum of its ctxlab messages' counts), looked up by object identity."""

    def __init__(self, counts: dict[int, int], fixed: int, window: int) -> None:
        self.counts = counts
        self.fixed = fixed
        self.window = window

    def count_tokens(self, messages: list[LLMMessage], *, tools: Any = ()) -> int:
        return self.fixed + sum(self.counts[id(m)] for m in messages)

    def remaining_tokens(self, messages: list[LLMMessage], *, tools: Any = ()) -> int:
        return self.window - self.count_tokens(messages, tools=tools)


def build(chat: list[dict[str, Any]], counts: list[int]) -> tuple[list[Any], dict[int, Any]]:
    """The AutoGen messages of ``chat`` (its leading system message left out) and, by object
    identity, the ctxlab ids and token count of each."""
    start = 1 if chat and chat[0]["role"] in ("system", "developer") else 0
    out: list[Any] = []
    sources: dict[int, Any] = {}
    i = start
    while i < len(chat):
        m = chat[i]
        role = m["role"]
        ids = [m["id"]]
        tokens = counts[i]
        if role in ("tool", "function"):
            results = []
            j = i
            while j < len(chat) and chat[j]["role"] in ("tool", "function"):
                r = chat[j]
                results.append(
                    FunctionExecutionResult(
                        content=r["content"],
                        name=r.get("name") or "",
                        call_id=r.get("tool_call_id") or "",
                    )
                )
                if j > i:
                    ids.append(r["id"])
                    tokens += counts[j]
                j += 1
            message: Any = FunctionExecutionResultMessage(content=results)
            i = j
        else:
            if role in ("system", "developer"):
                message = SystemMessage(content=m["content"])
            elif role == "user":
                message = UserMessage(content=m["content"], source=m.get("name") or "user")
            elif m.get("tool_calls"):
                calls = [
                    FunctionCall(id=c["id"] or "", name=c["name"], arguments=c["arguments"])
                    for c in m["tool_calls"]
                ]
                message = AssistantMessage(
                    content=calls, thought=m["content"] or None, source="assistant"
                )
            else:
                message = AssistantMessage(content=m["content"], source="assistant")
            i += 1
        out.append(message)
        sources[id(message)] = (ids, tokens)
    return out, sources


def context_for(case: dict[str, Any], client: CountingClient) -> ChatCompletionContext:
    params = case["params"]
    policy = case["policy"]
    if policy == "buffered":
        return BufferedChatCompletionContext(buffer_size=params["buffer_size"])
    if policy == "head_and_tail":
        return HeadAndTailChatCompletionContext(
            head_size=params["head_size"], tail_size=params["tail_size"]
        )
    if policy == "token_limited":
        return TokenLimitedChatCompletionContext(
            client,  # type: ignore[arg-type]
            token_limit=params["token_limit"],
        )
    raise ValueError(f"unknown policy {policy!r}")


async def run(case: dict[str, Any]) -> list[dict[str, Any]]:
    messages, sources = build(case["chat"], case["counts"])
    counts = {key: tokens for key, (_, tokens) in sources.items()}
    client = CountingClient(counts, case["fixed"], case.get("window") or 0)
    ctx = context_for(case, client)
    for message in messages:
        await ctx.add_message(message)
    result = []
    for message in await ctx.get_messages():
        known = sources.get(id(message))
        if known is not None:
            result.append({"type": message.type, "ids": known[0]})
        else:
            result.append(
                {
                    "type": message.type,
                    "content": message.content,
                    "source": getattr(message, "source", None),
                }
            )
    return result


def main() -> None:
    payload = json.load(sys.stdin)
    results = [asyncio.run(run(case)) for case in payload["cases"]]
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
