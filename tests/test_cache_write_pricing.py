"""Prompt-cache costs follow each provider's published rule (hand-computed figures).

Anthropic (platform.claude.com/docs/en/about-claude/pricing): cache hits 0.1x input, 5-minute
cache writes 1.25x, 1-hour writes 2x. OpenAI: cached input discounted, writes cost nothing extra.
DeepSeek: cache hit / cache miss prices. Gemini: cached input discounted; storage per hour.
"""

from __future__ import annotations

import io

import pytest
from chatgen import assistant, user

from ctxlab.catalog import CATALOG
from ctxlab.errors import ParameterError
from ctxlab.formats import CallUsage
from ctxlab.formats._usage import read_usage
from ctxlab.pricing import DEFAULT_PRICES, ModelPrice, PriceTable
from ctxlab.replay import replay
from ctxlab.strategies.window_drop import WindowDrop
from ctxlab.tokens import TokenCounter

ANTHROPIC_RESPONSE_USAGE = {
    "input_tokens": 1_000,
    "cache_read_input_tokens": 50_000,
    "cache_creation_input_tokens": 10_000,
    "cache_creation": {"ephemeral_5m_input_tokens": 6_000, "ephemeral_1h_input_tokens": 4_000},
    "output_tokens": 500,
}


def test_anthropic_usage_prices_reads_and_both_write_lifetimes() -> None:
    (usage,) = read_usage(ANTHROPIC_RESPONSE_USAGE, "$.usage", "msg_1", "anthropic")
    assert usage.cache_creation_input_tokens == 10_000
    assert usage.cache_creation_1h_input_tokens == 4_000
    # Claude Sonnet 4.5: $3 input, $0.30 hit, $3.75 5m write, $6 1h write, $15 output
    # 1,000 x 3 + 50,000 x 0.30 + 6,000 x 3.75 + 4,000 x 6 + 500 x 15 = 72,000 -> $0.072
    assert DEFAULT_PRICES.usage_cost("claude-sonnet-4-5", usage) == pytest.approx(0.072)


def test_anthropic_usage_without_the_split_bills_every_write_as_five_minutes() -> None:
    raw = {k: v for k, v in ANTHROPIC_RESPONSE_USAGE.items() if k != "cache_creation"}
    (usage,) = read_usage(raw, "$.usage", "msg_1", "anthropic")
    assert usage.cache_creation_1h_input_tokens == 0
    # Claude Opus 4.8: 1,000 x 5 + 50,000 x 0.50 + 10,000 x 6.25 + 500 x 25 = 105,000
    assert DEFAULT_PRICES.usage_cost("claude-opus-4-8", usage) == pytest.approx(0.105)


def test_anthropic_cache_writes_are_dearer_than_openai_style_free_writes() -> None:
    usage = CallUsage("m", 0, 0, 0, 1_000_000, "anthropic")
    # a million 5-minute-written tokens on Claude Haiku 4.5: $1.25, not the $1 input price
    assert DEFAULT_PRICES.usage_cost("claude-haiku-4-5", usage) == pytest.approx(1.25)
    hour = CallUsage("m", 0, 0, 0, 1_000_000, "anthropic", 1_000_000)
    assert DEFAULT_PRICES.usage_cost("claude-haiku-4-5", hour) == pytest.approx(2.0)


def test_openai_usage_discounts_cached_tokens_and_charges_no_write() -> None:
    (usage,) = read_usage(
        {
            "prompt_tokens": 10_000,
            "completion_tokens": 1_000,
            "prompt_tokens_details": {"cached_tokens": 6_000},
        },
        "$.usage",
        "chatcmpl-1",
        "openai",
    )
    # gpt-4o: 4,000 x 2.50 + 6,000 x 1.25 + 1,000 x 10 = 27,500 -> $0.0275
    assert DEFAULT_PRICES.usage_cost("gpt-4o", usage) == pytest.approx(0.0275)


def test_openai_usage_bills_cache_writes_where_the_model_lists_a_write_price() -> None:
    (responses,) = read_usage(
        {
            "input_tokens": 100_000,
            "output_tokens": 1_000,
            "input_tokens_details": {"cached_tokens": 60_000, "cache_write_tokens": 30_000},
        },
        "$.usage",
        "resp_1",
        "openai",
    )
    (chat,) = read_usage(
        {
            "prompt_tokens": 100_000,
            "completion_tokens": 1_000,
            "prompt_tokens_details": {"cached_tokens": 60_000, "cache_write_tokens": 30_000},
        },
        "$.usage",
        "chatcmpl-1",
        "openai",
    )
    assert responses.cache_creation_input_tokens == chat.cache_creation_input_tokens == 30_000
    assert responses.prompt_tokens == chat.prompt_tokens == 100_000
    # gpt-6-astra: 10,000 x 10 + 60,000 x 1 + 30,000 written x 12.50 + 1,000 x 50 = 585,000
    assert DEFAULT_PRICES.usage_cost("gpt-6-astra", responses) == pytest.approx(0.585)
    # gpt-5.5 lists no write price: the written tokens cost the input price
    # 40,000 x 5 + 60,000 x 0.50 + 1,000 x 30 = 260,000
    assert DEFAULT_PRICES.usage_cost("gpt-5.5", chat) == pytest.approx(0.26)


def test_deepseek_usage_bills_cache_hits_and_misses() -> None:
    usage = CallUsage("m", 100_000, 2_000, 80_000, 0, "openai")
    # deepseek-v4-flash: 20,000 misses x 0.14 + 80,000 hits x 0.0028 + 2,000 x 0.28 = 3,584
    assert DEFAULT_PRICES.usage_cost("deepseek-v4-flash", usage) == pytest.approx(0.003584)


def test_gemini_usage_discounts_cached_content() -> None:
    (usage,) = read_usage(
        {"promptTokenCount": 300_000, "candidatesTokenCount": 1_000, "cachedContentTokenCount": 0},
        "$.usageMetadata",
        "m",
        "gemini",
    )
    assert usage.prompt_tokens == 300_000
    cached = CallUsage("m", 100_000, 1_000, 75_000, 0, "openai")
    # gemini-2.5-flash: 25,000 x 0.30 + 75,000 x 0.03 + 1,000 x 2.50 = 12,250 -> $0.01225
    assert DEFAULT_PRICES.usage_cost("gemini-2.5-flash", cached) == pytest.approx(0.01225)
    info = CATALOG.get("gemini-2.5-pro")
    assert info is not None and info.cache_storage_per_mtok_hour == 4.50


def test_cost_checks_the_written_tokens_fit_in_the_prompt() -> None:
    price = ModelPrice("m", 1.0, 0.1, 2.0, 1.25, 2.0)
    assert price.cost(1_000_000, 0, 0, 1_000_000) == pytest.approx(1.25)
    assert price.cost(1_000_000, 0, 0, 0, 1_000_000) == pytest.approx(2.0)
    with pytest.raises(ParameterError, match="exceed input_tokens"):
        price.cost(10, 0, 5, 4, 2)
    with pytest.raises(ParameterError, match=">= 0"):
        price.cost(10, 0, 0, -1)


def test_write_prices_default_to_input_then_to_the_five_minute_price() -> None:
    free = ModelPrice("m", 1.0, 0.1, 2.0)
    assert (free.write_price, free.write_1h_price) == (1.0, 1.0)
    assert free.cost(100, 10, 40, 30) == free.cost(100, 10, 40)
    five = ModelPrice("m", 1.0, 0.1, 2.0, 1.25)
    assert (five.write_price, five.write_1h_price) == (1.25, 1.25)


def test_csv_and_mapping_keep_cache_write_prices() -> None:
    table = PriceTable.of([ModelPrice("a", 3.0, 0.3, 15.0, 3.75, 6.0)])
    back = PriceTable.from_csv(io.StringIO(table.to_csv()))
    assert back.prices == table.prices
    assert PriceTable.from_mapping(table.to_mapping()).prices == table.prices
    old_csv = "model,input_per_mtok,cached_input_per_mtok,output_per_mtok\na,1,,2\n"
    assert PriceTable.from_csv(io.StringIO(old_csv)).prices["a"].cache_write_per_mtok is None


def test_replay_with_cache_bills_anthropic_writes_on_what_the_cache_did_not_serve(
    counter: TokenCounter,
) -> None:
    chat = tuple(
        m
        for k in range(8)
        for m in (user(f"question {k} " * 150, f"u{k}"), assistant(f"answer {k}", f"a{k}"))
    )
    free = PriceTable.of([ModelPrice("m", 3.0, 0.3, 15.0)])
    writes = PriceTable.of([ModelPrice("m", 3.0, 0.3, 15.0, 3.75, 6.0)])
    strategy = WindowDrop(budget=100_000)
    plain = replay(chat, strategy, counter, model="m", prices=free)
    written = replay(chat, strategy, counter, model="m", prices=writes)
    assert [r.call_cost for r in plain.rows] == [r.call_cost for r in written.rows]
    for a, b in zip(plain.rows, written.rows, strict=True):
        assert a.cached_tokens is not None and a.call_cost_with_cache is not None
        assert b.call_cost_with_cache is not None
        uncached = a.tokens_sent - a.cached_tokens
        # the uncached part of each cached call is a 5-minute write: 3.75 instead of 3.00
        expected = (uncached * 3.75 + a.cached_tokens * 0.3 + a.output_tokens * 15.0) / 1e6
        assert b.call_cost_with_cache == pytest.approx(expected)
        assert b.call_cost_with_cache - a.call_cost_with_cache == pytest.approx(
            uncached * 0.75 / 1e6
        )
    assert any(r.cached_tokens for r in plain.rows)  # the chat is long enough to be cached
