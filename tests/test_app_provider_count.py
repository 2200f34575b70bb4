"""The Playground's "Count with the provider" panel (AppTest), against a fake endpoint.

The fake (tests/fake_counting.py) runs on 127.0.0.1 and is reached through the operator's
``ANTHROPIC_BASE_URL``. Nothing is sent before the click; the server's key counts only in the
local profile; a visitor's key goes in the header and never onto the page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from app_support import PLAYGROUND, page, texts
from streamlit.testing.v1 import AppTest

from ctxlab.provider_count import COUNTS
from ctxlab.ui.provider_count_panel import button_label

if TYPE_CHECKING:
    from fake_counting import FakeCounting

pytest_plugins = ["fake_counting"]

CHAT = "support_function_calls"
MODEL = "claude-sonnet-4-5"
VISITOR_KEY = "visitor-key-Kq93-Tx5Lm"
SERVER_KEY = "server-key-Zp41-Wv8Nr"
SEND = "pg-pc-send"
FIELD = "ctx.pc.key_field.anthropic"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, fake_counting: FakeCounting) -> None:
    COUNTS.clear()
    for name in (
        "OPENAI_API_KEY",
        "CTXLAB_PROFILE",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_counting.base_url)


def _app(model: str = MODEL) -> AppTest:
    at = page(PLAYGROUND, chat=CHAT, model=model)
    at.run()
    assert not at.exception
    return at


def _page_text(at: AppTest) -> str:
    return "\n".join(texts(at))


def _tokens_sent(at: AppTest) -> int:
    metric = next(m for m in at.metric if m.label == "Tokens sent")
    return int(str(metric.value).replace(",", ""))


def test_the_opt_in_is_offered_and_nothing_is_sent_before_the_click(
    fake_counting: FakeCounting,
) -> None:
    at = _app()
    assert "Count with Anthropic" in [e.label for e in at.main.expander]
    button = at.button(key=SEND)
    assert button.label == button_label("anthropic")
    assert button.label == "Count with the provider — sends this chat to Anthropic"
    assert button.disabled  # no key yet
    at.text_input(key=FIELD).input(VISITOR_KEY).run()
    assert not at.exception
    assert not at.button(key=SEND).disabled
    at.run()
    assert fake_counting.requests == []
    assert VISITOR_KEY not in _page_text(at)


def test_the_click_sends_the_context_with_the_visitors_key_and_shows_both_counts(
    fake_counting: FakeCounting,
) -> None:
    at = _app()
    at.text_input(key=FIELD).input(VISITOR_KEY).run()
    at.button(key=SEND).click().run()
    assert not at.exception
    [got] = fake_counting.requests
    assert got.path == "/v1/messages/count_tokens" and got.query == ""
    assert got.headers["x-api-key"] == VISITOR_KEY
    assert got.body["model"] == MODEL
    ours = _tokens_sent(at)
    low = (41_230 - ours) / 41_230
    expected = (
        f"Anthropic counts 41,230 tokens; ctxlab's approximate count is {ours:,} ({low:.1%} low)."
    )
    assert expected in [w.value.replace("\\", "") for w in at.warning]
    at.run()  # re-rendering shows the cached count and sends nothing
    assert expected in [w.value.replace("\\", "") for w in at.warning]
    assert len(fake_counting.requests) == 1
    assert VISITOR_KEY not in _page_text(at)


def test_a_refusal_is_one_line_and_ctxlabs_count_stands(fake_counting: FakeCounting) -> None:
    fake_counting.script("401")
    at = _app()
    tokens = _tokens_sent(at)
    at.text_input(key=FIELD).input(VISITOR_KEY).run()
    at.button(key=SEND).click().run()
    assert not at.exception
    errors = [e.value.replace("\\", "") for e in at.error]
    assert errors == [
        "Anthropic's count_tokens refused the request: 401 invalid x-api-key [REDACTED]. "
        f"ctxlab's count ({tokens:,} tokens) stands."
    ]
    assert _tokens_sent(at) == tokens
    assert VISITOR_KEY not in _page_text(at)


def test_the_servers_key_is_kept_back_unless_the_profile_is_local(
    fake_counting: FakeCounting, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SERVER_KEY)
    at = _app()
    assert at.button(key=SEND).disabled
    assert any("CTXLAB_PROFILE=local" in c.value.replace("\\", "") for c in at.caption)
    monkeypatch.setenv("CTXLAB_PROFILE", "local")
    at.run()
    assert not at.button(key=SEND).disabled
    assert fake_counting.requests == []
    at.button(key=SEND).click().run()
    assert [r.headers["x-api-key"] for r in fake_counting.requests] == [SERVER_KEY]
    assert SERVER_KEY not in _page_text(at)


def test_models_without_a_counting_endpoint_show_no_panel(fake_counting: FakeCounting) -> None:
    at = _app("gpt-4o")
    assert not any(e.label.startswith("Count with") for e in at.main.expander)
    assert fake_counting.requests == []
