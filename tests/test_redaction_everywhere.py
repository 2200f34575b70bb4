"""Every kind of credential, planted in every role of a chat, never leaves in a summarizer request.

One chat holds each fake of :data:`secretgen.PROVIDER_SECRETS` in the system prompt, a user
message (and its ``name``), an assistant's text, an assistant's tool-call arguments and a
tool result (the system prompt is pinned, so never sent). With role redaction switched off,
pattern redaction alone must
keep every one of them out of: the summarizer request, the summary made from it, the CLI's
``--show-request`` output and every log record, and the Playground's rendering of the request.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from app_support import PLAYGROUND, page, texts
from secretgen import PROVIDER_SECRETS

from ctxlab.chats_folder import CHATS_DIR_ENV
from ctxlab.cli import main
from ctxlab.formats import dump_chat
from ctxlab.model import Message, Role, ToolCall
from ctxlab.strategies.summarize import Summarize, SummarizeOptions, build_summary_request
from ctxlab.summarizers import OfflineSummarizer
from ctxlab.tokens import get_counter

SECRETS = list(dict.fromkeys(p.secret for p in PROVIDER_SECRETS))
PLANTED = "\n".join(f"{p.kind}: {p.text}" for p in PROVIDER_SECRETS)
NAME_TOKEN = next(p.text for p in PROVIDER_SECRETS if p.text.startswith("gh" + "p_"))


def planted_chat() -> list[Message]:
    arguments = json.dumps({"env": PLANTED, "dsn": PROVIDER_SECRETS[-1].text})
    out = [
        Message(Role.SYSTEM, f"You are a deploy bot. Known credentials:\n{PLANTED}", "sys"),
        Message(Role.USER, f"Here is my environment:\n{PLANTED}", "u1", name=NAME_TOKEN),
        Message(
            Role.ASSISTANT,
            f"I will use these:\n{PLANTED}",
            "a1",
            tool_calls=(ToolCall("call_1", "run_shell", arguments),),
        ),
        Message(Role.TOOL, f"$ env\n{PLANTED}", "t1", tool_call_id="call_1", name="run_shell"),
        Message(Role.ASSISTANT, f"Found in the output:\n{PLANTED}", "a2"),
    ]
    # A clean tail: the recent messages kept verbatim hold no credential.
    for k in range(3):
        out += [
            Message(Role.USER, f"status of step {k}?", f"u-tail-{k}"),
            Message(Role.ASSISTANT, f"step {k} is done", f"a-tail-{k}"),
        ]
    return out


# Only pattern redaction protects here; the second set is the default.
OPTION_SETS = {
    "patterns only": dict(
        trigger_token_budget=100,
        keep_recent_messages=6,
        redact_tool_content=False,
    ),
    "defaults": dict(trigger_token_budget=100, keep_recent_messages=6),
}


def leaked(text: str) -> list[str]:
    """The planted secrets found in ``text`` (also JSON-escaped)."""
    return [s for s in SECRETS if s in text or json.dumps(s)[1:-1] in text]


def test_the_planted_chat_really_holds_every_secret_in_every_role() -> None:
    chat = planted_chat()
    for role in (Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL):
        text = "\n".join(m.content for m in chat if m.role is role)
        assert leaked(text) == SECRETS
    assert leaked(chat[2].tool_calls[0].arguments) == SECRETS
    assert len(SECRETS) == len(set(SECRETS)) >= 30


@pytest.mark.parametrize("options", OPTION_SETS.values(), ids=list(OPTION_SETS))
def test_no_planted_secret_reaches_the_summarizer_request_or_the_summary(
    options: dict[str, object],
) -> None:
    opts = SummarizeOptions(**options)  # type: ignore[arg-type]
    chat = planted_chat()
    built = build_summary_request(chat, opts, get_counter("gpt-4o"))
    assert built is not None
    request, plan = built
    assert {m.id for m in plan.folded} >= {"u1", "a1", "t1", "a2"}
    sent = json.dumps(request.body("m"), ensure_ascii=False)
    assert leaked(sent) == []
    assert "[REDACTED:" in sent
    result = Summarize(opts).apply(chat, get_counter("gpt-4o"), OfflineSummarizer())
    for message in result.inserted:
        assert leaked(message.content) == []
    assert result.summary_request is not None
    assert leaked(json.dumps(result.summary_request.body("m"))) == []


def test_cli_show_request_and_every_log_record_hold_no_planted_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "planted.json"
    path.write_text(dump_chat(planted_chat()), encoding="utf-8")
    caplog.set_level(logging.DEBUG)
    code = main(
        [
            "trim",
            str(path),
            "--strategy",
            "summarize",
            "--param",
            "trigger_token_budget=100",
            "--param",
            "redact_tool_content=false",
            "--show-request",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Conversation to summarize" in out
    assert leaked(out) == [] and leaked(err) == []
    assert leaked(caplog.text) == []
    assert leaked("\n".join(str(r.args) for r in caplog.records)) == []


def test_the_playground_shows_the_request_with_no_planted_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    (tmp_path / "planted.json").write_text(dump_chat(planted_chat()), encoding="utf-8")
    caplog.set_level(logging.DEBUG)
    at = page(
        PLAYGROUND,
        chat="planted",
        strategy="summarize",
        trigger_token_budget="100",
        redact_tool_content="false",
    )
    at.session_state["pg-tabs"] = "Summarizer request"  # tabs are lazy: open the request tab
    at.run()
    assert not at.exception
    shown = list(texts(at))
    request_views = [t for t in shown if "Conversation to summarize" in t]
    assert request_views, "the Summarizer request tab shows the transcript"
    for text in request_views:
        assert leaked(text) == []
    assert leaked(caplog.text) == []
