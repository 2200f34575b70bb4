"""Trimming strategies: one module per strategy, all registered by name.

>>> from ctxlab.strategies import build_strategy, strategy_names
>>> "window-drop" in strategy_names()
True
"""

from ctxlab.strategies.base import (
    Decision,
    ParamSpec,
    Projection,
    Strategy,
    TrimResult,
    param,
    suffix_decisions,
    suggested_for,
    token_default,
)
from ctxlab.strategies.registry import (
    ParamInfo,
    build_strategy,
    current_params,
    discover,
    get_strategy_class,
    parameters,
    register,
    strategy_names,
    with_params,
)

__all__ = [
    "Decision",
    "ParamInfo",
    "ParamSpec",
    "Projection",
    "Strategy",
    "TrimResult",
    "build_strategy",
    "current_params",
    "discover",
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
