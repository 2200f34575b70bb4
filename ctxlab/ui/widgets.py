"""Parameter widgets generated from a strategy's dataclass fields; nothing strategy-specific.

:func:`param_range` (pure) scales a parameter's range to the loaded chat from ``spec.unit``;
:func:`strategy_widgets` draws one widget per :class:`~ctxlab.strategies.ParamInfo` and returns
the values by leaf name, ready for :func:`~ctxlab.strategies.build_strategy`. Initial values
come from ``cls.suggested(chat)`` so the first view of a chat shows something trimmed.

Widget state lives under keys that include the chat's load token, so a new chat starts from its
own suggestions; the last values per (namespace, strategy) are mirrored in a plain session-state
dict (:data:`PARAMS_STATE`) so they survive page switches, URL restores and the Tune page's
"apply" button.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.counted import CountedChat
from ctxlab.model import Role
from ctxlab.strategies import ParamInfo, Strategy, current_params, parameters

__all__ = [
    "PARAMS_STATE",
    "ChatScale",
    "WidgetRange",
    "initial_values",
    "nice_ceiling",
    "param_key",
    "param_range",
    "remember_params",
    "strategy_widgets",
]

PARAMS_STATE = "ctx.params"
"""Session-state key of ``{(namespace, strategy): {leaf name: value}}``."""


@dataclass(frozen=True, slots=True)
class ChatScale:
    """The sizes a parameter range can be scaled to."""

    tokens: int
    messages: int
    rounds: int
    tool_results: int

    @classmethod
    def of(cls, chat: CountedChat) -> ChatScale:
        return cls(
            tokens=chat.total,
            messages=len(chat),
            rounds=len(chat.starts),
            tool_results=sum(1 for m in chat.messages if m.is_tool_result),
        )


@dataclass(frozen=True, slots=True)
class WidgetRange:
    """Bounds and step of a numeric widget; ``lo <= hi``."""

    lo: float
    hi: float
    step: float


def nice_ceiling(x: float) -> int:
    """The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k that is >= ``x`` (at least 1).

    >>> [nice_ceiling(v) for v in (0, 7, 1234, 60000)]
    [1, 8, 1500, 60000]
    """
    if x <= 1:
        return 1
    power = 10 ** math.floor(math.log10(x))
    for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * power >= x:
            return int(m * power)
    return int(10 * power)


def _nice_step(span: float, declared: float | None, integer: bool) -> float:
    """About 200 steps over ``span``, never finer than 1 for integers, at most ``declared``."""
    raw = max(span / 200, 1e-9)
    power = 10 ** math.floor(math.log10(raw))
    step: float = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if declared is not None:
        step = min(step, float(declared))
    return float(max(1, round(step))) if integer else step


def param_range(info: ParamInfo, scale: ChatScale, current: float | None = None) -> WidgetRange:
    """The widget range of a numeric parameter, scaled to the chat by ``spec.unit``.

    ``tokens`` -> up to the chat's tokens x 1.2 (nicely rounded), ``messages`` -> chat length,
    ``rounds`` -> rounds, ``tool_results`` -> tool results; otherwise the declared max (or 4x
    the default). The declared min/max always bound the result, and ``current`` is always inside.
    """
    spec = info.spec
    integer = info.kind in ("int", "optional_int")
    lo = spec.min if spec.min is not None else 0
    scaled: float | None = {
        "tokens": nice_ceiling(scale.tokens * 1.2),
        "messages": scale.messages,
        "rounds": scale.rounds,
        "tool_results": scale.tool_results,
    }.get(spec.unit or "")
    if scaled is None:
        default = info.default if isinstance(info.default, int | float) else 0
        scaled = spec.max if spec.max is not None else max(float(default) * 4, 10)
    hi = float(scaled)
    if spec.max is not None:
        hi = min(hi, spec.max)
    if current is not None:
        hi = max(hi, current)
        lo = min(lo, current)
    step = _nice_step(hi - lo, spec.step, integer)
    if hi <= lo:
        hi = lo + step
    if integer:
        return WidgetRange(int(lo), math.ceil(hi), int(step))
    return WidgetRange(float(lo), hi, step)


def initial_values(cls: type[Strategy], chat: CountedChat) -> dict[str, Any]:
    """``cls.suggested(chat)``'s parameters by leaf name."""
    return current_params(cls.suggested(chat))


def param_key(namespace: str, strategy: str, name: str, token: int) -> str:
    """The widget key of one parameter (namespaced per page slot and per loaded chat)."""
    return f"{namespace}p.{strategy}.{name}@{token}"


def remember_params(state: Any, namespace: str, strategy: str, values: Mapping[str, Any]) -> None:
    """Store ``values`` as the last parameters of ``strategy`` in ``namespace``."""
    store: dict[tuple[str, str], dict[str, Any]] = state.setdefault(PARAMS_STATE, {})
    store[(namespace, strategy)] = dict(values)


def _to_widget(info: ParamInfo, value: Any, rng: WidgetRange | None) -> Any:
    if info.kind == "roles":
        return [Role(r).value for r in (value or ())]
    if rng is not None and value is not None:
        value = min(max(value, rng.lo), rng.hi)
        return int(value) if info.kind in ("int", "optional_int") else float(value)
    return value


def _from_widget(info: ParamInfo, value: Any) -> Any:
    if info.kind == "roles":
        return tuple(Role(v) for v in value)
    if info.kind == "optional_int" and value is not None:
        return int(value)
    return value


def strategy_widgets(
    cls: type[Strategy],
    chat: CountedChat,
    *,
    namespace: str = "",
    token: int = 0,
    container: Any = None,
) -> dict[str, Any]:
    """Draw one widget per parameter of ``cls`` and return their values by leaf name.

    Args:
        cls: a registered strategy class.
        chat: the counted chat; ranges and suggestions scale to it.
        namespace: prefix that keeps widgets of different slots (Compare's configs) apart.
        token: the loaded chat's token; a new chat gets fresh widgets.
        container: where to draw (``st.sidebar``, a column); ``st`` itself when None.
    """
    import streamlit as st

    box = container if container is not None else st
    scale = ChatScale.of(chat)
    remembered: dict[str, Any] = st.session_state.get(PARAMS_STATE, {}).get(
        (namespace, cls.name), {}
    )
    start = {**initial_values(cls, chat), **remembered}
    values: dict[str, Any] = {}
    for info in parameters(cls):
        key = param_key(namespace, cls.name, info.name, token)
        spec = info.spec
        current = start.get(info.name, info.default)
        numeric = info.kind in ("int", "float", "optional_int")
        rng = None
        if numeric:
            number = current if isinstance(current, int | float) else None
            rng = param_range(info, scale, number)
        if key not in st.session_state:
            st.session_state[key] = _to_widget(info, current, rng)
        label = spec.label
        if info.kind in ("int", "float"):
            assert rng is not None
            raw = box.slider(label, rng.lo, rng.hi, step=rng.step, key=key, help=spec.help)
        elif info.kind == "optional_int":
            assert rng is not None
            raw = box.number_input(
                f"{label} (empty = off)",
                min_value=int(rng.lo),
                step=int(rng.step),
                key=key,
                help=spec.help,
            )
        elif info.kind == "bool":
            raw = box.toggle(label, key=key, help=spec.help)
        elif info.kind == "roles":
            raw = box.multiselect(label, [r.value for r in Role], key=key, help=spec.help)
        elif spec.multiline:
            raw = box.text_area(label, key=key, help=spec.help, height=150)
        else:
            raw = box.text_input(label, key=key, help=spec.help)
        values[info.name] = _from_widget(info, raw)
    remember_params(st.session_state, namespace, cls.name, values)
    return values
