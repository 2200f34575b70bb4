"""The summarize strategy: trigger, compaction pair, chains, tool-safe cuts, redaction."""

from __future__ import annotations

import copy
import dataclasses
import re

import orjson
import pytest
from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given
from hypothesis import strategies as st
from secretgen import Planted, planted_in, secrets

import ctxlab.strategies.summarize as summarize_module
from ctxlab.counted import CountedChat
from ctxlab.errors import ParameterError, SummarizerError
from ctxlab.model import CompactionMeta, Message, Role, ToolCall
from ctxlab.strategies import Decision, build_strategy, current_params, with_params
from ctxlab.strategies.summarize import (
    DEFAULT_SUMMARY_PROMPT,
    Summarize,
    SummarizeOptions,
    build_summary_request,
    summarize_history,
)
from ctxlab.summarizers import OfflineSummarizer, ScriptedSummarizer, SummaryRequest
from ctxlab.tokens import TokenCounter
from ctxlab.transcript import PREVIOUS_SUMMARY_HEADING


def long_chat(turns: int = 8, prefix: str = "") -> list[Message]:
    """A system prompt, then turns of user / tool call / tool result / assistant answer."""
    out: list[Message] = [system("You are a careful coding agent.", f"{prefix}sys")]
    out.extend(turn_messages(turns, prefix))
    return out


def turn_messages(turns: int, prefix: str, start: int = 0) -> list[Message]:
    out: list[Message] = []
    for k in range(start, start + turns):
        p = f"{prefix}{k}"
        out += [
            user(f"Turn {k}: please fix bug #{k} in src/module_{k}.py.", f"u{p}"),
            assistant("", f"a{p}", call(f"c{p}", "read_file", f'{{"path": "src/module_{k}.py"}}')),
            tool(f"def handler_{k}():\n    raise ValueError('bad input {k}')", f"t{p}", f"c{p}"),
            assistant(f"Fixed bug #{k}: handler_{k} now validates input.", f"r{p}"),
        ]
    return out


def opts(**changes: object) -> SummarizeOptions:
    base = {"trigger_token_budget": 0, "keep_recent_messages": 4}
    base.update(changes)
    return SummarizeOptions(**base)  # type: ignore[arg-type]


def request_json(request: SummaryRequest) -> str:
    """Everything a request holds, serialized: the body as sent plus the redaction counts."""
    body = orjson.dumps(request.body()).decode()
    return body + repr(request) + request.system_prompt + request.transcript


def assert_tool_results_have_their_calls(messages: tuple[Message, ...]) -> None:
    called: set[str | None] = set()
    for m in messages:
        called.update(c.id for c in m.tool_calls)
        if m.role.is_tool_result:
            assert m.tool_call_id in called, f"{m.id} lost its call"


# -- trigger ---------------------------------------------------------------------------------


def test_at_the_trigger_nothing_happens_and_no_summarizer_is_called(counter: TokenCounter) -> None:
    chat = long_chat()
    total = counter.count_messages(chat)
    scripted = ScriptedSummarizer([])
    assert summarize_history(chat, opts(trigger_token_budget=total), counter, scripted) is None
    result = Summarize(opts(trigger_token_budget=total)).apply(chat, counter, scripted)
    assert result.messages == tuple(chat)
    assert set(result.decisions.values()) == {Decision.KEPT}
    assert not result.replace and result.summary_request is None
    assert result.tokens_before == result.tokens_after == total
    assert scripted.requests == []


def test_one_token_over_the_trigger_summarizes(counter: TokenCounter) -> None:
    chat = long_chat()
    total = counter.count_messages(chat)
    result = summarize_history(
        chat, opts(trigger_token_budget=total - 1), counter, ScriptedSummarizer(["S"])
    )
    assert result is not None and result.replace


# -- the compaction pair -----------------------------------------------------------------------


def test_result_is_preamble_then_compaction_pair_then_kept_tail(counter: TokenCounter) -> None:
    chat = long_chat()
    scripted = ScriptedSummarizer(["- fixed bugs 0-5"])
    result = summarize_history(chat, opts(), counter, scripted)
    assert result is not None
    first, pair, tail = result.messages[0], result.messages[1:3], result.messages[3:]
    assert first is chat[0]
    assert tail == tuple(chat[-4:])
    compaction, summary = pair
    assert compaction.role is Role.USER and compaction.is_compaction
    assert compaction.content == "[Conversation compacted: 28 earlier messages summarized]"
    assert compaction.compaction_meta == CompactionMeta(
        tail_start_id=chat[-4].id, previous_compaction_id=None, summary_text="- fixed bugs 0-5"
    )
    assert summary.role is Role.ASSISTANT and summary.is_summary
    assert summary.content == "- fixed bugs 0-5"
    assert result.inserted == pair


def test_decisions_pin_preamble_summarize_folded_keep_tail(counter: TokenCounter) -> None:
    chat = long_chat()
    result = summarize_history(chat, opts(), counter, ScriptedSummarizer(["S"]))
    assert result is not None
    assert result.decisions[chat[0].id] is Decision.PINNED
    assert all(result.decisions[m.id] is Decision.SUMMARIZED for m in chat[1:-4])
    assert all(result.decisions[m.id] is Decision.KEPT for m in chat[-4:])
    assert set(result.decisions) == {m.id for m in chat}


def test_summary_request_is_the_object_sent_and_equals_the_preview(counter: TokenCounter) -> None:
    chat = long_chat()
    scripted = ScriptedSummarizer(["S"])
    result = summarize_history(chat, opts(), counter, scripted)
    assert result is not None
    assert result.summary_request is scripted.requests[0]
    built = build_summary_request(chat, opts(), counter, scripted.model)
    assert built is not None
    preview, _plan = built
    assert preview == result.summary_request
    assert orjson.dumps(preview.body()) == orjson.dumps(result.summary_request.body())
    strategy_preview = Summarize(opts()).request_preview(chat, counter, scripted.model)
    assert strategy_preview == preview


def test_request_holds_prompt_transcript_model_and_max_tokens(counter: TokenCounter) -> None:
    chat = long_chat()
    scripted = ScriptedSummarizer(["S"])
    summarize_history(chat, opts(summary_max_tokens=300), counter, scripted, model="gpt-4o-mini")
    request = scripted.requests[0]
    body = request.body()
    assert body["model"] == "gpt-4o-mini"
    assert body["max_tokens"] == 300
    assert body["messages"][0] == {"role": "system", "content": DEFAULT_SUMMARY_PROMPT}
    assert body["messages"][1]["role"] == "user"
    assert "User: Turn 0: please fix bug #0 in src/module_0.py." in request.transcript
    assert "Turn 7" not in request.transcript  # the kept tail is not summarized
    assert "You are a careful coding agent." not in request.transcript  # pinned


def test_tokens_after_is_the_count_of_the_new_history(counter: TokenCounter) -> None:
    chat = long_chat()
    result = summarize_history(chat, opts(), counter, ScriptedSummarizer(["S"]))
    assert result is not None
    assert result.tokens_before == counter.count_messages(chat)
    assert result.tokens_after == counter.count_messages(result.messages)
    assert result.tokens_after < result.tokens_before


def test_pair_ids_are_deterministic_and_unique(counter: TokenCounter) -> None:
    chat = long_chat()
    one = summarize_history(chat, opts(), counter, ScriptedSummarizer(["S"]))
    two = summarize_history(chat, opts(), counter, ScriptedSummarizer(["S"]))
    other = summarize_history(chat, opts(), counter, ScriptedSummarizer(["T"]))
    assert one is not None and two is not None and other is not None
    assert [m.id for m in one.inserted] == [m.id for m in two.inserted]
    assert {m.id for m in one.inserted}.isdisjoint(m.id for m in other.inserted)
    ids = [m.id for m in one.messages]
    assert len(ids) == len(set(ids))


def test_keep_zero_folds_everything_after_the_preamble(counter: TokenCounter) -> None:
    chat = long_chat(3)
    result = summarize_history(
        chat, opts(keep_recent_messages=0), counter, ScriptedSummarizer(["S"])
    )
    assert result is not None
    assert len(result.messages) == 3
    meta = result.messages[1].compaction_meta
    assert meta is not None and meta.tail_start_id is None


def test_developer_messages_in_the_preamble_are_pinned_too(counter: TokenCounter) -> None:
    chat = [long_chat()[0], Message(Role.DEVELOPER, "Always answer in English.", "dev")]
    chat += turn_messages(4, "")
    result = summarize_history(chat, opts(), counter, ScriptedSummarizer(["S"]))
    assert result is not None
    assert result.messages[:2] == tuple(chat[:2])
    assert result.decisions["dev"] is Decision.PINNED


def test_nothing_to_fold_is_a_no_op_with_a_warning(counter: TokenCounter) -> None:
    chat = long_chat(2)
    options = opts(keep_recent_messages=100)
    assert summarize_history(chat, options, counter, ScriptedSummarizer([])) is None
    result = Summarize(options).apply(chat, counter, ScriptedSummarizer([]))
    assert result.messages == tuple(chat) and not result.replace
    assert any("nothing can be summarized" in w for w in result.warnings)


def test_a_huge_fold_warns_that_the_transcript_may_not_fit(
    counter: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(summarize_module, "LARGE_TRANSCRIPT_TOKENS", 50)
    result = summarize_history(long_chat(), opts(), counter, ScriptedSummarizer(["S"]))
    assert result is not None
    assert any("more than many summarizer models accept" in w for w in result.warnings)


# -- tool pairs --------------------------------------------------------------------------------


def test_cut_inside_tool_results_moves_back_to_the_calling_assistant(counter: TokenCounter) -> None:
    chat = long_chat()
    # The last 6 messages start at the previous turn's tool result: its call must stay with it.
    result = summarize_history(
        chat, opts(keep_recent_messages=6), counter, ScriptedSummarizer(["S"])
    )
    assert result is not None
    tail = result.messages[3:]
    assert tail == tuple(chat[-7:])
    assert tail[0].tool_calls
    assert any("cut moved back" in w for w in result.warnings)
    assert_tool_results_have_their_calls(result.messages)


def test_parallel_tool_calls_stay_with_all_their_results(counter: TokenCounter) -> None:
    calls = (ToolCall("x1", "search", "{}"), ToolCall("x2", "search", "{}"))
    chat = [
        *long_chat(3),
        user("search twice", "uq"),
        Message(Role.ASSISTANT, "", "aq", tool_calls=calls),
        tool("one", "tq1", "x1"),
        tool("two", "tq2", "x2"),
        assistant("done", "rq"),
    ]
    for keep in range(1, 5):
        result = summarize_history(
            chat, opts(keep_recent_messages=keep), counter, ScriptedSummarizer(["S"])
        )
        assert result is not None
        assert_tool_results_have_their_calls(result.messages)


@given(chats(min_turns=1, max_turns=4), st.integers(0, 8))
def test_no_kept_tool_result_ever_loses_its_call(
    counter: TokenCounter, chat: tuple[Message, ...], keep: int
) -> None:
    result = Summarize(opts(keep_recent_messages=keep)).apply(
        chat, counter, ScriptedSummarizer(["S"])
    )
    assert_tool_results_have_their_calls(result.messages)
    assert set(result.decisions) == {m.id for m in chat}
    if result.replace:
        assert result.tokens_after == counter.count_messages(result.messages)


# -- chains ------------------------------------------------------------------------------------


def test_three_compactions_chain_links_and_feed_each_summary_back(counter: TokenCounter) -> None:
    scripted = ScriptedSummarizer(["SUMMARY-ONE", "SUMMARY-TWO", "SUMMARY-THREE"])
    history: list[Message] = long_chat(4)
    compactions: list[Message] = []
    for round_number in range(3):
        if round_number:
            history += turn_messages(4, "", start=10 * round_number)
        result = summarize_history(history, opts(), counter, scripted)
        assert result is not None
        compactions.append(result.inserted[0])
        old_pairs = [m for m in history if m.is_compaction or m.is_summary]
        assert all(result.decisions[m.id] is Decision.SUMMARIZED for m in old_pairs)
        history = list(result.messages)
        assert sum(m.is_compaction for m in history) == 1
        assert sum(m.is_summary for m in history) == 1

    metas = [c.compaction_meta for c in compactions]
    assert all(meta is not None for meta in metas)
    assert metas[0].previous_compaction_id is None  # type: ignore[union-attr]
    assert metas[1].previous_compaction_id == compactions[0].id  # type: ignore[union-attr]
    assert metas[2].previous_compaction_id == compactions[1].id  # type: ignore[union-attr]
    assert [m.summary_text for m in metas] == [  # type: ignore[union-attr]
        "SUMMARY-ONE",
        "SUMMARY-TWO",
        "SUMMARY-THREE",
    ]

    first, second, third = (r.transcript for r in scripted.requests)
    assert PREVIOUS_SUMMARY_HEADING not in first
    assert f"{PREVIOUS_SUMMARY_HEADING}\nSUMMARY-ONE\n" in second
    assert f"{PREVIOUS_SUMMARY_HEADING}\nSUMMARY-TWO\n" in third
    # Each compaction folds only what came after the previous one.
    assert "Turn 0:" in first and "Turn 0:" not in second and "Turn 0:" not in third
    assert "Turn 10:" in second and "Turn 10:" not in third
    assert "Turn 20:" in third
    assert "SUMMARY-ONE" not in third


def test_previous_summary_is_read_from_the_summary_message_when_meta_has_none(
    counter: TokenCounter,
) -> None:
    pair = [
        Message(
            Role.USER,
            "[compacted]",
            "cmp",
            is_compaction=True,
            compaction_meta=CompactionMeta("u0"),
        ),
        Message(Role.ASSISTANT, "OLD FACTS", "sum", is_summary=True),
    ]
    history = [long_chat()[0], *pair, *turn_messages(4, "")]
    scripted = ScriptedSummarizer(["NEW"])
    result = summarize_history(history, opts(), counter, scripted)
    assert result is not None
    assert f"{PREVIOUS_SUMMARY_HEADING}\nOLD FACTS\n" in scripted.requests[0].transcript
    meta = result.inserted[0].compaction_meta
    assert meta is not None and meta.previous_compaction_id == "cmp"
    assert result.decisions["cmp"] is Decision.SUMMARIZED
    assert result.decisions["sum"] is Decision.SUMMARIZED


# -- failures and immutability ------------------------------------------------------------------


class Exploding:
    name = "exploding"
    model = "boom"

    def summarize(self, request: SummaryRequest) -> object:
        raise ValueError("network fell over, key sk-abcdefghijklmnopqrstuvwxyz123456")


@pytest.mark.parametrize(
    ("summarizer", "expected"),
    [
        (ScriptedSummarizer([SummarizerError("server down")]), "server down"),
        (ScriptedSummarizer(["   "]), "empty summary"),
        (Exploding(), "exploding summarizer failed (ValueError"),
    ],
    ids=["summarizer-error", "empty", "protocol-breaking"],
)
def test_a_failing_summarizer_raises_and_leaves_the_history_unchanged(
    counter: TokenCounter, summarizer: object, expected: str
) -> None:
    chat = long_chat()
    before = copy.deepcopy(chat)
    with pytest.raises(SummarizerError, match=re.escape(expected)) as caught:
        Summarize(opts()).apply(chat, counter, summarizer)  # type: ignore[arg-type]
    assert chat == before
    assert "sk-abcdefghijklmnopqrstuvwxyz123456" not in str(caught.value)


def test_after_a_failure_the_same_call_succeeds_unchanged(counter: TokenCounter) -> None:
    chat = long_chat()
    scripted = ScriptedSummarizer([SummarizerError("flaky"), "S"])
    with pytest.raises(SummarizerError):
        summarize_history(chat, opts(), counter, scripted)
    result = summarize_history(chat, opts(), counter, scripted)
    assert result is not None
    assert scripted.requests[0] == scripted.requests[1]


@given(chats(min_turns=0, max_turns=4), st.integers(0, 6), st.integers(0, 400))
def test_inputs_are_never_mutated(
    counter: TokenCounter, chat: tuple[Message, ...], keep: int, trigger: int
) -> None:
    as_list = list(chat)
    snapshot = copy.deepcopy(as_list)
    options = opts(keep_recent_messages=keep, trigger_token_budget=trigger)
    Summarize(options).apply(as_list, counter, ScriptedSummarizer(["S"]))
    assert as_list == snapshot
    assert [m.id for m in as_list] == [m.id for m in snapshot]


def test_without_a_summarizer_the_offline_one_is_used_and_said(counter: TokenCounter) -> None:
    result = Summarize(opts()).apply(long_chat(), counter)
    assert result.replace
    assert result.inserted[1].content.startswith(OfflineSummarizer.HEADER)
    assert any("offline extractive summarizer" in w for w in result.warnings)
    assert result.summary_request is not None
    assert result.summary_request.model == OfflineSummarizer.model


# -- redaction in the request ------------------------------------------------------------------

KEY = "sk-proj-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1JkLzXcVbNm0123456789"
AWS = "AKIAZ7QW3ER5TY7UI9OP"
PEM_LINE = "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjMq9x8"


def secret_chat() -> list[Message]:
    return [
        system(f"Deploy with {AWS} (pinned, never sent)", "sys"),
        user("Deploy the service please.", "u1"),
        assistant(
            "",
            "a1",
            call("c1", "deploy", f'{{"api_key": "{KEY}", "region": "eu-west-1"}}'),
        ),
        tool(f"OPENAI_API_KEY={KEY}\n-----BEGIN PRIVATE KEY-----\n{PEM_LINE}\n", "t1", "c1"),
        Message(Role.SYSTEM, f"Mid-chat note: rotate {AWS} tomorrow.", "sys2"),
        assistant("Deployed to eu-west-1.", "a2"),
        *turn_messages(2, "z"),
    ]


@pytest.mark.parametrize("patterns", [True, False], ids=["patterns", "roles-only"])
def test_planted_secrets_never_reach_the_request(counter: TokenCounter, patterns: bool) -> None:
    options = opts(
        keep_recent_messages=2,
        redact_roles=(Role.TOOL, Role.SYSTEM),
        redact_patterns=patterns,
    )
    scripted = ScriptedSummarizer(["S"])
    result = summarize_history(secret_chat(), options, counter, scripted)
    assert result is not None
    sent = request_json(scripted.requests[0])
    for secret in (KEY, KEY[8:30], AWS, PEM_LINE):
        assert secret not in sent
    assert "deploy(" in sent  # tool names stay
    assert result.decisions["sys2"] is Decision.SUMMARIZED


def test_patterns_alone_mask_secrets_in_every_role(counter: TokenCounter) -> None:
    options = opts(
        keep_recent_messages=2, redact_tool_content=False, redact_roles=(), redact_patterns=True
    )
    scripted = ScriptedSummarizer(["S"])
    summarize_history(secret_chat(), options, counter, scripted)
    request = scripted.requests[0]
    sent = request_json(request)
    for secret in (KEY, KEY[8:30], AWS, PEM_LINE):
        assert secret not in sent
    assert "eu-west-1" in sent  # ordinary tool arguments are still there
    assert request.redactions["openai-key"] == 2
    assert request.redactions["aws-access-key-id"] == 1
    assert request.redactions["private-key"] == 1


def test_without_any_redaction_secrets_would_be_sent(counter: TokenCounter) -> None:
    # Guards the tests above: the chat really does plant secrets in what gets folded.
    options = opts(
        keep_recent_messages=2, redact_tool_content=False, redact_roles=(), redact_patterns=False
    )
    scripted = ScriptedSummarizer(["S"])
    summarize_history(secret_chat(), options, counter, scripted)
    sent = request_json(scripted.requests[0])
    assert KEY in sent and AWS in sent and PEM_LINE in sent


@st.composite
def chats_with_a_planted_secret(draw: st.DrawFn) -> tuple[list[Message], Planted]:
    chat = list(draw(chats(min_turns=1, max_turns=3)))
    planted = draw(secrets())
    targets = [("content", i) for i in range(len(chat))]
    targets += [("arguments", i) for i, m in enumerate(chat) if m.tool_calls]
    targets += [("previous-summary", -1), ("name", draw(st.integers(0, len(chat) - 1)))]
    where, index = draw(st.sampled_from(targets))
    if where == "previous-summary":
        summary = draw(planted_in(planted))
        meta = CompactionMeta(chat[0].id, summary_text=summary)
        pair = [
            Message(Role.USER, "[compacted]", "cmp", is_compaction=True, compaction_meta=meta),
            Message(Role.ASSISTANT, summary, "sum", is_summary=True),
        ]
        start = 1 if chat[0].role is Role.SYSTEM else 0
        return [*chat[:start], *pair, *chat[start:]], planted
    message = chat[index]
    if where == "content":
        text = message.content
        at = draw(st.integers(0, len(text)))
        chat[index] = message.replace(content=text[:at] + draw(planted_in(planted)) + text[at:])
    elif where == "arguments":
        calls = list(message.tool_calls)
        k = draw(st.integers(0, len(calls) - 1))
        calls[k] = dataclasses.replace(calls[k], arguments=draw(planted_in(planted)))
        chat[index] = message.replace(tool_calls=tuple(calls))
    else:
        chat[index] = message.replace(name=draw(planted_in(planted)))
    return chat, planted


@given(
    chats_with_a_planted_secret(),
    st.booleans(),
    st.lists(st.sampled_from(list(Role)), max_size=3).map(tuple),
)
def test_a_planted_secret_never_appears_in_the_request(
    counter: TokenCounter,
    case: tuple[list[Message], Planted],
    redact_tool_content: bool,
    redact_roles: tuple[Role, ...],
) -> None:
    chat, planted = case
    options = opts(
        keep_recent_messages=0,
        redact_tool_content=redact_tool_content,
        redact_roles=redact_roles,
        redact_patterns=True,
    )
    built = build_summary_request(chat, options, counter, "m")
    if built is None:
        return  # only a pinned preamble: nothing is sent at all
    request, _plan = built
    assert planted.secret not in request_json(request)


# -- registry, parameters and suggestions -------------------------------------------------------


def test_registry_builds_summarize_from_cli_strings() -> None:
    strategy = build_strategy(
        "summarize",
        {"trigger_token_budget": "5000", "redact_roles": "tool,system", "summary_max_tokens": ""},
    )
    assert isinstance(strategy, Summarize)
    assert strategy.options.trigger_token_budget == 5000
    assert strategy.options.redact_roles == (Role.TOOL, Role.SYSTEM)
    assert strategy.options.summary_max_tokens is None
    assert strategy.uses_summarizer
    params = current_params(strategy)
    assert set(params) == {f.name for f in dataclasses.fields(SummarizeOptions)}
    changed = with_params(strategy, {"keep_recent_messages": 9})
    assert isinstance(changed, Summarize) and changed.options.keep_recent_messages == 9


@pytest.mark.parametrize(
    "params",
    [
        {"trigger_token_budget": "-1"},
        {"keep_recent_messages": "-2"},
        {"summary_max_tokens": "0"},
        {"summary_system_prompt": "   "},
        {"redact_roles": "wizard"},
    ],
)
def test_bad_parameters_raise_parameter_error(params: dict[str, str]) -> None:
    with pytest.raises(ParameterError):
        build_strategy("summarize", params)


def test_suggested_parameters_act_on_the_chat(counter: TokenCounter) -> None:
    chat = long_chat(20)
    counted: CountedChat = counter.counted(chat)
    strategy = Summarize.suggested(counted)
    assert strategy.options.keep_recent_messages == 6
    assert 0.5 * counted.total <= strategy.options.trigger_token_budget <= 0.6 * counted.total
    result = strategy.apply(chat, counter, ScriptedSummarizer(["S"]))
    assert result.replace
