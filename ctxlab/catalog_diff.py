"""The model catalog set against reference price data: which models it lacks, which figures differ.

The reference is the ``genai-prices`` package's bundled data (offline;
:func:`genai_prices_reference` reads it, at the catalog's ``as_of`` date so the answer does not
change with the clock), or any sequence of :class:`ReferenceModel`. :func:`diff_catalog` is pure:
it lists the reference's chat models of ctxlab's providers that no catalog entry matches, and for
every matched entry each price or context window that differs, with whether the entry records a
``price_note`` explaining it. ``scripts/refresh_catalog.py`` prints the result; a test fails on a
price difference without a note.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ctxlab.catalog import Catalog, ModelInfo, normalize_model_name

__all__ = [
    "PRICE_FIELDS",
    "CatalogDiff",
    "FieldDifference",
    "ReferenceModel",
    "diff_catalog",
    "genai_prices_reference",
    "reference_at",
]

PRICE_FIELDS: Mapping[str, str] = {
    "input_per_mtok": "input_mtok",
    "cached_input_per_mtok": "cache_read_mtok",
    "cache_write_per_mtok": "cache_write_mtok",
    "cache_write_1h_per_mtok": "cache_write_1h_mtok",
    "output_per_mtok": "output_mtok",
}
"""Catalog price field -> genai-prices price key."""

_PROVIDERS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gemini",
    "deepseek": "deepseek",
}
"""genai-prices provider id -> catalog provider."""

# Reference models that are not chat models a context budget applies to (speech, images,
# embeddings, realtime audio, fine-tune prefixes, retired completion models, open-weight Gemma).
_NOT_CHAT = (
    "tts",
    "image",
    "embedding",
    "audio",
    "realtime",
    "transcribe",
    "whisper",
    "live",
    "moderation",
    "search",
    "robotics",
    "gemma",
    "ft:",
    "davinci",
    "babbage",
    "curie",
    "computer-use",
    "omni",
    "banana",
    "vision",
    "instruct",
    "chatgpt-",
    "translate",
    ":extended",
)
_RETIRED = frozenset({"ada", "claude-v1", "claude-2", "gemini-pro", "gpt-3.5-0301"})


@dataclass(frozen=True, slots=True)
class ReferenceModel:
    """One model of the reference data: its id, provider (catalog spelling), context window (None
    when unknown) and base-tier prices in USD per million tokens by catalog field name."""

    provider: str
    name: str
    context_window: int | None
    prices: Mapping[str, float]
    matches: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)

    def covers(self, model: str) -> bool:
        """True when ``model`` (a catalog name) is this reference model."""
        if normalize_model_name(model) == normalize_model_name(self.name):
            return True
        return self.matches is not None and self.matches(model.lower())


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """One figure that differs; ``None`` on a side means that side has no such price."""

    model: str
    reference_model: str
    field: str
    catalog: float | None
    reference: float | None
    noted: bool

    @property
    def is_price(self) -> bool:
        return self.field in PRICE_FIELDS


@dataclass(frozen=True, slots=True)
class CatalogDiff:
    """What :func:`diff_catalog` found, each part in a fixed order."""

    missing: tuple[ReferenceModel, ...]
    differences: tuple[FieldDifference, ...]
    unmatched: tuple[str, ...]

    def unexplained_prices(self) -> list[FieldDifference]:
        """Price differences whose catalog entry records no ``price_note``."""
        return [d for d in self.differences if d.is_price and not d.noted]

    def lines(self) -> list[str]:
        """The diff as text, one finding a line."""
        out = [f"models the reference has that the catalog lacks: {len(self.missing)}"]
        for r in self.missing:
            window = "?" if r.context_window is None else f"{r.context_window:,}"
            prices = ", ".join(f"{k} {_num(v)}" for k, v in r.prices.items())
            out.append(f"  + {r.provider:<9} {r.name:<28} window {window:>9}  {prices}")
        out.append(f"figures that differ: {len(self.differences)}")
        for d in self.differences:
            mark = "noted" if d.noted else ("PRICE" if d.is_price else "limit")
            out.append(
                f"  ~ {d.model:<28} {d.field:<24} catalog {_num(d.catalog):>10}  "
                f"reference {_num(d.reference):>10}  [{mark}] ({d.reference_model})"
            )
        out.append(f"catalog models the reference does not know: {len(self.unmatched)}")
        out.extend(f"  ? {name}" for name in self.unmatched)
        return out


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _reference_for(model: ModelInfo, reference: Sequence[ReferenceModel]) -> ReferenceModel | None:
    same_provider = [r for r in reference if r.provider == model.provider]
    key = normalize_model_name(model.name)
    for r in same_provider:  # an exact id first: match logic may also accept a longer name
        if normalize_model_name(r.name) == key:
            return r
    return next((r for r in same_provider if r.covers(model.name)), None)


def diff_catalog(catalog: Catalog, reference: Sequence[ReferenceModel]) -> CatalogDiff:
    """Missing models, differing figures and unknown catalog models (see the module docstring)."""
    covered: set[int] = set()
    differences: list[FieldDifference] = []
    unmatched: list[str] = []
    for m in catalog:
        ref = _reference_for(m, reference)
        if ref is None:
            unmatched.append(m.name)
            continue
        covered.add(id(ref))
        noted = bool(m.price_note)
        for name in PRICE_FIELDS:
            ours: float | None = getattr(m, name)
            theirs = ref.prices.get(name)
            if not _same(ours, theirs):
                differences.append(FieldDifference(m.name, ref.name, name, ours, theirs, noted))
        if ref.context_window is not None and ref.context_window != m.context_window:
            differences.append(
                FieldDifference(
                    m.name,
                    ref.name,
                    "context_window",
                    m.context_window,
                    ref.context_window,
                    noted,
                )
            )
    for r in reference:  # reference models some catalog entry covers by another spelling
        if id(r) not in covered and any(
            r.covers(m.name) for m in catalog if m.provider == r.provider
        ):
            covered.add(id(r))
    missing = sorted(
        (r for r in reference if id(r) not in covered), key=lambda r: (r.provider, r.name)
    )
    return CatalogDiff(tuple(missing), tuple(differences), tuple(unmatched))


def _is_chat(provider: str, model_id: str, deprecated: bool, prices: Mapping[str, float]) -> bool:
    lowered = model_id.lower()
    if deprecated or lowered in _RETIRED or any(word in lowered for word in _NOT_CHAT):
        return False
    if provider == "gemini" and not lowered.startswith("gemini"):
        return False  # Vertex AI also resells Claude
    return "input_per_mtok" in prices and "output_per_mtok" in prices


def _base(price: Any) -> float | None:
    if price is None:
        return None
    base = getattr(price, "base", price)  # TieredPrices: the short-prompt tier
    return float(base)


def genai_prices_reference(at: datetime | None = None) -> tuple[ReferenceModel, ...]:
    """The chat models of ctxlab's providers in the installed ``genai-prices`` package's bundled
    data, priced as of ``at`` (default: now). Needs ``pip install genai-prices`` (the ``test``
    extra); reads no network.
    """
    from genai_prices.data import providers

    when = at or datetime.now(tz=UTC)
    out: list[ReferenceModel] = []
    for provider in providers:
        ours = _PROVIDERS.get(provider.id)
        if ours is None:
            continue
        for model in provider.models:
            price = model.get_prices(when)
            values = {
                name: value
                for name, key in PRICE_FIELDS.items()
                if (value := _base(getattr(price, key, None))) is not None
            }
            if not _is_chat(ours, model.id, bool(model.deprecated), values):
                continue
            out.append(ReferenceModel(ours, model.id, model.context_window, values, model.is_match))
    return tuple(out)


def reference_at(catalog: Catalog) -> datetime:
    """The catalog's ``as_of`` date as the moment to read reference prices at (deterministic)."""
    return datetime.fromisoformat(catalog.as_of).replace(tzinfo=UTC)
