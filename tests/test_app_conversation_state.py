"""AppTest, issue 23: the conversation is part of the state (session, URL ``conv=``, chats
folder), and a newly opened chat starts from its own derived parameters, explained.

Cross-page flows (page list clicks, Tune's Apply) are tested in a real browser:
``tests/browser/test_conversation_state.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_support import PLAYGROUND, page

from ctxlab.chats_folder import CHATS_DIR_ENV
from ctxlab.ui.text import literal_text

CLAUDE_CODE = Path(__file__).parent / "fixtures" / "formats" / "claude_code"
SESSION = CLAUDE_CODE / "thinking_session.jsonl"
BUDGET = "p.window-drop.budget@1"


def _run(target: object) -> object:
    """Run the app (``target``: the AppTest, or a widget just set); the AppTest, checked."""
    at = target.run()  # type: ignore[attr-defined]
    assert not at.exception
    return at


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    shutil.copy(SESSION, tmp_path / "claude_session.jsonl")
    return tmp_path


def _captions(at: object) -> list[str]:
    return [literal_text(c.value) for c in at.main.caption]  # type: ignore[attr-defined]


def test_a_folder_chat_with_two_conversations_offers_the_picker(folder: Path) -> None:
    at = _run(page(PLAYGROUND, chat="claude_session", strategy="window-drop"))
    picker = at.sidebar.selectbox(key="ctx.conv.chat.claude_session")  # type: ignore[attr-defined]
    assert picker.label == "Conversation (2 in this file)"
    assert len(at.session_state["ctx.chat"].messages) == 15  # type: ignore[attr-defined]
    assert at.query_params["conv"] == "main"  # type: ignore[attr-defined]
    _run(picker.set_value("rewind-1"))
    chat = at.session_state["ctx.chat"]  # type: ignore[attr-defined]
    assert (chat.conversation, len(chat.messages)) == ("rewind-1", 12)
    assert at.query_params["conv"] == "rewind-1"  # type: ignore[attr-defined]
    assert at.query_params["chat"] == "claude_session"  # type: ignore[attr-defined]


def test_a_link_with_conv_opens_that_conversation_of_a_folder_chat(folder: Path) -> None:
    at = _run(page(PLAYGROUND, chat="claude_session", conv="rewind-1", strategy="window-drop"))
    chat = at.session_state["ctx.chat"]  # type: ignore[attr-defined]
    assert (chat.conversation, len(chat.messages)) == ("rewind-1", 12)
    picker = at.sidebar.selectbox(key="ctx.conv.chat.claude_session")  # type: ignore[attr-defined]
    assert picker.value == "rewind-1"
    # conv is the chat's, never mistaken for a strategy parameter
    assert "conv" not in at.session_state["ctx.params"][("", "window-drop")]  # type: ignore[attr-defined]


def test_a_link_with_an_unknown_conv_opens_the_first_conversation(folder: Path) -> None:
    at = _run(page(PLAYGROUND, chat="claude_session", conv="nope", strategy="window-drop"))
    assert len(at.session_state["ctx.chat"].messages) == 15  # type: ignore[attr-defined]


def test_a_pasted_file_keeps_its_conversation_in_the_url() -> None:
    at = _run(page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop"))
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()  # type: ignore[attr-defined]
    text = SESSION.read_text(encoding="utf-8")
    at.sidebar.text_area(key="ctx.paste").input(text).run()  # type: ignore[attr-defined]
    at.sidebar.selectbox(key="ctx.conv.paste").set_value("rewind-1").run()  # type: ignore[attr-defined]
    _run(at.sidebar.button(key="ctx.paste_load").click())  # type: ignore[attr-defined]
    assert len(at.session_state["ctx.chat"].messages) == 12  # type: ignore[attr-defined]
    assert at.query_params["conv"] == "rewind-1"  # type: ignore[attr-defined]
    assert at.query_params["upload"] == "pasted chat"  # type: ignore[attr-defined]


def test_a_newly_picked_chat_opens_at_its_own_derived_budget_explained() -> None:
    at = _run(page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop"))
    first = at.sidebar.number_input(key=BUDGET).value  # type: ignore[attr-defined]
    assert first == 16_000
    assert any(
        c.startswith("Budget 16,000 tokens: 49% of this 32,791-token chat") for c in _captions(at)
    )
    # Another sample: its own derived budget, not the last chat's 16,000 (above its 3,728 tokens).
    _run(at.sidebar.selectbox(key="ctx.sample").set_value("support_function_calls"))  # type: ignore[attr-defined]
    budgets = [
        n for n in at.sidebar.number_input if n.key and n.key.startswith("p.window-drop.budget@")
    ]  # type: ignore[attr-defined]
    assert [b.value for b in budgets] == [1_800]
    caption = next(c for c in _captions(at) if c.startswith("Budget "))
    assert caption == (
        "Budget 1,800 tokens: 48% of this 3,728-token chat, so you see what is dropped; "
        "change it in the sidebar."
    )
    assert at.session_state["ctx.chat"].sample == "support_function_calls"  # type: ignore[attr-defined]


def test_a_typed_value_wins_over_the_derived_one_and_the_caption_goes() -> None:
    at = _run(page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop"))
    _run(at.sidebar.number_input(key=BUDGET).set_value(9_000))  # type: ignore[attr-defined]
    assert not any(c.startswith("Budget ") for c in _captions(at))
    _run(at)  # another rerun: the typed value holds
    assert at.sidebar.number_input(key=BUDGET).value == 9_000  # type: ignore[attr-defined]


def test_a_link_value_wins_over_the_derived_one() -> None:
    at = _run(page(PLAYGROUND, chat="coding_agent_session", strategy="window-drop", budget="12000"))
    assert at.sidebar.number_input(key=BUDGET).value == 12_000  # type: ignore[attr-defined]
    assert not any(c.startswith("Budget ") for c in _captions(at))
