"""AppTest, issue 15: sessions of one chat share the parsed chat, its count and what is derived
from it, and the Playground's message table shows a page, not the whole of a long chat."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from app_support import PLAYGROUND, page

from ctxlab.chats_folder import CHATS_DIR_ENV
from ctxlab.model import Message
from ctxlab.ui import render


def _open(**query: str) -> object:
    at = page(PLAYGROUND, **query)
    at.run()
    assert not at.exception
    return at


def test_three_sessions_of_one_sample_share_the_chat_and_its_count() -> None:
    sessions = [_open(chat="coding_agent_session", strategy="window-drop") for _ in range(3)]
    chats = [s.session_state["ctx.chat"] for s in sessions]  # type: ignore[attr-defined]
    assert chats[0].messages is chats[1].messages is chats[2].messages
    # Each session holds its own LoadedChat (its slot, label) around the one shared tuple.
    assert len({id(c) for c in chats}) == 3


def _paste(text: str) -> object:
    at = _open(chat="coding_agent_session", strategy="window-drop")
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()  # type: ignore[attr-defined]
    at.sidebar.text_area(key="ctx.paste").input(text).run()  # type: ignore[attr-defined]
    at.sidebar.button(key="ctx.paste_load").click().run()  # type: ignore[attr-defined]
    assert not at.exception  # type: ignore[attr-defined]
    return at


def test_the_same_paste_in_two_sessions_is_parsed_once() -> None:
    text = json.dumps(
        [{"role": "user", "content": "shared paste 7"}, {"role": "assistant", "content": "ok"}]
    )
    first, second = _paste(text), _paste(text)
    a = first.session_state["ctx.chat"]  # type: ignore[attr-defined]
    b = second.session_state["ctx.chat"]  # type: ignore[attr-defined]
    assert a.messages is b.messages
    assert [m.content for m in a.messages] == ["shared paste 7", "ok"]
    other = _paste(text.replace("shared paste 7", "another paste"))
    assert other.session_state["ctx.chat"].messages is not a.messages  # type: ignore[attr-defined]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    lines = [{"role": "system", "content": "Be brief."}]
    for k in range(1_200):  # 2,401 messages: more than one page of the message table
        lines += [
            {"role": "user", "content": f"question {k}"},
            {"role": "assistant", "content": f"answer {k}"},
        ]
    (tmp_path / "long_team_chat.jsonl").write_text(
        "\n".join(json.dumps(m) for m in lines) + "\n", encoding="utf-8"
    )
    return tmp_path


def test_sessions_of_one_folder_chat_share_the_chat_and_its_counts(folder: Path) -> None:
    first = _open(chat="long_team_chat", strategy="window-drop", budget="2000")
    second = _open(chat="long_team_chat", strategy="window-drop", budget="3000")
    a = first.session_state["ctx.chat"].messages  # type: ignore[attr-defined]
    b = second.session_state["ctx.chat"].messages  # type: ignore[attr-defined]
    assert a is b
    from ctxlab.tokens import get_counter

    counted = get_counter("gpt-4o").counted(a)
    assert get_counter("gpt-4o").counted(b) is counted


def test_the_message_table_of_a_long_chat_shows_one_page_and_the_pager_moves(
    folder: Path,
) -> None:
    raw = (folder / "long_team_chat.jsonl").read_text(encoding="utf-8").splitlines()
    n = len(raw)
    at = _open(chat="long_team_chat", strategy="window-drop", budget="2000")
    table = next(d.value for d in at.dataframe if "decision" in d.value.columns)  # type: ignore[attr-defined]
    assert len(table) == render.TABLE_PAGE_ROWS
    assert list(table["index"][:3]) == [0, 1, 2]
    assert any(c.value == f"{n:,} of {n:,} messages" for c in at.caption)  # type: ignore[attr-defined]
    pager = next(w for w in at.number_input if str(w.key).startswith("table-page."))  # type: ignore[attr-defined]
    pager.set_value(3).run()
    assert not at.exception  # type: ignore[attr-defined]
    table = next(d.value for d in at.dataframe if "decision" in d.value.columns)  # type: ignore[attr-defined]
    assert len(table) == n - 2 * render.TABLE_PAGE_ROWS
    assert table["index"].iloc[-1] == n - 1
    # The newest messages fit the budget: the last page ends on kept ones.
    assert table["decision"].iloc[-1] == "kept"
    assert json.loads(raw[-1])["content"] in table["preview"].iloc[-1]


def test_the_decision_filter_pages_what_it_keeps(folder: Path) -> None:
    at = _open(chat="long_team_chat", strategy="window-drop", budget="2000")
    table_filter = next(m for m in at.multiselect if m.label == "Show decisions")  # type: ignore[attr-defined]
    table_filter.set_value(["kept"]).run()
    table = next(d.value for d in at.dataframe if "decision" in d.value.columns)  # type: ignore[attr-defined]
    assert set(table["decision"]) == {"kept"}
    assert 0 < len(table) < render.TABLE_PAGE_ROWS
    assert not any(str(w.key).startswith("table-page.") for w in at.number_input)  # type: ignore[attr-defined]


def test_page_bounds_clamp_to_the_last_page() -> None:
    assert render.page_bounds(2_500, 1, 1_000) == (0, 1_000)
    assert render.page_bounds(2_500, 3, 1_000) == (2_000, 2_500)
    assert render.page_bounds(2_500, 9, 1_000) == (2_000, 2_500)
    assert render.page_bounds(0, 1, 1_000) == (0, 0)


def _fine_tuning_lines(*firsts: str) -> str:
    return "\n".join(
        json.dumps(
            {"messages": [{"role": "user", "content": f}, {"role": "assistant", "content": "ok"}]}
        )
        for f in firsts
    )


def test_the_conversation_picker_follows_the_pasted_text_across_reruns() -> None:
    at = _open(chat="coding_agent_session", strategy="window-drop")
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()  # type: ignore[attr-defined]
    at.sidebar.text_area(key="ctx.paste").input(_fine_tuning_lines("alpha", "beta")).run()  # type: ignore[attr-defined]
    picker = at.sidebar.selectbox(key="ctx.conv.paste")  # type: ignore[attr-defined]
    assert picker.label == "Conversation (2 in this file)"
    at.run()  # a rerun for another reason: the same list
    assert at.sidebar.selectbox(key="ctx.conv.paste").label == "Conversation (2 in this file)"  # type: ignore[attr-defined]
    text = _fine_tuning_lines("one", "two", "three")
    at.sidebar.text_area(key="ctx.paste").input(text).run()  # type: ignore[attr-defined]
    picker = at.sidebar.selectbox(key="ctx.conv.paste")  # type: ignore[attr-defined]
    assert picker.label == "Conversation (3 in this file)"
    picker.set_value("2").run()
    at.sidebar.button(key="ctx.paste_load").click().run()  # type: ignore[attr-defined]
    assert not at.exception  # type: ignore[attr-defined]
    assert at.session_state["ctx.chat"].messages[0].content == "three"  # type: ignore[attr-defined]


def test_facts_are_picked_once_per_chat_and_checked_once_per_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxlab.ui import insights_view

    calls = {"pick": 0, "check": 0}
    pick, check = insights_view.extract_facts, insights_view.retention_of

    def counting_pick(messages: Sequence[Message], *args: object, **kwargs: object) -> object:
        # Only the pasted chat's picks count: the sample each session opens first has its facts
        # picked in the background after its first showing, and whether a test before this one
        # in the same process already picked them depends on the order tests run in.
        if any("order 55123" in m.content for m in messages):
            calls["pick"] += 1
        return pick(messages, *args, **kwargs)  # type: ignore[arg-type]

    def counting_check(*args: object, **kwargs: object) -> object:
        calls["check"] += 1
        return check(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(insights_view, "extract_facts", counting_pick)
    monkeypatch.setattr(insights_view, "retention_of", counting_check)
    # A chat no other test counted: its facts are not picked yet.
    text = json.dumps(
        [
            {"role": "user", "content": "order 55123 ships to 12 Rue Lamarck"},
            {"role": "assistant", "content": "noted"},
            {"role": "user", "content": "and invoice INV-99812"},
            {"role": "assistant", "content": "done"},
        ]
    )
    first, second = _paste(text), _paste(text)
    for at in (first, second):
        at.session_state["pg-tabs"] = "Facts"  # type: ignore[attr-defined]
        at.run()  # type: ignore[attr-defined]
        assert not at.exception  # type: ignore[attr-defined]
    assert calls["pick"] == 1  # shared by both sessions
    assert calls["check"] == 2  # once per session
    first.run()  # type: ignore[attr-defined]
    assert calls == {"pick": 1, "check": 2}  # a rerun with the same context checks nothing
    first.text_area(key="pg-typed").input("invoice INV-99812").run()  # type: ignore[attr-defined]
    assert calls == {"pick": 1, "check": 3}  # new settings: checked again, not picked again
    facts = next(d.value for d in first.dataframe if "fact" in d.value.columns)  # type: ignore[attr-defined]
    assert "invoice INV-99812" in set(facts["fact"])


def test_the_tokens_tab_of_a_long_chat_lists_the_worst_messages_first(folder: Path) -> None:
    from ctxlab.ui.insights_view import TOKENS_TABLE_ROWS

    n = len((folder / "long_team_chat.jsonl").read_text(encoding="utf-8").splitlines())
    at = _open(chat="long_team_chat", strategy="window-drop", budget="2000")
    at.session_state["pg-tabs"] = "Tokens"  # type: ignore[attr-defined]
    at.run()  # type: ignore[attr-defined]
    assert not at.exception  # type: ignore[attr-defined]
    frame = next(d.value for d in at.dataframe if "chars/4" in d.value.columns)  # type: ignore[attr-defined]
    assert len(frame) == TOKENS_TABLE_ROWS < n
    assert list(frame["error"]) == sorted(frame["error"])
    assert any(f"of {n:,}" in c.value for c in at.caption)  # type: ignore[attr-defined]
