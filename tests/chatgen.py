"""Realistic chats for tests: hypothesis strategies and tiny message builders.

Public API (pytest puts ``tests/`` on ``sys.path``: ``from chatgen import chats, user, ...``):

- :func:`chats` — a hypothesis strategy of ``tuple[Message, ...]`` shaped like real Chat
  Completions traffic: an optional system prompt, user turns, assistant replies, assistant
  messages with 1-3 ``tool_calls`` each followed by their tool results, and sometimes a final
  user message that has no answer yet. Message ids (``m0``, ``m1``, ...) and tool call ids
  (``call_0``, ...) are unique within a chat. Every generated chat is valid for the OpenAI API.
- :func:`texts` — the message-text strategy :func:`chats` uses (short words, sometimes long).
- :func:`budgets` — token budgets scaled to a chat's total (for window/trim properties).
- Builders for hand-written cases: :func:`system`, :func:`user`, :func:`assistant`,
  :func:`call`, :func:`tool`; each takes the message id explicitly so known-answer tests read
  like the chat they describe.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ctxlab.model import Message, Role, ToolCall

__all__ = [
    "TOOL_NAMES",
    "assistant",
    "budgets",
    "call",
    "chats",
    "system",
    "texts",
    "tool",
    "user",
]

TOOL_NAMES: tuple[str, ...] = ("search", "read_file", "run_tests", "get_weather")

_WORDS = (
    "the",
    "context",
    "window",
    "token",
    "budget",
    "tool",
    "result",
    "Paris",
    "weather",
    "def f(x):",
    "return",
    "😀",
    "über",
    "42",
    "\n",
    "error: file not found",
    '{"ok": true}',
)


# -- builders -------------------------------------------------------------------------------


def system(content: str, id: str = "sys") -> Message:
    """A system message."""
    return Message(Role.SYSTEM, content, id)


def user(content: str, id: str) -> Message:
    """A user message."""
    return Message(Role.USER, content, id)


def call(id: str | None, name: str = "search", arguments: str = '{"q": "x"}') -> ToolCall:
    """One tool call (``id=None`` for the legacy ``function_call`` format)."""
    return ToolCall(id, name, arguments)


def assistant(content: str, id: str, *calls: ToolCall) -> Message:
    """An assistant message, optionally making ``calls``."""
    return Message(Role.ASSISTANT, content, id, tool_calls=tuple(calls))


def tool(content: str, id: str, tool_call_id: str | None, name: str | None = None) -> Message:
    """A tool result answering ``tool_call_id``."""
    return Message(Role.TOOL, content, id, name=name, tool_call_id=tool_call_id)


# -- strategies -----------------------------------------------------------------------------


def texts(max_words: int = 12) -> st.SearchStrategy[str]:
    """Message text: a few words from a fixed vocabulary, occasionally a long block."""
    short = st.lists(st.sampled_from(_WORDS), min_size=0, max_size=max_words).map(" ".join)
    long = st.integers(20, 120).map(lambda n: " ".join(_WORDS[i % len(_WORDS)] for i in range(n)))
    return st.one_of(short, short, short, long)


@st.composite
def chats(
    draw: st.DrawFn,
    *,
    min_turns: int = 0,
    max_turns: int = 6,
    with_system: bool | None = None,
    with_tools: bool = True,
    pending_user: bool | None = None,
) -> tuple[Message, ...]:
    """A realistic chat as a tuple of :class:`Message`.

    Args:
        draw: supplied by hypothesis.
        min_turns / max_turns: how many user turns (a chat with 0 turns is empty or just the
            system prompt).
        with_system: force a system prompt on (True) or off (False); None lets hypothesis pick.
        with_tools: allow assistant tool-call steps.
        pending_user: force the last turn to be an unanswered user message (True) or answered
            (False); None lets hypothesis pick.

    Returns:
        A chat whose message ids are ``m0, m1, ...`` and tool call ids ``call_0, call_1, ...``,
        all unique, where every tool result directly follows its calling assistant message.
    """
    text = texts()
    specs: list[tuple[Role, str, tuple[ToolCall, ...], str | None, str | None]] = []
    has_system = draw(st.booleans()) if with_system is None else with_system
    if has_system:
        specs.append((Role.SYSTEM, draw(text), (), None, None))
    turns = draw(st.integers(min_turns, max_turns))
    pending = draw(st.booleans()) if pending_user is None else pending_user
    call_number = 0
    for turn in range(turns):
        specs.append((Role.USER, draw(text), (), None, None))
        if pending and turn == turns - 1:
            break
        steps = draw(st.integers(0, 2)) if with_tools else 0
        for _ in range(steps):
            names = draw(st.lists(st.sampled_from(TOOL_NAMES), min_size=1, max_size=3))
            calls = []
            for name in names:
                args = draw(st.sampled_from(('{"q": "paris"}', '{"path": "a.py"}', "{}")))
                calls.append(ToolCall(f"call_{call_number}", name, args))
                call_number += 1
            content = draw(st.one_of(st.just(""), text))
            specs.append((Role.ASSISTANT, content, tuple(calls), None, None))
            for c in calls:
                specs.append((Role.TOOL, draw(text), (), c.id, None))
        specs.append((Role.ASSISTANT, draw(text), (), None, None))
    return tuple(
        Message(role, content, f"m{i}", tool_calls=calls, tool_call_id=tcid, name=name)
        for i, (role, content, calls, tcid, name) in enumerate(specs)
    )


def budgets(total: int) -> st.SearchStrategy[int]:
    """Budgets from 1 to a bit over ``total`` (the chat's token count), biased to the middle."""
    top = max(total + 10, 2)
    return st.one_of(st.integers(1, top), st.integers(max(total // 3, 1), top))
