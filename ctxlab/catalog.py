"""The model catalog: what each model accepts (context window, maximum output), what it costs
and which tokenizer counts it, read from one dated data file shipped with the package.

The data lives in ``ctxlab/data/models.toml`` (its ``as_of`` date and ``sources`` say where the
figures come from); :data:`CATALOG` is that file, read once. Lookups accept what people type:
exact names, any case, a provider prefix and dated snapshots (``openai/gpt-4o-2024-08-06`` is
``gpt-4o``). :data:`ctxlab.pricing.DEFAULT_PRICES` is built from this catalog, and
:func:`ctxlab.tokens.get_counter` accepts every model in it.

Invariants of every entry: ``0 < max_output <= context_window``; prices are finite and >= 0; the
cached price, when present, is at most the input price; a cache-write price, when present, is at
least the input price (a write is never cheaper than a plain input token); ``tokenizer`` is one of
:data:`TOKENIZERS`; ``source``, when present, is an https URL.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ctxlab.errors import ParameterError, UnknownNameError
from ctxlab.tokenizer_families import FAMILIES, family_of

__all__ = [
    "CATALOG",
    "ENCODINGS",
    "PROVIDERS",
    "PROVIDER_TITLES",
    "TOKENIZERS",
    "Catalog",
    "ModelInfo",
    "get_model",
    "load_catalog",
    "normalize_model_name",
]

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
"""tiktoken encodings shipped with ctxlab (:mod:`ctxlab.encodings`): always exact."""

TOKENIZERS: tuple[str, ...] = (*ENCODINGS, *FAMILIES, "approx")
"""Counters a catalog entry may name: tiktoken encodings (exact), open-weight families (exact
with their extra installed, :mod:`ctxlab.tokenizer_families`) or the approximate counter."""

PROVIDERS: tuple[str, ...] = (
    "openai",
    "anthropic",
    "gemini",
    "deepseek",
    "qwen",
    "mistral",
    "meta",
)
PROVIDER_TITLES: Mapping[str, str] = {
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "gemini": "Gemini",
    "deepseek": "DeepSeek",
    "qwen": "Qwen",
    "mistral": "Mistral",
    "meta": "Meta",
}

# DeepSeek, Qwen (Model Studio), Mistral and Meta's Llama API serve the OpenAI Chat Completions
# request shape, so requests for their models are validated by the OpenAI rules.
_VALIDATOR_PROVIDER = {
    "deepseek": "openai",
    "qwen": "openai",
    "mistral": "openai",
    "meta": "openai",
}

# A dated snapshot or alias suffix: gpt-4o-2024-08-06, gpt-4-0613, o3-2025-04-16, ...-latest.
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest|preview)$")


def normalize_model_name(model: str) -> str:
    """The lookup key for ``model``: lower case, no provider prefix, no dated-snapshot suffix.

    >>> normalize_model_name("openai/GPT-4o-2024-08-06")
    'gpt-4o'
    >>> normalize_model_name("gpt-4-0613")
    'gpt-4'
    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    while True:
        stripped = _SNAPSHOT.sub("", name)
        if stripped == name or not stripped:
            return name
        name = stripped


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model's limits, list prices (USD per million tokens) and tokenizer.

    ``cached_input_per_mtok`` is None when the model has no prompt-cache discount.
    ``cache_write_per_mtok`` / ``cache_write_1h_per_mtok`` are what the provider charges for
    input tokens written to its prompt cache (Anthropic: 5-minute and 1-hour writes; OpenAI
    GPT-5.6 and later: writes), None when writes cost the plain input price (earlier OpenAI
    models, Gemini, DeepSeek).
    ``cache_storage_per_mtok_hour`` is Gemini's explicit-cache storage price per million tokens
    per hour, where documented. ``source`` is the vendor page the entry was checked against;
    ``price_note`` says why a price differs from the ``genai-prices`` reference data
    (``scripts/refresh_catalog.py``), empty when it does not.
    """

    name: str
    provider: str
    context_window: int
    max_output: int
    input_per_mtok: float
    cached_input_per_mtok: float | None
    output_per_mtok: float
    tokenizer: str
    cache_write_per_mtok: float | None = None
    cache_write_1h_per_mtok: float | None = None
    cache_storage_per_mtok_hour: float | None = None
    source: str = ""
    price_note: str = ""

    @property
    def provider_title(self) -> str:
        """The provider as people write it ("OpenAI")."""
        return PROVIDER_TITLES.get(self.provider, self.provider)

    @property
    def validator_provider(self) -> str:
        """The :mod:`ctxlab.validate` provider whose API this model is served by."""
        return _VALIDATOR_PROVIDER.get(self.provider, self.provider)

    @property
    def is_exact(self) -> bool:
        """True when ctxlab counts this model exactly here: a tiktoken encoding, or an
        open-weight family whose extra is installed; False for the approximate counter."""
        if self.tokenizer in ENCODINGS:
            return True
        family = family_of(self.tokenizer)
        return family is not None and family.available()

    @property
    def exact_hint(self) -> str | None:
        """What would make this model's counts exact (``pip install 'ctxlab[qwen]'``), or None
        when they are exact already or no public tokenizer exists."""
        family = family_of(self.tokenizer)
        if family is None or family.available():
            return None
        return family.install_hint()

    @property
    def input_room(self) -> int:
        """Tokens left for the prompt when a reply may take ``max_output`` of the window.

        Half the window when the maximum output could fill it all (gpt-4: 8,192 of 8,192).
        """
        return max(self.context_window - self.max_output, self.context_window // 2)

    def window_label(self) -> str:
        """``gpt-4o window 128,000``: how charts label the window line."""
        return f"{self.name} window {self.context_window:,}"


@dataclass(frozen=True, slots=True)
class Catalog:
    """The models of one catalog file, in file order, with its date and sources."""

    models: tuple[ModelInfo, ...]
    as_of: str
    sources: Mapping[str, str] = field(default_factory=dict)
    _by_name: Mapping[str, ModelInfo] = field(init=False, repr=False, compare=False)
    _by_key: Mapping[str, ModelInfo] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Lookup tables, built once: exact names, then normalized names (first entry wins).
        object.__setattr__(self, "_by_name", {m.name: m for m in self.models})
        by_key: dict[str, ModelInfo] = {}
        for m in self.models:
            by_key.setdefault(normalize_model_name(m.name), m)
        object.__setattr__(self, "_by_key", by_key)

    def __iter__(self) -> Iterator[ModelInfo]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def names(self) -> list[str]:
        return [m.name for m in self.models]

    def get(self, name: str) -> ModelInfo | None:
        """The entry for ``name`` (exact, then by :func:`normalize_model_name`), or None."""
        hit = self._by_name.get(name)
        if hit is not None:
            return hit
        key = normalize_model_name(name)
        return self._by_name.get(key) or self._by_key.get(key)

    def by_provider(self) -> dict[str, list[ModelInfo]]:
        """Models grouped by provider, providers and models in file order."""
        out: dict[str, list[ModelInfo]] = {}
        for m in self.models:
            out.setdefault(m.provider, []).append(m)
        return out


def _number(entry: Mapping[str, Any], key: str, where: str, *, optional: bool = False) -> Any:
    value = entry.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParameterError(f"{where}: {key} must be a number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ParameterError(f"{where}: {key} must be a finite number >= 0, got {value!r}")
    return value


def _model(entry: Mapping[str, Any], where: str) -> ModelInfo:
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ParameterError(f"{where}: name is missing")
    where = f"{where} ({name})"
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:  # a misspelt price field would silently price the model wrong
        raise ParameterError(f"{where}: unknown field(s) {', '.join(unknown)}")
    provider = entry.get("provider")
    if provider not in PROVIDERS:
        raise ParameterError(f"{where}: provider must be one of {', '.join(PROVIDERS)}")
    tokenizer = entry.get("tokenizer")
    if tokenizer not in TOKENIZERS:
        raise ParameterError(f"{where}: tokenizer must be one of {', '.join(TOKENIZERS)}")
    window = _number(entry, "context_window", where)
    max_output = _number(entry, "max_output", where)
    if not isinstance(window, int) or not isinstance(max_output, int):
        raise ParameterError(f"{where}: context_window and max_output must be integers")
    if not 0 < max_output <= window:
        raise ParameterError(f"{where}: max_output must be in 1..context_window ({window})")
    inp = float(_number(entry, "input_per_mtok", where))
    cached_raw = _number(entry, "cached_input_per_mtok", where, optional=True)
    cached = None if cached_raw is None else float(cached_raw)
    if cached is not None and cached > inp:
        raise ParameterError(f"{where}: cached_input_per_mtok exceeds input_per_mtok")
    out = float(_number(entry, "output_per_mtok", where))
    writes: list[float | None] = []
    for key in ("cache_write_per_mtok", "cache_write_1h_per_mtok"):
        raw = _number(entry, key, where, optional=True)
        if raw is not None and raw < inp:
            raise ParameterError(f"{where}: {key} is below input_per_mtok")
        writes.append(None if raw is None else float(raw))
    storage = _number(entry, "cache_storage_per_mtok_hour", where, optional=True)
    source = _text(entry, "source", where)
    if source and not source.startswith("https://"):
        raise ParameterError(f"{where}: source must be an https:// URL, got {source!r}")
    return ModelInfo(
        str(name),
        str(provider),
        window,
        max_output,
        inp,
        cached,
        out,
        str(tokenizer),
        cache_write_per_mtok=writes[0],
        cache_write_1h_per_mtok=writes[1],
        cache_storage_per_mtok_hour=None if storage is None else float(storage),
        source=source,
        price_note=_text(entry, "price_note", where),
    )


_FIELDS = frozenset(
    {
        "name",
        "provider",
        "context_window",
        "max_output",
        "input_per_mtok",
        "cached_input_per_mtok",
        "output_per_mtok",
        "tokenizer",
        "cache_write_per_mtok",
        "cache_write_1h_per_mtok",
        "cache_storage_per_mtok_hour",
        "source",
        "price_note",
    }
)


def _text(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str):
        raise ParameterError(f"{where}: {key} must be a string, got {value!r}")
    return value.strip()


def load_catalog(text: str, *, name: str = "models.toml") -> Catalog:
    """A catalog from TOML text (the format of ``ctxlab/data/models.toml``).

    Raises:
        ParameterError: unreadable TOML, or an entry with a missing or invalid field, naming the
            file, the entry and the field.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{name}: not valid TOML: {exc}") from None
    as_of = data.get("as_of")
    if not isinstance(as_of, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", as_of):
        raise ParameterError(f"{name}: as_of must be a date like 2026-11-29")
    sources = data.get("sources", {})
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise ParameterError(f"{name}: [sources] must map names to URLs")
    entries = data.get("models", [])
    if not isinstance(entries, list) or not entries:
        raise ParameterError(f"{name}: no [[models]] entries")
    models = tuple(_model(e, f"{name}: models[{i}]") for i, e in enumerate(entries))
    seen: set[str] = set()
    for m in models:
        if m.name in seen:
            raise ParameterError(f"{name}: model {m.name!r} is listed twice")
        seen.add(m.name)
    return Catalog(models, as_of, dict(sources))


def _packaged() -> Catalog:
    text = resources.files("ctxlab").joinpath("data/models.toml").read_text(encoding="utf-8")
    return load_catalog(text, name="ctxlab/data/models.toml")


CATALOG: Catalog = _packaged()
"""The catalog shipped with ctxlab (``ctxlab/data/models.toml``)."""


def get_model(name: str) -> ModelInfo:
    """The catalog entry for ``name`` (snapshots and provider prefixes accepted).

    Raises:
        UnknownNameError: the catalog does not know the model; the message lists some it does.
    """
    info = CATALOG.get(name)
    if info is None:
        raise UnknownNameError(
            f"unknown model {name!r}: the catalog ({CATALOG.as_of}) knows "
            f"{', '.join(CATALOG.names())}"
        )
    return info
