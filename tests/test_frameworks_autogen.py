"""AutoGen policies: properties over random chats, and the closed form of the middle-popping
loop checked against AutoGen's literal loop."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks._autogen import Kind, autogen_context
from ctxlab.strategies.frameworks.autogen_buffered import AutoGenBuffered
from ctxlab.strategies.frameworks.autogen_head_and_tail import AutoGenHeadAndTail
from ctxlab.strategies.frameworks.autogen_token_limited import (
    AutoGenTokenLimited,
    token_limited_units,
)
from ctxlab.tokens import get_counter

COUNTER = get_counter("gpt-4o")


@st.composite
def chats(draw: st.DrawFn) -> tuple[Message, ...]:
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message(Role.SYSTEM, "system prompt", "sys"))
    for turn in range(draw(st.integers(0, 8))):
        out.append(Message(Role.USER, "ask " * draw(st.integers(1, 30)), f"u{turn}"))
        for step in range(draw(st.integers(0, 3))):
            calls = draw(st.integers(1, 3))
            tc = tuple(ToolCall(f"c{turn}-{step}-{k}", "f", "{}") for k in range(calls))
            out.append(Message(Role.ASSISTANT, "", f"a{turn}-{step}", tool_calls=tc))
            for k in range(calls):
                out.append(
                    Message(
                        Role.TOOL,
                        "out " * draw(st.integers(1, 50)),
                        f"t{turn}-{step}-{k}",
                        tool_call_id=tc[k].id,
                    )
                )
        out.append(Message(Role.ASSISTANT, "done", f"r{turn}"))
    return tuple(out)


def _literal_pop_middle(tokens: list[int], fixed: int, limit: int) -> list[int]:
    """AutoGen's loop, as written: pop ``messages[len // 2]`` while the count is over."""
    kept = list(range(len(tokens)))
    while sum(tokens[i] for i in kept) + fixed > limit and kept:
        kept.pop(len(kept) // 2)
    return kept


@settings(max_examples=60, deadline=None)
@given(chats(), st.integers(1, 2000))
def test_closed_form_equals_autogens_loop(chat: tuple[Message, ...], limit: int) -> None:
    ctx = autogen_context(chat, COUNTER)
    literal = _literal_pop_middle([u.tokens for u in ctx.units], ctx.chat.fixed, limit)
    if literal and ctx.units[literal[0]].kind is Kind.RESULTS:
        literal = literal[1:]
    assert token_limited_units(ctx, limit) == literal


@settings(max_examples=60, deadline=None)
@given(chats(), st.integers(1, 6), st.integers(1, 6), st.integers(1, 2000))
def test_decisions_cover_every_message(
    chat: tuple[Message, ...], a: int, b: int, limit: int
) -> None:
    before = tuple(chat)
    for strategy in (
        AutoGenBuffered(buffer_size=a),
        AutoGenHeadAndTail(head_size=a, tail_size=b),
        AutoGenTokenLimited(token_limit=limit),
    ):
        result = strategy.apply(chat, COUNTER)
        assert chat == before
        assert set(result.decisions) == {m.id for m in chat}
        assert not result.replace
        sent = {m.id for m in result.messages}
        for m in chat:
            assert (result.decisions[m.id] in (Decision.KEPT, Decision.PINNED)) == (m.id in sent)
        # one call batch's results are kept or dropped together
        for m in chat:
            if m.role is Role.TOOL:
                batch = [
                    x
                    for x in chat
                    if x.role is Role.TOOL
                    and x.id[1:].rsplit("-", 1)[0] == m.id[1:].rsplit("-", 1)[0]
                ]
                assert len({result.decisions[x.id] for x in batch}) == 1


def test_skipped_placeholder_text_role_and_position() -> None:
    chat = (
        Message(Role.SYSTEM, "sys", "s"),
        Message(Role.USER, "hi", "u0"),
        Message(Role.ASSISTANT, "", "a0", tool_calls=(ToolCall("c0", "f", "{}"),)),
        Message(Role.TOOL, "r", "t0", tool_call_id="c0"),
        Message(Role.ASSISTANT, "x", "a1"),
        Message(Role.USER, "more", "u1"),
        Message(Role.ASSISTANT, "", "a2", tool_calls=(ToolCall("c1", "f", "{}"),)),
        Message(Role.TOOL, "r", "t1", tool_call_id="c1"),
        Message(Role.ASSISTANT, "end", "a3"),
    )
    result = AutoGenHeadAndTail(head_size=2, tail_size=2).apply(chat, COUNTER)
    # head [u0, a0] loses a0 (all calls); tail [t1, a3] loses t1; Skipped 8 - 2 - 2 = 4
    assert [m.id for m in result.messages][:2] == ["s", "u0"]
    note = result.messages[2]
    assert (note.role, note.content, note.name) == (Role.USER, "Skipped 4 messages.", "System")
    assert [m.id for m in result.messages[3:]] == ["a3"]
    assert result.inserted == (note,)
    assert "6" in result.warnings[0]
