"""AppTest: a budget can be typed, dragged on a log slider or picked from presets; the model's
window shows in the sidebar and in a badge."""

from __future__ import annotations

from app_support import PLAYGROUND, page, param_widget
from streamlit.testing.v1 import AppTest

from ctxlab.catalog import get_model


def _metric(at: AppTest, label: str) -> str:
    return str(next(m.value for m in at.metric if m.label == label))


def _tokens_sent(at: AppTest) -> int:
    return int(_metric(at, "Tokens sent").replace(",", ""))


def _scale(at: AppTest, name: str) -> object:
    key = param_widget(at, name).key
    return at.sidebar.select_slider(key=f"{key}.scale")


def _badges(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def test_typing_a_budget_in_the_number_box_changes_the_metric_and_the_slider() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop")
    at.run()
    assert not at.exception
    box = param_widget(at, "budget")
    assert box.type == "number_input"
    before = _tokens_sent(at)
    box.set_value(5_000).run()
    assert not at.exception
    after = _tokens_sent(at)
    assert after < before  # window-drop keeps at least the last round
    assert _scale(at, "budget").value == 5_000  # the slider follows the box
    assert at.query_params["budget"] in (["5000"], "5000")


def test_the_log_slider_writes_the_number_box() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop")
    at.run()
    scale = _scale(at, "budget")
    stops = list(scale.options)
    assert len(stops) < 80, "log-spaced stops, not 1..N in steps of 100"
    scale.set_value(int(stops[len(stops) // 2].replace(",", ""))).run()
    assert not at.exception
    assert param_widget(at, "budget").value == int(stops[len(stops) // 2].replace(",", ""))


def test_presets_set_the_budget_and_the_window_preset_is_the_models() -> None:
    at = page(PLAYGROUND, chat="large_agent_10k", strategy="window-drop", model="gpt-4o")
    at.run()
    assert not at.exception
    key = param_widget(at, "budget").key
    labels = [b.label for b in at.sidebar.button if b.key and b.key.startswith(f"{key}.preset.")]
    assert labels == ["8k", "32k", "128k · gpt-4o window"]
    at.sidebar.button(key=f"{key}.preset.32000").click().run()
    assert not at.exception
    assert param_widget(at, "budget").value == 32_000
    assert _scale(at, "budget").value == 32_000
    assert _tokens_sent(at) <= 32_000


def test_the_large_sample_opens_under_the_window_and_the_badge_says_it_fits() -> None:
    at = page(PLAYGROUND, chat="large_agent_10k", strategy="window-drop", model="gpt-4o")
    at.run()
    assert not at.exception
    room = get_model("gpt-4o").input_room
    assert param_widget(at, "budget").value == 83_000 <= room
    assert param_widget(at, "budget").max <= 3_000_000
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "Window **128,000** tokens" in captions and "max output **16,384**" in captions
    assert any("Fits gpt-4o's 128,000-token window" in b for b in _badges(at))


def test_over_the_window_the_badge_and_openai_say_so_in_openais_words() -> None:
    at = page(PLAYGROUND, chat="large_agent_10k", strategy="window-drop", model="gpt-4o")
    at.run()
    param_widget(at, "budget").set_value(500_000).run()
    assert not at.exception
    sent = _tokens_sent(at)
    assert sent > 128_000
    assert any(
        f"Over gpt-4o's 128,000-token window by {sent - 128_000:,} tokens" in b for b in _badges(at)
    )
    frames = [d.value for d in at.dataframe if "provider error" in d.value.columns]
    assert frames
    rows = frames[0][frames[0]["rule"] == "over-window"]
    assert list(rows["provider"]) == ["OpenAI"]
    assert f"your messages resulted in {sent} tokens" in rows["provider error"].iloc[0]


def test_the_model_picker_lists_catalog_models_by_provider_and_the_url_accepts_them() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", model="claude-sonnet-4-5")
    at.run()
    assert not at.exception
    picker = at.sidebar.selectbox(key="ctx.model")
    assert picker.value == "claude-sonnet-4-5"
    assert "Anthropic · claude-sonnet-4-5 · 200k window · approximate count" in picker.options
    assert "o200k_base (encoding only: no window)" in picker.options
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "Window **200,000** tokens" in captions


def test_a_dated_snapshot_in_the_url_opens_its_catalog_model() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session", model="gpt-4o-2024-08-06")
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="ctx.model").value == "gpt-4o"
