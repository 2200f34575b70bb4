"""AppTest: Tune on the real Claude Code session and the real Codex rollout (opened from the
server's chats folder), for every strategy: the swept range lies within the chat and the model's
window, the answer is a value in it or an explicit "needs no trimming", and Apply sets it."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from app_support import ROOT, page, param_widget

from ctxlab.catalog import get_model
from ctxlab.chats_folder import CHATS_DIR_ENV
from ctxlab.formats import load_chat
from ctxlab.strategies import get_strategy_class, parameters, strategy_names
from ctxlab.strategies.base import SWEEP_FLOOR
from ctxlab.tokens import get_counter

TUNE = "pages/3_Tune.py"
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
CHATS = {
    "thinking_session": FIXTURES / "claude_code" / "thinking_session.jsonl",
    "codex_rollout": next((FIXTURES / "codex").glob("rollout-2026-05-11T*.jsonl")),
}


@pytest.fixture
def chats_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, source in CHATS.items():
        shutil.copy(source, tmp_path / f"{name}.jsonl")
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    return tmp_path


def _tokens(name: str, model: str) -> int:
    return get_counter(model).counted(load_chat(CHATS[name])).total


def _sentence(at: object) -> str:
    shown = [*at.success, *at.warning]  # type: ignore[attr-defined]
    assert len(shown) == 1, shown
    return str(shown[0].value)


CTXLAB_STRATEGIES = [n for n in strategy_names() if get_strategy_class(n).framework_policy is None]
FRAMEWORKS = [n for n in strategy_names() if get_strategy_class(n).framework_policy is not None]


@pytest.mark.parametrize("strategy", CTXLAB_STRATEGIES)
@pytest.mark.parametrize("chat", list(CHATS))
def test_tune_sweeps_within_the_chat_and_answers(
    chats_folder: Path, chat: str, strategy: str
) -> None:
    model = "gpt-4.1"
    at = page(TUNE, chat=chat, strategy=strategy, model=model)
    at.run()
    assert not at.exception
    total, window = _tokens(chat, model), get_model(model).context_window
    numeric = [i for i in parameters(get_strategy_class(strategy)) if i.kind in ("int", "float")]
    assert numeric
    ranges = [s for s in at.slider if s.key.startswith("tune-range")]
    if ranges:
        lo, hi = ranges[0].value
        assert 0 < lo <= hi <= ranges[0].max
        unit = numeric[0].spec.unit
        if unit == "tokens":
            assert ranges[0].max <= min(total, window)
    if not at.get("plotly_chart"):  # a count the chat does not hold: said so, nothing swept
        assert any("acts on nothing in this chat" in str(i.value) for i in at.info)
        return
    text = _sentence(at)
    for number in re.findall(r"([\d,]+) tokens(?! to spare)", text):
        value = int(number.replace(",", ""))
        assert value <= total or value == window, text
    answered = text.startswith(("Smallest", "Cheapest")) or "needs no trimming" in text
    actionable = (
        (bool(at.success) and answered) or "pick a model" in text or ("lower the facts" in text)
    )
    assert actionable, text


def test_the_claude_code_session_on_gpt_4_1_is_no_longer_swept_above_itself(
    chats_folder: Path,
) -> None:
    """Was 15,000-1,500,000 tokens with the answer "15,000 tokens", more than the chat."""
    at = page(TUNE, chat="thinking_session", strategy="window-drop", model="gpt-4.1")
    at.run()
    assert not at.exception
    total = _tokens("thinking_session", "gpt-4.1")
    slider = next(s for s in at.slider if s.key.startswith("tune-range"))
    assert slider.max == total and slider.min == math.ceil(total * SWEEP_FLOOR)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    calls_axis = spec["layout"]["yaxis"]["range"]
    assert calls_axis[1] < 2 * total  # the calls fill the axis; the window is an off-scale note
    notes = [a.get("text", "") for a in spec["layout"].get("annotations", [])]
    assert any("gpt-4.1 window 1,047,576 (off scale" in n for n in notes)


def test_apply_on_the_codex_rollout_sets_the_value_in_range(chats_folder: Path) -> None:
    at = page(TUNE, chat="codex_rollout", strategy="trim-last", model="gpt-4o")
    at.run()
    assert not at.exception
    pick = next(s for s in at.select_slider if s.key.startswith("tune-pick"))
    chosen = int(float(str(pick.value).replace(",", "")))
    assert 0 < chosen <= min(_tokens("codex_rollout", "gpt-4o"), 128_000)
    next(b for b in at.button if str(b.label).startswith("Apply")).click().run()
    assert not at.exception
    assert param_widget(at, "max_tokens").value == chosen


@pytest.mark.parametrize("strategy", FRAMEWORKS)
def test_tune_sweeps_a_framework_policy_or_says_why_not(chats_folder: Path, strategy: str) -> None:
    """A framework policy opens at its own defaults, which may leave nothing to sweep on a
    chat (a trigger whose minimum is above it) or bound one parameter by another: the page
    sweeps what the framework accepts, or says why it cannot, never a traceback."""
    model = "gpt-4.1"
    chat = next(iter(CHATS))
    at = page(TUNE, chat=chat, strategy=strategy, model=model)
    at.run()
    assert not at.exception
    if at.get("plotly_chart"):
        total, window = _tokens(chat, model), get_model(model).context_window
        text = _sentence(at)
        for number in re.findall(r"([\d,]+) tokens(?! to spare)", text):
            assert int(number.replace(",", "")) <= max(total, window), text
        return
    reasons = ("no numeric parameter", "nothing to tune", "accepts no value")
    assert any(r in str(i.value) for i in at.info for r in reasons), strategy
