"""Parameter ranges and first values scale to the chat, for every registered strategy."""

from __future__ import annotations

import pytest

from ctxlab.strategies import (
    ParamSpec,
    build_strategy,
    get_strategy_class,
    parameters,
    strategy_names,
)
from ctxlab.strategies.registry import ParamInfo
from ctxlab.tokens import TokenCounter
from ctxlab.ui.examples import example_chat
from ctxlab.ui.widgets import ChatScale, initial_values, nice_ceiling, param_range

SCALE = ChatScale(tokens=10_655, messages=62, rounds=5, tool_results=27)


def _info(unit: str | None, kind: str = "int", **spec: float) -> ParamInfo:
    return ParamInfo(("x",), kind, 10, ParamSpec("X", "help", unit=unit, **spec))


@pytest.mark.parametrize(
    ("unit", "hi"),
    [("tokens", nice_ceiling(10_655 * 1.2)), ("messages", 62), ("rounds", 5), ("tool_results", 27)],
)
def test_range_scales_to_the_chat_by_unit(unit: str, hi: int) -> None:
    rng = param_range(_info(unit, min=0), SCALE)
    assert rng.lo == 0 and rng.hi == hi and rng.step >= 1


def test_declared_bounds_win_and_the_current_value_is_inside() -> None:
    assert param_range(_info("messages", max=10), SCALE).hi == 10
    assert param_range(_info("messages"), SCALE, current=500).hi == 500
    assert param_range(_info(None, kind="float", min=0, max=1), SCALE).hi == 1.0


def test_nice_ceiling_rounds_up_to_a_readable_number() -> None:
    assert [nice_ceiling(v) for v in (0.5, 7, 12_786, 60_000)] == [1, 8, 15_000, 60_000]


@pytest.mark.parametrize("name", strategy_names())
def test_suggested_values_build_and_fit_the_widget_range(name: str, counter: TokenCounter) -> None:
    cls = get_strategy_class(name)
    counted = counter.counted(example_chat())
    values = initial_values(cls, counted)
    build_strategy(name, values)
    for info in parameters(cls):
        value = values[info.name]
        if info.kind in ("int", "float") and value is not None:
            rng = param_range(info, ChatScale.of(counted), value)
            assert rng.lo <= value <= rng.hi


def test_suggested_window_drop_trims_something_on_first_load(counter: TokenCounter) -> None:
    chat = example_chat()
    counted = counter.counted(chat)
    cls = get_strategy_class("window-drop")
    result = build_strategy("window-drop", initial_values(cls, counted)).apply(chat, counter)
    assert result.tokens_after < result.tokens_before
