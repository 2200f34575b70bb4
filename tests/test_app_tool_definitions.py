"""AppTest: a chat's tool definitions are loaded with it, drawn before round 0 of the round map,
listed per tool, and included in every budget ("Tokens sent"); a chat without them is unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_support import PLAYGROUND, ROOT, page, param_widget
from streamlit.testing.v1 import AppTest

from ctxlab.chats_folder import CHATS_DIR_ENV
from ctxlab.formats import load_chat
from ctxlab.tokens import get_counter
from ctxlab.ui.figures import OVERHEAD_LABEL

REQUEST = ROOT / "tests" / "fixtures" / "formats" / "chat_completion" / "tool_calls_request.json"
"""An OpenAI request body: ``messages`` and one function in ``tools`` (see PROVENANCE.md)."""


def _expected(raw: dict[str, Any]) -> tuple[int, int]:
    """(tokens of the tool definitions, tokens of the whole request) from the raw request body:
    the messages as OpenAI counts them plus the raw ``tools`` array by the cookbook rule."""
    counter = get_counter("gpt-4o")
    tools = counter.count_tools(raw["tools"])
    return tools, counter.count_messages(load_chat(raw["messages"])) + tools


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _round_map(at: AppTest) -> dict[str, Any]:
    chart = next(c for c in at.get("plotly_chart") if str(c.key) == "map")
    spec: dict[str, Any] = json.loads(chart.proto.spec)
    return spec


def _overhead_traces(at: AppTest) -> list[dict[str, Any]]:
    return [t for t in _round_map(at)["data"] if t.get("name") == OVERHEAD_LABEL]


def _paste(at: AppTest, text: str) -> None:
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    at.sidebar.text_area(key="ctx.paste").input(text).run()
    at.sidebar.button(key="ctx.paste_load").click().run()


def _opened(strategy: str = "window-drop") -> AppTest:
    at = page(PLAYGROUND, strategy=strategy, model="gpt-4o")
    at.run()
    assert not at.exception
    return at


def _keep_everything(at: AppTest) -> None:
    """A budget above the chat: a newly loaded chat opens with a budget derived from it, which
    trims, and these tests count the whole request."""
    (budget,) = [
        w for w in at.sidebar.number_input if str(w.key).startswith("p.window-drop.budget")
    ]
    budget.set_value(50_000).run()


def _check_tools_shown(at: AppTest, raw: dict[str, Any]) -> None:
    _keep_everything(at)
    assert not at.exception and not at.sidebar.error
    tool_tokens, total = _expected(raw)
    assert tool_tokens > 0
    assert _metric(at, "Tokens sent") == f"{total:,}"
    (block,) = _overhead_traces(at)
    assert block["x"] == [tool_tokens] and block["base"] == [-tool_tokens]
    name = raw["tools"][0]["function"]["name"]
    assert name in block["customdata"][0]
    assert any(f"**{tool_tokens:,}** tokens" in c.value for c in at.main.caption)
    frame = next(d.value for d in at.dataframe if "tool" in d.value.columns)
    assert name in set(frame["tool"]) and int(frame["tokens"].sum()) == tool_tokens


def test_a_pasted_request_with_tools_shows_the_tool_block_and_counts_it() -> None:
    text = REQUEST.read_text(encoding="utf-8")
    at = _opened()
    _paste(at, text)
    _check_tools_shown(at, json.loads(text))


def test_an_uploaded_request_with_tools_shows_the_tool_block_and_counts_it() -> None:
    data = REQUEST.read_bytes()
    at = _opened()
    at.sidebar.radio(key="ctx.source").set_value("Upload").run()
    at.sidebar.file_uploader(key="ctx.upload").set_value(
        ("request.json", data, "application/json")
    ).run()
    _check_tools_shown(at, json.loads(data))


def test_the_budget_includes_the_tools_so_a_budget_under_the_request_drops_rounds() -> None:
    raw = json.loads(REQUEST.read_text(encoding="utf-8"))
    tool_tokens, total = _expected(raw)
    at = page(PLAYGROUND, strategy="window-drop", model="gpt-4o")
    at.run()
    _paste(at, json.dumps(raw))
    # A budget the messages alone would fit in, but not with the tool definitions.
    param_widget(at, "budget").set_value(total - 1).run()
    assert not at.exception
    # Without the tools every message would fit; with them a round must go.
    assert tool_tokens > 1
    assert int(_metric(at, "Messages sent")) < len(raw["messages"])
    sent = int(_metric(at, "Tokens sent").replace(",", ""))
    assert tool_tokens <= sent <= total - 1


def test_a_chat_without_tools_keeps_the_models_own_counter_and_map() -> None:
    at = _opened()
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello there"}]
    _paste(at, json.dumps(chat))
    assert not at.exception
    assert _overhead_traces(at) == []
    assert "ctx.tool_counter" not in at.session_state
    counter = get_counter("gpt-4o")
    expected = counter.count_messages(load_chat(chat))
    assert _metric(at, "Tokens sent") == f"{expected:,}"


def test_the_tool_counter_is_the_same_object_on_every_rerun() -> None:
    at = _opened()
    _paste(at, REQUEST.read_text(encoding="utf-8"))
    first = at.session_state["ctx.tool_counter"][3]
    at.run()
    at.run()
    assert not at.exception
    assert at.session_state["ctx.tool_counter"][3] is first


def test_reading_warnings_are_shown_in_the_sidebar() -> None:
    session = ROOT / "tests" / "fixtures" / "formats" / "claude_code" / "thinking_session.jsonl"
    lines = session.read_bytes().splitlines()
    cut = b"\n".join(lines) + b'\n{"type": "user", "mess'
    at = _opened()
    at.sidebar.radio(key="ctx.source").set_value("Upload").run()
    at.sidebar.file_uploader(key="ctx.upload").set_value(
        ("session.jsonl", cut, "application/octet-stream")
    ).run()
    assert not at.exception and not at.sidebar.error
    warned = [c.value for c in at.sidebar.caption if "cut off" in c.value]
    assert warned and f"line {len(lines) + 1}" in warned[0]


def test_a_chats_folder_file_with_tools_opens_with_its_tool_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    (tmp_path / "agent_request.json").write_bytes(REQUEST.read_bytes())
    at = page(
        PLAYGROUND, chat="agent_request", strategy="window-drop", model="gpt-4o", budget="100000"
    )
    at.run()
    assert at.sidebar.selectbox(key="ctx.sample").value == "agent_request"
    _check_tools_shown(at, json.loads(REQUEST.read_text(encoding="utf-8")))
