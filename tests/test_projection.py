"""One property for every registered strategy: ``project`` answers what ``apply`` does.

Replay trusts ``Strategy.project(chat, stop)`` instead of applying the strategy to every prefix,
so for any chat, prefix and parameters the projection must send as many messages and tokens as
``apply(messages[:stop])``; when it also describes its context by chat positions (``start``
set), the described messages must be the applied context, stand-ins included. Parameters are
drawn from each field's declared kind and range, so a new strategy is covered on registration.
"""

from __future__ import annotations

from typing import Any

import pytest
from chatgen import chats
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.counted import CountedChat
from ctxlab.errors import ParameterError
from ctxlab.model import Message
from ctxlab.strategies import (
    ParamInfo,
    Projection,
    Strategy,
    build_strategy,
    get_strategy_class,
    parameters,
    strategy_names,
)
from ctxlab.tokens import get_counter

SPAN = {"tokens": 3000, "messages": 16, "rounds": 8, "tool_results": 8}


def _value(info: ParamInfo) -> st.SearchStrategy[Any]:
    """Values within the declared range; text and role parameters keep their defaults."""
    spec = info.spec
    if info.kind in ("int", "optional_int"):
        lo = int(spec.min) if spec.min is not None else 0
        hi = int(spec.max) if spec.max is not None else lo + SPAN.get(spec.unit or "", 20)
        ints = st.integers(lo, hi)
        return st.none() | ints if info.kind == "optional_int" else ints
    if info.kind == "float":
        lo = spec.min if spec.min is not None else 0.0
        hi = spec.max if spec.max is not None else lo + 10.0
        return st.floats(lo, hi, allow_nan=False)
    if info.kind == "bool":
        return st.booleans()
    return st.just(info.default)


@st.composite
def configured(draw: st.DrawFn, name: str) -> Strategy:
    params = {info.name: draw(_value(info)) for info in parameters(get_strategy_class(name))}
    try:
        return build_strategy(name, params)
    except ParameterError:
        # a combination the strategy refuses (a cross-field rule, e.g. OpenHands' keep_first
        # below half of max_size): its defaults, rather than filtering out most examples
        return build_strategy(name, {})


def _described(chat: CountedChat, p: Projection) -> list[Message]:
    """The context a projection with ``start`` describes: pinned heads, a run, stand-ins."""
    assert p.start is not None
    positions = [*chat.instruction_positions()[: p.pinned], *range(p.start, p.end)]
    sites = set(p.edits.positions[: p.edited]) if p.edits is not None else set()
    content = p.edits.content if p.edits is not None else ""
    return [
        chat.messages[i].replace(content=content) if i in sites else chat.messages[i]
        for i in positions
    ]


@pytest.mark.parametrize("name", strategy_names())
@given(data=st.data())
def test_project_equals_apply_on_every_prefix(name: str, data: st.DataObject) -> None:
    counter = get_counter("gpt-4o")
    chat: tuple[Message, ...] = data.draw(chats(max_turns=7), label="chat")
    strategy = data.draw(configured(name), label="strategy")
    counted = counter.counted(chat)
    for stop in sorted({0, len(chat), data.draw(st.integers(0, len(chat)), label="stop")}):
        projection = strategy.project(counted, stop, counter)
        applied = strategy.apply(chat[:stop], counter)
        assert projection.messages_sent == len(applied.messages)
        assert projection.tokens_sent == applied.tokens_after
        if projection.start is not None:
            described = _described(counted, projection)
            assert [m.id for m in described] == [m.id for m in applied.messages]
            assert [m.content for m in described] == [m.content for m in applied.messages]
