# ruff: noqa: E402  (the imports follow the sys.path fix below)
"""Oracle: LangChain's own code on ctxlab's chats (runs only in the frameworks environment).

Reads ``{"cases": [...]}`` on standard input and prints ``{"results": [...]}``, one result per
case. Each case has a ``policy``:

* ``count``: ``count_tokens_approximately`` of every message and of the whole chat.
* ``trim``: ``trim_messages(messages, **params)``.
* ``summarization``: an agent (``create_agent``) with ``SummarizationMiddleware`` and a fake
  chat model that records every request and answers the summary request with a fixed text.
* ``clear``: an agent with ``ContextEditingMiddleware(edits=[ClearToolUsesEdit(...)])``; the
  result is the request the model received.

A chat arrives as Chat Completions-shaped dicts (``tests/oracle_support.neutral``) and becomes
LangChain messages the way ``langchain_openai`` reads such dicts: ``convert_to_messages`` with
each call's arguments parsed by ``parse_tool_call`` (a call that fails becomes an invalid tool
call), a legacy call without id as ``additional_kwargs["function_call"]``. A leading system or
developer message is the agent's ``system_prompt``, not part of its state.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# This file is named after the package it imports: its own folder must not shadow it.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_messages,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.output_parsers.openai_tools import make_invalid_tool_call, parse_tool_call
from langchain_core.outputs import ChatGeneration, ChatResult

FINAL_REPLY = "oracle: done"


def to_langchain(chat: list[dict[str, Any]]) -> list[BaseMessage]:
    dicts: list[dict[str, Any]] = []
    invalid: dict[int, list[Any]] = {}
    for pos, m in enumerate(chat):
        item: dict[str, Any] = {"role": m["role"], "content": m["content"], "id": m["id"]}
        if m.get("name") is not None:
            item["name"] = m["name"]
        if m["role"] == "tool":
            item["tool_call_id"] = m.get("tool_call_id") or ""
        calls = m.get("tool_calls") or []
        if calls and m["role"] == "assistant":
            if all(c["id"] is None for c in calls):
                first = calls[0]
                item["function_call"] = {"name": first["name"], "arguments": first["arguments"]}
            else:
                parsed: list[Any] = []
                for c in calls:
                    raw = {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    try:
                        call = parse_tool_call(raw, return_id=True)
                        if not isinstance(call["args"], dict):  # AIMessage would reject it
                            raise ValueError("arguments are not a JSON object")
                        parsed.append(call)
                    except Exception as exc:
                        invalid.setdefault(pos, []).append(make_invalid_tool_call(raw, str(exc)))
                item["tool_calls"] = parsed
        dicts.append(item)
    messages = convert_to_messages(dicts)
    for pos, bad in invalid.items():
        messages[pos].invalid_tool_calls = bad
    return messages


class RecordingModel(BaseChatModel):
    """Answers the summary request with a fixed text and anything else with FINAL_REPLY;
    records every request."""

    summary: str = "FIXED SUMMARY"
    summary_marker: str = ""
    llm_kind: str = "oracle-chat"
    requests: list[list[BaseMessage]] = []  # noqa: RUF012  (a pydantic field)

    @property
    def _llm_type(self) -> str:
        return self.llm_kind

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.requests.append(list(messages))
        is_summary = (
            len(messages) == 1
            and isinstance(messages[0], HumanMessage)
            and self.summary_marker
            and self.summary_marker in messages[0].text
        )
        text = self.summary if is_summary else FINAL_REPLY
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def split_system(chat: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    if chat and chat[0]["role"] in ("system", "developer"):
        return chat[0]["content"], chat[1:]
    return None, chat


def describe(m: BaseMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"id": m.id, "type": m.type, "content": m.content}
    if isinstance(m, AIMessage):
        out["tool_calls"] = [dict(c) for c in m.tool_calls]
    return out


def run_count(case: dict[str, Any]) -> dict[str, Any]:
    messages = to_langchain(case["chat"])
    cpt = case.get("chars_per_token", 4.0)
    return {
        "each": [count_tokens_approximately([m], chars_per_token=cpt) for m in messages],
        "total": count_tokens_approximately(messages, chars_per_token=cpt),
    }


def run_trim(case: dict[str, Any]) -> dict[str, Any]:
    params = dict(case["params"])
    counter = params.pop("token_counter")
    messages = to_langchain(case["chat"])
    token_counter: Any = len if counter == "len" else counter
    try:
        out = trim_messages(messages, token_counter=token_counter, **params)
    except ValueError as exc:
        return {"error": str(exc)}
    return {"messages": [describe(m) for m in out]}


def run_summarization(case: dict[str, Any]) -> dict[str, Any]:
    params = dict(case["params"])
    system, state = split_system(case["chat"])
    model = RecordingModel(
        summary=case["summary"],
        summary_marker=case["summary_marker"],
        llm_kind=params.pop("llm_type", "oracle-chat"),
        requests=[],
    )
    max_input = params.pop("max_input_tokens", None)
    if max_input is not None:
        model.profile = {"max_input_tokens": max_input}
    trigger = params.pop("trigger")
    if isinstance(trigger, list):
        trigger = [tuple(t) if isinstance(t, list) else t for t in trigger]
    keep = tuple(params.pop("keep"))
    middleware = SummarizationMiddleware(model, trigger=trigger, keep=keep, **params)
    agent = create_agent(model=model, system_prompt=system, middleware=[middleware])
    state_in = to_langchain(state)
    done = agent.invoke({"messages": state_in})
    summary_prompts = [
        r[0].content for r in model.requests if len(r) == 1 and case["summary_marker"] in r[0].text
    ]
    main = [r for r in model.requests if not (len(r) == 1 and case["summary_marker"] in r[0].text)]
    return {
        "state": [describe(m) for m in done["messages"]],
        "summary_prompts": summary_prompts,
        "main_request": [describe(m) for m in main[-1]] if main else [],
    }


def run_clear(case: dict[str, Any]) -> dict[str, Any]:
    params = dict(case["params"])
    system, state = split_system(case["chat"])
    model = RecordingModel(requests=[])
    edit = ClearToolUsesEdit(
        trigger=params["trigger"],
        clear_at_least=params["clear_at_least"],
        keep=params["keep"],
        clear_tool_inputs=params["clear_tool_inputs"],
        exclude_tools=tuple(params["exclude_tools"]),
        placeholder=params["placeholder"],
    )
    middleware = ContextEditingMiddleware(edits=[edit], token_count_method="approximate")
    agent = create_agent(model=model, system_prompt=system, middleware=[middleware])
    agent.invoke({"messages": to_langchain(state)})
    (request,) = model.requests
    return {"request": [describe(m) for m in request]}


RUNNERS = {
    "count": run_count,
    "trim": run_trim,
    "summarization": run_summarization,
    "clear": run_clear,
}


def main() -> None:
    payload = json.load(sys.stdin)
    results = [RUNNERS[case["policy"]](case) for case in payload["cases"]]
    json.dump({"results": results}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
