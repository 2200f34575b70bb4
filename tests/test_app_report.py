"""AppTest: the report button on every page that has one, and links made from an upload."""

from __future__ import annotations

from app_support import PLAYGROUND, page

from ctxlab.ui.text import literal_text


def download_labels(at: object) -> list[str]:
    return [str(b.proto.label) for b in at.get("download_button")]  # type: ignore[attr-defined]


def test_playground_has_a_report_button() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session")
    at.run()
    assert not at.exception
    assert "Download report" in download_labels(at)


def test_replay_and_compare_have_a_report_button() -> None:
    for path in ("pages/2_Replay.py", "pages/1_Compare.py"):
        at = page(path, chat="coding_agent_session", strategy="window-drop")
        at.run()
        assert not at.exception, path
        assert "Download report" in download_labels(at), path


def test_a_link_from_an_uploaded_chat_asks_for_the_chat_instead_of_opening_a_sample() -> None:
    at = page(PLAYGROUND, upload="team <chat>.json", strategy="window-drop", budget="5000")
    at.run()
    assert not at.exception
    notes = [i.value.replace("\\", "") for i in at.info]  # Markdown escapes removed
    assert any(
        "This link was made from an uploaded chat (team <chat>.json), which a link cannot "
        "carry: upload it again" in n
        for n in notes
    ), notes
    assert at.sidebar.radio(key="ctx.source").value == "Upload"
    assert not at.get("plotly_chart")  # no sample was opened in its place
    assert not at.get("metric")


def test_a_link_from_a_pasted_chat_asks_for_it_again() -> None:
    at = page(PLAYGROUND, upload="pasted chat")
    at.run()
    assert not at.exception
    assert any("made from a pasted chat" in i.value for i in at.info)
    assert at.sidebar.radio(key="ctx.source").value == "Paste"


def test_a_pasted_chat_writes_upload_not_chat_into_the_url() -> None:
    at = page(PLAYGROUND, chat="coding_agent_session")
    at.run()
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    at.sidebar.text_area(key="ctx.paste").input(
        '[{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]'
    ).run()
    at.sidebar.button(key="ctx.paste_load").click().run()
    assert not at.exception
    assert "chat" not in at.query_params
    assert "pasted chat" in str(at.query_params["upload"])


def test_the_file_name_from_a_link_is_shown_literally_never_as_markdown() -> None:
    at = page(PLAYGROUND, upload="![t](http://example.invalid/p.png) :red[x].json")
    at.run()
    assert not at.exception
    notice = next(i.value for i in at.info if "uploaded chat" in i.value)
    # the word holding a URL is a code span (GitHub autolinks ignore backslashes), the rest is
    # escaped: Markdown shows the name exactly as it came
    assert "` ![t](http://example.invalid/p.png) `" in notice and ":red[" not in notice
    assert "![t](http://example.invalid/p.png) :red[x].json" in literal_text(notice)
