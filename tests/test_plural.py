"""ctxlab.plural: counted nouns and shares as a person writes them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.plural import plural, share


def test_one_is_singular_every_other_count_plural() -> None:
    assert plural(1, "round") == "1 round"
    assert plural(0, "round") == "0 rounds"
    assert plural(2, "cache break") == "2 cache breaks"
    assert plural(12_345, "call") == "12,345 calls"
    assert plural(2, "reply", "replies") == "2 replies"
    assert plural(1, "reply", "replies") == "1 reply"


@given(st.integers(min_value=2, max_value=10**9))
def test_counts_above_one_never_read_singular(n: int) -> None:
    assert plural(n, "round").endswith("rounds")
    assert plural(n, "round").startswith(f"{n:,} ")


def test_share_rounds_and_never_says_zero_for_a_part() -> None:
    assert share(750, 1_516) == "49%"
    assert share(20, 10_008) == "under 1%"
    assert share(0, 10) == "0%"
    assert share(5, 0) == "0%"
