"""Token counting: the OpenAI cookbook's figures, offline encodings, and the caches."""

from __future__ import annotations

import gc
import hashlib
import json
import socket
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.registry
from chatgen import chats
from hypothesis import given, settings
from tiktoken_ext import openai_public

from ctxlab.encodings import OFFLINE_ENCODINGS, load_encoding
from ctxlab.errors import UnknownNameError
from ctxlab.model import Message, Role
from ctxlab.tokens import (
    TEXT_ENTRY_BYTES,
    TEXT_KEY_BYTES,
    TokenCounter,
    _text_key,
    get_counter,
    new_counter,
)

FACTS_FILE = Path(__file__).parent / "fixtures/ground_truth/openai_cookbook_token_counts.json"
DATA: dict[str, Any] = json.loads(FACTS_FILE.read_text())
FACTS = DATA["facts"]


def to_messages(raw: list[dict[str, str]]) -> list[Message]:
    return [
        Message(Role(m["role"]), m["content"], f"m{i}", name=m.get("name"))
        for i, m in enumerate(raw)
    ]


def test_all_fifteen_cookbook_facts_are_present() -> None:
    assert len(FACTS) == 15


@pytest.mark.parametrize("fact", FACTS, ids=[f["id"] for f in FACTS])
def test_counts_reproduce_the_cookbook_estimate(fact: dict[str, Any]) -> None:
    counter = get_counter(fact["model"])
    total = counter.count_messages(to_messages(fact["messages"]))
    if "tools" in fact:
        total += counter.count_tools(fact["tools"])
    assert total == fact["cookbook_estimate"]


def _string_cases() -> list[tuple[str, str, list[int]]]:
    cases = []
    for example in DATA["string_examples"]:
        tokens = example["tokens"]
        if isinstance(tokens, list):
            cases.append((example["text"], example["encoding"], tokens))
        else:
            cases.extend((example["text"], enc, toks) for enc, toks in tokens.items())
    return cases


@pytest.mark.parametrize(("text", "encoding", "tokens"), _string_cases())
def test_offline_encodings_give_the_cookbook_token_lists(
    text: str, encoding: str, tokens: list[int]
) -> None:
    assert load_encoding(encoding).encode(text) == tokens
    assert get_counter(encoding).count_text(text) == len(tokens)


def _cache_path(cache_dir: Path, name: str) -> Path:
    url = OFFLINE_ENCODINGS[name].blob_url
    return cache_dir / hashlib.sha1(url.encode()).hexdigest()


@pytest.fixture
def fresh_tiktoken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No network, an empty tiktoken cache dir, and no encoding loaded yet."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    saved = dict(tiktoken.registry.ENCODINGS)
    tiktoken.registry.ENCODINGS.clear()
    load_encoding.cache_clear()
    yield tmp_path
    load_encoding.cache_clear()
    tiktoken.registry.ENCODINGS.clear()
    tiktoken.registry.ENCODINGS.update(saved)


def test_encodings_load_without_network_into_an_empty_cache(fresh_tiktoken: Path) -> None:
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    for name in OFFLINE_ENCODINGS:
        encoding = load_encoding(name)
        assert isinstance(encoding, tiktoken.Encoding)
        assert encoding.encode("tiktoken is great!")[-1] == 0
        data = _cache_path(fresh_tiktoken, name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == OFFLINE_ENCODINGS[name].sha256


def test_a_corrupted_cache_file_is_replaced(fresh_tiktoken: Path) -> None:
    path = _cache_path(fresh_tiktoken, "cl100k_base")
    path.write_bytes(b"not a rank file")
    encoding = load_encoding("cl100k_base")
    assert encoding.encode("2 + 2 = 4") == [17, 489, 220, 17, 284, 220, 19]
    expected = OFFLINE_ENCODINGS["cl100k_base"].sha256
    assert hashlib.sha256(path.read_bytes()).hexdigest() == expected


@settings(max_examples=30)
@given(chats(min_turns=1))
def test_a_second_count_of_the_same_chat_tokenizes_nothing(chat: tuple[Message, ...]) -> None:
    counter = get_counter("gpt-4o")
    first = counter.count_messages(chat)
    before = counter.texts_tokenized
    assert counter.count_messages(chat) == first
    assert counter.texts_tokenized == before


def test_count_messages_is_the_sum_of_messages_plus_reply_priming(counter: TokenCounter) -> None:
    chat = to_messages(FACTS[0]["messages"])
    per = [counter.count_message(m) for m in chat]
    assert counter.count_messages(chat) == sum(per) + counter.accounting.reply_priming
    assert counter.count_messages([]) == counter.accounting.reply_priming


def test_counted_returns_the_same_object_for_the_same_sequence(counter: TokenCounter) -> None:
    chat = tuple(to_messages(FACTS[3]["messages"]))
    counted = counter.counted(chat)
    assert counter.counted(chat) is counted
    assert counter.counted(counted.messages) is counted
    assert counted.total == counter.count_messages(chat)
    assert list(counted.counts) == counter.counts(chat)


def test_the_approximate_counter_says_it_is_not_exact() -> None:
    approx = get_counter("approx")
    assert approx.is_exact is False
    assert "approximate" in approx.label
    assert get_counter("gpt-4o").is_exact is True


def test_an_unknown_model_raises_unknown_name_error() -> None:
    with pytest.raises(UnknownNameError, match="no-such-model"):
        get_counter("no-such-model")
    with pytest.raises(UnknownNameError):
        load_encoding("r50k_base")


@pytest.mark.parametrize("name", sorted(OFFLINE_ENCODINGS))
def test_load_encoding_builds_what_tiktoken_builds(name: str) -> None:
    # ctxlab decodes the verified rank file itself and holds openai_public's pattern and special
    # tokens: both must be exactly what tiktoken's own constructor gives.
    ours = load_encoding(name)
    theirs = getattr(openai_public, name)()  # reads the rank file load_encoding put in the cache
    assert ours.name == theirs["name"]
    assert ours._pat_str == theirs["pat_str"]
    assert ours._special_tokens == theirs["special_tokens"]
    assert ours._mergeable_ranks == theirs["mergeable_ranks"]
    reference = tiktoken.Encoding(**theirs)
    assert ours.max_token_value == reference.max_token_value
    text = "Grüße, 東京! 1234567 tokens   \n\n  it's <|endoftext|> 😀"
    assert ours.encode(text, allowed_special="all") == reference.encode(text, allowed_special="all")


# -- bounded, shared, released caches (issue 22) -------------------------------------------------


def _long_chat(tag: str, n: int = 200) -> tuple[Message, ...]:
    return tuple(
        Message(Role.USER if k % 2 == 0 else Role.ASSISTANT, f"{tag} message {k} " * 5, f"{tag}{k}")
        for k in range(n)
    )


def test_a_chat_counted_for_two_holders_is_one_counted_chat_and_tokenized_once() -> None:
    counter = new_counter("gpt-4o")
    chat = _long_chat("shared")
    first = counter.counted(chat)
    tokenized = counter.texts_tokenized
    second = counter.counted(chat)
    assert second is first
    assert counter.texts_tokenized == tokenized


def test_the_counts_of_a_chat_are_released_with_its_last_holder() -> None:
    counter = new_counter("gpt-4o")
    chat = _long_chat("released")
    counted = counter.counted(chat)
    by_message = counter._by_message  # type: ignore[attr-defined]
    by_chat = counter._by_chat  # type: ignore[attr-defined]
    assert len(by_message) == len(chat)
    assert len(by_chat) == 1
    del counted
    gc.collect()
    # The counted chat went with its last holder; the messages' counts stay while they do.
    assert len(by_chat) == 0
    assert len(by_message) == len(chat)
    tokenized = counter.texts_tokenized
    assert counter.counted(chat).total > 0  # recounted from the per-message counts
    assert counter.texts_tokenized == tokenized
    del chat
    gc.collect()
    assert len(by_message) == 0
    assert len(by_chat) == 0


def test_the_per_text_cache_holds_at_most_its_byte_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXLAB_TEXT_COUNT_CACHE_MB", str(20 * TEXT_ENTRY_BYTES / 1024 / 1024))
    counter = new_counter("approx")
    by_text = counter._by_text  # type: ignore[attr-defined]
    for k in range(100):
        counter.count_text(f"text number {k} " * 50)
    assert by_text.held_bytes == 20 * TEXT_ENTRY_BYTES
    assert len(by_text) == 20
    # The most recent texts are the ones kept.
    assert _text_key(f"text number {99} " * 50) in by_text
    assert _text_key(f"text number {0} " * 50) not in by_text


def test_the_per_text_cache_keeps_a_digest_not_the_text() -> None:
    counter = new_counter("gpt-4o")
    huge = " word" * 1_000
    assert counter.count_text(huge) == 1_000
    by_text = counter._by_text  # type: ignore[attr-defined]
    assert by_text.get(_text_key(huge)) == 1_000
    # What is kept is a 16-byte digest; the text itself is not referenced by the cache.
    keys = list(by_text._entries)
    assert keys == [_text_key(huge)] and len(keys[0]) == TEXT_KEY_BYTES
    tokenized = counter.texts_tokenized
    assert counter.count_text(" word" * 1_000) == 1_000  # an equal text, another object
    assert counter.texts_tokenized == tokenized


def test_texts_differing_only_by_a_lone_surrogate_are_counted_apart() -> None:
    counter = new_counter("approx")
    assert _text_key("a\ud800") != _text_key("a\ufffd")
    assert counter.count_text("abc\ud800") == 1
    assert counter.count_text("abcd\ud800") == 2


def test_compacting_keeps_every_live_count_and_tokenizes_nothing_again() -> None:
    from ctxlab.tokens import compact_shared_counters, get_counter

    counter = get_counter("gpt-4o")
    chat = tuple(
        Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, f"compact me {i}", f"cm{i}")
        for i in range(50)
    )
    counted = counter.counted(chat)
    before = counter.texts_tokenized
    compact_shared_counters()
    assert counter.counted(chat) is counted  # the per-chat table kept the live entry
    assert counter.counts(list(chat)) == list(counted.counts)
    assert counter.texts_tokenized == before


def test_forgetting_texts_keeps_live_chats_counted_and_recounts_only_new_copies(
    empty_count_store: Path,
) -> None:
    from ctxlab.tokens import new_counter

    counter = new_counter("gpt-4o")
    chat = tuple(Message(Role.USER, f"forget me {i}", f"fm{i}") for i in range(20))
    counted = counter.counted(chat)
    counter.compact(forget_texts=True)
    before = counter.texts_tokenized
    assert counter.counted(chat) is counted  # a live chat keeps its counts
    same_texts = tuple(m.replace(id=f"other{i}") for i, m in enumerate(chat))
    assert counter.counts(list(same_texts)) == list(counted.counts)
    # The text memo was emptied: every text is looked up again, and found in the count store
    # the first count wrote (nothing is tokenized twice).
    assert counter.texts_tokenized == before
    assert counter.texts_from_store == before == len(chat) + 1  # the contents and "user"
