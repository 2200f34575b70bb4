"""google-adk-compaction: parameters, trigger sentence, configuration code, decisions, the
summarizer request and failure, checked without the framework (test_oracle_google_adk.py runs
ADK itself)."""

from __future__ import annotations

import copy

import pytest
from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import Message
from ctxlab.strategies.base import Decision
from ctxlab.strategies.frameworks.google_adk_compaction import (
    ESTIMATE_QUIRK,
    NO_TRIGGER,
    SUMMARY_PROMPT_TEMPLATE,
    GoogleAdkCompaction,
    adk_contents_of,
)
from ctxlab.strategies.registry import build_strategy, strategy_names
from ctxlab.summarizers import ScriptedSummarizer
from ctxlab.tokens import get_counter

COUNTER = get_counter()


def _turns(n: int) -> tuple[Message, ...]:
    """A system prompt and ``n`` invocations: a user message, a tool call, its result, a reply."""
    out: list[Message] = [system("Be brief.")]
    for k in range(n):
        out += [
            user(f"question {k} " + "word " * 30, f"u{k}"),
            assistant("", f"a{k}", call(f"c{k}", "search", f'{{"q": "topic {k}"}}')),
            tool(f"result {k} " + "data " * 40, f"t{k}", f"c{k}"),
            assistant(f"answer {k}", f"r{k}"),
        ]
    return tuple(out)


def test_registered_with_adk_names_and_defaults() -> None:
    assert "google-adk-compaction" in strategy_names()
    strategy = build_strategy("google-adk-compaction", {})
    assert strategy == GoogleAdkCompaction()
    assert GoogleAdkCompaction.suggested(COUNTER.counted(_turns(2))) == GoogleAdkCompaction()
    policy = GoogleAdkCompaction.framework_policy
    assert policy.version == "google-adk 2.13.0" and policy.evidence == "oracle"
    assert policy.persists == "state"


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"compaction_interval": 2}, "compaction_interval and overlap_size"),
        ({"overlap_size": 1}, "compaction_interval and overlap_size"),
        ({"token_threshold": 100}, "token_threshold and event_retention_size"),
        ({"event_retention_size": 0}, "token_threshold and event_retention_size"),
        ({"compaction_interval": 0, "overlap_size": 0}, "compaction_interval"),
        ({"compaction_interval": 1, "overlap_size": -1}, "overlap_size"),
        ({"token_threshold": 0, "event_retention_size": 1}, "token_threshold"),
    ],
)
def test_pairs_and_ranges_as_adk_validates_them(params: dict[str, int], named: str) -> None:
    with pytest.raises(ParameterError, match=named):
        GoogleAdkCompaction(**params)  # type: ignore[arg-type]


def test_default_compacts_nothing_and_says_why() -> None:
    chat = _turns(5)
    result = GoogleAdkCompaction().apply(chat, COUNTER, ScriptedSummarizer([]))
    assert result.messages == chat
    assert not result.inserted and result.summary_request is None
    assert set(result.decisions.values()) == {Decision.PINNED, Decision.KEPT}
    assert NO_TRIGGER in result.warnings
    report = GoogleAdkCompaction().trigger_report(chat, COUNTER)
    assert not report.fires and report.threshold is None
    assert report.text == NO_TRIGGER
    note = GoogleAdkCompaction().opening_note(COUNTER.counted(chat))
    assert "nothing is compacted on this chat's 5 invocations" in note
    assert GoogleAdkCompaction(3, 1).opening_note(COUNTER.counted(chat)) == ""


def test_sliding_window_rolls_as_adk_documents() -> None:
    """interval 2, overlap 1: summaries of invocations 1-2, then 2-4 (ADK's docstring example);
    the second supersedes nothing (ranges overlap), both stay visible at their range ends."""
    chat = _turns(4)
    summarizer = ScriptedSummarizer(["S1", "S2"])
    result = GoogleAdkCompaction(2, 1).apply(chat, COUNTER, summarizer)
    assert len(summarizer.requests) == 2
    first, second = (r.messages[0]["content"] for r in summarizer.requests)
    assert "question 0" in first and "question 1" in first and "question 2" not in first
    assert "question 1" in second and "question 3" in second and "question 0" not in second
    assert [m.content for m in result.inserted] == ["S1", "S2"]
    # append-only: the prompt is a view of the whole session, recomputed on every call
    assert not result.replace and result.messages[0].id == "sys"
    # everything of invocations 1-4 is hidden; the summaries sit where their ranges end
    assert [m.id for m in result.messages] == ["sys", "adk-summary-1", "adk-summary-2"]
    assert all(d is Decision.SUMMARIZED for k, d in result.decisions.items() if k != "sys")
    report = GoogleAdkCompaction(2, 1).trigger_report(chat, COUNTER)
    assert report.text == (
        "Compacts every 2 invocations with 1 of overlap: 2 compactions on this chat's "
        "4 invocations."
    )
    assert report.fires and report.unit == "invocations"


def test_summarizer_prompt_is_adks_with_python_reprs_and_caps() -> None:
    long_result = "z" * 2500
    chat = (
        user("hello", "u0"),
        assistant("looking", "a0", call("c0", "fetch", '{"url": "https://x.test"}')),
        tool(long_result, "t0", "c0"),
        assistant("done", "r0"),
        user("next", "u1"),
    )
    summarizer = ScriptedSummarizer(["S"])
    GoogleAdkCompaction(1, 0).apply(chat, COUNTER, summarizer)
    prompt = summarizer.requests[0].messages[0]["content"]
    head = SUMMARY_PROMPT_TEMPLATE.split("{conversation_history}")[0]
    response = "{'result': '" + "z" * 2500 + "'}"
    assert prompt == head + "\n".join(
        [
            "user: hello",
            "agent: looking",
            "agent called tool: fetch({'url': 'https://x.test'})",
            f"Tool response from fetch: {response[:2000]}... [truncated "
            f"{len(response) - 2000} chars]",
            "agent: done",
        ]
    )
    assert summarizer.requests[0].messages[0]["role"] == "user"
    assert len(summarizer.requests[0].messages) == 1


def test_token_path_keeps_retained_events_and_seeds_the_next_summary() -> None:
    chat = _turns(6)
    estimate = GoogleAdkCompaction().estimate(chat, COUNTER) or 0
    strategy = GoogleAdkCompaction(token_threshold=estimate // 3, event_retention_size=2)
    summarizer = ScriptedSummarizer(["FIRST", "SECOND", "THIRD", "FOURTH", "FIFTH"])
    result = strategy.apply(chat, COUNTER, summarizer)
    assert len(summarizer.requests) >= 2
    # the rolling summary: the next request starts from the previous summary, as the model
    second = summarizer.requests[1].messages[0]["content"]
    head = SUMMARY_PROMPT_TEMPLATE.split("{conversation_history}")[0]
    assert second.startswith(head + "model: FIRST\n")
    # only the newest summary is visible: it supersedes (contains) the earlier ranges
    assert len(result.inserted) == 1
    assert result.messages[1] is result.inserted[0]
    # the newest events stay raw after the summary (event_retention_size=2, moved earlier
    # when a retained result needs its call)
    kept = [m.id for m in result.messages if not m.is_summary and m.id != "sys"]
    assert kept and kept[-1] == "r5"
    assert ESTIMATE_QUIRK in result.warnings
    report = strategy.trigger_report(chat, COUNTER)
    assert report.unit == "tokens" and report.estimate == estimate
    assert report.exact == COUNTER.count_messages(chat)
    assert f"reaches {estimate // 3:,} tokens" in report.text


def test_a_failing_summarizer_leaves_the_history_as_adk_does() -> None:
    chat = _turns(3)
    summarizer = ScriptedSummarizer([SummarizerError("down"), SummarizerError("down")])
    result = GoogleAdkCompaction(2, 0).apply(chat, COUNTER, summarizer)
    assert result.messages == chat and not result.inserted
    assert any("failed" in w and "uncompacted" in w for w in result.warnings)


def test_redaction_is_off_by_default_and_masks_the_request_when_on() -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4Q5r6S7t8"
    chat = (user(f"my key is {secret}", "u0"), assistant("noted", "a0"), user("go", "u1"))
    plain = ScriptedSummarizer(["S"])
    GoogleAdkCompaction(1, 0).apply(chat, COUNTER, plain)
    assert secret in plain.requests[0].messages[0]["content"]
    masked = ScriptedSummarizer(["S"])
    GoogleAdkCompaction(1, 0, redact_request=True).apply(chat, COUNTER, masked)
    assert secret not in masked.requests[0].messages[0]["content"]
    assert masked.requests[0].redactions


def test_config_code_is_adks_app() -> None:
    code = GoogleAdkCompaction(3, 1, 50_000, 4).config_code()
    assert "from google.adk.apps.app import App, EventsCompactionConfig" in code
    for line in (
        "compaction_interval=3,",
        "overlap_size=1,",
        "token_threshold=50000,",
        "event_retention_size=4,",
    ):
        assert line in code
    compile(code, "<config>", "exec")
    default = GoogleAdkCompaction().config_code()
    assert "EventsCompactionConfig(" not in default and "compacts nothing" in default
    compile(default, "<config>", "exec")


def test_request_preview_is_the_first_request() -> None:
    chat = _turns(3)
    preview = GoogleAdkCompaction(2, 0).request_preview(chat, COUNTER, "gemini-2.5-flash")
    summarizer = ScriptedSummarizer(["S"], model="gemini-2.5-flash")
    GoogleAdkCompaction(2, 0).apply(chat, COUNTER, summarizer)
    assert preview == summarizer.requests[0]
    assert GoogleAdkCompaction().request_preview(chat, COUNTER) is None


def test_contents_of_a_result_group_parallel_results() -> None:
    chat = (
        user("hi", "u0"),
        assistant("two", "a0", call("c0", "f", "{}"), call("c1", "g", '{"x": 1}')),
        tool("r0", "t0", "c0"),
        tool("r1", "t1", "c1"),
    )
    contents = adk_contents_of(chat)
    assert [c.role for c in contents] == ["user", "model", "user"]
    assert contents[1].parts == (("text", "two"), ("call", "f", "{}"), ("call", "g", '{"x": 1}'))
    assert contents[2].parts == (
        ("response", "f", '{"result": "r0"}'),
        ("response", "g", '{"result": "r1"}'),
    )


SETTINGS = st.sampled_from(
    [GoogleAdkCompaction(), GoogleAdkCompaction(1, 0), GoogleAdkCompaction(2, 1)]
    + [
        GoogleAdkCompaction(token_threshold=t, event_retention_size=r)
        for t in (5, 60)
        for r in (0, 3)
    ]
)


@settings(max_examples=60, deadline=None)
@given(chat=chats(max_turns=5), strategy=SETTINGS)
def test_decisions_cover_every_message_and_input_is_untouched(
    chat: tuple[Message, ...], strategy: GoogleAdkCompaction
) -> None:
    before = copy.deepcopy(chat)
    summarizer = ScriptedSummarizer(["SUMMARY"] * 50)
    result = strategy.apply(chat, COUNTER, summarizer)
    assert chat == before
    assert list(result.decisions) == [m.id for m in chat]
    sent = {m.id for m in result.messages}
    for m in chat:
        decision = result.decisions[m.id]
        assert (m.id in sent) == decision.is_sent, (m.id, decision)
    assert len(result.inserted) <= len(summarizer.requests)
    assert result.tokens_after == COUNTER.count_messages(result.messages)
    # chatgen chats pair every call with its result: nothing is dropped, only summarized
    assert Decision.DROPPED not in set(result.decisions.values()) or any(
        not m.content and not m.tool_calls for m in chat
    )


def test_replay_recomputes_every_call_from_the_whole_chat() -> None:
    """A later call sees what ADK would show after the invocations so far, whatever earlier
    calls returned (the raw events stay in the session)."""
    from ctxlab.replay import replay

    chat = _turns(4)
    strategy = GoogleAdkCompaction(2, 1)
    run = replay(chat, strategy, COUNTER, summarizer=ScriptedSummarizer(["S"] * 100))
    last_call = run.rows[-1]
    expected = strategy.apply(
        chat[: last_call.message_index], COUNTER, ScriptedSummarizer(["S"] * 100)
    )
    assert last_call.messages_sent == len(expected.messages)
    assert last_call.tokens_sent == expected.tokens_after
