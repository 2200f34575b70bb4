"""The strategy registry: names, string coercion, parameter errors, parameter descriptions."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from chatgen import chats
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.errors import ParameterError, UnknownNameError
from ctxlab.model import Message, Role
from ctxlab.strategies import build_strategy, get_strategy_class, parameters, strategy_names
from ctxlab.strategies.base import ParamSpec, Strategy
from ctxlab.strategies.registry import (
    ParamInfo,
    coerce_value,
    current_params,
    format_value,
    with_params,
)

PROJECTIONS = {"sliding-window", "window-drop", "clear-tool-results", "trim-last"}


def test_the_four_projection_strategies_are_registered() -> None:
    assert set(strategy_names()) >= PROJECTIONS
    for name in PROJECTIONS:
        cls = get_strategy_class(name)
        assert cls.name == name and issubclass(cls, Strategy)


def test_an_unknown_strategy_raises_unknown_name_error() -> None:
    with pytest.raises(UnknownNameError, match="no-such"):
        build_strategy("no-such")


def test_strings_are_coerced_to_the_field_types() -> None:
    assert build_strategy("window-drop", {"budget": "300"}).budget == 300  # type: ignore[attr-defined]
    sliding = build_strategy("sliding-window", {"window": "4", "trigger_at": "none"})
    assert sliding.window == 4 and sliding.trigger_at is None  # type: ignore[attr-defined]
    assert build_strategy("sliding-window", {"trigger_at": "9"}).trigger_at == 9  # type: ignore[attr-defined]
    clear = build_strategy("clear-tool-results", {"clear_tool_inputs": "true"})
    assert clear.clear_tool_inputs is True  # type: ignore[attr-defined]
    trim = build_strategy("trim-last", {"include_system": "false", "max_tokens": "120"})
    assert trim.include_system is False and trim.max_tokens == 120  # type: ignore[attr-defined]


def test_unknown_parameters_raise_parameter_error_naming_them() -> None:
    with pytest.raises(ParameterError, match="windw"):
        build_strategy("sliding-window", {"windw": 3})


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("window-drop", {"budget": "0"}, "budget"),
        ("window-drop", {"budget": "lots"}, "budget"),
        ("sliding-window", {"window": "-1"}, "window"),
        ("clear-tool-results", {"keep_tool_results": "-2"}, "keep_tool_results"),
        ("clear-tool-results", {"clear_tool_inputs": "maybe"}, "clear_tool_inputs"),
        ("trim-last", {"max_tokens": "-5"}, "max_tokens"),
    ],
)
def test_bad_values_raise_parameter_error_naming_the_parameter(
    name: str, params: dict[str, str], field: str
) -> None:
    with pytest.raises(ParameterError, match=field):
        build_strategy(name, params)


@pytest.mark.parametrize("name", sorted(PROJECTIONS))
def test_every_field_is_described_by_a_param_spec(name: str) -> None:
    cls = get_strategy_class(name)
    infos = parameters(cls)
    assert {i.name for i in infos} == {f.name for f in dataclasses.fields(cls)}
    for info in infos:
        assert isinstance(info.spec, ParamSpec) and info.spec.label and info.spec.help
        assert info.kind in {"int", "float", "bool", "str", "optional_int", "roles"}


@pytest.mark.parametrize("name", sorted(PROJECTIONS))
def test_defaults_round_trip_through_current_params(name: str) -> None:
    strategy = build_strategy(name)
    assert build_strategy(name, current_params(strategy)) == strategy
    assert with_params(strategy, {}) == strategy
    assert strategy.title and strategy.summary


@pytest.mark.parametrize("name", strategy_names())
@settings(max_examples=30, deadline=None)
@given(chat=chats(min_turns=1, max_turns=6))
def test_every_round_of_every_strategy_says_why_starting_with_its_decision(
    name: str, chat: tuple[Message, ...]
) -> None:
    from ctxlab.strategies.base import round_decisions
    from ctxlab.summarizers import OfflineSummarizer
    from ctxlab.tokens import get_counter

    counter = get_counter("gpt-4o")
    counted = counter.counted(chat)
    strategy = get_strategy_class(name).suggested(counted)
    result = strategy.apply(chat, counter, OfflineSummarizer())
    for k in range(len(counted.starts)):
        why = strategy.explain_round(counted, result, k)
        present = {d.value for d in round_decisions(counted, result, k)}
        first = why.split(":", 1)[0].split(" ")[0]
        assert first in present or (first == "mixed" and len(present) > 1), why
        for part in why.split("; "):
            assert part.split(":", 1)[0].split(" ")[0] in present | {"mixed"}, why


def _values(info: ParamInfo) -> st.SearchStrategy[Any]:
    """Values a parameter of ``info``'s kind can hold."""
    ints = st.integers(min_value=0, max_value=10**9)
    by_kind: dict[str, st.SearchStrategy[Any]] = {
        "int": ints,
        "optional_int": st.none() | ints,
        "float": st.floats(allow_nan=False, allow_infinity=False),
        "bool": st.booleans(),
        "str": st.text(),
        "roles": st.lists(st.sampled_from(list(Role)), max_size=4).map(tuple),
    }
    return by_kind[info.kind]


ALL_PARAMS = [info for name in strategy_names() for info in parameters(get_strategy_class(name))]


@pytest.mark.parametrize("info", ALL_PARAMS, ids=lambda i: ".".join(i.path))
@settings(max_examples=40)
@given(data=st.data())
def test_format_value_is_read_back_by_coerce_value(info: ParamInfo, data: st.DataObject) -> None:
    value = data.draw(_values(info))
    assert coerce_value(info, format_value(value)) == value
    assert coerce_value(info, format_value(info.default)) == info.default


def test_the_url_and_the_cli_speak_format_value() -> None:
    from ctxlab.ui.session import params_to_query

    values = {"redact_roles": (Role.TOOL, Role.USER), "trigger_at": None, "flag": False}
    assert params_to_query(values) == {"redact_roles": "tool,user", "flag": "false"}
