"""AppTest: Playground and Compare give one provider verdict and one neutral budget line for a
configuration, and a configuration that sends no conversation says so with working fixes."""

from __future__ import annotations

import re

from app_support import PLAYGROUND, page

from ctxlab.model import Message, Role
from ctxlab.strategies import TrimResult
from ctxlab.strategies.base import Decision
from ctxlab.ui.render import saved_percent, tokens_sent_delta
from ctxlab.ui.text import markdown_literal

COMPARE = "pages/1_Compare.py"
CODEX = "codex_rollout_transcript_analysis"  # the real Codex rollout, as a sample
PLAYGROUND_BADGE = re.compile(r"(OpenAI|Anthropic|Gemini): (valid|(\d+) problems?)\]")
COMPARE_BADGE = re.compile(r"(OpenAI|Anthropic|Gemini)(?: ✓|: (\d+))\]")


def _playground_verdict(at: object) -> dict[str, int]:
    found: dict[str, int] = {}
    for m in at.markdown:  # type: ignore[attr-defined]
        for title, _, n in PLAYGROUND_BADGE.findall(m.value):
            found[title] = int(n or 0)
    return found


def _compare_verdicts(at: object) -> list[dict[str, int]]:
    rows = []
    for m in at.markdown:  # type: ignore[attr-defined]
        row = {title: int(n or 0) for title, n in COMPARE_BADGE.findall(m.value)}
        if row:
            rows.append(row)
    return rows


def _budget_lines(at: object) -> list[str]:
    return [i.value for i in at.info if i.value.startswith("Over your")]  # type: ignore[attr-defined]


def test_playground_and_compare_show_one_verdict_and_the_neutral_budget_line() -> None:
    """The issue's case: Summarize ending over its trigger is not a provider problem on either
    page, and both pages say "Over your trigger" with the same words."""
    query = {"chat": CODEX, "strategy": "summarize", "trigger_token_budget": "8000"}
    pg = page(PLAYGROUND, **query)
    pg.run()
    assert not pg.exception
    cmp = page(
        COMPARE,
        chat=CODEX,
        cmp="2",
        cmp1="summarize",
        **{"cmp1.trigger_token_budget": "8000"},
        cmp2="window-drop",
    )
    cmp.run()
    assert not cmp.exception
    verdict = _playground_verdict(pg)
    assert set(verdict) == {"OpenAI", "Anthropic", "Gemini"}
    assert verdict["OpenAI"] == 0  # OpenAI accepts this request: no red badge for the trigger
    assert _compare_verdicts(cmp)[0] == verdict
    (line,) = _budget_lines(pg)
    assert line.startswith(markdown_literal("Over your trigger: 12,036 of 8,000 tokens — "))
    assert _budget_lines(cmp)[0] == line
    shown = "\n".join(str(d.value.to_csv()) for d in pg.dataframe)
    assert "over-budget" not in shown


def test_trim_last_that_sends_nothing_says_so_and_its_fix_sends_messages() -> None:
    # The settings the app suggested before first views were derived from the chat (the link
    # carries them, so they win): on this rollout they send only the system prompt.
    at = page(PLAYGROUND, chat=CODEX, strategy="trim-last", max_tokens="65000")
    at.run()
    assert not at.exception
    (error,) = [e.value for e in at.error if "Nothing of the conversation" in e.value]
    assert markdown_literal("Max tokens (max_tokens)") in error
    assert markdown_literal("Start on a user message (start_on_user)") in error
    metrics = {m.label: m for m in at.metric}
    assert metrics["Saved"].value == "—"  # not "Saved 90%": sending nothing is no saving
    assert metrics["Tokens sent"].delta == "nothing of the chat sent"
    assert metrics["Messages sent"].value == "1"
    fix = at.button(key="pg-empty-fix0")
    assert fix.label.startswith("Raise Max tokens to ")
    fix.click().run()
    assert not at.exception
    assert not [e for e in at.error if "Nothing of the conversation" in e.value]
    metrics = {m.label: m for m in at.metric}
    assert int(metrics["Messages sent"].value.replace(",", "")) > 1
    assert metrics["Saved"].value.endswith("%")


def test_compare_offers_the_same_fix_in_its_column() -> None:
    at = page(COMPARE, chat=CODEX, cmp="2", cmp1="window-drop", cmp2="trim-last")
    at.run()
    assert not at.exception
    assert len([e for e in at.error if "Nothing of the conversation" in e.value]) == 1
    frame = next(d.value for d in at.dataframe if "configuration" in d.value.columns)
    assert frame["saved %"].isna().tolist() == [False, True]  # no saving shown for nothing
    off = at.button(key="cmp1.empty-fix1")
    assert off.label == "Turn off Start on a user message"
    off.click().run()
    assert not at.exception
    assert not [e for e in at.error if "Nothing of the conversation" in e.value]


def _result(before: int, after: int, roles: tuple[Role, ...]) -> TrimResult:
    messages = tuple(Message(r, "x", f"m{i}") for i, r in enumerate(roles))
    return TrimResult(
        messages, dict.fromkeys((m.id for m in messages), Decision.KEPT), before, after
    )


def test_tokens_sent_delta_reads_neutrally_when_everything_is_kept() -> None:
    everything = _result(6420, 6420, (Role.USER, Role.ASSISTANT))
    assert tokens_sent_delta(everything) == ("all 6,420 kept", "off", "off")
    assert saved_percent(everything) == 0.0
    fewer = _result(6420, 2000, (Role.USER,))
    assert tokens_sent_delta(fewer) == ("-4,420 of 6,420", "inverse", "auto")
    assert saved_percent(fewer) == 68.8
    bigger = _result(100, 130, (Role.USER,))  # a summary longer than what it replaced
    assert tokens_sent_delta(bigger) == ("+30 of 100", "inverse", "auto")
    system_only = _result(6420, 12, (Role.SYSTEM,))
    assert tokens_sent_delta(system_only) == ("nothing of the chat sent", "off", "off")
    assert saved_percent(system_only) is None


def test_a_chat_kept_whole_shows_no_red_arrow_on_the_playground() -> None:
    at = page(PLAYGROUND, chat=CODEX, strategy="window-drop", budget="1000000")
    at.run()
    assert not at.exception
    sent = next(m for m in at.metric if m.label == "Tokens sent")
    assert sent.delta == "all 130,285 kept"
    shown = str(sent.proto)
    assert "direction: NONE" in shown and "color: GRAY" in shown  # no arrow, not red


def test_replay_names_the_setting_at_a_turn_that_sends_nothing() -> None:
    at = page("pages/2_Replay.py", chat=CODEX, strategy="trim-last", max_tokens="65000")
    at.run()
    assert not at.exception
    (error,) = [e.value for e in at.error if "Nothing of the conversation" in e.value]
    assert markdown_literal("Start on a user message (start_on_user)") in error
    at.button(key="replay-empty-fix1").click().run()
    assert not at.exception
    assert not [e for e in at.error if "Nothing of the conversation" in e.value]
