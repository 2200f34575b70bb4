"""The catalog against the genai-prices package's data: the refresh diff, and price notes."""

from __future__ import annotations

import io
import runpy
import sys
import tomllib
from contextlib import redirect_stdout
from importlib import resources
from pathlib import Path

import pytest

from ctxlab.catalog import CATALOG, load_catalog
from ctxlab.catalog_diff import (
    ReferenceModel,
    diff_catalog,
    genai_prices_reference,
    reference_at,
)
from ctxlab.errors import ParameterError

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "refresh_catalog.py"
RAW = tomllib.loads(resources.files("ctxlab").joinpath("data/models.toml").read_text("utf-8"))

# The models added on 2026-12-02 after checking each against its vendor's page (issue 25).
ADDED = (
    "gpt-6-astra",
    "gpt-6.1-sol",
    "gpt-6.1-terra",
    "gpt-6-sol",
    "gpt-6-luna",
    "gpt-5.6-sol",
    "gpt-5.6-terra",
    "gpt-5.6-luna",
    "gpt-5.5",
    "gpt-5.5-pro",
    "gpt-5.4",
    "gpt-5.4-mini",
    "gpt-5.4-nano",
    "gpt-5.4-pro",
    "gpt-5.3-codex",
    "gpt-5.2",
    "gpt-5.2-pro",
    "claude-fable-5-1",
    "claude-fable-5",
    "claude-opus-5-5",
    "claude-opus-5",
    "claude-sonnet-5-5",
    "claude-sonnet-5",
    "claude-haiku-5-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "gemini-3.8-flash",
    "gemini-3.5-flash",
    "gemini-3.5-flash-lite",
    "gemini-3.1-pro-preview",
    "gemini-3.1-flash-lite",
    "gemini-3-flash-preview",
    "deepseek-v4-pro",
    "deepseek-v4-flash",
)


def _toml(**fields: object) -> str:
    entry = {
        "name": "m",
        "provider": "anthropic",
        "context_window": 1000,
        "max_output": 100,
        "input_per_mtok": 1.0,
        "output_per_mtok": 2.0,
        "tokenizer": "approx",
        **fields,
    }
    body = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in entry.items())
    return f'as_of = "2026-12-02"\n[[models]]\n{body}\n'


def test_every_price_that_differs_from_genai_prices_records_why() -> None:
    diff = diff_catalog(CATALOG, genai_prices_reference(reference_at(CATALOG)))
    unexplained = [(d.model, d.field, d.catalog, d.reference) for d in diff.unexplained_prices()]
    assert unexplained == []


def test_the_deepseek_disagreement_is_resolved_with_its_reason() -> None:
    # genai-prices still lists DeepSeek's 2025 night discount for deepseek-chat; DeepSeek's page
    # serves deepseek-chat as deepseek-v4-flash (non-thinking) at $0.14 / $0.0028 / $0.28.
    diff = diff_catalog(CATALOG, genai_prices_reference(reference_at(CATALOG)))
    chat = {d.field: d for d in diff.differences if d.model == "deepseek-chat"}
    assert chat["input_per_mtok"].reference == 0.135
    assert chat["input_per_mtok"].catalog == 0.14
    assert all(d.noted for d in chat.values())
    flash = CATALOG.get("deepseek-v4-flash")
    deepseek_chat = CATALOG.get("deepseek-chat")
    assert flash is not None and deepseek_chat is not None
    assert (deepseek_chat.input_per_mtok, deepseek_chat.cached_input_per_mtok) == (0.14, 0.0028)
    assert deepseek_chat.output_per_mtok == flash.output_per_mtok == 0.28
    assert "deepseek-v4-flash" in deepseek_chat.price_note


def test_every_added_model_is_in_the_catalog_with_its_vendor_page() -> None:
    entries = {e["name"]: e for e in RAW["models"]}
    for name in ADDED:
        source = entries[name]["source"]
        host = source.split("/")[2]
        provider = entries[name]["provider"]
        assert (
            host
            == {
                "openai": "developers.openai.com",
                "anthropic": "platform.claude.com",
                "gemini": "ai.google.dev",
                "deepseek": "api-docs.deepseek.com",
            }[provider]
        ), name


def test_the_added_models_are_no_longer_missing_from_the_catalog() -> None:
    diff = diff_catalog(CATALOG, genai_prices_reference(reference_at(CATALOG)))
    missing = {r.name for r in diff.missing}
    assert not missing & set(ADDED)
    assert "o3-pro" in missing  # not in the catalog: still reported


def test_diff_lists_missing_models_differences_and_unknown_models() -> None:
    catalog = load_catalog(
        'as_of = "2026-12-02"\n'
        + "\n".join(
            _toml(name=n, **extra).split("\n", 1)[1]
            for n, extra in (
                ("alpha", {"input_per_mtok": 1.0}),
                ("beta", {"output_per_mtok": 3.0, "price_note": "vendor page says 3"}),
                ("gamma", {}),
            )
        )
    )
    reference = (
        ReferenceModel("anthropic", "alpha", 1000, {"input_per_mtok": 1.5, "output_per_mtok": 2.0}),
        ReferenceModel("anthropic", "beta-latest", 2000, {"input_per_mtok": 1.0}),
        ReferenceModel("anthropic", "delta", None, {"input_per_mtok": 1.0, "output_per_mtok": 1.0}),
        ReferenceModel("openai", "gamma", 1000, {"input_per_mtok": 1.0, "output_per_mtok": 2.0}),
    )
    diff = diff_catalog(catalog, reference)
    assert [r.name for r in diff.missing] == ["delta", "gamma"]  # gamma: another provider's
    found = {(d.model, d.field): (d.catalog, d.reference, d.noted) for d in diff.differences}
    assert found == {
        ("alpha", "input_per_mtok"): (1.0, 1.5, False),
        ("beta", "output_per_mtok"): (3.0, None, True),
        ("beta", "context_window"): (1000, 2000, True),
    }
    assert diff.unmatched == ("gamma",)
    assert [(d.model, d.field) for d in diff.unexplained_prices()] == [("alpha", "input_per_mtok")]
    text = "\n".join(diff.lines())
    assert "+ anthropic delta" in text and "[PRICE]" in text and "[noted]" in text


def test_reference_prices_are_read_at_the_catalog_date() -> None:
    assert reference_at(CATALOG).date().isoformat() == CATALOG.as_of
    first = genai_prices_reference(reference_at(CATALOG))
    assert first == genai_prices_reference(reference_at(CATALOG))
    names = {(r.provider, r.name) for r in first}
    assert ("anthropic", "claude-opus-4-8") in names
    assert not any("tts" in n or "embedding" in n for _, n in names)
    sonnet = next(r for r in first if r.name == "claude-sonnet-4-5")
    assert sonnet.prices["input_per_mtok"] == 3.0  # the short-prompt tier of a tiered price
    assert sonnet.prices["cache_write_1h_per_mtok"] == 6.0


def test_refresh_script_prints_the_same_report_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def run() -> str:
        out = io.StringIO()
        monkeypatch.setattr(sys, "argv", [str(SCRIPT)])
        with redirect_stdout(out), pytest.raises(SystemExit) as stop:
            runpy.run_path(str(SCRIPT), run_name="__main__")
        assert stop.value.code == 0
        return out.getvalue()

    first = run()
    assert first == run()
    assert f"catalog as of {CATALOG.as_of} ({len(CATALOG)} models)" in first
    assert "+ openai    o3-pro" in first
    assert "deepseek-chat" in first and "[noted]" in first
    assert first.rstrip().endswith("price differences without a price_note: 0")


def test_refresh_script_reads_another_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "models.toml"
    path.write_text(_toml(name="claude-opus-4-8", input_per_mtok=7.0), encoding="utf-8")
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--catalog", str(path)])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "claude-opus-4-8" in out and "[PRICE]" in out
    assert out.rstrip().endswith("price differences without a price_note: 5")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cache_write_per_mtok": 0.5}, "cache_write_per_mtok is below input_per_mtok"),
        ({"cache_write_1h_per_mtok": -1.0}, "cache_write_1h_per_mtok must be a finite number"),
        ({"cache_storage_per_mtok_hour": "a lot"}, "cache_storage_per_mtok_hour must be a number"),
        ({"source": "http://example.com"}, "source must be an https:// URL"),
        ({"price_note": 3}, "price_note must be a string"),
        ({"cache_write_per_mtoks": 1.25}, "unknown field"),
    ],
)
def test_catalog_rejects_bad_cache_and_source_fields(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        load_catalog(_toml(**fields))


def test_catalog_reads_cache_write_and_storage_prices() -> None:
    info = load_catalog(
        _toml(
            cache_write_per_mtok=1.25,
            cache_write_1h_per_mtok=2.0,
            cache_storage_per_mtok_hour=4.5,
            source="https://example.com/m",
            price_note=" why ",
        )
    ).models[0]
    assert (info.cache_write_per_mtok, info.cache_write_1h_per_mtok) == (1.25, 2.0)
    assert info.cache_storage_per_mtok_hour == 4.5
    assert (info.source, info.price_note) == ("https://example.com/m", "why")


def test_cache_write_prices_follow_the_published_multipliers() -> None:
    # Anthropic: 5-minute writes 1.25x the input price, 1-hour writes 2x. OpenAI (GPT-5.6 and
    # later): writes 1.25x. Gemini and DeepSeek charge nothing extra for writes.
    for m in CATALOG:
        if m.provider == "anthropic":
            assert m.cache_write_per_mtok == pytest.approx(m.input_per_mtok * 1.25), m.name
            assert m.cache_write_1h_per_mtok == pytest.approx(m.input_per_mtok * 2), m.name
        elif m.provider == "openai" and m.cache_write_per_mtok is not None:
            assert m.cache_write_per_mtok == pytest.approx(m.input_per_mtok * 1.25), m.name
            assert m.cache_write_1h_per_mtok is None, m.name
        elif m.provider in ("gemini", "deepseek"):
            assert m.cache_write_per_mtok is None and m.cache_write_1h_per_mtok is None, m.name
    assert {m.name for m in CATALOG if m.provider == "openai" and m.cache_write_per_mtok} >= {
        "gpt-6-astra",
        "gpt-5.6-sol",
    }
