"""AppTest, large chats: the server's chats folder (CTXLAB_CHATS_DIR) and the round map zoom."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_support import PLAYGROUND, page
from streamlit.testing.v1 import AppTest

from ctxlab.chats_folder import CHATS_DIR_ENV


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CHATS_DIR_ENV, str(tmp_path))
    lines = [
        {"role": "system", "content": "Be brief."},
        *(
            {"role": role, "content": f"{role} line {k}"}
            for k in range(40)
            for role in ("user", "assistant")
        ),
    ]
    (tmp_path / "team_chat.jsonl").write_text(
        "\n".join(json.dumps(m) for m in lines) + "\n", encoding="utf-8"
    )
    return tmp_path


def test_a_folder_chat_opens_by_name_and_is_listed(folder: Path) -> None:
    raw = (folder / "team_chat.jsonl").read_text(encoding="utf-8").splitlines()
    at = page(PLAYGROUND, chat="team_chat", strategy="window-drop")
    at.run()
    assert not at.exception
    picker = at.sidebar.selectbox(key="ctx.sample")
    assert picker.value == "team_chat"
    assert any("team_chat (chats folder" in o for o in picker.options), picker.options
    captions = [c.value for c in at.sidebar.caption]
    assert any(f"{len(raw):,} messages" in c for c in captions), captions
    assert "team_chat" in str(at.query_params["chat"])


def test_names_that_are_paths_never_open_a_file(folder: Path) -> None:
    (folder.parent / "outside.json").write_text('[{"role": "user", "content": "x"}]')
    at = page(PLAYGROUND, chat="../outside", strategy="window-drop")
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="ctx.sample").value != "../outside"
    assert "outside" not in str(at.query_params.get("chat", ""))


def test_a_realistic_budget_on_the_10k_sample_adds_a_zoomed_round_map() -> None:
    at = page(PLAYGROUND, chat="large_agent_10k", strategy="window-drop", budget="128000")
    at.run()
    assert not at.exception
    # the zoom is a second strip of the round map's own chart (one chart to redraw per click)
    assert round_map_axes(at) == {"yaxis", "yaxis2"}
    assert any("Zoom on the newest end: rounds" in c.value for c in at.caption)
    wide = page(PLAYGROUND, chat="large_agent_10k", strategy="window-drop", budget="6000000")
    wide.run()
    assert round_map_axes(wide) == {"yaxis"}
    assert not any("Zoom on the newest end" in c.value for c in wide.caption)


def round_map_axes(at: AppTest) -> set[str]:
    """The y axes (one per strip) of the chart keyed ``map``."""
    (chart,) = [c for c in at.get("plotly_chart") if str(c.key) == "map"]
    layout = json.loads(chart.proto.spec)["layout"]
    return {k for k in layout if k.startswith("yaxis")}
