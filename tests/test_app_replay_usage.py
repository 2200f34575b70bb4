"""AppTest: Replay shows, for a transcript that records usage, what the provider billed per call
beside ctxlab's count of the same call, and says what the gap is made of in numbers."""

from __future__ import annotations

import json
from typing import Any

from app_support import ROOT, page, strip_of
from raw_claude_code import raw_billed
from streamlit.testing.v1 import AppTest

from ctxlab.formats import load_chat_file
from ctxlab.provider_usage import compare_usage
from ctxlab.tokens import get_counter
from ctxlab.ui.figures import USAGE_TITLE

SESSION = ROOT / "tests" / "fixtures" / "formats" / "claude_code" / "thinking_session.jsonl"
"""A real Claude Code session whose assistant lines carry ``message.usage`` (PROVENANCE.md)."""
REPLAY = "pages/2_Replay.py"


def _upload(at: AppTest, name: str, data: bytes) -> None:
    at.sidebar.radio(key="ctx.source").set_value("Upload").run()
    at.sidebar.file_uploader(key="ctx.upload").set_value((name, data, "application/json")).run()


def _usage_chart(at: AppTest) -> dict[str, Any] | None:
    for chart in at.get("plotly_chart"):
        if str(chart.key) == "replay-usage":
            spec: dict[str, Any] = json.loads(chart.proto.spec)
            return spec
    return None


def test_a_session_with_usage_charts_billed_against_counted_per_call() -> None:
    at = page(REPLAY, strategy="window-drop", model="gpt-4o")
    at.run()
    _upload(at, "session.jsonl", SESSION.read_bytes())
    assert not at.exception and not at.sidebar.error
    assert USAGE_TITLE in [h.value for h in at.subheader]
    spec = _usage_chart(at)
    assert spec is not None
    bars = [t for t in spec["data"] if t["type"] == "bar"]
    billed = [sum(v) for v in zip(*(t["y"] for t in bars), strict=True)]
    assert billed == raw_billed(SESSION)
    loaded = load_chat_file(SESSION)
    expected = compare_usage(loaded.messages, loaded.usage, get_counter("gpt-4o"))
    (line,) = [t for t in spec["data"] if t["type"] == "scatter"]
    assert line["y"] == [c.counted_prompt for c in expected.calls]
    hidden = raw_billed(SESSION)[0] - expected.calls[0].counted_prompt
    captions = [c.value for c in at.main.caption]
    explained = [c for c in captions if c.startswith("Hidden fixed part")]
    assert explained and f"**{hidden:+,}** tokens per call" in explained[0]
    assert expected.tokenizer_ratio is not None
    assert f"**{expected.tokenizer_ratio:.2f}**" in explained[0]
    assert "explains most" in explained[0]


def test_a_chat_without_usage_shows_no_billed_chart() -> None:
    at = page(REPLAY, strategy="window-drop", model="gpt-4o")
    at.run()
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    _upload(at, "plain.json", json.dumps(chat).encode())
    assert not at.exception
    assert _usage_chart(at) is None
    assert USAGE_TITLE not in [h.value for h in at.subheader]


REQUEST = ROOT / "tests" / "fixtures" / "formats" / "chat_completion" / "tool_calls_request.json"


def test_with_tools_the_replay_is_reused_across_reruns_and_its_map_shows_them() -> None:
    at = page(REPLAY, strategy="window-drop", model="gpt-4o")
    at.run()
    _upload(at, "request.json", REQUEST.read_bytes())
    assert not at.exception
    first = at.session_state["ctx.replay"]
    at.run()
    assert not at.exception
    # The counted chat is the same object, so the replay (keyed by its identity) is not redone.
    assert at.session_state["ctx.replay"] is first
    tools = get_counter("gpt-4o").count_tools(json.loads(REQUEST.read_bytes())["tools"])
    _, drawn = strip_of(at, "Round map at turn")
    assert [n for name, n in drawn.items() if name.startswith("tool definitions")] == [tools]
