"""Tune on a real Claude Code session, in a browser, by clicking: the file uploaded through the
sidebar, its second conversation picked, Tune opened from the page list, the sweep read and its
value applied; the Playground comes back with that value and the same conversation."""

from __future__ import annotations

import re
from pathlib import Path

from browser_support import EXCEPTION, choose, open_app, pick_radio, rerun_after
from playwright.sync_api import Page, expect

from ctxlab.formats import list_conversations, load_chat
from ctxlab.tokens import get_counter

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "formats"
    / "claude_code"
    / "thinking_session.jsonl"
)
MODEL_LABEL = "OpenAI · gpt-4.1 · 1.05M window"


def _go_to(page: Page, name: str) -> None:
    link = page.locator("[data-testid='stSidebarNav'] a").filter(has_text=name).first
    rerun_after(page, link.click, 180_000)
    expect(page.locator(EXCEPTION)).to_have_count(0)


def test_tune_on_an_uploaded_claude_code_conversation_applies_in_range_and_keeps_it(
    streamlit_server: str, page: Page
) -> None:
    page.set_viewport_size({"width": 1400, "height": 2400})
    (_, first), (second_id, second) = list_conversations(FIXTURE)
    messages = load_chat(FIXTURE, conversation=second_id)
    total = get_counter("gpt-4.1").counted(messages).total
    open_app(page, streamlit_server)
    choose(page, "Model / tokenizer", MODEL_LABEL)
    pick_radio(page, "Upload")
    uploader = page.locator("[data-testid='stSidebar'] input[type='file']").first
    rerun_after(page, lambda: uploader.set_input_files(str(FIXTURE)))
    picker = page.get_by_role("combobox", name="Conversation (2 in this file)").first
    picker.click()
    option = page.get_by_role("option").filter(has_text=second).first
    rerun_after(page, option.click)
    expect(picker).to_have_value(re.compile(re.escape(second) + "$"))
    sidebar = page.locator("[data-testid='stSidebar']")
    shown = f"{len(messages)} messages"
    expect(sidebar).to_contain_text(shown)

    _go_to(page, "Tune")
    thumbs = page.locator("[data-testid='stSlider']").filter(has_text="Range")
    values = thumbs.first.locator("[data-testid='stSliderThumbValue']").all_inner_texts()
    assert [int(v.replace(",", "")) for v in values][-1] == total  # not 1,500,000
    answer = page.locator("[data-testid='stAlertContainer']").first.inner_text()
    assert "needs no trimming" in answer or answer.startswith("Smallest"), answer
    button = page.get_by_role("button", name=re.compile(r"^Apply Token budget = "))
    applied = int(
        re.search(r"= ([\d,]+) in", button.inner_text()).group(1).replace(",", "")  # type: ignore[union-attr]
    )
    assert 0 < applied <= total  # was 1,500 on this 1,230-token conversation

    rerun_after(page, button.click, 180_000)
    expect(page.locator(EXCEPTION)).to_have_count(0)
    expect(page.get_by_role("heading", name="Tune")).to_have_count(0)
    budget = sidebar.get_by_label("Token budget", exact=True).first
    expect(budget).to_have_value(str(applied))
    expect(sidebar).to_contain_text(shown)
    expect(sidebar.get_by_role("combobox", name="Conversation (2 in this file)")).to_have_value(
        re.compile(re.escape(second) + "$")
    )
    # and the next page switch still shows that conversation, not the first one
    _go_to(page, "Compare")
    expect(sidebar).to_contain_text(shown)
    assert first != second
