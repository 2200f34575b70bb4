"""ctxlab's LangChain policies against LangChain's own code (langchain 1.5.2, core 1.8.3).

One oracle subprocess (``tests/oracles/langchain.py``) runs every case: LangChain's
``count_tokens_approximately``, ``trim_messages``, and agents built with ``create_agent`` around
``SummarizationMiddleware`` and ``ContextEditingMiddleware`` with a fake chat model that records
its requests and answers the summary request with a fixed text. Each case compares what ctxlab
keeps, drops, clears and summarizes with what LangChain did on the same chat, the placeholder
texts, the summary message (text and position) and the summarizer's prompt, character for
character. Settings are derived from each chat (a budget of half its LangChain count, ...) so
that every policy acts on every chat; LangChain's defaults are run too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.base import Decision, TrimResult
from ctxlab.strategies.frameworks._langchain import (
    ANTHROPIC_CHARS_PER_TOKEN,
    approximate_tokens,
    count_tokens_approximately,
    lc_type,
    parsed_tool_calls,
)
from ctxlab.strategies.frameworks.langchain_clear_tool_uses import (
    ClearToolUsesEdit,
    LangChainClearToolUses,
)
from ctxlab.strategies.frameworks.langchain_summarization import (
    LangChainSummarization,
    SummarizationMiddleware,
)
from ctxlab.strategies.frameworks.langchain_trim_messages import LangChainTrimMessages
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter
from tests.oracle_support import neutral, oracle_chats, run_oracle

FIXED_SUMMARY = "FIXED SUMMARY: the user asked for things; the assistant did them."

# Tool-call arguments LangChain cannot parse, or parses to nothing: they must count and render
# the way langchain_openai reads them (invalid calls are neither counted nor rendered).
ODD_ARGUMENTS_CHAT: tuple[Message, ...] = (
    Message(Role.SYSTEM, "You are terse.", "s0"),
    Message(Role.DEVELOPER, "Prefer tools.", "d0"),
    Message(Role.USER, "Look things up.\nTwo lines.\nThree.", "u1", name="ann"),
    Message(
        Role.ASSISTANT,
        "Calling.",
        "a1",
        tool_calls=(
            ToolCall("c1", "search", '{"q": "caf\\u00e9 <b> & \'x\'", "n": 1.50, "k": null}'),
            ToolCall("c2", "broken", "{not json"),
            ToolCall("c3", "empty", ""),
            ToolCall("c4", "listy", "[1, 2]"),
            ToolCall("c5", "nullish", "null"),
        ),
    ),
    Message(Role.TOOL, "result one\nline two\nline three", "t1", name="search", tool_call_id="c1"),
    Message(Role.TOOL, "broken result", "t2", tool_call_id="c2"),
    Message(Role.TOOL, "empty result", "t3", tool_call_id="c3"),
    Message(Role.TOOL, "list result", "t4", tool_call_id="c4"),
    Message(Role.TOOL, "null result", "t5", tool_call_id="c5"),
    Message(Role.ASSISTANT, "", "a2", tool_calls=(ToolCall(None, "legacy", '{"x": 1}'),)),
    Message(Role.FUNCTION, "legacy result", "f1", name="legacy"),
    Message(Role.ASSISTANT, "Done: " + "x" * 300, "a3"),
    Message(Role.USER, "Thanks\n" * 40, "u2"),
    Message(Role.ASSISTANT, "Welcome.", "a4"),
)


def chats() -> dict[str, tuple[Message, ...]]:
    return {**oracle_chats(), "odd-arguments": ODD_ARGUMENTS_CHAT, "bug-38352": BUG_38352_CHAT}


@dataclass(frozen=True)
class Case:
    """One comparison: the payload for the oracle and how to check its answer."""

    chat: str
    label: str
    payload: dict[str, Any]
    check: Callable[[dict[str, Any]], None]

    @property
    def id(self) -> str:
        return f"{self.payload['policy']}-{self.chat}-{self.label}"


COUNTER = get_counter("gpt-4o")


# -- count_tokens_approximately -------------------------------------------------------------------


def count_cases(name: str, messages: tuple[Message, ...]) -> list[Case]:
    out = []
    for cpt in (4.0, ANTHROPIC_CHARS_PER_TOKEN):

        def check(result: dict[str, Any], cpt: float = cpt) -> None:
            assert [approximate_tokens(m, cpt) for m in messages] == result["each"]
            assert count_tokens_approximately(messages, cpt) == result["total"]

        payload = {"policy": "count", "chat": neutral(messages), "chars_per_token": cpt}
        out.append(Case(name, f"cpt{cpt}", payload, check))
    return out


# -- trim_messages --------------------------------------------------------------------------------


def _lc_types(text: str) -> list[str] | None:
    names = [t.strip() for t in text.split(",") if t.strip()]
    return names or None


def trim_cases(name: str, messages: tuple[Message, ...]) -> list[Case]:
    total = count_tokens_approximately(messages)
    settings: list[tuple[str, LangChainTrimMessages]] = [
        ("defaults-half", LangChainTrimMessages(max_tokens=total // 2)),
        (
            "system-human-partial",
            LangChainTrimMessages(
                max_tokens=total // 3,
                include_system=True,
                start_on="human",
                allow_partial=True,
            ),
        ),
        (
            "first-partial-end-ai",
            LangChainTrimMessages(
                max_tokens=total // 2, strategy="first", allow_partial=True, end_on="ai"
            ),
        ),
        (
            "len-end-human-tool",
            LangChainTrimMessages(
                max_tokens=max(len(messages) // 2, 1),
                token_counter="len",
                include_system=True,
                end_on="human, tool",
            ),
        ),
        (
            "tiny-partial",
            LangChainTrimMessages(
                max_tokens=min(300, total), allow_partial=True, start_on="human, ai"
            ),
        ),
    ]
    out = []
    for label, strategy in settings:
        params = {
            "max_tokens": strategy.max_tokens,
            "strategy": strategy.strategy,
            "allow_partial": strategy.allow_partial,
            "include_system": strategy.include_system,
            "start_on": _lc_types(strategy.start_on),
            "end_on": _lc_types(strategy.end_on),
            "token_counter": strategy.token_counter,
        }

        def check(result: dict[str, Any], strategy: LangChainTrimMessages = strategy) -> None:
            mine = strategy.apply(messages, COUNTER)
            theirs = result["messages"]
            assert [m.id for m in mine.messages] == [m["id"] for m in theirs]
            assert [m.content for m in mine.messages] == [m["content"] for m in theirs]
            _check_decisions(messages, mine)

        payload = {"policy": "trim", "chat": neutral(messages), "params": params}
        out.append(Case(name, label, payload, check))
    return out


def _check_decisions(messages: tuple[Message, ...], result: TrimResult) -> None:
    """Every input id has a decision, and the sent ids are exactly the sent decisions."""
    ids = {m.id for m in messages}
    assert set(result.decisions) == ids
    sent = {m.id for m in result.messages} & ids
    assert {i for i, d in result.decisions.items() if d.is_sent} == sent


# -- ContextEditingMiddleware + ClearToolUsesEdit ----------------------------------------------


def _state(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The agent's state: the chat without its leading system prompt (the system slot)."""
    return messages[1:] if messages and messages[0].role.is_instruction else messages


def _sent(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """What the model received, in the oracle's terms (JSON round trip for the arguments)."""
    out = []
    for m in messages:
        item: dict[str, Any] = {"type": lc_type(m), "content": m.content}
        if m.role is Role.ASSISTANT:
            item["tool_calls"] = parsed_tool_calls(m)
        out.append(item)
    return json.loads(json.dumps(out, default=str))


def _theirs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("type", "content", "tool_calls")
    return [{k: m[k] for k in keys if k in m} for m in messages]


def clear_cases(name: str, messages: tuple[Message, ...]) -> list[Case]:
    half = count_tokens_approximately(_state(messages)) // 2
    names = Counter(m.name or "" for m in messages if m.role is Role.TOOL)
    names.update(
        c.name for m in messages for c in m.tool_calls if m.role is Role.ASSISTANT and c.id
    )
    busiest = names.most_common(1)[0][0] if names else "none"
    settings = [
        ("defaults", ClearToolUsesEdit()),
        ("half-keep1", ClearToolUsesEdit(trigger=half, keep=1)),
        (
            "half-at-least-inputs",
            ClearToolUsesEdit(trigger=half, clear_at_least=half // 5, clear_tool_inputs=True),
        ),
        (
            "zero-exclude",
            ClearToolUsesEdit(trigger=0, keep=0, exclude_tools=busiest, placeholder="<gone>"),
        ),
    ]
    out = []
    for label, edit in settings:
        strategy = LangChainClearToolUses(edit=edit)
        params = {
            "trigger": edit.trigger,
            "clear_at_least": edit.clear_at_least,
            "keep": edit.keep,
            "clear_tool_inputs": edit.clear_tool_inputs,
            "exclude_tools": sorted(edit.excluded),
            "placeholder": edit.placeholder,
        }

        def check(result: dict[str, Any], strategy: LangChainClearToolUses = strategy) -> None:
            mine = strategy.apply(messages, COUNTER)
            theirs = result["request"]
            assert _sent(mine.messages) == _theirs(theirs)
            state = [m for m in theirs if m["type"] != "system" or m["id"] is not None]
            sent_ids = [m.id for m in mine.messages if m.id in {t["id"] for t in state}]
            assert sent_ids == [m["id"] for m in state]
            cleared = {m.id for m in mine.inserted}
            assert cleared == {i for i, d in mine.decisions.items() if d is Decision.CLEARED}
            _check_decisions(messages, mine)
            assert not mine.replace

        payload = {"policy": "clear", "chat": neutral(messages), "params": params}
        out.append(Case(name, label, payload, check))
    return out


# -- SummarizationMiddleware -----------------------------------------------------------------------

BUG_38352_CHAT: tuple[Message, ...] = (
    Message(Role.SYSTEM, "You run two lookups at once.", "b0"),
    Message(Role.USER, "Find both.", "b1"),
    Message(Role.ASSISTANT, "", "b2", tool_calls=(ToolCall("x1", "lookup", '{"k": 1}'),)),
    Message(Role.ASSISTANT, "", "b3", tool_calls=(ToolCall("y1", "lookup", '{"k": 2}'),)),
    Message(Role.TOOL, "first", "b4", tool_call_id="x1"),
    Message(Role.TOOL, "second", "b5", tool_call_id="y1"),
    Message(Role.ASSISTANT, "Both found.", "b6"),
    Message(Role.USER, "Thanks.", "b7"),
    Message(Role.ASSISTANT, "Welcome.", "b8"),
)
"""Tool results at the cut answering two AI messages (langchain-ai/langchain#38352)."""


def summarization_settings(
    messages: tuple[Message, ...],
) -> list[tuple[str, SummarizationMiddleware]]:
    state = _state(messages)
    half = count_tokens_approximately(state) // 2
    quarter_share = max(count_tokens_approximately(state) / 4 / 128_000, 1e-6)
    n = len(state)
    return [
        ("defaults", SummarizationMiddleware()),
        ("tokens-half", SummarizationMiddleware(trigger=f"tokens={max(half, 1)}")),
        (
            "messages-or-fraction",
            SummarizationMiddleware(
                trigger=f"messages={max(n // 2, 1)} | fraction=0.9",
                keep=f"messages={max(n // 4, 1)}",
            ),
        ),
        (
            "and-keep-tokens-claude",
            SummarizationMiddleware(
                trigger=f"tokens={max(half // 2, 1)} & messages=2",
                keep=f"tokens={max(half // 2, 1)}",
                model="claude-sonnet-4-5",
                trim_tokens_to_summarize=None,
            ),
        ),
        (
            "keep-fraction-trim-small",
            SummarizationMiddleware(
                trigger="tokens=1",
                keep=f"fraction={quarter_share:.6f}",
                trim_tokens_to_summarize=300,
            ),
        ),
        ("keep-five", SummarizationMiddleware(trigger="messages=2", keep="messages=5")),
        (
            "keep-one-prompt",
            SummarizationMiddleware(
                trigger="messages=2",
                keep="messages=1",
                summary_prompt="Summarize {{briefly}}:\n{messages}\n\n",
            ),
        ),
    ]


def _lc_trigger(mw: SummarizationMiddleware) -> Any:
    clauses = [
        [kind, int(v) if kind != "fraction" else v]
        if len(clause) == 1
        else {k: (int(x) if k != "fraction" else x) for k, x in clause}
        for clause in mw.clauses
        for kind, v in [clause[0]]
    ]
    if not clauses:
        return None
    if len(clauses) == 1:
        return clauses[0] if isinstance(clauses[0], dict) else [clauses[0]]
    return clauses


def summarization_cases(name: str, messages: tuple[Message, ...]) -> list[Case]:
    out = []
    for label, mw in summarization_settings(messages):
        strategy = LangChainSummarization(middleware=mw)
        kind, value = mw.keep_size
        params: dict[str, Any] = {
            "trigger": _lc_trigger(mw),
            "keep": [kind, int(value) if kind != "fraction" else value],
            "trim_tokens_to_summarize": mw.trim_tokens_to_summarize,
            "summary_prompt": mw.summary_prompt,
            "max_input_tokens": mw.max_input_tokens,
            "llm_type": "anthropic-chat" if mw.chars_per_token != 4.0 else "oracle-chat",
        }
        marker = mw.summary_prompt.format(messages="\x00").split("\x00")[0][:40]

        def check(result: dict[str, Any], strategy: LangChainSummarization = strategy) -> None:
            summarizer = ScriptedSummarizer([FIXED_SUMMARY])
            mine = strategy.apply(messages, COUNTER, summarizer)
            state = result["state"]
            assert state[-1]["content"] == "oracle: done"
            state = state[:-1]
            system = 1 if messages and messages[0].role.is_instruction else 0
            sent = mine.messages[system:]
            assert [m.content for m in sent] == [m["content"] for m in state]
            assert [lc_type(m) for m in sent] == [m["type"] for m in state]
            if mine.inserted:
                (summary,) = mine.inserted
                assert sent[0] is summary and summary.role is Role.USER
                assert [m.id for m in sent[1:]] == [m["id"] for m in state[1:]]
                assert mine.replace
            else:
                assert [m.id for m in sent] == [m["id"] for m in state]
            prompts = [] if mine.summary_request is None else [mine.summary_request]
            assert [r.messages[0]["content"] for r in prompts] == result["summary_prompts"]
            assert all(r.messages[0]["role"] == "user" and len(r.messages) == 1 for r in prompts)
            main = result["main_request"]
            assert [m.content for m in mine.messages] == [m["content"] for m in main]
            _check_decisions(messages, mine)

        payload = {
            "policy": "summarization",
            "chat": neutral(messages),
            "params": params,
            "summary": FIXED_SUMMARY,
            "summary_marker": marker,
        }
        out.append(Case(name, label, payload, check))
    return out


# -- all cases, one oracle run --------------------------------------------------------------------


def all_cases() -> list[Case]:
    out: list[Case] = []
    for name, messages in chats().items():
        out += count_cases(name, messages)
        out += trim_cases(name, messages)
        out += clear_cases(name, messages)
        out += summarization_cases(name, messages)
    return out


CASES = all_cases()


@pytest.fixture(scope="module")
def oracle_results() -> dict[str, dict[str, Any]]:
    results = run_oracle("langchain", [c.payload for c in CASES])
    return {c.id: r for c, r in zip(CASES, results, strict=True)}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_agrees_with_langchain(case: Case, oracle_results: dict[str, dict[str, Any]]) -> None:
    case.check(oracle_results[case.id])


def test_bug_38352_is_reproduced_and_flagged(oracle_results: dict[str, dict[str, Any]]) -> None:
    """keep=5 cuts on the first of two results answering two AI messages: LangChain keeps the
    result of the older call and summarizes the call; ctxlab does the same and warns."""
    strategy = LangChainSummarization(
        middleware=SummarizationMiddleware(trigger="messages=2", keep="messages=5")
    )
    result = strategy.apply(BUG_38352_CHAT, COUNTER, ScriptedSummarizer([FIXED_SUMMARY]))
    assert [m.id for m in result.messages[2:]] == ["b3", "b4", "b5", "b6", "b7", "b8"]
    assert any("langchain-ai/langchain#38352" in w and "'b4'" in w for w in result.warnings)
    theirs = oracle_results["summarization-bug-38352-keep-five"]["state"]
    assert [m["id"] for m in theirs[1:-1]] == ["b3", "b4", "b5", "b6", "b7", "b8"]
