"""Configurations to evaluate: a strategy with all its parameters, a model and a budget.

A :class:`Configuration` is a pure value with a content key: two configurations that would
produce the same rows have the same :attr:`Configuration.key`, whatever order or spelling their
parameters were given in (every parameter of the strategy is part of the key, defaults
included). :func:`parse_grid` expands the CLI's ``NAME:param=v1,v2;other=v3`` into the cartesian
product, reading every value with the registry's :func:`~ctxlab.strategies.coerce_value`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.errors import ParameterError
from ctxlab.model import Role
from ctxlab.strategies import Strategy, build_strategy, get_strategy_class, parameters
from ctxlab.strategies.registry import coerce_value, current_params

__all__ = [
    "MAX_GRID",
    "Configuration",
    "GridTooLarge",
    "configuration",
    "parse_grid",
    "token_budget",
    "unique",
]

DEFAULT_MODEL = "gpt-4o"
MAX_GRID = 10_000
"""Configurations one spec may expand to, unless the caller sets its own cap."""


class GridTooLarge(ParameterError):
    """A spec that expands to more configurations than the caller's cap."""


def _plain(value: Any) -> Any:
    """A parameter value as JSON can hold it (roles by name, tuples as lists)."""
    if isinstance(value, Role):
        return value.value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _frozen(value: Any) -> Any:
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


@dataclass(frozen=True, slots=True)
class Configuration:
    """One column of the grid: strategy, every parameter, the pricing model and the budget.

    Attributes:
        strategy: registry name.
        params: every parameter of the strategy by leaf name, sorted, values JSON-plain
            (roles by name, sequences as tuples).
        model: counts tokens and prices the calls (as ``ctxlab replay --model``).
        budget: the token limit a call is "over budget" against; None means no limit.
        retention: measure fact retention at the last call of each conversation.
    """

    strategy: str
    params: tuple[tuple[str, Any], ...]
    model: str = DEFAULT_MODEL
    budget: int | None = None
    retention: bool = True

    @property
    def params_json(self) -> str:
        """The parameters as canonical JSON text (sorted keys, no spaces)."""
        return json.dumps(
            {k: _plain(v) for k, v in self.params}, sort_keys=True, separators=(",", ":")
        )

    @property
    def key(self) -> str:
        """Content hash of everything that determines this configuration's rows (32 hex)."""
        body = json.dumps(
            [self.strategy, self.params_json, self.model, self.budget, self.retention],
            separators=(",", ":"),
        )
        return hashlib.sha256(body.encode()).hexdigest()[:32]

    @property
    def label(self) -> str:
        """``window-drop budget=8000``: the strategy, its token budget and non-default values."""
        infos = {i.name: i for i in parameters(get_strategy_class(self.strategy))}
        budget_name = next(
            (i.name for i in infos.values() if i.spec.unit == "tokens" and i.kind == "int"), None
        )
        shown = []
        for k, v in self.params:
            info = infos.get(k)
            if k == budget_name or info is None or _plain(v) != _plain(info.default):
                shown.append(f"{k}={_text(v)}")
        return " ".join([self.strategy, *shown])

    def build(self) -> Strategy:
        """The strategy object (parameters validated by the registry)."""
        return build_strategy(self.strategy, {k: _plain(v) for k, v in self.params})


def _text(value: Any) -> str:
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value) or "()"
    return str(value)


def token_budget(strategy: Strategy) -> int | None:
    """The strategy's first integer parameter measured in tokens (its budget or trigger), if any.

    Read from the registry's parameter declarations (``unit="tokens"``), so a new strategy
    gets a budget by declaring one.
    """
    for info in parameters(type(strategy)):
        if info.spec.unit == "tokens" and info.kind == "int":
            value = current_params(strategy)[info.name]
            return int(value)
    return None


def configuration(
    strategy: str,
    params: Mapping[str, Any] | None = None,
    *,
    model: str = DEFAULT_MODEL,
    budget: int | None = None,
    retention: bool = True,
) -> Configuration:
    """A validated configuration; ``budget`` None takes the strategy's own (:func:`token_budget`).

    Raises:
        UnknownNameError / ParameterError: from the registry, naming the parameter.
    """
    built = build_strategy(strategy, params or {})
    full = {k: _frozen(_plain(v)) for k, v in current_params(built).items()}
    return Configuration(
        strategy=built.name,
        params=tuple(sorted(full.items())),
        model=model,
        budget=budget if budget is not None else token_budget(built),
        retention=retention,
    )


def parse_grid(
    spec: str,
    *,
    model: str = DEFAULT_MODEL,
    budget: int | None = None,
    retention: bool = True,
    max_configurations: int = MAX_GRID,
) -> list[Configuration]:
    """Every configuration of ``"NAME:param=v1,v2;other=v3"`` (cartesian product, in order).

    Parameters are separated by ``;``, alternative values by ``,``; a roles value lists its
    roles joined by ``+`` (``redact_roles=tool+user``). ``NAME`` alone means the defaults.

    >>> [c.label for c in parse_grid("window-drop:budget=8000,16000")]
    ['window-drop budget=8000', 'window-drop budget=16000']

    Raises:
        ParameterError: a malformed spec, an unknown parameter, a value of the wrong type, or
            more than ``max_configurations`` combinations (counted before any is built); the
            message quotes the spec.
    """
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ParameterError(f"grid {_quoted_spec(spec)}: expected NAME:param=v1,v2")
    infos = {i.name: i for i in parameters(get_strategy_class(name))}
    axes: list[tuple[str, list[Any]]] = []
    combinations = 1
    for part in (p.strip() for p in rest.split(";")):
        if not part:
            continue
        key, sep, values = part.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise ParameterError(
                f"grid {_quoted_spec(spec)}: expected param=v1,v2, got {_quoted_spec(part)}"
            )
        info = infos.get(key)
        if info is None:
            known = ", ".join(infos) or "none"
            raise ParameterError(
                f"grid {_quoted_spec(spec)}: {name} has no parameter {_quoted_spec(key)}; "
                f"it has: {known}"
            )
        raw = [v.strip() for v in values.split(",")]
        combinations *= len(raw)
        _check_size(spec, combinations, max_configurations)
        if info.kind == "roles":
            raw = [v.replace("+", ",") for v in raw]
        axes.append((key, [coerce_value(info, v) for v in raw]))
    _check_size(spec, combinations, max_configurations)
    out: list[Configuration] = []
    for combo in itertools.product(*(values for _, values in axes)):
        params = {key: value for (key, _), value in zip(axes, combo, strict=True)}
        out.append(configuration(name, params, model=model, budget=budget, retention=retention))
    return out


def _check_size(spec: str, combinations: int, cap: int) -> None:
    if combinations > cap:
        raise GridTooLarge(
            f"grid {_quoted_spec(spec)}: over {cap:,} configurations; give fewer values"
        )


def _quoted_spec(spec: str, limit: int = 80) -> str:
    return repr(spec if len(spec) <= limit else spec[:limit] + "…")


def unique(configurations: Sequence[Configuration]) -> list[Configuration]:
    """``configurations`` without repeats (same key), first occurrence kept."""
    seen: dict[str, Configuration] = {}
    for c in configurations:
        seen.setdefault(c.key, c)
    return list(seen.values())
