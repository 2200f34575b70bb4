"""The strategy registry: built-ins enter it exactly as a third party's strategy does.

The door is the entry-point group ``ctxlab.strategies``: each entry point names a strategy class
(``keep-last = "my_package.module:KeepLast"``), a frozen-dataclass subclass of
:class:`~ctxlab.strategies.Strategy` whose ``name`` equals the entry point's name. ctxlab's own
strategies are declared the same way in its ``pyproject.toml``. :func:`discover` loads the group
once, lazily; a plug-in that fails to load is skipped with a :class:`StrategyPluginWarning`
naming it, never breaking the built-ins. A built-in missing from the installed metadata (an
editable install older than the checkout) is registered from its module, so the registry holds
the same strategies either way.

The CLI, the URL and the UI only ever read the registry and the parameter descriptions of
:func:`parameters`; parameter values cross faces as text through :func:`coerce_value` and
:func:`format_value`, which are inverses.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import inspect
import pkgutil
import threading
import types
import typing
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ctxlab.errors import ParameterError, UnknownNameError
from ctxlab.model import Role
from ctxlab.strategies.base import ParamSpec, Strategy

__all__ = [
    "ENTRY_POINT_GROUP",
    "ParamInfo",
    "StrategyPluginWarning",
    "build_strategy",
    "builtin_strategy_classes",
    "coerce_value",
    "current_params",
    "discover",
    "format_value",
    "get_strategy_class",
    "parameters",
    "register",
    "strategy_names",
    "with_params",
]

S = TypeVar("S", bound=type[Strategy])

ENTRY_POINT_GROUP = "ctxlab.strategies"
"""The entry-point group through which every strategy, built-in or not, enters the registry."""

_REGISTRY: dict[str, type[Strategy]] = {}
_DISCOVERED = False
_LOCK = threading.RLock()
_NOT_STRATEGY_MODULES = {"base", "registry", "provenance", "projection_columns"}


class StrategyPluginWarning(UserWarning):
    """A ``ctxlab.strategies`` entry point was skipped; the message names it and says why."""


def register(cls: S) -> S:
    """Add a strategy class under its ``name`` (names are unique); returns ``cls``.

    :func:`discover` calls it for every entry point; code may also call it directly (or use it
    as a class decorator) to add a strategy at run time.
    """
    _check_strategy_class(cls)
    name = cls.name
    existing = _REGISTRY.get(name)
    if existing is not None and existing.__qualname__ != cls.__qualname__:
        raise ValueError(f"strategy name {name!r} is already taken by {existing.__qualname__}")
    _REGISTRY[name] = cls
    return cls


def _check_strategy_class(cls: object) -> None:
    """Raise TypeError unless ``cls`` is a frozen-dataclass Strategy subclass with its names."""
    if not (inspect.isclass(cls) and issubclass(cls, Strategy)):
        raise TypeError(f"{cls!r} is not a subclass of ctxlab.strategies.Strategy")
    if not dataclasses.is_dataclass(cls) or not cls.__dataclass_params__.frozen:
        raise TypeError(f"{cls.__qualname__} is not a frozen dataclass")
    for attr in ("name", "title", "summary"):
        if not isinstance(getattr(cls, attr, None), str) or not getattr(cls, attr):
            raise TypeError(f"{cls.__qualname__} has no {attr!r} class attribute (a string)")


def discover() -> None:
    """Load every strategy of the ``ctxlab.strategies`` entry-point group (once).

    Built-ins come in through their entry points like any plug-in (``pyproject.toml`` declares
    each; a test checks). A built-in whose entry point the installed metadata lacks (an
    editable install older than the checkout) is registered from its module all the same, so a
    stale install never hides one. A broken plug-in is skipped with a
    :class:`StrategyPluginWarning`.
    """
    global _DISCOVERED
    with _LOCK:
        if _DISCOVERED:
            return
        for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            _load_entry_point(entry)
        for cls in builtin_strategy_classes():
            if cls.name not in _REGISTRY:
                register(cls)
        _DISCOVERED = True


def _load_entry_point(entry: importlib.metadata.EntryPoint) -> None:
    where = f"entry point {entry.name} = {entry.value!r} (group {ENTRY_POINT_GROUP})"
    try:
        cls = entry.load()
        _check_strategy_class(cls)
        if cls.name != entry.name:
            raise TypeError(f"the class's name is {cls.name!r}, not {entry.name!r}")
        register(cls)
    except Exception as exc:  # a plug-in's failure must not take the built-ins down
        warnings.warn(
            f"ctxlab: skipped strategy {where}: {type(exc).__name__}: {exc}",
            StrategyPluginWarning,
            stacklevel=2,
        )


def builtin_strategy_classes() -> list[type[Strategy]]:
    """The Strategy classes defined in this package's own modules (and those of its
    ``frameworks`` subpackage: the framework policies), in module order."""
    import ctxlab.strategies as package
    import ctxlab.strategies.frameworks as frameworks

    found: list[type[Strategy]] = []
    names = [
        f"{pkg.__name__}.{info.name}"
        for pkg in (package, frameworks)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name)
        if not info.ispkg
        and info.name not in _NOT_STRATEGY_MODULES
        and not info.name.startswith("_")
    ]
    for module_name in names:
        module = importlib.import_module(module_name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, Strategy)
                and value.__module__ == module.__name__
                and isinstance(getattr(value, "name", None), str)
            ):
                found.append(value)
    return found


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


_HINTS: dict[type[Any], Mapping[str, Any]] = {}


def _type_hints(cls: type[Any]) -> Mapping[str, Any]:
    """``typing.get_type_hints(cls)``, once per class: with postponed annotations it compiles
    and evaluates every field's annotation text on each call, and sweeps, Tune and replay ask
    for a strategy's parameters thousands of times."""
    hints = _HINTS.get(cls)
    if hints is None:  # two threads may both compute it: the same value, either one kept
        hints = _HINTS[cls] = types.MappingProxyType(typing.get_type_hints(cls))
    return hints


def parameters(cls: type[Any], prefix: tuple[str, ...] = ()) -> list[ParamInfo]:
    """The tunable parameters of a strategy class, nested option dataclasses flattened."""
    hints = _type_hints(cls)
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


def format_value(value: Any) -> str:
    """A parameter value as the text the CLI, the URL and Tune speak; :func:`coerce_value` reads it.

    ``coerce_value(info, format_value(v)) == v`` for every value ``v`` of a parameter ``info``:
    booleans are ``true``/``false``, an unset optional value is ``none``, roles are joined by
    commas (the empty tuple is the empty text), numbers and text are written as Python does.

    >>> [format_value(v) for v in (True, None, (Role.TOOL, Role.USER), 0.5)]
    ['true', 'none', 'tool,user', '0.5']
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, tuple | list):
        return ",".join(format_value(item) for item in value)
    if isinstance(value, Role):
        return value.value
    return str(value)


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
    hints = _type_hints(cls)
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
    """A copy of ``strategy`` with the parameters in ``changes`` (by leaf name) replaced; its
    fields that are not parameters (what the chat told it, e.g. recorded usage) carried over."""
    current = {info.name: _get_path(strategy, info.path) for info in parameters(type(strategy))}
    current.update(changes)
    built = build_strategy(strategy.name, current)
    hints = _type_hints(type(strategy))
    given = {
        f.name: getattr(strategy, f.name)
        for f in dataclasses.fields(strategy)  # type: ignore[arg-type]
        if f.init and "ctxlab" not in f.metadata and not dataclasses.is_dataclass(hints[f.name])
    }
    return dataclasses.replace(built, **given) if given else built  # type: ignore[type-var]


def _get_path(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        obj = getattr(obj, part)
    return obj


def current_params(strategy: Strategy) -> dict[str, Any]:
    """The parameter values of ``strategy`` by leaf name (what the URL and CLI speak)."""
    return {info.name: _get_path(strategy, info.path) for info in parameters(type(strategy))}
