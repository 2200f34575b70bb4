"""The strategy registry: built-ins enter it exactly as a third party's strategy would.

A strategy module decorates its class with :func:`register`; :func:`discover` imports every
module of this package once, lazily. The CLI, the URL and the UI only ever read the registry and
the parameter descriptions of :func:`parameters`, so adding a strategy is one new module.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import threading
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ctxlab.errors import ParameterError, UnknownNameError
from ctxlab.model import Role
from ctxlab.strategies.base import ParamSpec, Strategy

__all__ = [
    "ParamInfo",
    "build_strategy",
    "coerce_value",
    "current_params",
    "discover",
    "get_strategy_class",
    "parameters",
    "register",
    "strategy_names",
    "with_params",
]

S = TypeVar("S", bound=type[Strategy])

_REGISTRY: dict[str, type[Strategy]] = {}
_DISCOVERED = False
_LOCK = threading.Lock()
_NOT_STRATEGY_MODULES = {"base", "registry"}


def register(cls: S) -> S:
    """Class decorator: add a strategy under its ``name``. Names are unique."""
    name = cls.name
    existing = _REGISTRY.get(name)
    if existing is not None and existing.__qualname__ != cls.__qualname__:
        raise ValueError(f"strategy name {name!r} is already taken by {existing.__qualname__}")
    _REGISTRY[name] = cls
    return cls


def discover() -> None:
    """Import every strategy module of this package (once)."""
    global _DISCOVERED
    with _LOCK:
        if _DISCOVERED:
            return
        import ctxlab.strategies as package

        for info in pkgutil.iter_modules(package.__path__):
            if info.name not in _NOT_STRATEGY_MODULES and not info.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{info.name}")
        _DISCOVERED = True


def strategy_names() -> list[str]:
    """Registered names, in the order a user meets them (``order`` class attribute, then name)."""
    discover()
    return sorted(_REGISTRY, key=lambda n: (getattr(_REGISTRY[n], "order", 100), n))


def get_strategy_class(name: str) -> type[Strategy]:
    discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(strategy_names())
        raise UnknownNameError(f"unknown strategy {name!r}; available: {known}") from None


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """One tunable parameter: where it lives, its type kind, default and UI metadata.

    ``path`` has one element for a plain field and two for a field of a nested options
    dataclass (``("options", "trigger_token_budget")``); ``name`` is the leaf, unique per strategy.
    ``kind`` is one of: int, float, bool, str, optional_int, roles.
    """

    path: tuple[str, ...]
    kind: str
    default: Any
    spec: ParamSpec

    @property
    def name(self) -> str:
        return self.path[-1]


def _kind(annotation: Any) -> str:
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    if annotation is float:
        return "float"
    if annotation is str:
        return "str"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType) and set(args) == {int, type(None)}:
        return "optional_int"
    if origin is tuple and args and args[0] is Role:
        return "roles"
    raise TypeError(f"unsupported parameter type {annotation!r}")


def parameters(cls: type[Any], prefix: tuple[str, ...] = ()) -> list[ParamInfo]:
    """The tunable parameters of a strategy class, nested option dataclasses flattened."""
    hints = typing.get_type_hints(cls)
    out: list[ParamInfo] = []
    for f in dataclasses.fields(cls):
        annotation = hints[f.name]
        if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
            out.extend(parameters(annotation, (*prefix, f.name)))
            continue
        spec = f.metadata.get("ctxlab")
        if spec is None:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        out.append(ParamInfo((*prefix, f.name), _kind(annotation), default, spec))
    return out


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def coerce_value(info: ParamInfo, raw: Any) -> Any:
    """Turn ``raw`` (a string from the CLI or URL, or a Python value) into the field's type."""
    kind = info.kind
    try:
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError("expected true or false")
        if kind == "optional_int":
            if raw is None or str(raw).strip().lower() in {"", "none", "null"}:
                return None
            return int(str(raw)) if not isinstance(raw, int) else raw
        if kind == "int":
            return raw if isinstance(raw, int) and not isinstance(raw, bool) else int(str(raw))
        if kind == "float":
            return float(raw)
        if kind == "roles":
            items = raw if isinstance(raw, list | tuple) else str(raw).split(",")
            return tuple(Role(str(r).strip().lower()) for r in items if str(r).strip())
        return str(raw)
    except ValueError as exc:
        raise ParameterError(
            f"parameter {info.name}: cannot read {raw!r} as {kind.replace('_', ' ')} ({exc})"
        ) from None


def build_strategy(name: str, params: Mapping[str, Any] | None = None) -> Strategy:
    """A strategy from its registry name and parameters given by leaf name.

    Values may be strings (CLI, URL); they are coerced to the field types. Unknown parameter
    names and out-of-range values raise :class:`ParameterError` naming the parameter.
    """
    cls = get_strategy_class(name)
    infos = {info.name: info for info in parameters(cls)}
    values: dict[tuple[str, ...], Any] = {}
    for key, raw in (params or {}).items():
        info = infos.get(key)
        if info is None:
            known = ", ".join(infos) or "none"
            raise ParameterError(f"strategy {name!r} has no parameter {key!r}; it has: {known}")
        values[info.path] = coerce_value(info, raw)
    strategy: Strategy = _construct(cls, values, ())
    return strategy


def _construct(
    cls: type[Any], values: Mapping[tuple[str, ...], Any], prefix: tuple[str, ...]
) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        path = (*prefix, f.name)
        annotation = hints[f.name]
        if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
            if any(p[: len(path)] == path for p in values):
                kwargs[f.name] = _construct(annotation, values, path)
        elif path in values:
            kwargs[f.name] = values[path]
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ParameterError(f"cannot build {cls.__name__}: {exc}") from None


def with_params(strategy: Strategy, changes: Mapping[str, Any]) -> Strategy:
    """A copy of ``strategy`` with the parameters in ``changes`` (by leaf name) replaced."""
    current = {info.name: _get_path(strategy, info.path) for info in parameters(type(strategy))}
    current.update(changes)
    return build_strategy(strategy.name, current)


def _get_path(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        obj = getattr(obj, part)
    return obj


def current_params(strategy: Strategy) -> dict[str, Any]:
    """The parameter values of ``strategy`` by leaf name (what the URL and CLI speak)."""
    return {info.name: _get_path(strategy, info.path) for info in parameters(type(strategy))}
