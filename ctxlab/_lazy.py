"""Names a package exports but imports only on first use (PEP 562 module ``__getattr__``).

``import ctxlab`` (and ``ctxlab.corpus``, ``ctxlab.summarizers``) must stay cheap: the CLI's start
and the pool's workers pay for every module they import. A package lists where each lazy name
lives and binds the two functions this module builds.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, namespace: dict[str, Any], homes: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``homes`` maps each lazy name to the module
    (absolute name) that defines it; a name is imported once, then kept in ``namespace`` (the
    package's ``globals()``). ``__dir__`` lists ``namespace``, ``homes`` and ``public``."""
    listed = frozenset(public) | frozenset(homes)

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | listed)

    return getattr_, dir_
