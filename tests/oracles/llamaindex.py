"""Oracle: LlamaIndex's own ChatMemoryBuffer and Memory (llama-index-core 0.14.25).

Runs only in the framework environment (never imports ctxlab). Reads ``{"cases": [...]}`` on
standard input; each case has ``policy`` ("chat_memory_buffer" | "memory"), ``chat`` (neutral
Chat Completions-shaped dicts with ids) and ``params``; prints ``{"results": [...]}``, one list
of the returned message ids per case.

A chat is stored as a LlamaIndex user with an OpenAI model stores it: llama-index-llms-openai's
``from_openai_message_dict`` keeps role and content and puts every other field of the OpenAI
message in ``additional_kwargs``; an assistant message that only calls tools has content None
(the API sends ``"content": null``). The ctxlab id travels outside the message (a list beside
it for ChatMemoryBuffer, the position in the store for Memory), so it is never counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import llama_index.core

# LlamaIndex points tiktoken at the cache it ships (llama_index/core/_static/tiktoken_cache)
# itself in get_tokenizer(); set it here too so nothing can reach the network.
os.environ.setdefault(
    "TIKTOKEN_CACHE_DIR",
    os.path.join(os.path.dirname(llama_index.core.__file__), "_static", "tiktoken_cache"),
)

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer, Memory


def to_chat_message(item: dict[str, Any]) -> ChatMessage:
    kwargs: dict[str, Any] = {}
    if "name" in item:
        kwargs["name"] = item["name"]
    calls = item.get("tool_calls") or []
    if len(calls) == 1 and calls[0]["id"] is None:
        kwargs["function_call"] = {"name": calls[0]["name"], "arguments": calls[0]["arguments"]}
    elif calls:
        kwargs["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls
        ]
    if "tool_call_id" in item:
        kwargs["tool_call_id"] = item["tool_call_id"]
    content = item["content"]
    if item["role"] == "assistant" and calls and not content:
        content = None
    return ChatMessage(role=item["role"], content=content, additional_kwargs=kwargs)


def run_buffer(chat: list[dict[str, Any]], params: dict[str, Any]) -> list[str]:
    messages = [to_chat_message(m) for m in chat]
    buffer = ChatMemoryBuffer.from_defaults(
        chat_history=messages, token_limit=params.get("token_limit")
    )
    got = buffer.get(initial_token_count=params.get("initial_token_count", 0))
    # get() returns a suffix of the stored list, the same objects: map them back by identity
    index = {id(m): i for i, m in enumerate(buffer.get_all())}
    return [chat[index[id(m)]]["id"] for m in got]


async def run_memory(chat: list[dict[str, Any]], params: dict[str, Any]) -> list[str]:
    memory = Memory.from_defaults(
        session_id="oracle",
        async_database_uri="sqlite+aiosqlite:///:memory:",
        **params,
    )
    for item in chat:
        await memory.aput(to_chat_message(item))
    active = await memory.aget()
    archived = await memory.sql_store.get_messages("oracle", status=None)
    n_archived = len(archived) - len(active)
    # archived messages are always the oldest: the active ones are the last len(active)
    for got, item in zip(active, chat[n_archived:], strict=True):
        if got.content != to_chat_message(item).content:
            raise AssertionError(f"active message {item['id']} does not match")
    return [item["id"] for item in chat[n_archived:]]


def main() -> None:
    cases = json.load(sys.stdin)["cases"]
    results: list[Any] = []
    for case in cases:
        if case["policy"] == "chat_memory_buffer":
            results.append(run_buffer(case["chat"], case["params"]))
        else:
            results.append(asyncio.run(run_memory(case["chat"], case["params"])))
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
