"""Token parameters: ranges from the chat and the model, log-spaced slider stops, presets."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.catalog import CATALOG, get_model
from ctxlab.strategies import ParamSpec
from ctxlab.strategies.registry import ParamInfo
from ctxlab.ui.widgets import ChatScale, WidgetRange, param_range, token_ladder, token_presets

BUDGET = ParamInfo(("budget",), "int", 1, ParamSpec("Budget", "help", min=1, unit="tokens"))


def _scale(tokens: int) -> ChatScale:
    return ChatScale(tokens=tokens, messages=100, rounds=10, tool_results=5)


def test_the_range_reaches_the_window_and_never_thirty_million() -> None:
    ten_k = param_range(BUDGET, _scale(2_437_211), window=128_000)
    assert (ten_k.lo, ten_k.hi) == (1, 3_000_000)
    small = param_range(BUDGET, _scale(32_791), window=128_000)
    assert small.hi == 150_000 and small.hi >= 128_000
    gpt41 = param_range(BUDGET, _scale(32_791), window=1_047_576)
    assert gpt41.hi == 1_500_000


@given(tokens=st.integers(1, 50_000_000), model=st.sampled_from(CATALOG.names()))
def test_range_holds_the_chat_and_the_window_within_a_nice_factor(tokens: int, model: str) -> None:
    window = get_model(model).context_window
    rng = param_range(BUDGET, _scale(tokens), window=window)
    need = max(tokens * 1.2, window)
    assert need <= rng.hi <= 1.5 * need + 1  # nice ceiling: at most 1.5x above


@given(
    lo=st.integers(0, 1_000),
    span=st.integers(1, 10_000_000),
    extra=st.lists(st.integers(0, 20_000_000), max_size=5),
)
def test_ladder_is_sorted_distinct_bounded_and_log_spaced(
    lo: int, span: int, extra: list[int]
) -> None:
    hi = lo + span
    ladder = token_ladder(lo, hi, tuple(extra))
    assert ladder == sorted(set(ladder)) and ladder[0] == lo and ladder[-1] == hi
    assert all(v in ladder for v in extra if lo <= v <= hi)
    decades = math.log10(hi) - math.log10(max(lo, 1)) + 1
    assert len(ladder) <= 9 * decades + 2 + len(extra) + 1


def test_presets_are_8k_32k_128k_and_the_window_inside_the_range() -> None:
    wide = WidgetRange(1, 3_000_000, 10_000)
    assert token_presets(wide, get_model("gpt-4.1")) == [
        ("8k", 8_000),
        ("32k", 32_000),
        ("128k", 128_000),
        ("1.05M · gpt-4.1 window", 1_047_576),
    ]
    assert token_presets(WidgetRange(1, 20_000, 100), get_model("gpt-4o")) == [("8k", 8_000)]
    assert token_presets(wide, None) == [("8k", 8_000), ("32k", 32_000), ("128k", 128_000)]
    assert token_presets(WidgetRange(1, 20_000, 100), get_model("gpt-4")) == [
        ("8k", 8_000),
        ("8,192 · gpt-4 window", 8_192),
    ]
