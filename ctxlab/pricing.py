"""Model prices and the cost of one model call: an editable table with an as-of date.

Prices change often and differ by region, tier and contract: this table is a convenience, not a
quote. Every figure is in US dollars per million tokens (input, cached input, output), copied
from the providers' public list prices (OpenAI, Anthropic, DeepSeek, Google) for standard,
non-batch, short-context use, through the model catalog (:mod:`ctxlab.catalog`). Edit it:
:meth:`PriceTable.with_price` adds or overrides a model,
:meth:`PriceTable.from_csv` / :meth:`PriceTable.from_mapping` load your own figures, and
:meth:`PriceTable.to_csv` writes the table out as a starting point.

The cost of one call is::

    (input_tokens - cached_input_tokens - cache_write_tokens - cache_write_1h_tokens)
        * input_per_mtok
    + cached_input_tokens * cached_input_per_mtok      (input_per_mtok when no cache price)
    + cache_write_tokens * cache_write_per_mtok        (input_per_mtok when writes are free)
    + cache_write_1h_tokens * cache_write_1h_per_mtok  (cache_write_per_mtok when not listed)
    + output_tokens * output_per_mtok
    all divided by 1,000,000

``input_tokens`` includes the cached and the written ones, as in OpenAI's
``usage.prompt_tokens``. Each provider's prompt-cache rule is in its prices: Gemini, DeepSeek
and OpenAI up to GPT-5.5 discount cache reads and charge nothing extra for writes (no write
price); Anthropic discounts reads (0.1x input) and charges 1.25x input for 5-minute cache writes
and 2x for 1-hour writes; OpenAI's GPT-5.6 and later charge 1.25x input for writes.
:meth:`ModelPrice.usage_cost` prices a call's recorded usage
(:class:`~ctxlab.formats.CallUsage`, whose Anthropic ``input_tokens`` excludes the cache).
Gemini's explicit-cache storage (per million tokens per hour) is in the catalog
(``ModelInfo.cache_storage_per_mtok_hour``), not in a call's cost: it depends on how long a
cache is kept, which no transcript records.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from ctxlab.catalog import CATALOG, normalize_model_name
from ctxlab.csvtext import csv_text
from ctxlab.errors import ParameterError

if TYPE_CHECKING:
    from ctxlab.formats import CallUsage

__all__ = [
    "DEFAULT_PRICES",
    "PRICES_AS_OF",
    "PRICES_SOURCE",
    "ModelPrice",
    "PriceTable",
    "format_usd",
    "normalize_model_name",
]

PRICES_AS_OF = CATALOG.as_of
PRICES_SOURCE = (
    "The model catalog (ctxlab/data/models.toml): providers' public list prices, standard tier, "
    "prompts under 200k tokens, as known when it was compiled (not fetched live); sources: "
    + ", ".join(CATALOG.sources.values())
    + ". Prices change: check the providers' pages and edit the table "
    "(PriceTable.with_price / from_csv)."
)

_MTOK = 1_000_000
_CSV_FIELDS = ("model", "input_per_mtok", "cached_input_per_mtok", "output_per_mtok")
_WRITE_FIELDS = ("cache_write_per_mtok", "cache_write_1h_per_mtok")
"""Optional CSV columns (and mapping keys): cache-write prices, empty when writes are free."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens for one model.

    ``cached_input_per_mtok`` is the price of prompt tokens served from the provider's prompt
    cache, or None when the model has no cache discount (cached tokens then cost the input
    price). ``cache_write_per_mtok`` / ``cache_write_1h_per_mtok`` are the prices of prompt
    tokens written to the cache (Anthropic's 5-minute and 1-hour writes), None when a write costs
    the input price. All prices are finite and >= 0.
    """

    model: str
    input_per_mtok: float
    cached_input_per_mtok: float | None
    output_per_mtok: float
    cache_write_per_mtok: float | None = None
    cache_write_1h_per_mtok: float | None = None

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ParameterError("a price needs a model name")
        for name in (*_CSV_FIELDS[1:], *_WRITE_FIELDS):
            value = getattr(self, name)
            if value is None and name in ("cached_input_per_mtok", *_WRITE_FIELDS):
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ParameterError(
                    f"price of {self.model!r}: {name} must be a number >= 0, got {value!r}"
                )

    @property
    def write_price(self) -> float:
        """USD per million tokens written to the cache (5-minute writes): the input price when the
        provider charges nothing extra for writes."""
        return (
            self.input_per_mtok if self.cache_write_per_mtok is None else self.cache_write_per_mtok
        )

    @property
    def write_1h_price(self) -> float:
        """USD per million tokens of 1-hour cache writes (the 5-minute price when not listed)."""
        if self.cache_write_1h_per_mtok is None:
            return self.write_price
        return self.cache_write_1h_per_mtok

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
        cache_write_1h_tokens: int = 0,
    ) -> float:
        """USD of one call (formula in the module docstring).

        Raises:
            ParameterError: a negative token count, or more cached and written than input tokens.
        """
        if min(input_tokens, output_tokens, cached_input_tokens) < 0 or (
            min(cache_write_tokens, cache_write_1h_tokens) < 0
        ):
            raise ParameterError("token counts must be >= 0")
        if cached_input_tokens > input_tokens:
            raise ParameterError(
                f"cached_input_tokens ({cached_input_tokens}) exceeds input_tokens "
                f"({input_tokens}): input tokens include the cached ones"
            )
        special = cached_input_tokens + cache_write_tokens + cache_write_1h_tokens
        if special > input_tokens:
            raise ParameterError(
                f"cached and cache-write tokens ({special}) exceed input_tokens "
                f"({input_tokens}): input tokens include them"
            )
        cached_price = (
            self.input_per_mtok
            if self.cached_input_per_mtok is None
            else self.cached_input_per_mtok
        )
        cost = (
            (input_tokens - cached_input_tokens) * self.input_per_mtok
            + cached_input_tokens * cached_price
            + output_tokens * self.output_per_mtok
        )
        if cache_write_tokens or cache_write_1h_tokens:  # (kept apart: the same floats as before)
            cost += cache_write_tokens * (self.write_price - self.input_per_mtok)
            cost += cache_write_1h_tokens * (self.write_1h_price - self.input_per_mtok)
        return cost / _MTOK

    def usage_cost(self, usage: CallUsage) -> float:
        """USD of one call as the transcript recorded it: cache reads at the cached price, cache
        writes at the write prices (1-hour writes at the 1-hour price when the usage splits them
        out), the rest of the prompt at the input price."""
        written = usage.cache_creation_input_tokens
        written_1h = min(usage.cache_creation_1h_input_tokens, written)
        return self.cost(
            usage.prompt_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            written - written_1h,
            written_1h,
        )


def format_usd(value: float | None, *, signed: bool = False) -> str:
    """US dollars as people write them: ``$0.0454``, ``-$0.0454``, ``$1,327,818.70``.

    Amounts under a dollar keep four decimals (a call costs fractions of a cent), larger ones
    two. ``signed`` writes ``+`` before a positive amount (a difference); None is ``n/a``.

    >>> [format_usd(v) for v in (0.04537, -0.0454, 1327818.6957, 0, None)]
    ['$0.0454', '-$0.0454', '$1,327,818.70', '$0.00', 'n/a']
    >>> format_usd(0.5, signed=True)
    '+$0.5000'
    """
    if value is None:
        return "n/a"
    if not math.isfinite(value):
        return "n/a"
    size = abs(value)
    if size == 0:
        return "$0.00"
    digits = f"{size:,.4f}" if size < 1 else f"{size:,.2f}"
    if digits.strip("0.,") == "":  # rounds to zero at four decimals: say how small
        digits = f"{size:.10f}".rstrip("0")
    sign = "-" if value < 0 else "+" if signed else ""
    return f"{sign}${digits}"


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model name; immutable (edits return a new table).

    Lookups are exact first, then by :func:`normalize_model_name`, so dated snapshots such as
    ``gpt-4o-2024-08-06`` find ``gpt-4o``. An unknown model has no price (None), never an error.
    """

    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    as_of: str = PRICES_AS_OF
    source: str = PRICES_SOURCE

    @classmethod
    def of(
        cls, prices: Iterable[ModelPrice], as_of: str = PRICES_AS_OF, source: str = ""
    ) -> PriceTable:
        """A table of ``prices`` (a later entry for the same model wins)."""
        return cls({p.model: p for p in prices}, as_of, source)

    def __len__(self) -> int:
        return len(self.prices)

    def __contains__(self, model: object) -> bool:
        return isinstance(model, str) and self.get(model) is not None

    def models(self) -> list[str]:
        return list(self.prices)

    def get(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when the table does not know it."""
        hit = self.prices.get(model)
        if hit is not None:
            return hit
        key = normalize_model_name(model)
        hit = self.prices.get(key)
        if hit is not None:
            return hit
        for price in self.prices.values():
            if normalize_model_name(price.model) == key:
                return price
        return None

    def with_price(
        self,
        model: str | ModelPrice,
        input_per_mtok: float | None = None,
        output_per_mtok: float | None = None,
        cached_input_per_mtok: float | None = None,
    ) -> PriceTable:
        """A copy with one model added or replaced.

        Args:
            model: a :class:`ModelPrice`, or the model name (then give the prices).
            input_per_mtok / output_per_mtok: USD per million input / output tokens.
            cached_input_per_mtok: USD per million cached input tokens, or None for no discount.
        """
        if isinstance(model, ModelPrice):
            price = model
        else:
            if input_per_mtok is None or output_per_mtok is None:
                raise ParameterError(f"price of {model!r} needs input and output prices")
            price = ModelPrice(model, input_per_mtok, cached_input_per_mtok, output_per_mtok)
        return PriceTable({**self.prices, price.model: price}, self.as_of, self.source)

    def cost(
        self,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
        cache_write_1h_tokens: int = 0,
    ) -> float | None:
        """USD of one call to ``model``, or None when the model has no price."""
        price = self.get(model)
        if price is None:
            return None
        return price.cost(
            input_tokens,
            output_tokens,
            cached_input_tokens,
            cache_write_tokens,
            cache_write_1h_tokens,
        )

    def usage_cost(self, model: str, usage: CallUsage) -> float | None:
        """:meth:`ModelPrice.usage_cost` of ``model``, or None when the model has no price."""
        price = self.get(model)
        return None if price is None else price.usage_cost(usage)

    # -- editing: mappings and CSV ---------------------------------------------------------------
    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], as_of: str = PRICES_AS_OF, source: str = "user mapping"
    ) -> PriceTable:
        """A table from ``{model: {"input_per_mtok": .., "output_per_mtok": .., ...}}``.

        A value may also be a sequence ``(input, cached_input, output)``.

        Raises:
            ParameterError: a missing or invalid price, naming the model.
        """
        out: list[ModelPrice] = []
        for model, value in data.items():
            if isinstance(value, ModelPrice):
                out.append(value)
            elif isinstance(value, Mapping):
                out.append(_price_from_fields(model, value, f"model {model!r}"))
            elif isinstance(value, list | tuple) and len(value) == 3:
                out.append(ModelPrice(model, value[0], value[1], value[2]))
            else:
                raise ParameterError(
                    f"model {model!r}: expected a mapping of prices or "
                    f"(input, cached_input, output), got {value!r}"
                )
        return cls.of(out, as_of, source)

    def to_mapping(self) -> dict[str, dict[str, float | None]]:
        return {
            p.model: {
                "input_per_mtok": p.input_per_mtok,
                "cached_input_per_mtok": p.cached_input_per_mtok,
                "output_per_mtok": p.output_per_mtok,
                "cache_write_per_mtok": p.cache_write_per_mtok,
                "cache_write_1h_per_mtok": p.cache_write_1h_per_mtok,
            }
            for p in self.prices.values()
        }

    @classmethod
    def from_csv(
        cls, source: str | os.PathLike[str] | IO[str], as_of: str = PRICES_AS_OF
    ) -> PriceTable:
        """A table from CSV with columns model, input_per_mtok, cached_input_per_mtok,
        output_per_mtok (an empty cached price means no cache discount), and optionally
        cache_write_per_mtok, cache_write_1h_per_mtok (empty: writes cost the input price).

        Raises:
            ParameterError: a missing column or a bad number, naming the line.
        """
        if isinstance(source, str | os.PathLike):
            with open(source, encoding="utf-8", newline="") as handle:
                return cls._read_csv(handle, as_of, f"CSV file {os.fspath(source)}")
        return cls._read_csv(source, as_of, "CSV")

    @classmethod
    def _read_csv(cls, handle: IO[str], as_of: str, label: str) -> PriceTable:
        reader = csv.DictReader(handle)
        missing = [c for c in _CSV_FIELDS if c not in (reader.fieldnames or ())]
        if missing:
            raise ParameterError(f"{label}: missing column(s) {', '.join(missing)}")
        prices = [
            _price_from_fields(row["model"], row, f"{label} line {reader.line_num}")
            for row in reader
        ]
        return cls.of(prices, as_of, label)

    def to_csv(self, target: str | os.PathLike[str] | IO[str] | None = None) -> str:
        """Write the table as CSV to ``target`` (path or text stream); returns the CSV text."""

        def number(value: float | None) -> str:
            return "" if value is None else f"{value:g}"

        return csv_text(
            (*_CSV_FIELDS, *_WRITE_FIELDS),
            (
                [
                    p.model,
                    f"{p.input_per_mtok:g}",
                    number(p.cached_input_per_mtok),
                    f"{p.output_per_mtok:g}",
                    number(p.cache_write_per_mtok),
                    number(p.cache_write_1h_per_mtok),
                ]
                for p in self.prices.values()
            ),
            target,
        )


def _price_from_fields(model: Any, row: Mapping[str, Any], where: str) -> ModelPrice:
    def number(key: str, optional: bool = False) -> float | None:
        raw = row.get(key)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            if optional:
                return None
            raise ParameterError(f"{where}: {key} is missing")
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise ParameterError(f"{where}: {key} must be a number, got {raw!r}") from None

    name = str(model or "").strip()
    if not name:
        raise ParameterError(f"{where}: model is missing")
    inp = number("input_per_mtok")
    out = number("output_per_mtok")
    assert inp is not None and out is not None  # not optional: number() raised otherwise
    try:
        return ModelPrice(
            name,
            inp,
            number("cached_input_per_mtok", optional=True),
            out,
            number("cache_write_per_mtok", optional=True),
            number("cache_write_1h_per_mtok", optional=True),
        )
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None


# USD per million tokens: (input, cached input, output, cache writes), from the model catalog;
# plus ctxlab's OfflineSummarizer, which runs locally and is free.
_DEFAULTS: tuple[ModelPrice, ...] = (
    *(
        ModelPrice(
            m.name,
            m.input_per_mtok,
            m.cached_input_per_mtok,
            m.output_per_mtok,
            m.cache_write_per_mtok,
            m.cache_write_1h_per_mtok,
        )
        for m in CATALOG
    ),
    ModelPrice("offline-extractive", 0.0, 0.0, 0.0),
)

DEFAULT_PRICES = PriceTable.of(_DEFAULTS, PRICES_AS_OF, PRICES_SOURCE)
