"""AppTest: the issue-7 views (provider badges, facts, tokens, lineage, export, cache, guard)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from app_support import PLAYGROUND, ROOT, page, param_widget, sample_names, strip_of
from streamlit.testing.v1 import AppTest

from ctxlab.samples import sample_path

SAMPLES = sample_names()
REAL = [n for n in SAMPLES if n in {p.stem for p in (ROOT / "sample_chats/real").glob("*.json")}]


def open_tab(at: AppTest, name: str) -> AppTest:
    at.session_state["pg-tabs"] = name
    at.run()
    assert not at.exception
    return at


def badges(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


@pytest.mark.parametrize("name", REAL)
def test_real_chats_show_a_badge_per_provider_and_never_crash(name: str) -> None:
    at = page(PLAYGROUND, chat=name, strategy="sliding-window", window="3")
    at.run()
    assert not at.exception
    shown = badges(at)
    for provider in ("OpenAI", "Anthropic", "Gemini"):
        assert sum(provider in b for b in shown) == 1, shown
    open_tab(at, "Problems")


def test_a_sliding_window_orphan_is_named_with_its_position_role_and_provider_wording() -> None:
    at = page(PLAYGROUND, chat="support_function_calls", strategy="sliding-window", window="3")
    at.run()
    assert not at.exception
    assert any("problem" in b for b in badges(at))
    frames = [d.value for d in at.dataframe if "provider error" in d.value.columns]
    assert frames
    frame = frames[0]
    assert {"OpenAI", "Anthropic", "Gemini"} & set(frame["provider"])
    assert (frame["position"] != "—").any() and (frame["role"] != "—").any()
    # the message reader shows the problems of the selected message
    row = frame[frame["position"] != "—"].iloc[0]
    open_tab(at, "Messages")
    context_ids = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    index = int(context_ids[context_ids["id"] == row["message id"]]["index"].iloc[0])
    at.number_input(key="reader-index").set_value(index).run()
    assert not at.exception
    assert any(row["rule"] in e.value for e in [*at.error, *at.warning])


def test_facts_tab_shows_retention_and_typed_facts() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop")
    at.run()
    open_tab(at, "Facts")
    assert any(m.label == "Fact retention" for m in at.metric)
    at.text_area(key="pg-typed").input("a fact nobody wrote 98765").run()
    assert not at.exception
    facts = next(d.value for d in at.dataframe if "fact" in d.value.columns)
    typed = facts[facts["fact"] == "a fact nobody wrote 98765"]
    assert list(typed["status"]) == ["lost"] and list(typed["from message #"]) == ["typed"]


def test_tokens_tab_lists_every_message_worst_undercount_first() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session")
    at.run()
    open_tab(at, "Tokens")
    frame = next(d.value for d in at.dataframe if "chars/4" in d.value.columns)
    assert list(frame["error"]) == sorted(frame["error"])
    assert any("chars/4 estimates" in m.value for m in at.markdown)


def test_lineage_tab_lists_the_compaction_chain_and_diffs_summaries() -> None:
    at = page(PLAYGROUND, chat="compaction_chain", strategy="window-drop")
    at.run()
    open_tab(at, "Lineage")
    table = next(d.value for d in at.dataframe if "updates" in d.value.columns)
    assert len(table) >= 2
    assert table["updates"].iloc[0] == "— (first)"
    diff = [c.value for c in at.code if c.value.startswith(("  ", "+ ", "- "))]
    assert diff and any(line.startswith("+ ") for line in diff[0].splitlines())


def test_export_of_the_app_state_run_as_a_script_gives_the_app_decisions(tmp_path: Path) -> None:
    at = page(PLAYGROUND, chat="support_function_calls", strategy="window-drop")
    at.run()
    budget = param_widget(at, "budget")
    budget.set_value(int(budget.value * 0.6)).run()  # the suggestion is half the chat: 30%
    open_tab(at, "Messages")
    decisions = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    expected = dict(zip(decisions["id"], decisions["decision"], strict=True))
    open_tab(at, "Export")
    assert at.selectbox(key="export-target").value == "ctxlab"
    code = at.code[0].value
    script = tmp_path / "policy.py"
    script.write_text(code, encoding="utf-8")
    out = subprocess.run(
        [sys.executable, str(script), str(sample_path("support_function_calls"))],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    )
    got = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert got == expected
    assert "dropped" in set(got.values())
    for target in ("langchain", "semantic-kernel", "autogen", "openai-agents"):
        at.selectbox(key="export-target").set_value(target).run()
        assert not at.exception and at.code


def test_the_guard_warns_and_its_button_applies_the_suggested_trigger() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", strategy="summarize")
    at.run()
    trigger = param_widget(at, "trigger_token_budget")
    trigger.set_value(trigger.min).run()
    assert not at.exception
    assert any("Re-summarization loop" in w.value for w in at.warning)
    button = at.button(key="pg-guard-apply")
    button.click().run()
    assert not at.exception
    trigger = param_widget(at, "trigger_token_budget")
    assert trigger.value > trigger.min
    assert not any("Re-summarization loop" in w.value for w in at.warning)


def test_compare_shows_retention_and_badges_per_configuration() -> None:
    at = page("pages/1_Compare.py", chat="coding_agent_session")
    at.run()
    assert not at.exception
    metrics = next(d.value for d in at.dataframe if "configuration" in d.value.columns)
    assert "fact retention %" in metrics.columns and metrics["fact retention %"].notna().all()
    assert {"openai problems", "anthropic problems", "gemini problems"} <= set(metrics.columns)
    # one wrapping line of three badges per configuration
    assert [b.count("-badge[") for b in badges(at)] == [3, 3]


def test_replay_shows_cache_chart_compactions_lineage_and_the_guard() -> None:
    at = page(
        "pages/2_Replay.py",
        chat="coding_agent_session",
        strategy="summarize",
        trigger_token_budget="3000",
        keep_recent_messages="4",
    )
    at.run()
    assert not at.exception
    charts = {c.key for c in at.get("plotly_chart")}
    assert {"replay-tokens", "replay-cost", "replay-cache"} <= charts
    caption, drawn = strip_of(at, "Round map at turn")  # the map at the turn: an HTML strip
    assert caption.startswith("Round map at turn") and sum(drawn.values()) > 0
    assert any(m.label == "Cache breaks" for m in at.metric)
    table = next(d.value for d in at.dataframe if "retention %" in d.value.columns)
    assert len(table) >= 1
    assert any("updates" in d.value.columns for d in at.dataframe)
    assert sum("-badge[" in m.value for m in at.markdown) == 3
    assert any(c.value.startswith("Fact retention at turn") for c in at.caption)


def test_replay_of_a_front_dropping_window_breaks_the_cache_on_most_calls() -> None:
    at = page("pages/2_Replay.py", chat="long_plain_chat", strategy="sliding-window", window="4")
    at.run()
    assert not at.exception
    breaks = next(m.value for m in at.metric if m.label == "Cache breaks")
    broken, _, calls, _ = breaks.replace(",", "").split(" ", 3)
    assert int(broken) >= int(calls) // 2
