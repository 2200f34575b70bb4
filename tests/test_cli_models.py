"""``ctxlab models``: the catalog from the command line, as a table or JSON."""

from __future__ import annotations

import json
import tomllib
from importlib import resources

import pytest

from ctxlab.catalog import CATALOG, PROVIDERS
from ctxlab.cli import main

RAW = tomllib.loads(resources.files("ctxlab").joinpath("data/models.toml").read_text("utf-8"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_models_lists_every_catalog_entry_with_limits_prices_and_exactness(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "models")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == [
        "model",
        "provider",
        "window",
        "max",
        "output",
        "input",
        "cached",
        "cache",
        "write",
        "output",
        "tokenizer",
        "count",
    ]
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert list(rows) == [e["name"] for e in RAW["models"]]  # every entry, in file order
    assert rows["claude-opus-4-8"] == [
        "claude-opus-4-8",
        "anthropic",
        "1,000,000",
        "128,000",
        "$5.00",
        "$0.50",
        "$6.25",
        "$25.00",
        "approx",
        "approximate",
    ]
    assert rows["gpt-5.5-pro"][4:8] == ["$30.00", "-", "-", "$180.00"]  # no cache discount listed
    assert rows["gpt-4o"][-2:] == ["o200k_base", "exact"]
    assert lines[-1].startswith(f"{len(RAW['models'])} models; prices in USD per million")
    assert RAW["as_of"] in lines[-1]


def test_models_provider_filter_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "models", "--provider", "deepseek", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["as_of"] == RAW["as_of"]
    expected = [e for e in RAW["models"] if e["provider"] == "deepseek"]
    assert [m["name"] for m in data["models"]] == [e["name"] for e in expected]
    for item, entry in zip(data["models"], expected, strict=True):
        info = CATALOG.get(entry["name"])
        assert info is not None
        assert item["exact"] is info.is_exact
        for key in ("context_window", "max_output", "input_per_mtok", "output_per_mtok"):
            assert item[key] == entry[key]
        assert item["cached_input_per_mtok"] == entry.get("cached_input_per_mtok")
        assert item["cache_write_per_mtok"] == entry.get("cache_write_per_mtok")
        assert item["tokenizer"] == entry["tokenizer"]
        assert item["source"] == entry.get("source", "")


def test_models_with_an_unknown_provider_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "models", "--provider", "acme")
    assert status == 2 and out == ""
    assert err.strip() == f"ctxlab: error: unknown provider 'acme': one of {', '.join(PROVIDERS)}"


def test_models_table_for_one_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "models", "--provider", "gemini")
    assert status == 0
    names = [line.split()[0] for line in out.splitlines()[1:-1]]
    assert names == [e["name"] for e in RAW["models"] if e["provider"] == "gemini"]
