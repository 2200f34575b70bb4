"""AppTest: the Playground loads every sample, every strategy acts, errors never lose the chat."""

from __future__ import annotations

import time

import pytest
from app_support import PLAYGROUND, page, param_widget, pick_strategy, sample_names, texts

from ctxlab.errors import ChatFormatError
from ctxlab.strategies import get_strategy_class, parameters, strategy_names
from ctxlab.ui.session import load_source
from ctxlab.ui.text import literal_text

SAMPLES = sample_names()


def _metric(at: object, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", SAMPLES)
def test_playground_loads_each_sample(name: str) -> None:
    at = page(PLAYGROUND, chat=name)
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="ctx.sample").value == name
    assert len(at.get("plotly_chart")) >= 1


@pytest.mark.parametrize(
    "strategy", [n for n in strategy_names() if get_strategy_class(n).framework_policy is None]
)
def test_every_strategy_can_be_selected_and_its_main_widget_changes_the_result(
    strategy: str,
) -> None:
    at = page(PLAYGROUND, chat=SAMPLES[0])
    at.run()
    pick_strategy(at, strategy)
    assert not at.exception
    cls = get_strategy_class(strategy)
    main = next(i for i in parameters(cls) if i.kind in ("int", "float"))
    slider = param_widget(at, main.name)
    before = [m.value for m in at.metric]
    target = slider.max if slider.value != slider.max else slider.min
    target = int(target) if main.kind == "int" else target
    slider.set_value(target).run()
    assert not at.exception
    assert [m.value for m in at.metric] != before


@pytest.mark.parametrize(
    "strategy", [n for n in strategy_names() if get_strategy_class(n).framework_policy is not None]
)
def test_every_framework_policy_can_be_selected_and_says_what_it_does(strategy: str) -> None:
    # a framework policy opens at the framework's defaults, which may do nothing on this chat
    # (LangChain's trigger=None): its panel says so, in the policy's own sentence
    at = page(PLAYGROUND, chat=SAMPLES[0])
    at.run()
    pick_strategy(at, strategy)
    assert not at.exception
    policy = get_strategy_class(strategy).framework_policy
    assert policy is not None
    assert f"What {policy.framework} does with this chat" in [e.label for e in at.main.expander]
    captions = [literal_text(c.value) for c in at.caption]
    assert any(c.startswith(policy.evidence_text) for c in captions)


def test_a_bad_paste_shows_an_error_and_keeps_the_previous_chat() -> None:
    at = page(PLAYGROUND, chat=SAMPLES[0])
    at.run()
    tokens_before = _metric(at, "Tokens sent")
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    at.sidebar.text_area(key="ctx.paste").input('[{"role": "user", "content": 3}]').run()
    at.sidebar.button(key="ctx.paste_load").click().run()
    assert not at.exception
    assert at.sidebar.error and "content" in at.sidebar.error[0].value
    assert _metric(at, "Tokens sent") == tokens_before


def test_a_good_paste_loads_the_pasted_chat() -> None:
    at = page(PLAYGROUND, chat=SAMPLES[0])
    at.run()
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    chat = '[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"}]'
    at.sidebar.text_area(key="ctx.paste").input(chat).run()
    at.sidebar.button(key="ctx.paste_load").click().run()
    assert not at.exception and not at.sidebar.error
    assert any("2 messages" in c.value for c in at.sidebar.caption)


def test_the_upload_handler_names_the_problem_and_the_place() -> None:
    with pytest.raises(ChatFormatError) as info:
        load_source(b'{"messages": [{"role": "wizard", "content": "x"}]}', "bad.json")
    assert "bad.json" in str(info.value) and "role" in str(info.value)
    assert len(load_source(b'[{"role": "user", "content": "x"}]', "ok.json")) == 1


def test_the_url_restores_chat_strategy_model_and_parameters() -> None:
    at = page(PLAYGROUND, chat=SAMPLES[-1], strategy="sliding-window", model="gpt-4.1", window="3")
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="ctx.sample").value == SAMPLES[-1]
    assert at.sidebar.selectbox(key="ctx.strategy").value == "sliding-window"
    assert at.sidebar.selectbox(key="ctx.model").value == "gpt-4.1"
    window = param_widget(at, "window")
    assert window.value == 3
    assert at.query_params["window"] == ["3"] or at.query_params["window"] == "3"


def test_changing_a_parameter_writes_it_to_the_url_and_never_a_key() -> None:
    at = page(PLAYGROUND, chat=SAMPLES[0], strategy="window-drop")
    at.run()
    slider = param_widget(at, "budget")
    slider.set_value(slider.min).run()
    query = {k: at.query_params[k] for k in at.query_params}
    assert str(query["budget"]).strip("[]'") == str(int(slider.min))
    assert set(query) <= {"chat", "strategy", "model", "budget", "keep_system"}


def test_hostile_content_is_shown_as_inert_text() -> None:
    at = page(PLAYGROUND)
    at.run()
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    hostile = (
        '[{"role":"user","content":"<script>alert(1)</script> ![x](https://evil.example/a.png)'
        ' \\u202egnp.exe"},{"role":"assistant","content":"ok"}]'
    )
    at.sidebar.text_area(key="ctx.paste").input(hostile).run()
    at.sidebar.button(key="ctx.paste_load").click().run()
    assert not at.exception
    markdown = " ".join(m.value for m in at.markdown)
    assert "<script>" not in markdown and "evil.example" not in markdown
    shown = " ".join(texts(at))
    assert "\u202e" not in shown.replace("\\u202e", "")


def test_large_sample_reruns_after_a_budget_change() -> None:
    at = page(PLAYGROUND, chat="large_agent_10k", strategy="window-drop")
    at.run()
    assert not at.exception
    slider = param_widget(at, "budget")
    timings = []
    for fraction in (0.1, 0.3, 0.6):
        slider = param_widget(at, "budget")
        start = time.perf_counter()
        slider.set_value(int(slider.max * fraction) // int(slider.step) * int(slider.step)).run()
        timings.append(time.perf_counter() - start)
        assert not at.exception
    print(f"\n10k sample, rerun after a budget change: {[round(t, 3) for t in timings]} s")


def _planted_secrets() -> list[str]:
    from app_support import ROOT, load_script

    module = load_script(ROOT / "scripts/make_sample_chats.py", "make_samples")
    return [str(v) for v in getattr(module, "FAKE", {}).values()]


def test_secrets_chat_request_shows_markers_and_leaks_no_planted_secret() -> None:
    if "secrets_in_tool_outputs" not in SAMPLES:
        pytest.skip("no secrets sample")
    at = page(PLAYGROUND, chat="secrets_in_tool_outputs", strategy="summarize")
    at.run()
    trigger = param_widget(at, "trigger_token_budget")
    trigger.set_value(trigger.min).run()
    assert not at.exception
    at.session_state["pg-tabs"] = "Summarizer request"  # tabs are lazy: open the request tab
    at.run()
    assert not at.exception
    assert int(next(m.value for m in at.metric if m.label == "Redaction markers")) > 0
    request_blocks = [c.value for c in at.code if "[REDACTED" in c.value and c.language != "json"]
    assert request_blocks, "the transcript shows redaction markers"
    request_tables = [d.value.to_csv() for d in at.dataframe if "text" in d.value.columns]
    highlighted = [h.proto.body for h in at.get("html") if "<mark>" in h.proto.body]
    assert highlighted, "the transcript view highlights the markers"
    assert "<mark>[REDACTED" in highlighted[0]
    secrets = _planted_secrets()
    assert secrets
    for secret in secrets:
        for text in request_blocks + request_tables + highlighted:
            assert secret not in text


def test_the_router_opens_the_playground_with_the_shared_sidebar() -> None:
    at = page("app.py", chat=SAMPLES[0], strategy="window-drop")
    at.run()
    assert not at.exception
    assert any(t.value == "Playground" for t in at.title)
    assert param_widget(at, "budget") is not None


def test_the_decision_filter_shows_every_decision_after_a_strategy_switch() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop")
    at.run()
    table_filter = next(m for m in at.multiselect if m.label == "Show decisions")
    table_filter.set_value(["kept"]).run()
    assert not at.exception
    pick_strategy(at, "summarize")
    assert not at.exception
    table_filter = next(m for m in at.multiselect if m.label == "Show decisions")
    assert set(table_filter.value) >= {"kept", "summarized", "pinned"}
    n = len(at.session_state["ctx.chat"].messages)
    assert any(c.value == f"{n:,} of {n:,} messages" for c in at.caption)


def test_dropping_the_system_prompt_is_said_and_keep_system_pins_it() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop")
    at.run()
    notes = [w.value for w in at.warning if "system prompt is dropped" in w.value]
    assert notes and "Keep the system prompt" in notes[0]
    toggle = next(t for t in at.sidebar.toggle if ".keep_system@" in t.key)
    toggle.set_value(True).run()
    assert not at.exception
    assert not any("system prompt is dropped" in w.value for w in at.warning)
    assert any(m.label == "Pinned" and m.value == "1" for m in at.metric)
