"""The delay before a chat's facts are picked in the background is an operator setting
(``CTXLAB_FACTS_PREFETCH_DELAY_S``): a number of seconds, 0 or more, else a clear error."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import pytest

from ctxlab.errors import CtxlabError
from ctxlab.ui import insights_view
from ctxlab.ui.insights_view import (
    FACTS_PREFETCH_DELAY_ENV,
    FACTS_PREFETCH_DELAY_S,
    facts_prefetch_delay_s,
)


def test_unset_or_empty_is_the_default() -> None:
    assert FACTS_PREFETCH_DELAY_S == 20.0
    assert facts_prefetch_delay_s({}) == FACTS_PREFETCH_DELAY_S
    assert facts_prefetch_delay_s({FACTS_PREFETCH_DELAY_ENV: "  "}) == FACTS_PREFETCH_DELAY_S


@pytest.mark.parametrize(("raw", "seconds"), [("0", 0.0), ("1.5", 1.5), (" 45 ", 45.0)])
def test_a_number_of_seconds_is_the_delay(raw: str, seconds: float) -> None:
    assert facts_prefetch_delay_s({FACTS_PREFETCH_DELAY_ENV: raw}) == seconds


@pytest.mark.parametrize("raw", ["abc", "20s", "-1", "nan", "inf"])
def test_anything_else_is_an_error_naming_the_setting_and_the_value(raw: str) -> None:
    with pytest.raises(CtxlabError) as error:
        facts_prefetch_delay_s({FACTS_PREFETCH_DELAY_ENV: raw})
    assert FACTS_PREFETCH_DELAY_ENV in str(error.value)
    assert repr(raw) in str(error.value)
    assert "number of seconds, 0 or more" in str(error.value)


class _Recording:
    """Stands in for a counted chat: records the delay each prefetch asks for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def prefetch(self, key: Hashable, build: Callable[[Any], Any], *, delay_s: float) -> None:
        self.delays.append(delay_s)


def test_the_first_showing_waits_the_environments_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    chat = _Recording()
    monkeypatch.delenv(FACTS_PREFETCH_DELAY_ENV, raising=False)
    insights_view.prefetch_facts(chat, first_showing=True)  # type: ignore[arg-type]
    monkeypatch.setenv(FACTS_PREFETCH_DELAY_ENV, "0.5")
    insights_view.prefetch_facts(chat, first_showing=True)  # type: ignore[arg-type]
    insights_view.prefetch_facts(chat)  # type: ignore[arg-type]  # a later run: no delay
    assert chat.delays == [FACTS_PREFETCH_DELAY_S, 0.5, 0.0]
    monkeypatch.setenv(FACTS_PREFETCH_DELAY_ENV, "soon")
    with pytest.raises(CtxlabError, match=FACTS_PREFETCH_DELAY_ENV):
        insights_view.prefetch_facts(chat, first_showing=True)  # type: ignore[arg-type]
