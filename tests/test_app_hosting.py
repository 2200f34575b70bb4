"""The hosting model in the Playground (AppTest): the server's key, private addresses, pastes.

A stand-in for a visitor's endpoint runs on 127.0.0.1 (tests/fake_openai.py). With the server
holding a key (the hosted profile), a visitor who types that endpoint is told it needs their
own key and "Run summarizer" sends nothing; with their own key it gets exactly that key; the
loopback address itself is refused unless the operator allows private addresses. A pasted path
is text like any other: the same "not a chat" error whether it names a file, a folder or
nothing.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from app_support import PLAYGROUND, page
from streamlit.testing.v1 import AppTest

from ctxlab import summarizers
from ctxlab.summarizers import OpenAISummarizer

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

pytest_plugins = ["fake_openai"]

CHAT = "support_function_calls"
SERVER_KEY = "sk-proj-OPERATORMARKER" + "Zq8Xw3Lm5Nv7Bc9Df1Gh2Jk4"
VISITOR_KEY = "sk-proj-VISITORKEY" + "Pq7Rt0Uy2Wx4Za6Bc8De"
OWN_KEY = "bring your own key for this endpoint"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No hosting setting from the machine running the tests; quick retries."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "CTXLAB_PROFILE",
        "CTXLAB_KEY_ENDPOINTS",
        "CTXLAB_ALLOW_PRIVATE_ENDPOINTS",
        "CTXLAB_KEY_MODELS",
    ):
        monkeypatch.delenv(name, raising=False)
    quick = functools.partial(
        OpenAISummarizer, timeout=2.0, backoff=0.0, max_wait=0.0, sleep=lambda _s: None
    )
    monkeypatch.setattr(summarizers, "OpenAISummarizer", quick)


def _bearer(key: str) -> str:
    return hashlib.sha256(f"Bearer {key}".encode()).hexdigest()


def _endpoint_app(base_url: str, visitor_key: str = "", at: AppTest | None = None) -> AppTest:
    if at is None:
        at = page(PLAYGROUND, chat=CHAT, strategy="summarize", trigger_token_budget="0")
    at.run()
    at.sidebar.radio(key="ctx.backend").set_value("OpenAI-compatible endpoint").run()
    at.sidebar.text_input(key="ctx.base_url").input(base_url).run()
    if visitor_key:
        at.sidebar.text_input(key="ctx.api_key").input(visitor_key).run()
    assert not at.exception
    return at


def _press_run(at: AppTest) -> list[str]:
    at.button(key="run-sum").click().run()
    assert not at.exception
    return [e.value.replace("\\", "") for e in at.error]  # Markdown escapes off


def _page_text(at: AppTest) -> str:
    from app_support import texts

    return "\n".join(texts(at))


def test_a_visitor_endpoint_gets_a_refusal_not_the_server_key_and_nothing_is_sent(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("CTXLAB_ALLOW_PRIVATE_ENDPOINTS", "1")  # only the key rule is at stake
    at = _endpoint_app(fake_openai.base_url)
    refusals = [e.value for e in at.sidebar.error]
    assert refusals and OWN_KEY in refusals[0], refusals
    assert "needs your own key" in refusals[0]
    errors = _press_run(at)
    assert errors and "nothing was changed" in errors[0] and OWN_KEY in errors[0]
    assert fake_openai.requests == []
    assert SERVER_KEY not in _page_text(at)


def test_with_their_own_key_the_visitor_endpoint_gets_only_that_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("CTXLAB_ALLOW_PRIVATE_ENDPOINTS", "1")
    at = _endpoint_app(fake_openai.base_url, VISITOR_KEY)
    assert not at.sidebar.error
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "your key" in captions
    assert _press_run(at) == []
    sent = fake_openai.chat_requests()
    assert len(sent) == 1
    assert sent[0].auth_sha256 == _bearer(VISITOR_KEY)
    assert SERVER_KEY not in repr(sent[0].headers) + repr(sent[0].body)


def test_in_the_hosted_profile_a_loopback_endpoint_is_refused_even_with_the_visitors_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    for url in (fake_openai.base_url, f"http://2130706433:{fake_openai.port}/v1"):
        at = _endpoint_app(url, VISITOR_KEY)
        refusals = " ".join(e.value for e in at.sidebar.error).replace("\\", "")
        assert "loopback address" in refusals and "CTXLAB" in refusals
        assert _press_run(at)
    assert fake_openai.requests == []


def test_the_default_endpoint_says_it_uses_the_servers_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    at = _endpoint_app("")
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "the server's key, for api.openai.com/v1" in captions.replace("\\", "")
    assert "Hosted server" in captions
    assert SERVER_KEY not in _page_text(at)


def test_a_key_from_secrets_toml_makes_the_server_hosted(fake_openai: FakeOpenAI) -> None:
    at = page(PLAYGROUND, chat=CHAT, strategy="summarize", trigger_token_budget="0")
    at.secrets["OPENAI_API_KEY"] = SERVER_KEY
    at.secrets["CTXLAB_ALLOW_PRIVATE_ENDPOINTS"] = "1"
    at = _endpoint_app(fake_openai.base_url, at=at)
    assert any(OWN_KEY in e.value for e in at.sidebar.error)
    assert _press_run(at)
    assert fake_openai.requests == []


def test_an_operator_listed_endpoint_gets_the_server_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("CTXLAB_KEY_ENDPOINTS", fake_openai.base_url)  # an internal server
    at = _endpoint_app(f"HTTP://127.0.0.1:{fake_openai.port}/v1/")  # another spelling
    assert not at.sidebar.error
    assert _press_run(at) == []
    assert [r.auth_sha256 for r in fake_openai.chat_requests()] == [_bearer(SERVER_KEY)]


def test_the_servers_key_pays_only_for_the_listed_models(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("CTXLAB_KEY_ENDPOINTS", fake_openai.base_url)
    at = _endpoint_app(fake_openai.base_url)
    at.sidebar.text_input(key="ctx.sum_model").input("o1-pro").run()
    refusals = " ".join(e.value for e in at.sidebar.error).replace("\\", "")
    assert "only used with the models the operator listed" in refusals, refusals
    errors = _press_run(at)
    assert errors and "nothing was changed" in errors[0]
    assert fake_openai.requests == []
    at.sidebar.text_input(key="ctx.api_key").input(VISITOR_KEY).run()  # their own key pays
    assert _press_run(at) == []
    assert [r.auth_sha256 for r in fake_openai.chat_requests()] == [_bearer(VISITOR_KEY)]


def test_the_local_profile_keeps_the_servers_key_for_any_endpoint(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("CTXLAB_PROFILE", "local")
    at = _endpoint_app(fake_openai.base_url)
    assert _press_run(at) == []
    assert [r.auth_sha256 for r in fake_openai.chat_requests()] == [_bearer(SERVER_KEY)]


def test_an_unlisted_endpoint_error_quotes_no_reply_in_the_hosted_profile(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXLAB_PROFILE", "hosted")
    monkeypatch.setenv("CTXLAB_ALLOW_PRIVATE_ENDPOINTS", "1")
    at = _endpoint_app(fake_openai.base_url, VISITOR_KEY)
    fake_openai.always("non-json", times=5)
    errors = _press_run(at)
    assert errors and "HTTP 200, not JSON" in errors[0]
    assert "nginx" not in " ".join(errors)


# -- pasted text is only text -----------------------------------------------------------------


def _paste(text: str) -> list[str]:
    at = page(PLAYGROUND, chat=CHAT)
    at.run()
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    at.sidebar.text_area(key="ctx.paste").input(text).run()
    at.sidebar.button(key="ctx.paste_load").click().run()
    assert not at.exception
    return [e.value for e in at.sidebar.error]


def test_a_pasted_path_is_text_and_fails_like_any_text(tmp_path: Path) -> None:
    chat_file = Path(__file__).resolve().parent.parent / "sample_chats" / f"{CHAT}.json"
    assert chat_file.is_file()
    project = tmp_path / "claude-project"
    project.mkdir()
    (project / "session.jsonl").write_text(
        '{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1"}\n',
        encoding="utf-8",
    )
    missing = str(tmp_path / "no-such-file.json")
    errors = {text: _paste(text) for text in (str(chat_file), str(project), missing)}
    shown = {tuple(e) for e in errors.values()}
    assert len(shown) == 1, errors  # the same error: nothing says whether a path exists
    (only,) = shown
    assert only and "pasted chat" in only[0] and "invalid JSON" in only[0], only
    assert str(chat_file) not in only[0] and "messages" not in only[0]
