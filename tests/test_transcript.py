"""The one rendering of folded messages into summarizer text (ctxlab.transcript)."""

from __future__ import annotations

from chatgen import assistant, call, system, tool, user

from ctxlab.model import CompactionMeta, Message, Role
from ctxlab.redaction import REDACTED, RedactionPolicy
from ctxlab.transcript import (
    NEW_HEADING,
    PREVIOUS_SUMMARY_HEADING,
    UPDATE_HEADING,
    render_transcript,
)

NOTHING = RedactionPolicy(roles=frozenset(), patterns=False)

CHAT = (
    user("What is the weather in Paris?", "u1"),
    assistant("Let me check.", "a1", call("call_1", "get_weather", '{"city": "Paris"}')),
    tool("21 C and sunny", "t1", "call_1"),
    assistant("It is 21 C and sunny.", "a2"),
)


def test_renders_role_labels_tool_calls_and_results_labelled_with_their_call() -> None:
    text = render_transcript(CHAT, NOTHING).text
    assert text == (
        f"{NEW_HEADING}\n\n"
        "User: What is the weather in Paris?\n\n"
        "Assistant: Let me check.\n"
        'Assistant called get_weather({"city": "Paris"})\n\n'
        "Tool result of get_weather [call_1]: 21 C and sunny\n\n"
        "Assistant: It is 21 C and sunny."
    )


def test_assistant_that_only_calls_tools_has_no_empty_content_line() -> None:
    text = render_transcript((assistant("", "a", call("c", "search", "{}")),), NOTHING).text
    assert "Assistant: \n" not in text
    assert "Assistant called search({})" in text


def test_names_system_developer_and_legacy_function_results_are_labelled() -> None:
    messages = (
        system("be brief", "s"),
        Message(Role.DEVELOPER, "use tools", "d"),
        Message(Role.USER, "hi", "u", name="alice"),
        Message(Role.FUNCTION, "42", "f", name="lookup"),
    )
    text = render_transcript(messages, NOTHING).text
    for line in ("System: be brief", "Developer: use tools", "User (alice): hi"):
        assert line in text
    assert "Function result of lookup: 42" in text


def test_redact_tool_content_masks_results_and_call_arguments_but_keeps_tool_names() -> None:
    policy = RedactionPolicy.from_options(True, (), False)
    out = render_transcript(CHAT, policy)
    assert "21 C and sunny\n" not in out.text
    assert f"Tool result of get_weather [call_1]: {REDACTED}" in out.text
    assert f"Assistant called get_weather({REDACTED})" in out.text
    assert '"city"' not in out.text
    assert out.redactions == {"role:tool": 1, "tool-arguments": 1}


def test_redact_roles_overrides_redact_tool_content() -> None:
    messages = (system("internal policy 7", "s"), *CHAT)
    policy = RedactionPolicy.from_options(True, [Role.SYSTEM], False)
    text = render_transcript(messages, policy).text
    assert "internal policy 7" not in text
    assert f"System: {REDACTED}" in text
    assert "Tool result of get_weather [call_1]: 21 C and sunny" in text
    assert '{"city": "Paris"}' in text


def test_legacy_function_results_are_redacted_with_the_tool_role() -> None:
    message = Message(Role.FUNCTION, "secret output", "f", name="lookup")
    policy = RedactionPolicy.from_options(True, (), False)
    assert "secret output" not in render_transcript((message,), policy).text


def test_pattern_redaction_covers_content_arguments_names_and_counts_per_rule() -> None:
    key = "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    messages = (
        user(f"my key is {key}", "u"),
        assistant("", "a", call("c1", "login", f'{{"password": "{key[3:20]}x9"}}')),
    )
    out = render_transcript(messages, RedactionPolicy(roles=frozenset(), patterns=True))
    assert key not in out.text and key[3:20] not in out.text
    assert out.redactions == {"openai-key": 1, "secret-pair": 1}


def test_previous_summary_comes_first_and_asks_for_an_update() -> None:
    out = render_transcript(CHAT[:1], NOTHING, previous_summary="- user lives in Paris\n")
    assert out.text.startswith(f"{PREVIOUS_SUMMARY_HEADING}\n- user lives in Paris\n\n")
    assert f"{UPDATE_HEADING}\n\nUser: What is the weather" in out.text
    assert NEW_HEADING not in out.text


def test_older_compaction_pairs_render_as_previous_summary_once() -> None:
    meta = CompactionMeta("u1", summary_text="S1 text")
    pair = (
        Message(
            Role.USER, "[Conversation compacted]", "c", is_compaction=True, compaction_meta=meta
        ),
        Message(Role.ASSISTANT, "S1 text", "s", is_summary=True),
    )
    text = render_transcript(pair, NOTHING).text
    assert text.count("S1 text") == 1
    assert "Previous summary: S1 text" in text
    assert "[Conversation compacted]" not in text


def test_compaction_marker_without_summary_message_contributes_its_stored_text() -> None:
    meta = CompactionMeta("u1", summary_text="kept facts")
    marker = Message(Role.USER, "[compacted]", "c", is_compaction=True, compaction_meta=meta)
    assert "Previous summary: kept facts" in render_transcript((marker,), NOTHING).text


def test_rendering_is_deterministic_and_counts_messages() -> None:
    first = render_transcript(CHAT, RedactionPolicy())
    second = render_transcript(CHAT, RedactionPolicy())
    assert first == second
    assert first.messages == len(CHAT)
