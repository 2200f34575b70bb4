"""Shared by the policies that read a model's context window from ctxlab's catalog."""

from __future__ import annotations

from ctxlab.catalog import CATALOG, ModelInfo
from ctxlab.errors import ParameterError

__all__ = ["MODEL_CHOICES", "model_info"]

MODEL_CHOICES: tuple[str, ...] = tuple(CATALOG.names())
"""Every model of the catalog, in catalog order (the UI's picker)."""


def model_info(name: str) -> ModelInfo:
    """The catalog entry of ``name``; ParameterError naming ``model`` when it is unknown."""
    info = CATALOG.get(name)
    if info is None:
        raise ParameterError(f"model: {name!r} is not in ctxlab's model catalog")
    return info
