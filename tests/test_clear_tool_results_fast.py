"""ClearToolResults.apply's per-chat stand-ins against a plain, message-by-message clearing.

The reference below clears the way the strategy's docstring says, copying each cleared message
with ``Message.replace``; the strategy reuses stand-ins built once per chat and a copied
all-kept decision table. Both must give the same TrimResult, field for field.
"""

from __future__ import annotations

from collections.abc import Sequence

from chatgen import chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.model import CompactionMeta, Message, Role, ToolCall
from ctxlab.strategies.base import Decision, TrimResult
from ctxlab.strategies.clear_tool_results import (
    CLEARED_ARGUMENTS,
    DEFAULT_PLACEHOLDER,
    ClearToolResults,
    stand_in_of,
)
from ctxlab.tokens import TokenCounter, get_counter


def plain_apply(
    strategy: ClearToolResults, chat: Sequence[Message], counter: TokenCounter
) -> TrimResult:
    """Clearing written out: pair results with calls, pick the older ones, copy them."""
    total = counter.count_messages(chat)
    excluded = strategy.excluded
    results: list[tuple[int, tuple[int, int] | None, str]] = []
    caller, call_ids = -1, {}
    for i, m in enumerate(chat):
        if m.role is Role.ASSISTANT and m.tool_calls:
            caller, call_ids = i, {}
            for j, c in enumerate(m.tool_calls):
                call_ids.setdefault(c.id, j)
        elif m.role.is_tool_result:
            found = call_ids.get(m.tool_call_id) if caller >= 0 else None
            who = None if found is None else (caller, found)
            name = m.name or "" if who is None else chat[caller].tool_calls[found].name
            results.append((i, who, name))
    older = results[: max(len(results) - strategy.keep_tool_results, 0)]
    cleared = [(i, who) for i, who, name in older if name not in excluded]
    out = list(chat)
    emptied: dict[int, set[int]] = {}
    for i, who in cleared:
        out[i] = chat[i].replace(content=strategy.placeholder)
        if strategy.clear_tool_inputs and who is not None:
            emptied.setdefault(who[0], set()).add(who[1])
    for i, calls in emptied.items():
        out[i] = chat[i].replace(
            tool_calls=tuple(
                ToolCall(c.id, c.name, CLEARED_ARGUMENTS, c.type) if j in calls else c
                for j, c in enumerate(chat[i].tool_calls)
            )
        )
    after = counter.count_messages(out)
    saved = total - after
    if (
        total <= strategy.trigger_tokens
        or not cleared
        or (strategy.clear_at_least > 0 and saved < strategy.clear_at_least)
    ):
        return TrimResult(
            tuple(chat), dict.fromkeys((m.id for m in chat), Decision.KEPT), total, total
        )
    decisions = dict.fromkeys((m.id for m in chat), Decision.KEPT)
    changed = sorted({i for i, _ in cleared} | set(emptied))
    for i in changed:
        decisions[chat[i].id] = Decision.CLEARED
    return TrimResult(tuple(out), decisions, total, after, tuple(out[i] for i in changed))


def same_messages(a: Sequence[Message], b: Sequence[Message]) -> bool:
    """Equal including the fields equality ignores (``extra``)."""
    return list(a) == list(b) and [m.extra for m in a] == [m.extra for m in b]


params = st.builds(
    ClearToolResults,
    trigger_tokens=st.integers(0, 400),
    keep_tool_results=st.integers(0, 4),
    clear_at_least=st.sampled_from([0, 0, 20, 200]),
    exclude_tools=st.sampled_from(["", "search", "read_file,get_weather"]),
    clear_tool_inputs=st.booleans(),
    placeholder=st.sampled_from([DEFAULT_PLACEHOLDER, "[x]", ""]),
)


@settings(max_examples=150)
@given(chats(max_turns=6), st.lists(params, min_size=1, max_size=4))
def test_apply_equals_plain_clearing_at_every_setting_on_one_chat(
    chat: tuple[Message, ...], strategies: list[ClearToolResults]
) -> None:
    """Several settings on one counted chat share its stand-ins and decision table; every
    result is still the plain clearing's, and none alters another's."""
    counter = get_counter("gpt-4o")
    got = [(s, s.apply(chat, counter)) for s in strategies]
    for strategy, result in got:
        expected = plain_apply(strategy, chat, counter)
        assert same_messages(result.messages, expected.messages)
        assert list(result.decisions.items()) == list(expected.decisions.items())
        assert same_messages(result.inserted, expected.inserted)
        assert (result.tokens_before, result.tokens_after) == (
            expected.tokens_before,
            expected.tokens_after,
        )
        assert result.tokens_after == counter.count_messages(result.messages)


def test_a_stand_in_equals_replace_on_every_field() -> None:
    message = Message(
        Role.TOOL,
        "a long tool output",
        "t1",
        name="search",
        tool_call_id="c1",
        is_summary=True,
        compaction_meta=CompactionMeta("x", "y", "z"),
        extra=(("refusal", None), ("audio", {"id": "a"})),
    )
    fast, plain = stand_in_of(message, "[cleared]"), message.replace(content="[cleared]")
    assert fast == plain and fast.extra == plain.extra and hash(fast) == hash(plain)
    assert fast is not message and message.content == "a long tool output"


def test_results_do_not_share_their_decisions() -> None:
    """The all-kept table is copied per result: one result's decisions never change another's."""
    counter = get_counter("gpt-4o")
    chat = (
        Message(Role.USER, "go", "u"),
        Message(Role.ASSISTANT, "", "a", tool_calls=(ToolCall("c", "search", "{}"),)),
        Message(Role.TOOL, "result " * 50, "t", tool_call_id="c"),
        Message(Role.ASSISTANT, "done", "b"),
    )
    cleared = ClearToolResults(trigger_tokens=0, keep_tool_results=0).apply(chat, counter)
    kept = ClearToolResults(trigger_tokens=0, keep_tool_results=1).apply(chat, counter)
    assert cleared.decisions["t"] is Decision.CLEARED
    assert kept.decisions["t"] is Decision.KEPT
    assert cleared.decisions is not kept.decisions
