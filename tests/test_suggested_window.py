"""Defaults from the model: token parameters start at a share of the model's window, never above
the chat-based suggestion; strategies written before the ``window`` argument keep working."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

import pytest

from ctxlab.catalog import get_model
from ctxlab.counted import CountedChat
from ctxlab.strategies import (
    Strategy,
    current_params,
    get_strategy_class,
    parameters,
    strategy_names,
    suggested_for,
    token_default,
)
from ctxlab.strategies.base import nice_fraction
from ctxlab.tokens import TokenCounter
from ctxlab.ui.examples import example_chat
from ctxlab.ui.widgets import initial_values


def _token_values(name: str, counted: CountedChat, window: int | None) -> dict[str, int]:
    cls = get_strategy_class(name)
    values = current_params(suggested_for(cls, counted, window))
    tokens = {i.name for i in parameters(cls) if i.spec.unit == "tokens" and i.kind == "int"}
    return {k: v for k, v in values.items() if k in tokens}


def test_token_default_is_three_quarters_of_the_room_rounded_and_capped_by_the_chat() -> None:
    room = get_model("gpt-4o").input_room
    assert room == 128_000 - 16_384
    assert token_default(600_000, room) == nice_fraction(room, 0.75) == 83_000
    assert token_default(16_000, room) == 16_000
    assert token_default(600_000, None) == 600_000


# ctxlab's own strategies derive their first values from the chat and the window; a framework
# policy opens at the framework's own defaults (tests/test_first_view.py).
CTXLAB_STRATEGIES = [n for n in strategy_names() if get_strategy_class(n).framework_policy is None]


@pytest.mark.parametrize("name", CTXLAB_STRATEGIES)
def test_a_small_window_caps_every_token_default(name: str, counter: TokenCounter) -> None:
    counted = counter.counted(example_chat())
    free = _token_values(name, counted, None)
    capped = _token_values(name, counted, 1_000)
    for key, value in capped.items():
        if free[key] == 0:
            continue
        assert value == min(free[key], nice_fraction(1_000, 0.75))


@pytest.mark.parametrize("name", strategy_names())
def test_a_window_larger_than_the_chat_changes_nothing(name: str, counter: TokenCounter) -> None:
    counted = counter.counted(example_chat())
    cls = get_strategy_class(name)
    assert suggested_for(cls, counted, 10_000_000) == suggested_for(cls, counted, None)


def test_the_large_sample_opens_under_gpt_4o_window_and_still_trims(counter: TokenCounter) -> None:
    from ctxlab.formats import load_chat
    from ctxlab.samples import sample_path

    counted = counter.counted(load_chat(sample_path("large_agent_10k")))
    values = initial_values(get_strategy_class("window-drop"), counted, get_model("gpt-4o"))
    assert values["budget"] == 83_000 < counted.total // 2


@dataclass(frozen=True)
class _OldStyle(Strategy):
    """A third party's strategy whose ``suggested`` predates the window argument."""

    name: ClassVar[str] = "old-style"
    title: ClassVar[str] = "Old style"
    summary: ClassVar[str] = "test double"
    budget: int = 5

    @classmethod
    def suggested(cls, chat: CountedChat) -> Self:  # type: ignore[override]
        return cls(budget=len(chat))


def test_a_strategy_that_ignores_the_window_keeps_working(counter: TokenCounter) -> None:
    counted = counter.counted(example_chat())
    assert suggested_for(_OldStyle, counted, 1_000) == _OldStyle(budget=len(counted))
