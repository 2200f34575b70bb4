"""The optional parts of ctxlab and the packages each needs (``pip install 'ctxlab[EXTRA]'``).

``pip install ctxlab`` is the engine and the CLI. The playground, fleet evaluation and Ray are
extras (pyproject.toml's ``[project.optional-dependencies]``, whose lists a test holds equal to
:data:`EXTRAS`). A command that needs one checks for it first (:func:`require_extra`), so a
core install answers with one line naming the extra to install instead of an ImportError from
deep inside the command. Checking looks the modules up without importing them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from ctxlab.errors import MissingExtraError

__all__ = ["EXTRAS", "Extra", "installed", "missing_extra", "require_extra"]


@dataclass(frozen=True)
class Extra:
    """One extra: its name in ``ctxlab[name]``, what it adds, and the modules it installs."""

    name: str
    feature: str
    modules: tuple[str, ...]

    @property
    def install(self) -> str:
        """The command that installs it, quoted for any shell."""
        return f"pip install 'ctxlab[{self.name}]'"


EXTRAS: dict[str, Extra] = {
    extra.name: extra
    for extra in (
        Extra("app", "the playground", ("streamlit", "plotly", "pandas")),
        Extra("fleet", "fleet evaluation (DuckDB)", ("duckdb", "pyarrow")),
        Extra("ray", "Ray", ("ray", "duckdb", "pyarrow", "pandas")),
    )
}
"""Every extra the CLI or the playground checks for, by name."""


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here, looked up without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken parent package, or a module set to None
        return False


def missing_extra(name: str, who: str) -> str | None:
    """None when every module of extra ``name`` is installed; else the sentence telling
    ``who`` (e.g. ``"ctxlab app"``) to install it:
    ``"ctxlab app needs the playground: pip install 'ctxlab[app]'"``."""
    extra = EXTRAS[name]
    if all(installed(module) for module in extra.modules):
        return None
    return f"{who} needs {extra.feature}: {extra.install}"


def require_extra(name: str, who: str) -> None:
    """Raise :class:`MissingExtraError` with :func:`missing_extra`'s sentence when extra
    ``name`` is not installed."""
    message = missing_extra(name, who)
    if message is not None:
        raise MissingExtraError(message)
