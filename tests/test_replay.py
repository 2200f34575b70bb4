"""Replay: a strategy before every assistant turn, projection and replacement, with costs."""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from chatgen import assistant, budgets, call, chats, system, tool, user
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.encodings import load_encoding
from ctxlab.errors import SummarizerError
from ctxlab.model import Message, Role
from ctxlab.pricing import DEFAULT_PRICES, ModelPrice, PriceTable
from ctxlab.replay import COLUMNS, Replay, assistant_turns, replay
from ctxlab.strategies import (
    Decision,
    Strategy,
    TrimResult,
    build_strategy,
    get_strategy_class,
    strategy_names,
)
from ctxlab.strategies.sliding_window import SlidingWindow
from ctxlab.strategies.window_drop import WindowDrop
from ctxlab.summarizers import Summarizer, SummaryRequest, SummaryResponse
from ctxlab.tokens import ACCOUNTING_O200K, TiktokenCounter, TokenCounter


def fresh_counter() -> TiktokenCounter:
    """A gpt-4o counter with empty caches (the shared one remembers other tests' texts)."""
    return TiktokenCounter("gpt-4o", load_encoding("o200k_base"), ACCOUNTING_O200K)


def oracle_rows(
    messages: Sequence[Message], strategy: Strategy, counter: TokenCounter
) -> list[tuple[int, int, int, int, int]]:
    """The naive replay: apply the strategy to the history before every assistant message."""
    out = []
    for i, m in enumerate(messages):
        if m.role is Role.ASSISTANT and not m.is_summary:
            r = strategy.apply(messages[:i], counter)
            out.append((i, i, r.tokens_before, len(r.messages), r.tokens_after))
    return out


def rows_of(result: Replay) -> list[tuple[int, int, int, int, int]]:
    return [
        (r.message_index, r.messages_untrimmed, r.tokens_untrimmed, r.messages_sent, r.tokens_sent)
        for r in result.rows
    ]


# -- projections equal the naive oracle ------------------------------------------------------


@given(chat=chats(max_turns=8), data=st.data())
def test_window_drop_replay_equals_applying_it_to_every_prefix(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    budget = data.draw(budgets(counter.count_messages(chat)))
    strategy = WindowDrop(budget=budget)
    assert rows_of(replay(chat, strategy, counter)) == oracle_rows(chat, strategy, counter)


@given(chat=chats(max_turns=8), data=st.data())
def test_window_drop_keeping_the_system_prompt_replays_like_the_oracle(
    chat: tuple[Message, ...], data: st.DataObject, counter: TokenCounter
) -> None:
    budget = data.draw(budgets(counter.count_messages(chat)))
    strategy = WindowDrop(budget=budget, keep_system=True)
    assert rows_of(replay(chat, strategy, counter)) == oracle_rows(chat, strategy, counter)


@given(
    chat=chats(max_turns=8),
    window=st.integers(0, 12),
    trigger=st.one_of(st.none(), st.integers(0, 20)),
)
def test_sliding_window_replay_equals_applying_it_to_every_prefix(
    chat: tuple[Message, ...], window: int, trigger: int | None, counter: TokenCounter
) -> None:
    strategy = SlidingWindow(window=window, trigger_at=trigger)
    assert rows_of(replay(chat, strategy, counter)) == oracle_rows(chat, strategy, counter)


PROJECTIONS = [n for n in strategy_names() if not get_strategy_class(n).uses_summarizer]


@pytest.mark.parametrize("name", PROJECTIONS)
@settings(max_examples=40)
@given(chat=chats(min_turns=1, max_turns=6))
def test_every_projection_strategy_replays_like_the_oracle(
    name: str, chat: tuple[Message, ...], counter: TokenCounter
) -> None:
    strategy = get_strategy_class(name).suggested(counter.counted(chat))
    result = replay(chat, strategy, counter)
    assert rows_of(result) == oracle_rows(chat, strategy, counter)
    for row in result.rows:
        assert result.context_at(row.turn).tokens_after == row.tokens_sent


def test_turns_are_assistant_messages_numbered_from_one(counter: TokenCounter) -> None:
    chat = (
        system("be brief"),
        user("weather in Paris?", "u1"),
        assistant("", "a1", call("c1", "get_weather", '{"city": "Paris"}')),
        tool("18 C", "t1", "c1"),
        assistant("18 C and sunny.", "a2"),
        user("thanks", "u2"),
        assistant("You're welcome.", "a3"),
    )
    result = replay(chat, WindowDrop(budget=10_000), counter)
    assert [(r.turn, r.message_index) for r in result.rows] == [(1, 2), (2, 4), (3, 6)]
    assert [r.messages_untrimmed for r in result.rows] == [2, 4, 6]
    assert assistant_turns(chat) == [2, 4, 6]


def test_summary_messages_are_not_turns() -> None:
    chat = (
        Message(Role.USER, "old stuff", "c", is_compaction=True),
        Message(Role.ASSISTANT, "summary", "s", is_summary=True),
        user("next", "u"),
        assistant("ok", "a"),
    )
    assert assistant_turns(chat) == [3]


def test_turns_limits_the_replay_to_the_first_calls(counter: TokenCounter) -> None:
    chat = tuple(m for k in range(5) for m in (user(f"q{k}", f"u{k}"), assistant(f"a{k}", f"a{k}")))
    assert len(replay(chat, WindowDrop(budget=50), counter, turns=2)) == 2
    assert len(replay(chat, WindowDrop(budget=50), counter)) == 5


def test_chat_without_assistant_messages_has_no_rows(counter: TokenCounter) -> None:
    for chat in [(), (system("s"), user("hello", "u1"))]:
        result = replay(chat, WindowDrop(budget=100), counter)
        assert result.rows == ()
        assert result.total_cost == 0.0 and result.tokens_sent == 0
        assert result.to_csv().splitlines() == [",".join(COLUMNS)]


# -- linear time: nothing is tokenized again ---------------------------------------------------


@pytest.mark.parametrize(
    "strategy", [WindowDrop(budget=300), SlidingWindow(window=5)], ids=lambda s: s.name
)
def test_projection_replay_tokenizes_nothing_after_the_first_count(
    strategy: Strategy, empty_count_store: Path
) -> None:
    counter = fresh_counter()
    chat = tuple(
        m
        for k in range(40)
        for m in (
            user(f"question {k}", f"u{k}"),
            assistant("", f"c{k}", call(f"call{k}", "search", f'{{"q": "{k}"}}')),
            tool(f"result {k} " * 20, f"t{k}", f"call{k}"),
            assistant(f"answer {k}", f"a{k}"),
        )
    )
    counter.counted(chat)
    tokenized = counter.texts_tokenized
    assert tokenized > 0
    result = replay(chat, strategy, counter)
    assert len(result) == 80
    assert counter.texts_tokenized == tokenized


# -- cost --------------------------------------------------------------------------------------


def test_call_cost_is_tokens_sent_at_input_price_plus_reply_at_output_price(
    counter: TokenCounter,
) -> None:
    chat = tuple(
        m for k in range(6) for m in (user(f"q{k} " * 30, f"u{k}"), assistant(f"a{k}", f"a{k}"))
    )
    price = ModelPrice("test-model", 2.0, 1.0, 8.0)
    table = PriceTable.of([price])
    result = replay(chat, WindowDrop(budget=150), counter, model="test-model", prices=table)
    running = running_untrimmed = 0.0
    for row in result.rows:
        reply = counter.count_message(chat[row.message_index])
        assert row.output_tokens == reply
        expected = (row.tokens_sent * 2.0 + reply * 8.0) / 1e6
        assert row.call_cost == pytest.approx(expected)
        untrimmed = (row.tokens_untrimmed * 2.0 + reply * 8.0) / 1e6
        assert row.call_cost_untrimmed == pytest.approx(untrimmed)
        running += expected
        running_untrimmed += untrimmed
        assert row.cumulative_cost == pytest.approx(running)
        assert row.cumulative_cost_untrimmed == pytest.approx(running_untrimmed)
        assert row.summary_cost == 0.0
    assert result.total_cost == pytest.approx(running)
    assert result.total_cost is not None and result.total_cost_untrimmed is not None
    assert result.total_cost < result.total_cost_untrimmed
    assert result.price == price


def test_unpriced_model_gives_no_costs_and_a_warning(counter: TokenCounter) -> None:
    chat = (user("hi", "u"), assistant("hello", "a"))
    result = replay(chat, WindowDrop(budget=100), counter, model="my-local-llama")
    assert result.rows[0].call_cost is None and result.total_cost is None
    assert any("my-local-llama" in w for w in result.warnings)


def test_csv_and_dicts_hold_one_row_per_call(counter: TokenCounter) -> None:
    chat = tuple(m for k in range(3) for m in (user(f"q{k}", f"u{k}"), assistant(f"a{k}", f"a{k}")))
    result = replay(chat, WindowDrop(budget=40), counter)
    buffer = io.StringIO()
    text = result.to_csv(buffer)
    assert buffer.getvalue() == text
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["turn"]) for r in parsed] == [1, 2, 3]
    assert [int(r["tokens_sent"]) for r in parsed] == [r.tokens_sent for r in result.rows]
    assert result.rows_as_dicts()[0].keys() == set(COLUMNS)


# -- replacement strategies carry the compaction forward ---------------------------------------


class RecordingSummarizer:
    """Returns scripted texts in order and records every request."""

    name = "scripted"

    def __init__(self, texts: Sequence[str], model: str = "gpt-4o-mini") -> None:
        self.texts = list(texts)
        self.model = model
        self.requests: list[SummaryRequest] = []

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        self.requests.append(request)
        return SummaryResponse(self.texts[len(self.requests) - 1], 1000, 100, self.model)


class FailingSummarizer:
    name = "failing"
    model = "gpt-4o-mini"

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        raise SummarizerError("the server said 500")


@dataclass(frozen=True)
class FoldAllButLast(Strategy):
    """Test strategy: above ``max_messages``, fold all but the last message into one summary."""

    name: ClassVar[str] = "fold-all-but-last"
    title: ClassVar[str] = "fold"
    summary: ClassVar[str] = "fold"
    uses_summarizer: ClassVar[bool] = True
    max_messages: int = 4

    def apply(
        self,
        messages: Sequence[Message],
        counter: TokenCounter,
        summarizer: Summarizer | None = None,
    ) -> TrimResult:
        before = counter.count_messages(messages)
        if len(messages) <= self.max_messages:
            kept = dict.fromkeys((m.id for m in messages), Decision.KEPT)
            return TrimResult(tuple(messages), kept, before, before, strategy=self.name)
        assert summarizer is not None
        folded, tail = messages[:-1], messages[-1:]
        request = SummaryRequest(
            ({"role": "user", "content": "\n".join(m.content for m in folded)},)
        )
        response = summarizer.summarize(request)
        summary = Message(
            Role.ASSISTANT, response.text, f"summary-of-{folded[-1].id}", is_summary=True
        )
        decisions = dict.fromkeys((m.id for m in folded), Decision.SUMMARIZED)
        decisions.update(dict.fromkeys((m.id for m in tail), Decision.KEPT))
        out = (summary, *tail)
        return TrimResult(
            out,
            decisions,
            before,
            counter.count_messages(out),
            inserted=(summary,),
            replace=True,
            summary_request=request,
            strategy=self.name,
        )


TEN = tuple(
    user(f"question {k}", f"u{k}") if k % 2 == 0 else assistant(f"answer {k}", f"a{k}")
    for k in range(10)
)


def test_replacement_replay_carries_the_compacted_history_forward(
    counter: TokenCounter,
) -> None:
    summarizer = RecordingSummarizer(["SUMMARY ONE", "SUMMARY TWO"])
    result = replay(TEN, FoldAllButLast(), counter, summarizer=summarizer)
    # calls before messages 1, 3, 5, 7, 9; live histories:
    # [u0], [u0 a1 u2], [u0..u4] -> fold to [S1 u4], [S1 u4 a5 u6], [S1 u4 a5 u6 a7 u8] -> [S2 u8]
    assert [r.message_index for r in result.rows] == [1, 3, 5, 7, 9]
    assert [r.messages_sent for r in result.rows] == [1, 3, 2, 4, 2]
    assert [r.summarizer_calls for r in result.rows] == [0, 0, 1, 0, 1]
    assert [r.messages_untrimmed for r in result.rows] == [1, 3, 5, 7, 9]
    assert result.summarizer_calls == 2
    assert result.summary_input_tokens == 2000 and result.summary_output_tokens == 200
    first, second = (r.messages[0]["content"] for r in summarizer.requests)
    assert "question 0" in first
    assert "SUMMARY ONE" in second and "question 0" not in second
    assert result.replaces


def test_replacement_context_at_rebuilds_every_call_without_the_summarizer(
    counter: TokenCounter,
) -> None:
    summarizer = RecordingSummarizer(["SUMMARY ONE", "SUMMARY TWO"])
    result = replay(TEN, FoldAllButLast(), counter, summarizer=summarizer)
    assert len(summarizer.requests) == 2
    sent = [[m.id for m in result.context_at(t).messages] for t in range(1, 6)]
    assert sent == [
        ["u0"],
        ["u0", "a1", "u2"],
        ["summary-of-a3", "u4"],
        ["summary-of-a3", "u4", "a5", "u6"],
        ["summary-of-a7", "u8"],
    ]
    assert len(summarizer.requests) == 2  # nothing was summarized again
    for row in result.rows:
        assert result.context_at(row.turn).tokens_after == row.tokens_sent
    with pytest.raises(IndexError):
        result.context_at(6)


def test_summarizer_calls_are_costed_at_the_summarizer_model_price(
    counter: TokenCounter,
) -> None:
    summarizer = RecordingSummarizer(["S1", "S2"], model="gpt-4o-mini")
    result = replay(TEN, FoldAllButLast(), counter, summarizer=summarizer, model="gpt-4o")
    mini = DEFAULT_PRICES.get("gpt-4o-mini")
    assert mini is not None
    fired = [r for r in result.rows if r.summarizer_calls]
    assert all(r.summary_cost == pytest.approx(mini.cost(1000, 100)) for r in fired)
    total = sum((r.call_cost or 0.0) + (r.summary_cost or 0.0) for r in result.rows)
    assert result.total_cost == pytest.approx(total)


def test_summarizer_error_names_the_call_and_returns_nothing(counter: TokenCounter) -> None:
    chat = list(TEN)
    with pytest.raises(SummarizerError, match=r"call 3 \(before message 5\).*500"):
        replay(chat, FoldAllButLast(), counter, summarizer=FailingSummarizer())
    assert chat == list(TEN)


@pytest.mark.skipif("summarize" not in strategy_names(), reason="summarize not registered")
def test_summarize_strategy_replay_compacts_and_keeps_its_summary(counter: TokenCounter) -> None:
    from ctxlab import summarizers

    chat = tuple(
        m
        for k in range(30)
        for m in (user(f"question {k} " * 20, f"u{k}"), assistant(f"answer {k} " * 20, f"a{k}"))
    )
    strategy = build_strategy(
        "summarize", {"trigger_token_budget": 1500, "keep_recent_messages": 4}
    )
    scripted = summarizers.ScriptedSummarizer([f"summary {k}" for k in range(100)])
    result = replay(chat, strategy, counter, summarizer=scripted)
    assert result.summarizer_calls >= 2
    last = result.context_at(len(result))
    assert any(m.is_summary for m in last.messages)
    assert max(r.tokens_sent for r in result.rows) < max(r.tokens_untrimmed for r in result.rows)


# -- prompt cache columns ------------------------------------------------------------------------


def growing_chat(turns: int, words: int = 300) -> tuple[Message, ...]:
    """System prompt, then ``turns`` user/assistant pairs of ``words`` words each."""
    out: list[Message] = [system("You are a careful assistant. " * 20)]
    for k in range(turns):
        out.append(user(f"question {k} " + "lorem ipsum " * words, f"u{k}"))
        out.append(assistant(f"answer {k} " + "dolor sit " * words, f"a{k}"))
    return tuple(out)


def test_an_untrimmed_growing_chat_caches_the_whole_previous_call(counter: TokenCounter) -> None:
    chat = growing_chat(8)
    result = replay(chat, WindowDrop(budget=10**9), counter)
    rows = result.rows
    assert rows[0].cacheable_prefix_tokens == 0
    for before, after in itertools.pairwise(rows):
        # the previous call's messages, all of them (its reply priming is not a message)
        assert after.cacheable_prefix_tokens == before.tokens_sent - counter.count_messages([])
    assert result.cache_break_turns() == [] and result.cache_known


def test_window_drop_moving_its_front_every_call_caches_nothing(counter: TokenCounter) -> None:
    chat = growing_chat(10, words=40)
    pair = counter.count_messages(chat[1:3]) - counter.count_messages([])
    result = replay(chat, WindowDrop(budget=pair + 60), counter)
    trimmed = [r for r in result.rows[1:] if r.messages_sent < r.messages_untrimmed]
    assert len(trimmed) >= 5
    # the kept window moves one round forward each call: its first message changes every time
    assert all(r.cacheable_prefix_tokens == 0 and r.cached_tokens == 0 for r in trimmed)
    assert {r.turn for r in trimmed} <= set(result.cache_break_turns())


def test_a_sliding_window_keeps_its_system_prompt_as_cacheable_prefix(
    counter: TokenCounter,
) -> None:
    chat = growing_chat(8, words=40)
    result = replay(chat, SlidingWindow(window=4), counter)
    system_tokens = counter.count_message(chat[0])
    moved = [r for r in result.rows[3:]]
    assert moved and all(r.cacheable_prefix_tokens == system_tokens for r in moved)


def test_a_compaction_breaks_the_cache_once_then_later_calls_cache_it(
    counter: TokenCounter,
) -> None:
    chat = growing_chat(12, words=200)
    summarizer = RecordingSummarizer(["SUMMARY " + "x " * 1200] * 10)
    result = replay(chat, FoldAllButLast(max_messages=12), counter, summarizer=summarizer)
    rows = result.rows
    compacting = [r.turn for r in rows if r.summarizer_calls]
    assert compacting, "the configuration compacts"
    first = compacting[0]
    assert rows[first - 1].cacheable_prefix_tokens == 0  # the summary replaced the front
    assert result.cache_break_turns() == compacting  # once per compaction, nowhere else
    after = rows[first]  # the next call sends the compacted history plus the new messages
    assert after.summarizer_calls == 0
    assert after.cacheable_prefix_tokens == rows[first - 1].tokens_sent - counter.count_messages([])
    assert after.cached_tokens is not None and after.cached_tokens > 0


def test_cached_cost_bills_cached_tokens_at_the_cache_price_and_is_none_safe(
    counter: TokenCounter,
) -> None:
    chat = growing_chat(6)
    prices = PriceTable.of(
        (
            ModelPrice("cache-model", 2.0, 0.5, 8.0),
            ModelPrice("no-cache-model", 2.0, None, 8.0),
        ),
        as_of="test",
    )
    cached = replay(chat, WindowDrop(budget=10**9), counter, model="cache-model", prices=prices)
    for r in cached.rows:
        assert r.cached_tokens is not None and r.call_cost_with_cache is not None
        expected = (
            (r.tokens_sent - r.cached_tokens) * 2.0 + r.cached_tokens * 0.5 + r.output_tokens * 8
        ) / 1e6
        assert r.call_cost_with_cache == pytest.approx(expected)
    assert cached.total_cost_with_cache is not None and cached.total_cost is not None
    assert cached.total_cost_with_cache < cached.total_cost
    plain = replay(chat, WindowDrop(budget=10**9), counter, model="no-cache-model", prices=prices)
    assert plain.total_cost_with_cache == pytest.approx(plain.total_cost)
    unpriced = replay(chat, WindowDrop(budget=10**9), counter, model="nobody-prices-this")
    assert all(r.call_cost_with_cache is None for r in unpriced.rows)
    assert all(r.cached_tokens is not None for r in unpriced.rows)


def test_shapes_are_recognised_on_ordinary_chats(counter: TokenCounter) -> None:
    chat = growing_chat(8, words=40)
    for strategy in (WindowDrop(budget=1500), SlidingWindow(window=4)):
        assert replay(chat, strategy, counter, exact_limit=0).cache_known


@settings(max_examples=40, deadline=None)
@given(chat=chats(min_turns=1, max_turns=7), data=st.data())
def test_described_projections_give_the_cache_prefix_of_materialized_contexts(
    chat: tuple[Message, ...], data: st.DataObject
) -> None:
    from ctxlab.insights import cache_series

    counter = fresh_counter()
    total = counter.count_messages(chat)
    name = data.draw(st.sampled_from([n for n in strategy_names() if n != "summarize"]))
    cls = get_strategy_class(name)
    strategy = cls.suggested(counter.counted(chat))
    if name == "window-drop":
        strategy = WindowDrop(
            budget=data.draw(budgets(total)), keep_system=data.draw(st.booleans())
        )
    elif name == "sliding-window":
        strategy = SlidingWindow(window=data.draw(st.integers(1, 6)))
    result = replay(chat, strategy, counter, exact_limit=0)
    contexts = [strategy.apply(chat[: r.message_index], counter).messages for r in result.rows]
    expected = [s.prefix_tokens for s in cache_series(contexts, counter)]
    got = [r.cacheable_prefix_tokens for r in result.rows]
    # every projection describes its context: exact without materializing any of them
    assert got == expected
    exact = replay(chat, strategy, counter)
    assert [r.cacheable_prefix_tokens for r in exact.rows] == expected


@pytest.mark.skipif("summarize" not in strategy_names(), reason="summarize not registered")
def test_replay_records_the_ids_each_compaction_folded(counter: TokenCounter) -> None:
    from ctxlab import summarizers

    chat = tuple(
        m
        for k in range(30)
        for m in (user(f"question {k} " * 20, f"u{k}"), assistant(f"answer {k} " * 20, f"a{k}"))
    )
    ids = [m.id for m in chat]
    strategy = build_strategy(
        "summarize", {"trigger_token_budget": 1500, "keep_recent_messages": 4}
    )
    scripted = summarizers.ScriptedSummarizer([f"summary {k}" for k in range(100)])
    result = replay(chat, strategy, counter, summarizer=scripted)
    assert len(result.compactions) >= 2
    start = 0
    for c in result.compactions:
        assert c.compaction.is_compaction and c.summary is not None and c.summary.is_summary
        meta = c.compaction.compaction_meta
        assert meta is not None and meta.tail_start_id is not None
        tail = ids.index(meta.tail_start_id)
        # each compaction folds exactly the chat's messages between the previous tail and its own
        assert c.folded_ids == tuple(ids[start:tail])
        start = tail


@pytest.mark.skipif("summarize" not in strategy_names(), reason="summarize not registered")
def test_summarize_replay_lineage_links_each_summary_to_the_previous(
    counter: TokenCounter,
) -> None:
    from ctxlab import summarizers

    chat = tuple(
        m
        for k in range(30)
        for m in (user(f"question {k} " * 20, f"u{k}"), assistant(f"answer {k} " * 20, f"a{k}"))
    )
    strategy = build_strategy(
        "summarize", {"trigger_token_budget": 1500, "keep_recent_messages": 4}
    )
    scripted = summarizers.ScriptedSummarizer([f"summary {k}" for k in range(100)])
    result = replay(chat, strategy, counter, summarizer=scripted)
    lineage = result.lineage()
    assert len(lineage) == len(result.compactions) >= 2
    assert lineage[0].previous_compaction_id is None
    for earlier, later in itertools.pairwise(lineage):
        assert later.previous_compaction_id == earlier.compaction_id
    assert all(entry.covers for entry in lineage)
    folded = [i for c in result.compactions for i in c.folded_ids]
    assert len(folded) == len(set(folded)) and folded[0] == "u0"


def test_the_untrimmed_baseline_with_prompt_cache_is_what_no_trimming_costs_with_it(
    counter: TokenCounter,
) -> None:
    from ctxlab.insights import cached_input_tokens
    from ctxlab.pricing import DEFAULT_PRICES

    chat = growing_chat(12, words=300)
    untouched = replay(chat, WindowDrop(budget=10**9), counter, model="gpt-4o")
    # nothing is trimmed: the trimmed session with cache is the untrimmed one with cache
    assert untouched.total_cost_untrimmed_with_cache == pytest.approx(
        untouched.total_cost_with_cache
    )
    price = DEFAULT_PRICES.get("gpt-4o")
    assert price is not None
    counted = counter.counted(chat)
    previous, expected = 0, 0.0
    for row in untouched.rows:
        cached = cached_input_tokens(counted.prefix[previous])
        expected += price.cost(row.tokens_untrimmed, row.output_tokens, cached)
        previous = row.message_index
    assert untouched.total_cost_untrimmed_with_cache == pytest.approx(expected)
    trimmed = replay(chat, WindowDrop(budget=2000), counter, model="gpt-4o")
    assert trimmed.total_cost_untrimmed_with_cache == pytest.approx(expected)
    assert trimmed.total_cost_untrimmed is not None
    assert expected < trimmed.total_cost_untrimmed
