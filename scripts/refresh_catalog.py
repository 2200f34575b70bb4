"""Print the diff of ctxlab's model catalog against the genai-prices package's offline data.

    python scripts/refresh_catalog.py            # the diff of ctxlab/data/models.toml
    python scripts/refresh_catalog.py --catalog other.toml

Lists the chat models of OpenAI, Anthropic, Google Gemini and DeepSeek that genai-prices knows and
the catalog lacks, then every price or context window that differs for models in both (marked
``noted`` when the entry's ``price_note`` explains it, ``PRICE`` when nothing does). Reference
prices are read as of the catalog's ``as_of`` date, so the output is the same on every run. It
reports only: check each model against the vendor's page, then edit models.toml by hand (with a
``source`` URL, and a ``price_note`` where you keep a figure genai-prices does not have).

Needs ``pip install genai-prices`` (in ctxlab's ``test`` extra). Exit status 0 (1 when the
catalog cannot be read or genai-prices is not installed).
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

from ctxlab.catalog import CATALOG, Catalog, load_catalog
from ctxlab.catalog_diff import diff_catalog, genai_prices_reference, reference_at
from ctxlab.errors import CtxlabError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalog", type=Path, help="a models.toml (default: ctxlab's own)")
    args = parser.parse_args(argv)
    try:
        catalog: Catalog = (
            load_catalog(args.catalog.read_text(encoding="utf-8"), name=str(args.catalog))
            if args.catalog
            else CATALOG
        )
        version = metadata.version("genai-prices")
    except (CtxlabError, OSError) as exc:
        print(f"refresh_catalog: {exc}", file=sys.stderr)
        return 1
    except metadata.PackageNotFoundError:
        print("refresh_catalog: pip install genai-prices (ctxlab[test])", file=sys.stderr)
        return 1
    at = reference_at(catalog)
    diff = diff_catalog(catalog, genai_prices_reference(at))
    print(f"catalog as of {catalog.as_of} ({len(catalog)} models) vs genai-prices {version}")
    print("\n".join(diff.lines()))
    unexplained = diff.unexplained_prices()
    print(f"price differences without a price_note: {len(unexplained)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
