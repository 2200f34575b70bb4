"""Oracle: the OpenAI Agents SDK's session history with ``SessionSettings(limit=N)``.

Runs in the framework environment only (never imports ctxlab). For every case, the chat's
messages are stored in a fresh ``SQLiteSession(":memory:")`` as the SDK stores Responses items;
``Runner.run(agent, input, session=..., run_config=RunConfig(session_settings=...))`` then calls
a fake ``Model`` that records the ``input`` it receives (the exact items the SDK would send) and
answers with one fixed assistant message. Tracing is disabled.

How a chat becomes stored items (the same rule as ctxlab's ``openai_agents_session`` module,
written here independently): a leading system/developer message is the agent's
``instructions``; a user message -> ``{"role": "user", "content": text}``; another
system/developer message -> ``{"role": ..., "content": text}``; an assistant message -> one
``message`` item with its text (when it has text or no tool calls), then one ``function_call``
item per tool call; a tool result -> one ``function_call_output``. A legacy ``function_call``
(no id) gets ``call_<message id>`` and the next id-less result answers the latest one. When the
chat ends with a user message, that message is the run's ``input`` (the turn as it arrives);
otherwise the input is empty and the model sees the stored session alone.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, SQLiteSession
from agents.memory import SessionSettings
from agents.tracing import set_tracing_disabled
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText


def stored_items(chat: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    instructions = None
    start = 0
    if chat and chat[0]["role"] in ("system", "developer"):
        instructions = chat[0]["content"]
        start = 1
    items: list[dict[str, Any]] = []
    legacy_call: str | None = None
    for message in chat[start:]:
        role = message["role"]
        text = message["content"]
        if role in ("user", "system", "developer"):
            items.append({"role": role, "content": text})
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if text or not calls:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                )
            for call in calls:
                call_id = call["id"]
                if call_id is None:
                    call_id = legacy_call = f"call_{message['id']}"
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call_id,
                        "name": call["name"],
                        "arguments": call["arguments"],
                    }
                )
        else:  # tool / function result
            call_id = message.get("tool_call_id") or legacy_call or f"call_{message['id']}"
            items.append({"type": "function_call_output", "call_id": call_id, "output": text})
    return instructions, items


class RecordingModel(Model):
    def __init__(self) -> None:
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions, input, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.inputs.append({"instructions": system_instructions, "input": input})
        reply = ResponseOutputMessage(
            id="msg_oracle",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text="ok", annotations=[])],
        )
        return ModelResponse(output=[reply], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        raise NotImplementedError


async def run_case(case: dict[str, Any]) -> dict[str, Any]:
    chat = case["chat"]
    instructions, items = stored_items(chat)
    run_input: Any = []
    if items and chat[-1]["role"] == "user" and items[-1].get("role") == "user":
        run_input = [items.pop()]
    session = SQLiteSession("oracle", ":memory:")
    if items:
        await session.add_items(items)
    model = RecordingModel()
    agent = Agent(name="oracle", instructions=instructions, model=model)
    settings = SessionSettings(limit=case["params"]["limit"])
    await Runner.run(
        agent, run_input, session=session, run_config=RunConfig(session_settings=settings)
    )
    session.close()
    first = model.inputs[0]
    received = first["input"]
    if isinstance(received, str):
        received = [{"role": "user", "content": received}]
    return {"instructions": first["instructions"], "input": json.loads(json.dumps(received))}


async def main() -> None:
    set_tracing_disabled(True)
    payload = json.load(sys.stdin)
    results = [await run_case(case) for case in payload["cases"]]
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
