"""Parameter widgets generated from a strategy's dataclass fields; nothing strategy-specific.

:func:`param_range` (pure) scales a parameter's range to the loaded chat and the model from
``spec.unit``; :func:`strategy_widgets` draws the widgets of every
:class:`~ctxlab.strategies.ParamInfo` and returns the values by leaf name, ready for
:func:`~ctxlab.strategies.build_strategy`. Initial values come from ``cls.suggested(chat,
window=...)`` so the first view of a chat shows something trimmed, at a budget the model accepts.

A token parameter (``spec.unit == "tokens"``) gets three controls kept in sync by callbacks: a
number box (the value itself, any integer can be typed), a slider over log-spaced nice values
(:func:`token_ladder`) and preset buttons (8k, 32k, 128k, the model's window;
:func:`token_presets`). Other numeric parameters keep a slider.

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

from ctxlab.catalog import ModelInfo
from ctxlab.counted import CountedChat
from ctxlab.model import Role
from ctxlab.strategies import ParamInfo, Strategy, current_params, parameters, suggested_for

__all__ = [
    "PARAMS_STATE",
    "ChatScale",
    "WidgetRange",
    "initial_values",
    "nice_ceiling",
    "opening_note",
    "param_key",
    "param_range",
    "remember_params",
    "remembered_params",
    "strategy_widgets",
    "token_ladder",
    "token_presets",
]

PARAMS_STATE = "ctx.params"
"""Session-state key of ``{(namespace, strategy): {leaf name: value}}``."""
PARAMS_CHAT = "ctx.params_chat"
"""Session-state key of ``{(namespace, strategy): chat token}``: which chat the values of
:data:`PARAMS_STATE` were set on. A newly opened chat starts from its own derived values, not
from the last chat's (a 16,000-token budget kept from a sample is above a 6,420-token upload)."""


@dataclass(frozen=True, slots=True)
class ChatScale:
    """The sizes a parameter range can be scaled to."""

    tokens: int
    messages: int
    rounds: int
    tool_results: int

    @classmethod
    def of(cls, chat: CountedChat) -> ChatScale:
        """The scale of ``chat``, computed once per counted chat (the sidebar asks on every
        rerun, and counting tool results walks the whole chat)."""
        return chat.derived(
            ("ui.chat_scale", cls),
            lambda c: cls(
                tokens=c.total,
                messages=len(c),
                rounds=len(c.starts),
                tool_results=sum(1 for m in c.messages if m.is_tool_result),
            ),
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


def param_range(
    info: ParamInfo, scale: ChatScale, current: float | None = None, window: int | None = None
) -> WidgetRange:
    """The widget range of a numeric parameter, scaled to the chat (and model) by ``spec.unit``.

    ``tokens`` -> up to the larger of the chat's tokens x 1.2 and the model's context ``window``,
    nicely rounded (so the window itself can always be picked); ``messages`` -> chat length,
    ``rounds`` -> rounds, ``tool_results`` -> tool results; otherwise the declared max (or 4x
    the default). The declared min/max always bound the result, and ``current`` is always inside.

    >>> from ctxlab.strategies import ParamSpec, ParamInfo
    >>> budget = ParamInfo(("budget",), "int", 1, ParamSpec("Budget", "", min=1, unit="tokens"))
    >>> param_range(budget, ChatScale(2_437_211, 10_009, 2_000, 4_000), window=128_000).hi
    3000000
    >>> param_range(budget, ChatScale(32_791, 156, 20, 60), window=128_000).hi
    150000
    """
    spec = info.spec
    integer = info.kind in ("int", "optional_int")
    lo = spec.min if spec.min is not None else 0
    scaled: float | None = {
        "tokens": nice_ceiling(max(scale.tokens * 1.2, window or 0)),
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


_LADDER = (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8)


def token_ladder(lo: int, hi: int, extra: tuple[int, ...] = ()) -> list[int]:
    """Log-spaced nice values from ``lo`` to ``hi`` (both included), plus ``extra`` values in
    range: the stops of a token slider. Sorted, distinct, about nine stops per decade.

    >>> token_ladder(1, 40, extra=(33,))
    [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 25, 30, 33, 40]
    """
    values = {lo, hi, *(v for v in extra if lo <= v <= hi)}
    power = 1
    while power <= hi:
        for m in _LADDER:
            v = int(m * power)
            if lo <= v <= hi and v == m * power:
                values.add(v)
        power *= 10
    return sorted(values)


def _short(tokens: int) -> str:
    """``8k``, ``128k``, ``1.05M``, ``8,192``: a preset's label."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.3g}M"
    if tokens % 1_000 == 0:
        return f"{tokens // 1_000}k"
    return f"{tokens:,}"


def token_presets(rng: WidgetRange, model: ModelInfo | None = None) -> list[tuple[str, int]]:
    """The preset buttons of a token parameter: (label, value) for 8k, 32k, 128k and the model's
    window, only those inside ``rng``; a preset equal to the window says so.

    >>> from ctxlab.catalog import get_model
    >>> token_presets(WidgetRange(1, 150_000, 1_000), get_model("gpt-4o"))
    [('8k', 8000), ('32k', 32000), ('128k · gpt-4o window', 128000)]
    """
    window = model.context_window if model is not None else None
    values = sorted({8_000, 32_000, 128_000, *([window] if window else [])})
    out: list[tuple[str, int]] = []
    for v in values:
        if not rng.lo <= v <= rng.hi:
            continue
        label = _short(v)
        if model is not None and v == window:
            label = f"{label} · {model.name} window"
        out.append((label, v))
    return out


def initial_values(
    cls: type[Strategy], chat: CountedChat, model: ModelInfo | None = None
) -> dict[str, Any]:
    """``cls.suggested(chat, window=...)``'s parameters by leaf name (the window: ``model``'s
    input room, None without a model)."""
    window = model.input_room if model is not None else None
    return current_params(suggested_for(cls, chat, window))


def param_key(namespace: str, strategy: str, name: str, token: int) -> str:
    """The widget key of one parameter (namespaced per page slot and per loaded chat)."""
    return f"{namespace}p.{strategy}.{name}@{token}"


def remember_params(
    state: Any, namespace: str, strategy: str, values: Mapping[str, Any], token: int | None = None
) -> None:
    """Store ``values`` as the last parameters of ``strategy`` in ``namespace``, set on the chat
    of load token ``token`` (None: whatever chat is open)."""
    store: dict[tuple[str, str], dict[str, Any]] = state.setdefault(PARAMS_STATE, {})
    store[(namespace, strategy)] = dict(values)
    chats: dict[tuple[str, str], int | None] = state.setdefault(PARAMS_CHAT, {})
    chats[(namespace, strategy)] = token


def remembered_params(state: Any, namespace: str, strategy: str, token: int) -> dict[str, Any]:
    """The last parameters of ``strategy`` in ``namespace`` when they were set on the chat of
    load token ``token`` (or on no chat in particular); {} for another chat."""
    store: dict[tuple[str, str], dict[str, Any]] = state.get(PARAMS_STATE, {})
    found = store.get((namespace, strategy))
    if not found:
        return {}
    owner = state.get(PARAMS_CHAT, {}).get((namespace, strategy))
    return dict(found) if owner is None or owner == token else {}


def opening_note(
    cls: type[Strategy], chat: CountedChat, model: ModelInfo | None, values: Mapping[str, Any]
) -> str:
    """Why the parameters are what they are, while they are the ones derived from the chat and
    the model (:meth:`~ctxlab.strategies.Strategy.opening_note`); "" once the user changed one
    (a typed value, a link's, an applied one)."""
    window = model.input_room if model is not None else None
    derived = suggested_for(cls, chat, window)
    if any(values.get(k) != v for k, v in current_params(derived).items() if k in values):
        return ""
    return derived.opening_note(chat, window)


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


def _sync(state: Any, source: str, target: str) -> None:
    """Callback: copy ``source``'s value into ``target`` (number box <-> slider)."""
    state[target] = state[source]


def _set_both(state: Any, key: str, value: int) -> None:
    """Callback of a preset button: the number box and its slider take ``value``."""
    state[key] = value
    state[f"{key}.scale"] = value


def _token_widget(
    box: Any, info: ParamInfo, key: str, rng: WidgetRange, model: ModelInfo | None
) -> int:
    """Number box + log slider + presets for one token parameter; returns the number box value.

    The number box owns the value (``key``); the slider (``key.scale``) and the presets write
    it through callbacks, and the slider is re-seeded from it before it is drawn.
    """
    import streamlit as st

    state = st.session_state
    scale_key = f"{key}.scale"
    spec = info.spec
    value = int(state[key])
    presets = token_presets(rng, model)
    options = token_ladder(int(rng.lo), int(rng.hi), (value, *(v for _, v in presets)))
    state[scale_key] = value
    typed = box.number_input(
        spec.label,
        min_value=int(rng.lo),
        max_value=int(rng.hi),
        step=int(rng.step),
        key=key,
        help=f"{spec.help} Type any value, drag the slider or pick a preset.",
        on_change=_sync,
        args=(state, key, scale_key),
    )
    box.select_slider(
        f"{spec.label} (log scale)",
        options,
        key=scale_key,
        format_func=lambda v: f"{v:,}",
        label_visibility="collapsed",
        on_change=_sync,
        args=(state, scale_key, key),
    )
    if presets:
        row = box.container(horizontal=True, gap="small")
        for label, v in presets:
            row.button(
                label,
                key=f"{key}.preset.{v}",
                help=f"Set {spec.label} to {v:,}",
                on_click=_set_both,
                args=(state, key, v),
                width="content",
            )
    return int(typed)


def strategy_widgets(
    cls: type[Strategy],
    chat: CountedChat,
    *,
    namespace: str = "",
    token: int = 0,
    container: Any = None,
    model: ModelInfo | None = None,
) -> dict[str, Any]:
    """Draw the widgets of every parameter of ``cls`` and return their values by leaf name.

    Args:
        cls: a registered strategy class.
        chat: the counted chat; ranges and suggestions scale to it.
        namespace: prefix that keeps widgets of different slots (Compare's configs) apart.
        token: the loaded chat's token; a new chat gets fresh widgets.
        container: where to draw (``st.sidebar``, a column); ``st`` itself when None.
        model: the chosen model (None: a raw encoding); its window bounds token ranges, sets the
            first values and adds a preset.
    """
    import streamlit as st

    box = container if container is not None else st
    scale = ChatScale.of(chat)
    window = model.context_window if model is not None else None
    remembered = remembered_params(st.session_state, namespace, cls.name, token)
    start = {**initial_values(cls, chat, model), **remembered}
    values: dict[str, Any] = {}
    for info in parameters(cls):
        key = param_key(namespace, cls.name, info.name, token)
        spec = info.spec
        current = start.get(info.name, info.default)
        numeric = info.kind in ("int", "float", "optional_int")
        rng = None
        if numeric:
            number = current if isinstance(current, int | float) else None
            rng = param_range(info, scale, number, window)
        if key not in st.session_state:
            st.session_state[key] = _to_widget(info, current, rng)
        label = spec.label
        if info.kind == "int" and spec.unit == "tokens":
            assert rng is not None
            raw = _token_widget(box, info, key, rng, model)
        elif info.kind in ("int", "float"):
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
        elif spec.choices:
            raw = box.selectbox(label, spec.choices, key=key, help=spec.help)
        elif spec.multiline:
            raw = box.text_area(label, key=key, help=spec.help, height=150)
        else:
            raw = box.text_input(label, key=key, help=spec.help)
        values[info.name] = _from_widget(info, raw)
    remember_params(st.session_state, namespace, cls.name, values, token)
    return values
