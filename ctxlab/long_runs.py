"""Exact token counts in time linear in the text, also for texts tiktoken is slow on.

tiktoken splits a text into pieces with its pattern, then runs byte-pair merging on each piece.
Its merging is super-linear in the length of one piece: a 16 MB message that is one unbroken
word took 12 s to count, against a fraction of a second for 16 MB of prose; and its pattern
engine panics (``pyo3_runtime.PanicException``, which is not even an ``Exception``) on a run of
about a million spaces.

Such a piece can only be long where the text has a long *run*: at least :data:`LONG_RUN`
consecutive characters that are all Unicode ``White_Space``, all not ``White_Space``, or all
``\\r``, ``\\n`` or ``/``. Every piece of the cl100k_base and o200k_base patterns is whitespace
only (``\\s+(?!\\S)``, ``\\s*[\\r\\n]+``, ...), or one optional leading character, then
characters that are not whitespace (letters and marks, up to three digits, or punctuation), then
an optional contraction (``'s``) or, after punctuation, optional ``[\\r\\n]`` (cl100k_base) or
``[\\r\\n/]`` (o200k_base) characters. So a piece of ``2 * LONG_RUN + 2`` characters or more
contains such a run, and a text without one has only pieces tiktoken encodes at its ordinary
speed. ``White_Space`` is written out below, so this holds whatever Unicode tables Python's
:mod:`re` has.

A text with a long run is counted by GitHub's linear-time BPE (the ``bpe-openai`` crate, through
the ``bpe-openai`` package's bindings): the same pattern and the same rank files (its bundled
files have the sha256 tiktoken expects), and a merging algorithm its authors prove yields the
encoding byte-pair merging defines ("Properties of BPE" in the crate's README), which is what
tiktoken computes piece by piece. Tests compare both token by
token: every token of both vocabularies, every sample and fixture chat, generated text and long
adversarial runs. Every other text, nearly all of them, is counted by tiktoken as before.

Whether a text takes the linear path only changes how fast it is counted, never the count: a
run this detector misses is counted (slowly) by tiktoken, a run it finds by an encoder that gives
the same tokens.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import tiktoken

from ctxlab.errors import CtxlabError

__all__ = [
    "LINEAR_ENCODINGS",
    "LONG_RUN",
    "count_tokens",
    "has_long_run",
    "linear_counter",
]

LONG_RUN = 4096
"""Characters of one class (whitespace or not) from which a text takes the linear path. Pieces
of up to twice this length cost tiktoken about what prose costs (bench/bench_pathological.py)."""

LINEAR_ENCODINGS = frozenset({"cl100k_base", "o200k_base"})
"""The encodings the linear path supports; any other is always counted by tiktoken."""

# Unicode White_Space (PropList.txt), what \s means in tiktoken's pattern engine. Python's own \s
# also takes \x1c-\x1f, which tiktoken's pattern treats as punctuation: hence the explicit set.
_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

_BLOCK = LONG_RUN // 2
_WS_CHAR = re.compile(f"[{_WS}]")
_NON_WS_CHAR = re.compile(f"[^{_WS}]")
_NOT_NEWLINE_OR_SLASH = re.compile(r"[^\r\n/]")  # o200k_base's punctuation ends in [\r\n/]*


def has_long_run(text: str) -> bool:
    """Whether ``text`` may have a run of :data:`LONG_RUN` characters (see the module
    docstring), the only texts where one tiktoken piece can be long.

    It looks at the aligned blocks of ``LONG_RUN // 2`` characters, ``text[k*B:(k+1)*B]``: a
    run of ``2 * B`` characters holds a whole block, so a block all of one class is found for
    every run (and found only where a run of at least ``B`` characters is). In ordinary text
    each check stops at the block's first few characters: about a millisecond per megabyte,
    where one regular expression for the runs themselves took a quarter of a second.
    """
    size = len(text)
    if size < LONG_RUN:
        return False
    for start in range(0, size - _BLOCK + 1, _BLOCK):
        end = start + _BLOCK
        if (
            _WS_CHAR.search(text, start, end) is None
            or _NON_WS_CHAR.search(text, start, end) is None
            or _NOT_NEWLINE_OR_SLASH.search(text, start, end) is None
        ):
            return True
    return False


class _LinearTokenizer(Protocol):
    def count(self, text: str) -> int: ...


@functools.cache
def _linear_tokenizer(encoding_name: str) -> _LinearTokenizer:
    """GitHub's linear-time tokenizer for ``encoding_name``, loaded on first use only (no
    ordinary chat pays for it)."""
    tokenizer: _LinearTokenizer = _bindings().tokenizer_for_encoding(encoding_name)
    return tokenizer


def _bindings() -> Any:
    """The ``bpe_openai._bindings`` extension (the Rust tokenizer), loaded without running the
    ``bpe_openai`` package's ``__init__``: that parses three rank files in Python (about two
    seconds) and warns of deprecated ``importlib.resources`` calls. The module is registered
    under its own name, so a later ``import bpe_openai`` shares it."""
    name = "bpe_openai._bindings"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("bpe_openai")
    folders = package.submodule_search_locations if package is not None else None
    for folder in folders or ():
        for path in sorted(Path(folder).glob("_bindings*")):
            if path.suffix in {".so", ".pyd"}:
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is not None and spec.loader is not None:
                    module = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(module)
                    sys.modules[name] = module
                    return module
    raise CtxlabError(
        "cannot load the 'bpe-openai' package's tokenizer, which counts texts with very long "
        "runs of one kind of character; reinstall ctxlab's dependencies with: pip install -e ."
    )


def linear_counter(encoding_name: str) -> Callable[[str], int] | None:
    """The exact linear-time count of ``encoding_name`` (tiktoken's ``encode_ordinary`` length,
    lone surrogates replaced as tiktoken replaces them), or None when the encoding is not one of
    :data:`LINEAR_ENCODINGS` or the ``bpe-openai`` package cannot be loaded."""
    if encoding_name not in LINEAR_ENCODINGS:
        return None
    try:
        count = _linear_tokenizer(encoding_name).count
    except (CtxlabError, ImportError, OSError):
        return None

    def exact_count(text: str) -> int:
        try:
            return count(text)
        except UnicodeEncodeError:  # a lone surrogate, which Rust's str cannot hold
            return count(_utf8_text(text))

    return exact_count


def _utf8_text(text: str) -> str:
    """``text``, with lone surrogates replaced as tiktoken's ``encode_ordinary`` replaces them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def count_tokens(encoding: tiktoken.Encoding, text: str) -> int:
    """``len(encoding.encode_ordinary(text))``, in time linear in ``len(text)``."""
    if encoding.name in LINEAR_ENCODINGS and has_long_run(text):
        return _linear_tokenizer(encoding.name).count(_utf8_text(text))
    return len(encoding.encode_ordinary(text))
