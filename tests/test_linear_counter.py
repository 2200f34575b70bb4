"""The default exact counter counts with bpe-openai's linear BPE, and gives tiktoken's counts.

tiktoken's ``encode_ordinary`` is the reference; tests/test_long_runs.py compares the linear
tokenizer's token ids with tiktoken's on every vocabulary token, fixture and sample file and
generated text. Here: the counter that ``get_counter`` hands out uses it, on adversarial texts
its counts are tiktoken's, and without the package tiktoken counts.
"""

from __future__ import annotations

import random
import string
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import long_runs
from ctxlab.encodings import load_encoding
from ctxlab.errors import CtxlabError
from ctxlab.tokens import TiktokenCounter, new_counter

ENCODINGS = ("o200k_base", "cl100k_base")


def _adversarial() -> list[str]:
    rng = random.Random(26)
    by_category: dict[str, list[str]] = {}
    for code in range(0, 0x110000, 7):
        char = chr(code)
        by_category.setdefault(unicodedata.category(char), []).append(char)
    texts = [
        "".join(rng.choices(string.ascii_letters, k=50_000)),  # a long word
        "9" * 30_000,
        "".join(rng.choices(string.digits, k=30_001)),  # a long digit run
        "Hello мир 世界 مرحبا שלום नमस्ते こんにちは 😀 " * 300,  # mixed scripts
        " " * 20_000 + "x",
        "\n" * 5_000 + "\t \r\n" * 2_000,
        "<|endoftext|><|endofprompt|> plain text, not special " * 50,
        "a\ud800b\udfff c \ud83d",  # lone surrogates
        "don't WON'T I'M we'Ve 'S'S'S" * 100,
        "!!!///\n\n///???" * 2_000,
    ]
    texts += ["".join(chars[:3000]) for chars in by_category.values()]  # every category
    return texts


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_default_counter_counts_with_the_linear_bpe(name: str) -> None:
    counter = new_counter(name)
    assert isinstance(counter, TiktokenCounter)
    assert counter._linear is not None


@pytest.mark.parametrize("name", ENCODINGS)
def test_adversarial_texts_count_as_tiktoken_counts_them(
    name: str, empty_count_store: Path
) -> None:
    texts = _adversarial()
    encoding = load_encoding(name)
    counter = new_counter(name)
    expected = [len(encoding.encode_ordinary(t)) for t in texts]
    assert [counter.count_text(t) for t in texts] == expected
    assert counter.texts_tokenized == len(set(texts))


@given(text=st.text(), name=st.sampled_from(ENCODINGS))
def test_generated_text_counts_as_tiktoken_counts_it(text: str, name: str) -> None:
    counter = new_counter(name)
    assert counter.count_text(text) == len(load_encoding(name).encode_ordinary(text))


def test_a_long_word_counts_as_tiktoken_counts_it() -> None:
    # 32 times LONG_RUN: far past where tiktoken's pieces turn slow, small enough for it.
    word = "".join(random.Random(16).choices(string.ascii_lowercase, k=32 * long_runs.LONG_RUN))
    encoding = load_encoding("o200k_base")
    assert new_counter("gpt-4o").count_text(word) == len(encoding.encode_ordinary(word))


def test_a_megabyte_word_is_counted_as_its_linear_tokens() -> None:
    # Beyond what tiktoken affords in a test: the count is checked against the linear
    # tokenizer's own tokens (their equality with tiktoken's is the test above, and
    # tests/test_long_runs.py). The time a 16 MB word takes is bench/bench_counters.py's.
    word = "".join(random.Random(16).choices(string.ascii_lowercase, k=1 << 18)) * 4
    tokens = long_runs._linear_tokenizer("o200k_base").encode(word)
    assert new_counter("gpt-4o").count_text(word) == len(tokens) > len(word) // 8


def test_without_the_package_tiktoken_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> object:
        raise CtxlabError("cannot load the 'bpe-openai' package's tokenizer")

    monkeypatch.setattr(long_runs, "_linear_tokenizer", missing)
    counter = new_counter("gpt-4o")
    assert isinstance(counter, TiktokenCounter)
    assert counter._linear is None
    text = "Fallback: tiktoken counts this. 12345 漢字"
    assert counter.count_text(text) == len(load_encoding("o200k_base").encode_ordinary(text))
