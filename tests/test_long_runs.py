"""ctxlab.long_runs: the linear-time path gives tiktoken's own tokens, and only long runs take it.

tiktoken's ``encode_ordinary`` is the reference throughout: the linear tokenizer must give the
same token ids (not only the same count) on every token of the vocabularies, every sample and
fixture file, generated text, and long adversarial runs.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import subprocess
import sys
import unicodedata
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import long_runs
from ctxlab.encodings import OFFLINE_ENCODINGS, load_encoding
from ctxlab.long_runs import LINEAR_ENCODINGS, LONG_RUN, count_tokens, has_long_run
from ctxlab.tokens import new_counter

ROOT = Path(__file__).resolve().parents[1]
ENCODINGS = sorted(LINEAR_ENCODINGS)
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000"


def _linear(name: str) -> Any:
    return long_runs._linear_tokenizer(name)


def _same_tokens(name: str, text: str) -> None:
    """The linear tokenizer's ids for ``text`` are tiktoken's (lone surrogates as tiktoken)."""
    expected = load_encoding(name).encode_ordinary(text)
    assert _linear(name).encode(long_runs._utf8_text(text)) == expected


def test_the_linear_path_covers_exactly_the_offline_encodings() -> None:
    assert set(OFFLINE_ENCODINGS) == LINEAR_ENCODINGS


@pytest.mark.parametrize("name", ENCODINGS)
def test_the_bundled_rank_files_are_the_ones_tiktoken_verifies(name: str) -> None:
    spec = importlib.util.find_spec("bpe_openai")
    assert spec is not None and spec.submodule_search_locations
    data = Path(spec.submodule_search_locations[0]) / "data" / f"{name}.tiktoken.gz"
    digest = hashlib.sha256(gzip.decompress(data.read_bytes())).hexdigest()
    assert digest == OFFLINE_ENCODINGS[name].sha256


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_token_of_the_vocabulary_encodes_as_tiktoken_encodes_it(name: str) -> None:
    encoding = load_encoding(name)
    texts = []
    for token in encoding._mergeable_ranks:
        try:
            texts.append(token.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    assert len(texts) > 0.9 * len(encoding._mergeable_ranks)
    linear = _linear(name)
    expected = encoding.encode_ordinary_batch(texts)
    differ = [t for t, ids in zip(texts, expected, strict=True) if linear.encode(t) != ids]
    assert differ == []
    # The whole vocabulary as one text, each token after a space, and with none between.
    for sep in (" ", ""):
        _same_tokens(name, sep.join(texts))


def _corpus_files() -> list[Path]:
    roots = [ROOT / "tests" / "fixtures", ROOT / "ctxlab" / "sample_chats"]
    files = [p for root in roots for p in sorted(root.rglob("*")) if p.is_file()]
    return [p for p in files if p.suffix in {".json", ".jsonl", ".md", ".txt", ""}]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_sample_and_fixture_file_encodes_as_tiktoken_encodes_it(name: str) -> None:
    files = _corpus_files()
    assert len(files) > 50
    linear = _linear(name)
    encoding = load_encoding(name)
    for path in files:
        raw = path.read_text(encoding="utf-8", errors="replace")
        assert linear.encode(raw) == encoding.encode_ordinary(raw), path
        if path.suffix == ".json":
            try:
                strings = _strings(json.loads(raw))
            except ValueError:
                continue  # a deliberately broken fixture: its raw text was compared above
            differ = [s for s in strings if linear.count(s) != len(encoding.encode_ordinary(s))]
            assert differ == [], path


# Runs of one character or one short unit, as long as a test can afford with tiktoken itself.
_UNITS = [
    "a",
    "Z",
    "abc",
    "aB",
    "7",
    "12345",
    "٣",
    " ",
    "\n",
    "\r\n",
    "\t",
    " \n",
    "\u3000",
    "\xa0",
    "\x85",
    "\x1c",
    "!",
    "!?",
    "/",
    "!/\n",
    ".\n/",
    "'s",
    "'S'",
    "é",
    "e\u0301",
    "\u0301",
    "ß",
    "ǅ",
    "漢字",
    "한국어",
    "ไทย",
    "עברית",
    "عربى",
    "👍",
    "👨\u200d👩\u200d👧",
    "🏳️\u200d🌈",
    "\U0001f1fa\U0001f1f8",
    "\ufeff",
    "\u200b",
    "\ue000",
    "\U0010fffd",
    "\x00",
    "<|endoftext|>",
]


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("unit", _UNITS, ids=[u.encode("unicode_escape").decode() for u in _UNITS])
def test_a_200k_run_of_one_unit_counts_as_tiktoken_counts_it(name: str, unit: str) -> None:
    text = unit * (200_000 // len(unit))
    encoding = load_encoding(name)
    expected = len(encoding.encode_ordinary(text))
    if all(c in WHITE_SPACE for c in unit) or not any(c in WHITE_SPACE for c in unit):
        assert has_long_run(text)
    assert new_counter(name).count_text(text) == expected
    for framed in (f"Hi {text} there.", f"{text}\n", f"x{text}", f"'{text}'s"):
        assert count_tokens(encoding, framed) == len(encoding.encode_ordinary(framed))


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_runs_of_every_unicode_category_count_as_tiktoken_counts_them(name: str) -> None:
    by_category: dict[str, list[str]] = {}
    for code in range(0x110000):
        category = unicodedata.category(chr(code))
        if category != "Cs":  # lone surrogates: see the surrogate test
            by_category.setdefault(category, []).append(chr(code))
    encoding = load_encoding(name)
    for category, chars in sorted(by_category.items()):
        step = max(1, len(chars) // 3000)
        mixed = "".join(chars[::step])
        one = chars[len(chars) // 2] * 20_000
        for text in (mixed * (20_000 // len(mixed) + 1), one):
            assert count_tokens(encoding, text) == len(encoding.encode_ordinary(text)), category


@pytest.mark.parametrize("name", ENCODINGS)
def test_lone_surrogates_count_as_tiktoken_counts_them(name: str) -> None:
    encoding = load_encoding(name)
    for text in ("a\ud800" * 5000, "\udfff" + "b" * 9000, "x" * 9000 + "\ud83d"):
        assert has_long_run(text)
        assert count_tokens(encoding, text) == len(encoding.encode_ordinary(text))


@cache
def _runs() -> st.SearchStrategy[str]:
    """Texts made of runs: short generated text, and units repeated up to a few LONG_RUNs."""
    unit = st.text(min_size=1, max_size=4) | st.sampled_from(_UNITS)
    run = st.builds(lambda u, n: u * n, unit, st.integers(1, 3 * LONG_RUN))
    return st.lists(run | st.text(max_size=40), min_size=1, max_size=5).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(), name=st.sampled_from(ENCODINGS))
def test_generated_text_encodes_as_tiktoken_encodes_it(text: str, name: str) -> None:
    _same_tokens(name, text)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(ENCODINGS))
def test_generated_runs_count_as_tiktoken_counts_them(data: st.DataObject, name: str) -> None:
    text = data.draw(_runs())
    _same_tokens(name, text)
    encoding = load_encoding(name)
    assert new_counter(name).count_text(text) == len(encoding.encode_ordinary(text))


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.text(max_size=3 * LONG_RUN),
    char=st.characters(codec="utf-8"),
    length=st.integers(LONG_RUN, 3 * LONG_RUN),
    suffix=st.text(max_size=50),
)
def test_every_run_of_long_run_characters_is_found(
    prefix: str, char: str, length: int, suffix: str
) -> None:
    # A run of one character is all whitespace or all not: whatever surrounds it, it is found.
    assert has_long_run(prefix + char * length + suffix)


@given(
    words=st.lists(
        st.tuples(st.text(min_size=1, max_size=LONG_RUN // 4), st.sampled_from(WHITE_SPACE)),
        max_size=30,
    )
)
@settings(max_examples=100, deadline=None)
def test_text_whose_runs_are_short_is_left_to_tiktoken(words: list[tuple[str, str]]) -> None:
    # Words no longer than a quarter of LONG_RUN, each followed by whitespace: no block of
    # LONG_RUN // 2 characters can be all whitespace, all not, or all [\r\n/].
    text = "".join(
        word.translate({ord(c): "x" for c in WHITE_SPACE + "\r\n/"}) + ws for word, ws in words
    )
    assert not has_long_run(text)


def test_ordinary_chats_never_load_the_linear_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str) -> Any:
        raise AssertionError(f"linear tokenizer loaded for ordinary text ({name})")

    monkeypatch.setattr(long_runs, "_linear_tokenizer", refuse)
    prose = "\n\n".join(
        (ROOT / n).read_text(encoding="utf-8") for n in ("README.md", "ARCHITECTURE.md")
    )
    encoding = load_encoding("o200k_base")
    assert len(prose) > 4 * LONG_RUN
    assert count_tokens(encoding, prose) == len(encoding.encode_ordinary(prose))


def test_a_long_word_takes_the_linear_path(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    real = long_runs._linear_tokenizer

    def record(name: str) -> Any:
        asked.append(name)
        return real(name)

    monkeypatch.setattr(long_runs, "_linear_tokenizer", record)
    counter = new_counter("gpt-4o")
    assert counter.count_text("a" * (2 * LONG_RUN)) == len(
        load_encoding("o200k_base").encode_ordinary("a" * (2 * LONG_RUN))
    )
    assert asked == ["o200k_base"]


def test_another_encoding_is_always_counted_by_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str) -> Any:
        raise AssertionError(name)

    monkeypatch.setattr(long_runs, "_linear_tokenizer", refuse)
    base = load_encoding("cl100k_base")
    other = tiktoken.Encoding(
        "other",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={},
    )
    assert count_tokens(other, "a" * (2 * LONG_RUN)) == len(base.encode_ordinary("a" * 8192))


def test_a_run_of_a_million_spaces_is_counted_where_tiktoken_panics() -> None:
    # tiktoken's pattern engine overflows its stack on this run (pyo3 PanicException); the
    # count is the linear tokenizer's, which equals tiktoken's for shorter runs of spaces.
    encoding = load_encoding("o200k_base")
    spaces = " " * 1_000_000
    assert count_tokens(encoding, spaces) == _linear("o200k_base").count(spaces) > 0
    for n in (LONG_RUN, 50_001, 200_000):
        assert count_tokens(encoding, " " * n) == len(encoding.encode_ordinary(" " * n))


def test_counting_a_sample_chat_takes_the_linear_tokenizer_and_never_builds_tiktoken(
    empty_count_store: Path,
) -> None:
    # The default exact counter counts with bpe-openai; tiktoken's encoding (the slower start)
    # is built only when someone asks for it. The store is empty: with the run's shared store
    # already holding this chat's counts (an earlier test counted it), nothing is tokenized and
    # bpe-openai never loads.
    script = (
        "import sys\n"
        "from ctxlab import load_chat\n"
        "from ctxlab import encodings\n"
        "from ctxlab.tokens import get_counter\n"
        "chat = load_chat('ctxlab/sample_chats/coding_agent_session.json')\n"
        "assert get_counter('gpt-4o').count_messages(chat) > 0\n"
        "print('bpe_openai._bindings' in sys.modules,"
        " encodings.load_encoding.cache_info().currsize)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True 0"
