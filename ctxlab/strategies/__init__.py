"""Trimming strategies: one module per strategy, all registered by name.

Every strategy enters the registry through the ``ctxlab.strategies`` entry-point group, the
built-ins included (see :mod:`ctxlab.strategies.registry`). The built-in classes are importable
from here by name:

>>> from ctxlab.strategies import WindowDrop, build_strategy, strategy_names
>>> "window-drop" in strategy_names()
True
>>> build_strategy("window-drop", {"budget": "8000"}) == WindowDrop(budget=8000)
True
"""

from ctxlab.strategies.base import (
    Decision,
    ParamSpec,
    Projection,
    Strategy,
    SweepRange,
    TrimResult,
    param,
    suffix_decisions,
    suggested_for,
    token_default,
)
from ctxlab.strategies.clear_tool_results import ClearToolResults
from ctxlab.strategies.registry import (
    ENTRY_POINT_GROUP,
    ParamInfo,
    StrategyPluginWarning,
    build_strategy,
    coerce_value,
    current_params,
    discover,
    format_value,
    get_strategy_class,
    parameters,
    register,
    strategy_names,
    with_params,
)
from ctxlab.strategies.sliding_window import SlidingWindow
from ctxlab.strategies.summarize import Summarize, SummarizeOptions
from ctxlab.strategies.trim_last import TrimLast
from ctxlab.strategies.window_drop import WindowDrop

__all__ = [
    "ENTRY_POINT_GROUP",
    "ClearToolResults",
    "Decision",
    "ParamInfo",
    "ParamSpec",
    "Projection",
    "SlidingWindow",
    "Strategy",
    "StrategyPluginWarning",
    "Summarize",
    "SummarizeOptions",
    "SweepRange",
    "TrimLast",
    "TrimResult",
    "WindowDrop",
    "build_strategy",
    "coerce_value",
    "current_params",
    "discover",
    "format_value",
    "get_strategy_class",
    "param",
    "parameters",
    "register",
    "strategy_names",
    "suffix_decisions",
    "suggested_for",
    "token_default",
    "with_params",
]
