"""The price table: lookups, the cost formula, editing through mappings and CSV."""

from __future__ import annotations

import io
import math

import pytest

from ctxlab.errors import ParameterError
from ctxlab.pricing import (
    DEFAULT_PRICES,
    PRICES_AS_OF,
    ModelPrice,
    PriceTable,
    normalize_model_name,
)

COMMON_MODELS = (
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-5",
    "gpt-5-mini",
    "o3",
    "o4-mini",
    "gpt-4",
    "gpt-3.5-turbo",
    "claude-sonnet-4-5",
    "claude-opus-4-1",
    "claude-haiku-4-5",
    "deepseek-chat",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
)


@pytest.mark.parametrize("model", COMMON_MODELS)
def test_default_table_prices_the_common_models(model: str) -> None:
    price = DEFAULT_PRICES.get(model)
    assert price is not None
    assert price.input_per_mtok > 0 and price.output_per_mtok >= price.input_per_mtok
    if price.cached_input_per_mtok is not None:
        assert price.cached_input_per_mtok <= price.input_per_mtok


def test_as_of_date_is_an_iso_date_in_2026() -> None:
    assert PRICES_AS_OF.startswith("2026-") and len(PRICES_AS_OF) == 10
    assert DEFAULT_PRICES.as_of == PRICES_AS_OF
    assert "change" in DEFAULT_PRICES.source


def test_unknown_model_has_no_price_and_no_cost() -> None:
    assert DEFAULT_PRICES.get("my-local-llama") is None
    assert DEFAULT_PRICES.cost("my-local-llama", 1000, 1000) is None
    assert "my-local-llama" not in DEFAULT_PRICES


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4-0613", "gpt-4"),
        ("gpt-3.5-turbo-0125", "gpt-3.5-turbo"),
        ("openai/GPT-4.1", "gpt-4.1"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("o3-2025-04-16", "o3"),
    ],
)
def test_dated_snapshots_find_their_model(name: str, key: str) -> None:
    assert normalize_model_name(name) == key
    price = DEFAULT_PRICES.get(name)
    assert price is not None and price.model == key


def test_gpt_4o_is_not_mistaken_for_gpt_4() -> None:
    four_o = DEFAULT_PRICES.get("gpt-4o")
    assert four_o is not None and four_o.model == "gpt-4o"


def test_cost_formula_per_million_tokens() -> None:
    price = ModelPrice("m", input_per_mtok=2.0, cached_input_per_mtok=0.5, output_per_mtok=8.0)
    # 1,000,000 input of which 400,000 cached, 250,000 output
    expected = 600_000 * 2.0 / 1e6 + 400_000 * 0.5 / 1e6 + 250_000 * 8.0 / 1e6
    assert math.isclose(price.cost(1_000_000, 250_000, 400_000), expected)
    assert math.isclose(price.cost(1_000_000, 250_000, 400_000), 3.4)


def test_cached_tokens_cost_the_input_price_without_a_cache_price() -> None:
    price = ModelPrice("m", 10.0, None, 30.0)
    assert price.cost(1000, 0, 1000) == price.cost(1000, 0, 0) == pytest.approx(0.01)


def test_gpt_4o_cost_matches_its_published_price() -> None:
    # gpt-4o: $2.50 / 1M input, $10 / 1M output
    assert DEFAULT_PRICES.cost("gpt-4o", 1_000_000, 100_000) == pytest.approx(3.5)


@pytest.mark.parametrize(
    ("inp", "out", "cached"), [(-1, 0, 0), (0, -1, 0), (10, 0, 11), (10, 0, -1)]
)
def test_impossible_token_counts_are_refused(inp: int, out: int, cached: int) -> None:
    with pytest.raises(ParameterError):
        ModelPrice("m", 1.0, 0.5, 2.0).cost(inp, out, cached)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_negative_or_non_finite_prices_are_refused(bad: float) -> None:
    with pytest.raises(ParameterError, match="input_per_mtok"):
        ModelPrice("m", bad, None, 1.0)


def test_with_price_adds_and_overrides_without_touching_the_original() -> None:
    edited = DEFAULT_PRICES.with_price("my-llm", input_per_mtok=0.1, output_per_mtok=0.2)
    assert edited.get("my-llm") == ModelPrice("my-llm", 0.1, None, 0.2)
    assert DEFAULT_PRICES.get("my-llm") is None
    cheaper = edited.with_price(ModelPrice("gpt-4o", 1.0, None, 2.0))
    assert cheaper.cost("gpt-4o", 1_000_000, 0) == pytest.approx(1.0)
    assert DEFAULT_PRICES.cost("gpt-4o", 1_000_000, 0) == pytest.approx(2.5)


def test_with_price_needs_both_prices() -> None:
    with pytest.raises(ParameterError, match="needs input and output"):
        DEFAULT_PRICES.with_price("x", input_per_mtok=1.0)


def test_csv_round_trip_keeps_every_price() -> None:
    buffer = io.StringIO()
    DEFAULT_PRICES.to_csv(buffer)
    buffer.seek(0)
    back = PriceTable.from_csv(buffer)
    assert back.prices == DEFAULT_PRICES.prices


def test_csv_file_round_trip(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "prices.csv"
    table = PriceTable.of([ModelPrice("a", 1.0, None, 2.0), ModelPrice("b", 3.0, 0.3, 4.0)])
    table.to_csv(path)
    assert PriceTable.from_csv(path).prices == table.prices
    assert path.read_text().splitlines()[1] == "a,1,,2,,"  # no cached, cache-write prices


def test_csv_errors_name_the_line_and_column() -> None:
    text = "model,input_per_mtok,cached_input_per_mtok,output_per_mtok\na,1,,2\nb,cheap,,2\n"
    with pytest.raises(ParameterError, match=r"line 3: input_per_mtok must be a number"):
        PriceTable.from_csv(io.StringIO(text))
    with pytest.raises(ParameterError, match="missing column"):
        PriceTable.from_csv(io.StringIO("model,input_per_mtok\na,1\n"))


def test_mapping_accepts_dicts_and_triples() -> None:
    table = PriceTable.from_mapping(
        {"a": {"input_per_mtok": 1, "output_per_mtok": 2}, "b": (3.0, 0.3, 4.0)}
    )
    assert table.get("a") == ModelPrice("a", 1.0, None, 2.0)
    assert table.get("b") == ModelPrice("b", 3.0, 0.3, 4.0)
    assert PriceTable.from_mapping(table.to_mapping()).prices == table.prices
    with pytest.raises(ParameterError, match="'c'"):
        PriceTable.from_mapping({"c": "free"})
