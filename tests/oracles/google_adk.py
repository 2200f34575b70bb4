"""Oracle: Google ADK's events compaction (google-adk 2.13.0), run by ADK's own code.

Runs ONLY in the framework environment (scripts/oracle_env.py); never imports ctxlab.
Each case's chat (neutral Chat Completions-shaped dicts) becomes an ADK session on an
InMemorySessionService, appended invocation by invocation (an invocation begins at each user
message); after each invocation the runner's post-invocation compaction runs:
``apps.compaction._run_compaction_for_sliding_window`` (which runs the token-threshold path
``_run_compaction_for_token_threshold`` first), with the stock ``LlmEventSummarizer`` over a
fake ``BaseLlm`` that answers a fixed summary and records every request it gets. Then
``flows.llm_flows.context._contents._get_contents`` gives the contents the model would see.

Mapping (the same as ctxlab/strategies/frameworks/google_adk_compaction.py): a leading system
prompt is the agent's instruction (not an event); a user message is a user event; an assistant
message is one model event by "agent" (text part, then one function_call part per call); a run
of consecutive tool results is one function-response event (response={"result": content});
args are the JSON object of the arguments, {} when empty, {"arguments": text} otherwise.

Input: {"cases": [{"chat": [...], "params": {...}, "summary": "..."}]}
Output: {"results": [{"contents": [...], "requests": [...], "summarized": [...],
"estimate": int | null}]}
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App, compaction
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.events.event import Event
from google.adk.flows.llm_flows.context import _compaction, _contents
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.sessions import InMemorySessionService
from google.genai import types
from pydantic import Field

AGENT = "agent"


class FixedSummaryLlm(BaseLlm):
    """Answers every request with the same summary; records each request's prompt text."""

    summary: str = ""
    prompts: list[str] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        texts = [p.text or "" for c in llm_request.contents for p in (c.parts or [])]
        assert len(llm_request.contents) == 1 and llm_request.contents[0].role == "user"
        self.prompts.append("".join(texts))
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=self.summary)])
        )


def _args(arguments: str) -> dict[str, Any]:
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": arguments}


def build_events(chat: list[dict[str, Any]]) -> tuple[list[list[Event]], dict[str, list[str]]]:
    """The chat as events grouped by invocation, and each event's message ids."""
    start = 0
    while start < len(chat) and chat[start]["role"] in ("system", "developer"):
        start += 1
    latest_name: dict[str, str] = {}
    invocations: list[list[Event]] = []
    ids: dict[str, list[str]] = {}
    seen_user = False
    pending: list[tuple[types.Part, str]] = []
    count = 0

    def add(event: Event, message_ids: list[str]) -> None:
        nonlocal count
        if not invocations:
            invocations.append([])
        invocations[-1].append(event)
        ids[event.id] = message_ids

    def stamp() -> float:
        nonlocal count
        count += 1
        return float(count)

    def flush() -> None:
        if pending:
            content = types.Content(role="user", parts=[p for p, _ in pending])
            event = Event(
                author=AGENT,
                invocation_id=f"inv-{max(len(invocations) - 1, 0)}",
                timestamp=stamp(),
                content=content,
            )
            add(event, [i for _, i in pending])
            pending.clear()

    for m in chat[start:]:
        for call in m.get("tool_calls") or []:
            if call["id"]:
                latest_name[call["id"]] = call["name"]
        if m["role"] in ("tool", "function"):
            name = m.get("name") or latest_name.get(m.get("tool_call_id") or "", "")
            response = types.FunctionResponse(
                id=m.get("tool_call_id"), name=name, response={"result": m["content"]}
            )
            pending.append((types.Part(function_response=response), m["id"]))
            continue
        flush()
        if m["role"] == "user":
            if seen_user:
                invocations.append([])
            seen_user = True
        calls = (m.get("tool_calls") or []) if m["role"] == "assistant" else []
        parts: list[types.Part] = []
        if m["content"] or not calls:
            parts.append(types.Part(text=m["content"]))
        for call in calls:
            fc = types.FunctionCall(id=call["id"], name=call["name"], args=_args(call["arguments"]))
            parts.append(types.Part(function_call=fc))
        model = m["role"] == "assistant"
        event = Event(
            author=AGENT if model else "user",
            invocation_id=f"inv-{max(len(invocations) - 1, 0)}",
            timestamp=stamp(),
            content=types.Content(role="model" if model else "user", parts=parts),
        )
        add(event, [m["id"]])
    flush()
    return invocations, ids


def render(content: types.Content) -> dict[str, Any]:
    parts: list[list[str]] = []
    for p in content.parts or []:
        if p.function_call:
            args = json.dumps(dict(p.function_call.args or {}), sort_keys=True)
            parts.append(["call", p.function_call.name or "", args])
        elif p.function_response:
            response = json.dumps(dict(p.function_response.response or {}), sort_keys=True)
            parts.append(["response", p.function_response.name or "", response])
        else:
            parts.append(["text", p.text or ""])
    return {"role": content.role, "parts": parts}


async def run_case(case: dict[str, Any]) -> dict[str, Any]:
    params = case["params"]
    llm = FixedSummaryLlm(model="fake-summarizer", summary=case["summary"])
    config = None
    if any(v is not None for v in params.values()):
        config = EventsCompactionConfig(summarizer=LlmEventSummarizer(llm=llm), **params)
    agent = LlmAgent(name=AGENT, model=llm, instruction="")
    app = App(name="oracle", root_agent=agent, events_compaction_config=config)
    service = InMemorySessionService()
    session = await service.create_session(app_name="oracle", user_id="u")
    invocations, ids = build_events(case["chat"])
    raw = [e for inv in invocations for e in inv]
    estimate = compaction._estimate_prompt_token_count(
        events=raw, current_branch=None, agent_name=""
    )
    for invocation in invocations:
        for event in invocation:
            await service.append_event(session=session, event=event)
        if config is None:
            continue
        async for event in compaction._run_compaction_for_sliding_window(app, session, service):
            await service.append_event(session=session, event=event)
    events = session.events
    visible = {id(e) for e in _compaction._process_compaction_events(events, AGENT)}
    summarized = [
        mid
        for e in events
        if not e.actions.compaction and id(e) not in visible
        for mid in ids[e.id]
    ]
    contents = _contents._get_contents(None, events, AGENT)
    return {
        "contents": [render(c) for c in contents],
        "requests": list(llm.prompts),
        "summarized": summarized,
        "estimate": estimate,
        "compactions": sum(1 for e in events if e.actions.compaction),
    }


async def main() -> None:
    cases = json.load(sys.stdin)["cases"]
    results = [await run_case(case) for case in cases]
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
