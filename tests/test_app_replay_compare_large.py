"""AppTest, Replay and Compare on a chat of hundreds of rounds (the generated 10k sample):
binned round maps that keep every decision's tokens, a scrubber that only moves the turn line,
one replay for every session, and a disagreement table built a window at a time."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from app_support import page, strip_of

from ctxlab.formats import load_chat_file
from ctxlab.samples import ensure_generated
from ctxlab.strategies import Decision, build_strategy
from ctxlab.tokens import get_counter
from ctxlab.ui.figures import DECISION_LEGEND

SAMPLE = "large_agent_10k"
BUDGET = 128_000


@pytest.fixture(scope="module")
def messages() -> tuple[Any, ...]:
    return load_chat_file(ensure_generated(SAMPLE), name=SAMPLE).messages


def spec_of(at: Any, key: str) -> dict[str, Any]:
    chart = next(c for c in at.get("plotly_chart") if c.key == key)
    spec: dict[str, Any] = json.loads(chart.proto.spec)
    return spec


def drawn_tokens(spec: dict[str, Any]) -> dict[str, int]:
    """Tokens a map draws per legend entry (the sum of its bar widths)."""
    out: Counter[str] = Counter()
    for trace in spec["data"]:
        out[trace["name"]] += sum(trace["x"])
    return dict(out)


def expected_tokens(messages: tuple[Any, ...], decisions: dict[str, Decision]) -> dict[str, int]:
    counts = get_counter("gpt-4o").counted(messages).counts
    out: Counter[str] = Counter()
    for m, n in zip(messages, counts, strict=True):
        out[DECISION_LEGEND[decisions[m.id].value]] += n
    return {k: v for k, v in out.items() if v}


def test_replay_scrubs_a_binned_map_and_shares_one_replay(messages: tuple[Any, ...]) -> None:
    at = page("pages/2_Replay.py", chat=SAMPLE, strategy="window-drop", budget=str(BUDGET))
    at.run()
    assert not at.exception
    rep = at.session_state["ctx.replay"][1]
    turn = len(rep) // 2
    at.slider(key="replay-turn").set_value(turn).run()
    assert not at.exception
    lines = [s for s in spec_of(at, "replay-tokens")["layout"]["shapes"] if s["yref"] == "y domain"]
    assert [line["x0"] for line in lines] == [turn]
    stop = rep.rows[turn - 1].message_index
    applied = build_strategy("window-drop", {"budget": BUDGET}).apply(
        messages[:stop], get_counter("gpt-4o")
    )
    caption, drawn = strip_of(at, "Round map at turn")
    assert caption == f"Round map at turn {turn}"
    assert drawn == expected_tokens(messages[:stop], dict(applied.decisions))
    other = page("pages/2_Replay.py", chat=SAMPLE, strategy="window-drop", budget=str(BUDGET))
    other.run()
    assert not other.exception
    assert other.session_state["ctx.replay"][1] is rep  # computed once for every session


def test_compare_bins_every_map_on_one_axis_and_defers_session_costs(
    messages: tuple[Any, ...],
) -> None:
    configs = {
        "window-drop": {"budget": BUDGET},
        "trim-last": {"max_tokens": BUDGET},
        "clear-tool-results": {"trigger_tokens": BUDGET, "keep_tool_results": 3},
    }
    query = {"chat": SAMPLE, "strategy": "window-drop", "budget": str(BUDGET), "cmp": "3"}
    for n, (name, values) in enumerate(configs.items(), start=1):
        query[f"cmp{n}"] = name
        query.update({f"cmp{n}.{k}": str(v) for k, v in values.items()})
    at = page("pages/1_Compare.py", **query)
    at.run()
    assert not at.exception
    counter = get_counter("gpt-4o")
    results = [
        build_strategy(name, values).apply(messages, counter) for name, values in configs.items()
    ]
    ranges = set()
    for i, result in enumerate(results):
        spec = spec_of(at, f"cmp{i}.map")
        assert drawn_tokens(spec) == expected_tokens(messages, dict(result.decisions))
        ranges.add(tuple(spec["layout"]["xaxis"]["range"]))
        assert at.toggle(key=f"cmp{i}.session").value is False  # waits for its switch
    assert len(ranges) == 1  # one axis for all
    differ = sum(1 for m in messages if len({r.decisions[m.id] for r in results}) > 1)
    assert any(c.value == f"{differ:,} of {len(messages):,} messages" for c in at.caption)
    table = next(d.value for d in at.dataframe if "preview" in d.value.columns)
    assert len(table) == min(differ, 1_000)


def test_an_offline_summarizing_configuration_is_run_once_for_every_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxlab.ui import compare_setup

    calls: list[str] = []
    real_run = compare_setup.run

    def counting_run(strategy: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(strategy.name)
        return real_run(strategy, *args, **kwargs)

    monkeypatch.setattr(compare_setup, "run", counting_run)
    query = {
        "chat": "coding_agent_session",
        "cmp": "2",
        "cmp1": "window-drop",
        "cmp2": "summarize",
        "cmp2.trigger_token_budget": "4000",
    }
    for _ in range(2):  # two sessions, each run twice
        at = page("pages/1_Compare.py", **query)
        at.run()
        at.run()
        assert not at.exception
        metrics = next(d.value for d in at.dataframe if "configuration" in d.value.columns)
        assert len(metrics) == 2
    # projections never go through run(); summarize at most once (none when an earlier test of
    # this process already ran the same configuration on the same chat)
    assert calls in ([], ["summarize"])
