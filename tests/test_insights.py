"""Insights: fact retention, prompt-cache prefix, re-summarization guard, token disagreement,
summary lineage. Known answers on crafted chats, plus properties."""

from __future__ import annotations

from chatgen import assistant, call, chats, system, tool, user
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.insights import (
    Fact,
    cache_series,
    cacheable_prefix,
    cached_input_tokens,
    extract_facts,
    fact_retention,
    resummarization_risk,
    summary_lineage,
    token_disagreement,
    word_diff,
)
from ctxlab.model import CompactionMeta, Message, Role
from ctxlab.strategies.sliding_window import SlidingWindow
from ctxlab.strategies.window_drop import WindowDrop
from ctxlab.tokens import TokenCounter


def five_round_chat() -> tuple[Message, ...]:
    return (
        system("You are a booking assistant."),
        user("Hi, I need to change a flight.", "u1"),
        assistant("Sure, what is the booking code?", "a1"),
        user("It's booking ZX9QK2 for Maria Lopez, seat 14C.", "u2"),
        assistant("Thanks, looking it up.", "a2", call("c1", "get_booking", '{"code": "ZX9QK2"}')),
        tool('{"flight": "BA2490", "date": "2026-12-03"}', "t1", "c1"),
        assistant("Found flight BA2490.", "a2b"),
        user("Move it to the next day please.", "u3"),
        assistant("Done.", "a3"),
        user("And add a bag.", "u4"),
        assistant("Bag added.", "a4"),
        user("Thanks!", "u5"),
        assistant("You're welcome.", "a5"),
    )


def test_fact_planted_in_round_two_is_lost_when_only_the_last_three_rounds_are_kept(
    counter: TokenCounter,
) -> None:
    chat = five_round_chat()
    kept = chat[7:]  # rounds u3, u4, u5: the last three
    retention = fact_retention(chat, kept)
    lost = {f.text for f in retention.lost()}
    assert "ZX9QK2" in lost
    assert "Maria Lopez" in lost
    assert retention.percent < 100


def test_fact_kept_verbatim_or_in_a_summary_is_retained() -> None:
    chat = five_round_chat()
    summary = Message(Role.ASSISTANT, "Booking ZX9QK2 (Maria Lopez) moved.", "s1", is_summary=True)
    retention = fact_retention(chat, (summary, *chat[9:]), facts=["ZX9QK2", Fact("BA2490")])
    by_text = {c.fact.text: c for c in retention.checks}
    assert by_text["ZX9QK2"].retained and by_text["ZX9QK2"].via_summary
    assert by_text["ZX9QK2"].found_in == "s1"
    assert not by_text["BA2490"].retained
    assert retention.percent == 50.0


def test_extracted_facts_cover_identifiers_names_dates_urls_and_skip_small_numbers() -> None:
    chat = (
        user(
            "Order ORD-4417 to Jane Doe at https://shop.example/o/4417 on 2026-01-02, qty 2.", "u"
        ),
        tool('{"total": "$1,249.99", "path": "src/app/models.py"}', "t", None),
    )
    facts = {f.text: f.kind for f in extract_facts(chat)}
    assert facts["ORD-4417"] == "identifier"
    assert facts["Jane Doe"] == "name"
    assert facts["https://shop.example/o/4417"] == "url"
    assert facts["2026-01-02"] == "date"
    assert facts["src/app/models.py"] == "path"
    assert "$1,249.99" in facts
    assert "2" not in facts  # a lone small number is not worth tracking


@given(chats(min_turns=1))
def test_a_context_equal_to_the_chat_retains_every_fact(chat: tuple[Message, ...]) -> None:
    assert fact_retention(chat, chat).percent == 100.0


def test_dropping_from_the_front_each_call_gives_a_zero_cacheable_prefix(
    counter: TokenCounter,
) -> None:
    chat = tuple(
        m
        for k in range(12)
        for m in (user(f"question {k} " * 20, f"u{k}"), assistant(f"answer {k} " * 20, f"a{k}"))
    )
    strategy = WindowDrop(budget=400)
    contexts = [strategy.apply(chat[:i], counter).messages for i in range(1, len(chat), 2)]
    steps = cache_series(contexts, counter)
    moved = [
        step
        for step, previous, context in zip(steps[1:], contexts[:-1], contexts[1:], strict=True)
        if previous[0] is not context[0]
    ]
    assert len(moved) >= 5, "the budget must move the front on most calls"
    assert all(step.prefix_tokens == 0 and step.breaks_cache for step in moved)


def test_an_untrimmed_growing_chat_caches_the_whole_previous_call(counter: TokenCounter) -> None:
    chat = five_round_chat()
    assert cacheable_prefix(chat[:5], chat[:9], counter) == sum(counter.counts(chat[:5]))
    assert cacheable_prefix((), chat, counter) == 0


def test_a_pinned_system_prompt_survives_a_sliding_window_as_cacheable_prefix(
    counter: TokenCounter,
) -> None:
    chat = five_round_chat()
    window = SlidingWindow(window=4)
    first = window.apply(chat[:9], counter).messages
    second = window.apply(chat[:11], counter).messages
    assert cacheable_prefix(first, second, counter) == counter.count_message(chat[0])


def test_openai_caches_from_1024_tokens_in_128_token_steps() -> None:
    assert cached_input_tokens(1023) == 0
    assert cached_input_tokens(1024) == 1024
    assert cached_input_tokens(1151) == 1024
    assert cached_input_tokens(1152) == 1152


def test_a_trigger_below_the_kept_tail_is_flagged(counter: TokenCounter) -> None:
    chat = tuple(
        m for k in range(10) for m in (user("x " * 200, f"u{k}"), assistant("y " * 200, f"a{k}"))
    )
    tail = sum(counter.counts(chat[-6:]))
    risky = resummarization_risk(
        chat,
        trigger_token_budget=tail - 10,
        keep_recent_messages=6,
        summary_max_tokens=200,
        counter=counter,
    )
    assert risky.fires_every_call
    assert "Raise the trigger" in risky.suggestion
    safe = resummarization_risk(
        chat,
        trigger_token_budget=tail * 3,
        keep_recent_messages=6,
        summary_max_tokens=200,
        counter=counter,
    )
    assert not safe.fires_every_call


def test_token_disagreement_shows_the_heuristic_undercounting_non_english_text(
    counter: TokenCounter,
) -> None:
    chat = (user("これは日本語のテキストです。トークンが多くなります。" * 5, "ja"),)
    (row,) = token_disagreement(chat, counter)
    assert row.exact == counter.count_message(chat[0])
    assert row.overhead == row.exact - counter.count_text(chat[0].content)
    assert row.error < 0  # chars/4 would trim too late


def test_summary_lineage_follows_the_compaction_chain() -> None:
    first = Message(
        Role.USER,
        "[compacted]",
        "c1",
        is_compaction=True,
        compaction_meta=CompactionMeta("m5", None, "Alice ordered a red bike."),
    )
    second = Message(
        Role.USER,
        "[compacted]",
        "c2",
        is_compaction=True,
        compaction_meta=CompactionMeta("m9", "c1", "Alice ordered a blue bike."),
    )
    history = (
        second,
        Message(Role.ASSISTANT, "Alice ordered a blue bike.", "s2", is_summary=True),
        user("next", "m9"),
    )
    (entry,) = summary_lineage(history, covers={"c2": ("c1", "m5", "m6")})
    assert entry.previous_compaction_id == "c1"
    assert entry.summary_id == "s2"
    assert entry.covers == ("c1", "m5", "m6")
    diff = word_diff(first.compaction_meta.summary_text or "", entry.summary_text)
    assert ("-", "red") in diff and ("+", "blue") in diff


@given(st.text(max_size=60), st.text(max_size=60))
def test_word_diff_rebuilds_both_texts(old: str, new: str) -> None:
    diff = word_diff(old, new)
    rebuilt_old = " ".join(t for op, t in diff if op in "=-" and t)
    rebuilt_new = " ".join(t for op, t in diff if op in "=+" and t)
    assert rebuilt_old.split() == old.split()
    assert rebuilt_new.split() == new.split()


def test_tool_result_fact_is_found_in_a_kept_tool_message() -> None:
    chat = five_round_chat()
    retention = fact_retention(chat, chat[4:7], facts=["BA2490"])
    assert retention.checks[0].found_in in {"t1", "a2b"}


def test_the_guard_reads_any_summarizing_strategy_and_its_suggestion_stops_the_loop(
    counter: TokenCounter,
) -> None:
    from ctxlab.insights import resummarization_guard
    from ctxlab.strategies import build_strategy, strategy_names
    from ctxlab.strategies.registry import with_params

    assert resummarization_guard(WindowDrop(budget=100), five_round_chat(), counter) is None
    if "summarize" not in strategy_names():
        return
    chat = tuple(
        m
        for k in range(20)
        for m in (user(f"question {k} " * 30, f"u{k}"), assistant(f"answer {k} " * 30, f"a{k}"))
    )
    looping = build_strategy("summarize", {"trigger_token_budget": 200, "keep_recent_messages": 6})
    guard = resummarization_guard(looping, chat, counter)
    assert guard is not None and guard.risk.fires_every_call
    assert set(guard.changes) == {"trigger_token_budget"}
    fixed = resummarization_guard(with_params(looping, guard.changes), chat, counter)
    assert fixed is not None and not fixed.risk.fires_every_call and not fixed.changes
