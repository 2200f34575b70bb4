"""AppTest: the Playground's clickable round map and message table, inside a fragment, and the
one selected message the inspector shows, whoever selected it.

AppTest cannot click a Plotly chart or a table row (the browser test does); here the selection
is set the way the click callbacks set it (:func:`ctxlab.ui.message_selection.select`'s value).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_support import PLAYGROUND, page

from ctxlab.chats_folder import CHATS_DIR_ENV
from ctxlab.ui import render
from ctxlab.ui.message_selection import SELECTED, Selection


def _open(**query: str) -> Any:
    at = page(PLAYGROUND, **query)
    at.run()
    assert not at.exception
    return at


def inspector_line(at: Any) -> str:
    """The inspector's header line: ``#index · id … · role · round … · tokens · decision``."""
    return next(t.value for t in at.text if t.value.startswith("#"))


def test_the_map_and_the_table_are_clickable_and_the_page_renders() -> None:
    at = _open(chat="coding_agent_session", strategy="window-drop", budget="3000")
    charts = at.get("plotly_chart")
    assert charts, "the round map is drawn"
    assert list(charts[0].proto.selection_mode) == [0]  # points only (PlotlyChartProto.POINTS)
    table = next(d for d in at.dataframe if "decision" in d.value.columns)
    assert table.proto.selection_mode == [0]  # single row (ArrowProto.SINGLE_ROW)
    assert any("Click a block" in c.value for c in at.caption)
    assert inspector_line(at).startswith("#0 ")


def test_a_selection_shows_that_message_in_the_inspector_and_holds_across_reruns() -> None:
    at = _open(chat="coding_agent_session", strategy="window-drop", budget="3000")
    chat = at.session_state["ctx.chat"]
    k = 7
    message = chat.messages[k]
    at.session_state[SELECTED] = Selection(message.id, "map", (k, k + 3))
    at.run()
    assert not at.exception
    line = inspector_line(at)
    assert line.startswith(f"#{k} · id {message.id} · {message.role.value}")
    assert at.number_input(key=render.READER_KEY).value == k
    assert any(f"holds messages {k}–{k + 2}" in c.value for c in at.caption)
    assert any(message.content[:40] in c.value for c in at.code)
    # another tab and back, and another budget (a full run): the same message
    at.session_state["pg-tabs"] = "Problems"
    at.run()
    at.session_state["pg-tabs"] = "Messages"
    at.run()
    at.query_params["budget"] = "6000"
    at.run()
    assert not at.exception
    assert inspector_line(at).startswith(f"#{k} · id {message.id}")


def test_the_typed_number_sets_the_same_selection_the_clicks_set() -> None:
    at = _open(chat="coding_agent_session", strategy="window-drop")
    chat = at.session_state["ctx.chat"]
    at.number_input(key=render.READER_KEY).set_value(4).run()
    assert not at.exception
    held = at.session_state[SELECTED]
    assert held == Selection(chat.messages[4].id, "number")
    assert inspector_line(at).startswith(f"#4 · id {chat.messages[4].id}")


def test_a_selection_from_another_chat_falls_back_to_the_first_message() -> None:
    at = _open(chat="coding_agent_session", strategy="window-drop")
    at.session_state[SELECTED] = Selection("no-such-message", "table")
    at.run()
    assert not at.exception
    assert inspector_line(at).startswith("#0 ")


@pytest.fixture
def long_chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    lines = [{"role": "system", "content": "Be brief."}]
    for k in range(1_200):  # 2,401 messages: three pages of the message table
        lines += [
            {"role": "user", "content": f"question {k}"},
            {"role": "assistant", "content": f"answer {k}"},
        ]
    (tmp_path / "long_team_chat.jsonl").write_text(
        "\n".join(json.dumps(line) for line in lines), encoding="utf-8"
    )
    return "long_team_chat"


def test_a_map_selection_on_a_long_chat_opens_the_table_page_that_holds_it(
    long_chat: str,
) -> None:
    at = _open(chat=long_chat, strategy="window-drop", budget="2000")
    chat = at.session_state["ctx.chat"]
    k = 2_101  # on page 3 of 1,000-row pages
    at.session_state[SELECTED] = Selection(chat.messages[k].id, "map", (k, k + 40))
    at.run()
    assert not at.exception
    pager = next(w for w in at.number_input if str(w.key).startswith("table-page."))
    assert pager.value == 3
    table = next(d.value for d in at.dataframe if "decision" in d.value.columns)
    assert k in set(table["index"])
    assert inspector_line(at).startswith(f"#{k} · id {chat.messages[k].id}")
    # the page opens once per selection: the user can page away from it
    pager.set_value(1).run()
    assert not at.exception
    pager = next(w for w in at.number_input if str(w.key).startswith("table-page."))
    assert pager.value == 1
