"""AppTest: framework policies in the app, through a small real policy registered for the tests
(tests/framework_policy.py): the group picker, the Playground's panel, Compare side by side,
Replay's markers, the Learn section, and the export target."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from app_support import PLAYGROUND, page, texts
from framework_policy import NAME, OTHER_NAME, registered
from streamlit.testing.v1 import AppTest

from ctxlab.strategies import get_strategy_class

CHAT = "coding_agent_session"
GROUP = "ctx.strategy_group"


@pytest.fixture(autouse=True)
def test_policies() -> Iterator[None]:
    with registered():
        yield


def _shown(at: AppTest) -> str:
    return "\n".join(texts(at)).replace("\\", "")


def _to_framework(at: AppTest) -> AppTest:
    at.sidebar.radio(key=GROUP).set_value("Framework policies").run()
    assert not at.exception
    return at


def test_the_group_control_switches_the_strategy_picker_to_framework_policies() -> None:
    at = page(PLAYGROUND, chat=CHAT)
    at.run()
    picker = at.sidebar.selectbox(key="ctx.strategy")
    assert NAME not in picker.options and "window-drop" in [*picker.options, picker.value]
    assert at.sidebar.radio(key=GROUP).value == "ctxlab strategies"
    _to_framework(at)
    picker = at.sidebar.selectbox(key="ctx.strategy")
    titles = {get_strategy_class(n).title for n in (NAME, OTHER_NAME)}
    assert titles <= set(picker.options)  # framework options are labelled by their titles
    assert "Window drop" not in picker.options
    # the group's first policy opens (registry order), and the URL follows
    from ctxlab.strategies import strategy_names
    from ctxlab.ui.frameworks import framework_names

    assert at.query_params["strategy"] == framework_names(strategy_names())[0]
    # back to ctxlab: the strategy picked there before comes back
    at.sidebar.radio(key=GROUP).set_value("ctxlab strategies").run()
    assert at.sidebar.selectbox(key="ctx.strategy").value == "window-drop"


def test_a_framework_policy_in_the_url_opens_its_group() -> None:
    at = page(PLAYGROUND, chat=CHAT, strategy=NAME, keep="3")
    at.run()
    assert not at.exception
    assert at.sidebar.radio(key=GROUP).value == "Framework policies"
    assert at.sidebar.selectbox(key="ctx.strategy").value == NAME


def test_the_panel_says_plainly_that_the_defaults_never_fire_and_where_the_estimate_is_off() -> (
    None
):
    at = page(PLAYGROUND, chat=CHAT, strategy=NAME)
    at.run()
    assert next(e.label for e in at.main.expander) == "What TestFramework does with this chat"
    shown = _shown(at)
    assert "Never fires: trigger is None (TestFramework's default); set trigger=tokens=N." in shown
    assert "With these settings TestFramework sends the whole chat unchanged." in shown
    # chars/4 + 3 against the exact count of the sample: the estimate is low, so a trigger
    # compared with it fires late; the sentence gives both numbers
    warning = next(w.value for w in at.warning if "thinks" in w.value).replace("\\", "")
    assert warning.startswith("TestFramework thinks 21,750 tokens, the model sees 32,791:")
    assert "a token trigger fires 11,041 tokens late" in warning
    assert "Not reproduced exactly: the placeholder's exact wording" in shown
    assert "Known issue, reproduced: testframework#7" in shown
    assert (
        "TestFramework WindowMemory (testframework 0.1.0), ported from the framework's source"
        in shown
    )
    assert any(
        "memory = WindowMemory(trigger=None, keep=4, compact=False)" in c.value for c in at.code
    )


def test_the_panel_follows_the_settings_when_the_policy_fires() -> None:
    at = page(PLAYGROUND, chat=CHAT, strategy=NAME, trigger="tokens=2000", keep="5")
    at.run()
    success = [s.value.replace("\\", "") for s in at.success]
    assert (
        "Fires at 2,000 tokens (TestFramework's estimate); this chat is at 21,750, so it fires."
        in (success)
    )
    shown = _shown(at)
    assert "With these settings TestFramework edits the request only: 151 dropped, 1 inserted;" in (
        shown
    )


def test_the_panel_text_goes_through_markdown_literal() -> None:
    at = page(PLAYGROUND, chat=CHAT, strategy=NAME)
    at.run()
    infos = [i.value for i in at.info]
    # Markdown characters of the policy's own text are escaped (shown literally)
    assert any(v.startswith("Never fires\\: trigger is None") for v in infos)


def test_a_ctxlab_strategy_shows_no_framework_panel() -> None:
    at = page(PLAYGROUND, chat=CHAT, strategy="window-drop")
    at.run()
    assert not any("does with this chat" in e.label for e in at.main.expander)


def test_compare_puts_framework_policies_side_by_side_with_their_trigger_sentences() -> None:
    at = page("pages/1_Compare.py", chat=CHAT)
    at.run()
    assert not at.exception
    at.multiselect(key="cmp.frameworks").set_value([OTHER_NAME, NAME]).run()
    at.button(key="cmp.frameworks_go").click().run()
    assert not at.exception
    assert at.selectbox(key="cmp0.strategy").value == OTHER_NAME
    assert at.selectbox(key="cmp1.strategy").value == NAME
    assert at.radio(key="cmp0.group").value == "Framework policies"
    captions = [c.value.replace("\\", "") for c in at.caption]
    # each column at its framework's own defaults, with its own sentence
    assert (
        "Fires at 8,000 tokens (OtherFramework's estimate); this chat is at 21,750, so it fires."
        in (captions)
    )
    assert any(
        c.startswith("Never fires: trigger is None (TestFramework's default)") for c in captions
    )
    assert sum("thinks 21,750 tokens, the model sees 32,791" in c for c in captions) == 2
    assert at.query_params["cmp1"] == OTHER_NAME and at.query_params["cmp2"] == NAME


def test_compare_slot_group_control_switches_one_slot() -> None:
    at = page("pages/1_Compare.py", chat=CHAT)
    at.run()
    at.radio(key="cmp1.group").set_value("Framework policies").run()
    assert at.selectbox(key="cmp0.strategy").value == "window-drop"
    picked = at.selectbox(key="cmp1.strategy").value
    assert get_strategy_class(picked).framework_policy is not None


def _marker_turns(at: AppTest) -> list[int]:
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        for trace in spec["data"]:
            if trace.get("name") == "policy fires":
                return list(trace["x"])
    return []


def test_replay_marks_when_a_policy_first_acts() -> None:
    at = page("pages/2_Replay.py", chat=CHAT, strategy=NAME, trigger="tokens=3000", keep="6")
    at.run()
    assert not at.exception
    assert "When TestFramework fires in this session" in [s.value for s in at.subheader]
    text = next(i.value for i in at.info if "first acts" in i.value).replace("\\", "")
    # the estimate reaches 3,000 before the 7th call (message #15), and stays over it
    assert text == "TestFramework first acts at call 7 (message #15) and acts on 58 of 64 calls."
    assert _marker_turns(at) == [7]


def test_replay_marks_each_compaction_of_a_replacing_policy() -> None:
    at = page("pages/2_Replay.py", chat=CHAT, strategy=OTHER_NAME)
    at.run()
    assert not at.exception
    text = next(i.value for i in at.info if "first acts" in i.value).replace("\\", "")
    assert text.startswith("OtherFramework first acts at call 23 (message #53)")
    # the policy rewrites its stored history: each call starts from the last compaction, so
    # it compacts again once the history has grown back past its trigger
    assert "It rewrites its history at calls 23, 43, 60." in text
    assert _marker_turns(at) == [23, 43, 60]


def test_replay_of_defaults_that_never_fire_says_so() -> None:
    at = page("pages/2_Replay.py", chat=CHAT, strategy=NAME)
    at.run()
    infos = [i.value.replace("\\", "") for i in at.info]
    assert "TestFramework never acts during this session: every call sends the whole history." in (
        infos
    )
    assert _marker_turns(at) == []


def test_learn_contrasts_two_registered_frameworks_on_the_coding_agent_chat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ctxlab.ui import frameworks

    # the page's preferred pair, whatever policies this build registers besides the tests'
    monkeypatch.setattr(frameworks, "LEARN_PAIR", (OTHER_NAME, NAME))
    at = page("pages/4_Learn.py")
    at.run()
    assert not at.exception
    headers = [h.value for h in at.main.header]
    assert "9 · Two frameworks, one chat" in headers and headers[-1] == "10 · Your own chat"
    subheaders = [s.value for s in at.subheader]
    assert (
        "OtherFramework · Compactor" in subheaders and "TestFramework · WindowMemory" in subheaders
    )
    shown = _shown(at)
    assert "It writes 1 message(s) of its own: a user message at position 0 of 11." in shown
    assert "It writes no message of its own here." in shown
    assert "OtherFramework first acts at call 23 (message #53)" in shown
    assert "TestFramework never acts during this session" in shown
    frame = at.dataframe[-2].value  # the compacting policy's context
    assert list(frame["what it is"])[:2] == [
        "written by the policy",
        "message #146, kept",
    ]


def test_export_tab_offers_the_native_target_first_for_a_framework_policy() -> None:
    at = page(PLAYGROUND, chat=CHAT, strategy=NAME, keep="7")
    at.run()
    at.session_state["pg-tabs"] = "Export"
    at.run()
    target = at.selectbox(key="export-target")
    assert target.options[0] == "native" and target.value == "native"
    assert any("WindowMemory(trigger=None, keep=7" in c.value for c in at.code)
