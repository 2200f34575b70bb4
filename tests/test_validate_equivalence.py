"""The fast validator returns exactly the pinned reference's Problems, on every input.

``tests/validate_reference.py`` is ``ctxlab/validate.py`` as it was before issue 15's speed-up.
Every check compares the full Problem tuples (code, severity, message id, text, provider error),
in order, for every provider: generated messy chats (odd roles anywhere, reused and missing call
ids, legacy function calls, orphans, summaries, empty contents), realistic generated chats and
their mutations, and every chat the repository's fixtures and samples hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import validate_reference as reference
from chatgen import chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.errors import CtxlabError
from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.sliding_window import SlidingWindow
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.validate import PROVIDERS, validate

ROOT = Path(__file__).parent.parent
CHAT_FILES = sorted(
    str(p.relative_to(ROOT))
    for folder in ("tests/fixtures", "ctxlab/sample_chats", "sample_chats")
    for pattern in ("**/*.json", "**/*.jsonl")
    for p in (ROOT / folder).glob(pattern)
)
COUNTER = get_counter("gpt-4o")

Row = tuple[str, str, str | None, str, str | None]


def _rows(problems: Sequence[object]) -> list[Row]:
    """Problems as plain tuples: the two modules' Problem classes differ, their fields must not."""
    return [
        (p.code, p.severity, p.message_id, p.text, p.provider_error)  # type: ignore[attr-defined]
        for p in problems
    ]


def assert_same(
    messages: Sequence[Message],
    budget: int | None = None,
    counter: TokenCounter | None = None,
    window: int | None = None,
) -> None:
    for provider in PROVIDERS:
        fast = validate(messages, budget=budget, counter=counter, provider=provider, window=window)
        slow = reference.validate(
            messages, budget=budget, counter=counter, provider=provider, window=window
        )
        assert _rows(fast) == _rows(slow), provider
        assert type(fast) is tuple


# -- messy chats: any role anywhere, ids from tiny pools so they collide -----------------------

_CALL_IDS = st.one_of(st.none(), st.sampled_from(["c1", "c2", "c3", ""]))
_RESULT_IDS = st.one_of(st.none(), st.sampled_from(["c1", "c2", "c3", "c4", ""]))
_ROLES = st.sampled_from(list(Role))


@st.composite
def messy_messages(draw: st.DrawFn) -> Message:
    role = draw(st.one_of(_ROLES, st.sampled_from([Role.ASSISTANT, Role.TOOL])))
    calls: tuple[ToolCall, ...] = ()
    if draw(st.integers(0, 3)) > 0:  # any role may carry calls: loaders keep what they read
        calls = tuple(
            ToolCall(cid, draw(st.sampled_from(["search", "lookup"])))
            for cid in draw(st.lists(_CALL_IDS, max_size=4))
        )
    return Message(
        role,
        draw(st.sampled_from(["", "x", "hello there"])),
        draw(st.sampled_from(["m0", "m1", "m2", "", "it's"])),
        name=draw(st.one_of(st.none(), st.just("lookup"))),
        tool_calls=calls,
        tool_call_id=draw(_RESULT_IDS),
        is_summary=draw(st.booleans()),
        is_compaction=draw(st.booleans()),
    )


@settings(max_examples=400)
@given(st.lists(messy_messages(), max_size=14))
def test_messy_chats_give_the_reference_problems(messages: list[Message]) -> None:
    assert_same(messages)
    assert_same(tuple(messages))


@st.composite
def tool_rounds(draw: st.DrawFn) -> list[Message]:
    """Assistant messages with 0-3 calls, each followed by 0-3 results, ids from a tiny pool:
    runs that answer some, all, none or other calls, in any order."""
    messages: list[Message] = []
    for n in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            messages.append(Message(Role.USER, "q", f"u{n}"))
        call_ids = draw(st.lists(_CALL_IDS, max_size=3))
        calls = tuple(ToolCall(cid, "search") for cid in call_ids)
        messages.append(Message(Role.ASSISTANT, "", f"a{n}", tool_calls=calls))
        for k, result_id in enumerate(draw(st.lists(_RESULT_IDS, max_size=3))):
            role = draw(st.sampled_from([Role.TOOL, Role.TOOL, Role.FUNCTION]))
            messages.append(Message(role, "r", f"t{n}.{k}", tool_call_id=result_id))
    return messages


@settings(max_examples=400)
@given(tool_rounds())
def test_tool_rounds_give_the_reference_problems(messages: list[Message]) -> None:
    assert_same(messages)


@given(
    st.lists(messy_messages(), max_size=8),
    st.one_of(st.none(), st.integers(0, 400)),
    st.one_of(st.none(), st.integers(0, 400)),
)
def test_budget_and_window_give_the_reference_problems(
    messages: list[Message], budget: int | None, window: int | None
) -> None:
    assert_same(messages, budget=budget, counter=COUNTER, window=window)
    assert_same(messages, budget=budget, counter=None, window=window)


# -- realistic chats and what trimming or editing does to them ------------------------------


@st.composite
def edited_chats(draw: st.DrawFn) -> list[Message]:
    """A valid generated chat with a few messages deleted, moved or turned into odd ones."""
    chat = list(draw(chats(max_turns=6)))
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["delete", "move", "system", "summary", "legacy", "dup"]))
        if not chat:
            break
        i = draw(st.integers(0, len(chat) - 1))
        m = chat[i]
        if action == "delete":
            del chat[i]
        elif action == "move":
            chat.insert(draw(st.integers(0, len(chat) - 1)), chat.pop(i))
        elif action == "system":
            chat.insert(i, Message(Role.SYSTEM, "late", f"s{i}"))
        elif action == "summary":
            chat[i] = m.replace(is_summary=True, content="")
        elif action == "legacy":
            chat[i] = m.replace(role=Role.FUNCTION) if m.role.is_tool_result else m
            if m.tool_calls:
                chat[i] = m.replace(tool_calls=(ToolCall(None, "lookup"),))
        elif m.tool_calls:  # dup: reuse the first call's id for every call
            first = m.tool_calls[0].id
            chat[i] = m.replace(tool_calls=tuple(ToolCall(first, c.name) for c in m.tool_calls))
    return chat


@settings(max_examples=300)
@given(edited_chats())
def test_edited_chats_give_the_reference_problems(chat: list[Message]) -> None:
    assert_same(chat)


@given(chats(min_turns=1, max_turns=6), st.integers(1, 12))
def test_sliding_window_contexts_give_the_reference_problems(
    chat: tuple[Message, ...], window: int
) -> None:
    assert_same(SlidingWindow(window).apply(chat, COUNTER).messages)


# -- every chat the repository holds --------------------------------------------------------


def test_the_repository_holds_many_chats() -> None:
    assert len(CHAT_FILES) >= 100


@pytest.mark.parametrize("path", CHAT_FILES)
def test_repository_chats_give_the_reference_problems(path: str) -> None:
    from ctxlab.formats import load_chat

    try:
        chat = load_chat(ROOT / path)
    except CtxlabError:
        pytest.skip("not a chat (a broken-file fixture or expected values)")
    assert_same(chat)
    assert_same(chat, budget=500, counter=COUNTER, window=800)
    for window in (1, 2, 5):  # trimmed contexts with orphans at the start
        assert_same(SlidingWindow(window).apply(chat, COUNTER).messages)
    assert_same(chat[1::2])  # every other message: orphans and unanswered calls throughout


# -- the scan kept between calls ------------------------------------------------------------


def test_a_list_changed_between_calls_is_scanned_again() -> None:
    chat = [Message(Role.USER, "q", "u1"), Message(Role.ASSISTANT, "a", "a1")]
    assert validate(chat, provider="anthropic") == ()
    chat.append(Message(Role.ASSISTANT, "again", "a2"))
    assert [p.code for p in validate(chat, provider="anthropic")] == ["consecutive-same-role"]
    chat[2] = Message(Role.USER, "again", "u2")  # same length, one message swapped
    assert validate(chat, provider="anthropic") == ()
    chat[2] = Message(Role.ASSISTANT, "again", "a2")  # equal to the first, another object
    assert [p.code for p in validate(chat, provider="anthropic")] == ["consecutive-same-role"]
    assert_same(chat)


def test_tuples_validated_in_turn_each_get_their_own_problems() -> None:
    fine = (Message(Role.USER, "q", "u1"), Message(Role.ASSISTANT, "a", "a1"))
    doubled = (*fine, Message(Role.ASSISTANT, "again", "a2"))
    for _ in range(2):
        for chat in (fine, doubled, fine):
            assert_same(chat)
            assert_same(chat, budget=3, counter=COUNTER, window=5)
    assert validate(fine, provider="anthropic") == ()


def test_every_role_is_a_tool_result_a_turn_or_an_instruction() -> None:
    # The scan tells roles apart by identity: TOOL/FUNCTION, ASSISTANT, USER, else instruction.
    for role in Role:
        kinds = [
            role in (Role.TOOL, Role.FUNCTION),
            role in (Role.ASSISTANT, Role.USER),
            role.is_instruction,
        ]
        assert kinds.count(True) == 1, role
        assert role.is_tool_result == kinds[0]


class _CountingCounter:
    """A real counter that records how often the validator asks for a whole-context count."""

    def __init__(self) -> None:
        self.calls = 0

    def count_messages(self, messages: Sequence[Message]) -> int:
        self.calls += 1
        return COUNTER.count_messages(messages)


def test_three_providers_count_the_same_messages_once() -> None:
    chat = [Message(Role.USER, "tell me " * 50, "u1"), Message(Role.ASSISTANT, "a", "a1")]
    counter = _CountingCounter()
    for provider in PROVIDERS:
        found = validate(chat, budget=10, counter=counter, window=20, provider=provider)  # type: ignore[arg-type]
        assert [p.code for p in found] == ["over-budget", "over-window"]
    assert counter.calls == 1
    validate([*chat], budget=10, counter=counter)  # type: ignore[arg-type]
    assert counter.calls == 1  # another list of the very same messages
    validate([chat[0], chat[1].replace(content="b")], budget=10, counter=counter)  # type: ignore[arg-type]
    assert counter.calls == 2
