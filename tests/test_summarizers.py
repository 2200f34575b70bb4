"""Summarizers: offline, scripted, and the real openai client against a misbehaving server."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from chatgen import assistant, call, system, tool, user
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.errors import SummarizerError
from ctxlab.model import Message
from ctxlab.strategies.summarize import Summarize, SummarizeOptions
from ctxlab.summarizers import (
    NO_KEY_NEEDED,
    OfflineSummarizer,
    OpenAISummarizer,
    ScriptedSummarizer,
    Summarizer,
    SummaryCache,
    SummaryRequest,
    SummaryResponse,
    shared_cache,
)
from ctxlab.tokens import ApproxCounter, TokenCounter

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

pytest_plugins = ["fake_openai"]  # the fake_openai and closed_port fixtures

KEY = "sk-test-Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJjKk"

REQUEST = SummaryRequest(
    messages=(
        {"role": "system", "content": "Summarize the conversation."},
        {"role": "user", "content": "Conversation to summarize:\n\nUser: deploy v2.3 to eu-west-1"},
    ),
    model="gpt-4o-mini",
    max_tokens=256,
)


def make(
    server: FakeOpenAI, sleeps: list[float] | None = None, **kwargs: object
) -> OpenAISummarizer:
    """A summarizer for ``server`` with its own cache and a recorded (instant) sleep."""
    recorded = sleeps if sleeps is not None else []
    options: dict[str, object] = {
        "api_key": KEY,
        "cache": SummaryCache(),
        "timeout": 5.0,
        "max_retries": 2,
        "sleep": recorded.append,
    }
    options.update(kwargs)
    return OpenAISummarizer("gpt-4o-mini", server.base_url, **options)  # type: ignore[arg-type]


def chat() -> list[Message]:
    out = [system("Be brief.", "s")]
    for k in range(6):
        out += [
            user(f"step {k}: build release v2.{k}", f"u{k}"),
            assistant("", f"a{k}", call(f"c{k}", "run", f'{{"cmd": "make release-{k}"}}')),
            tool(f"release v2.{k} built", f"t{k}", f"c{k}"),
            assistant(f"Release v2.{k} is built.", f"r{k}"),
        ]
    return out


OPTIONS = SummarizeOptions(trigger_token_budget=0, keep_recent_messages=4, summary_max_tokens=200)


# -- the real client against the fake server ----------------------------------------------------


def test_server_receives_system_prompt_transcript_max_tokens_and_model(
    fake_openai: FakeOpenAI,
) -> None:
    response = make(fake_openai).summarize(REQUEST)
    (received,) = fake_openai.chat_requests()
    assert received.path == "/v1/chat/completions"
    assert received.body["model"] == "gpt-4o-mini"
    assert received.body["max_tokens"] == 256
    assert received.body["messages"] == [dict(m) for m in REQUEST.messages]
    assert received.body == REQUEST.body()
    assert received.authorized
    assert received.auth_sha256 == hashlib.sha256(f"Bearer {KEY}".encode()).hexdigest()
    assert response.text == fake_openai.summary_for(received.body)
    assert (response.input_tokens, response.output_tokens) == (42, 7)
    assert not response.cached


def test_summarize_strategy_sends_its_exact_request_through_the_client(
    fake_openai: FakeOpenAI, counter: TokenCounter
) -> None:
    summarizer = make(fake_openai)
    result = Summarize(OPTIONS).apply(chat(), counter, summarizer)
    (received,) = fake_openai.chat_requests()
    assert result.summary_request is not None
    assert received.body == result.summary_request.body()
    assert "User: step 0: build release v2.0" in received.body["messages"][1]["content"]
    assert received.body["max_tokens"] == 200
    assert result.inserted[1].content == fake_openai.summary_for(received.body)


def test_request_model_overrides_the_summarizer_default(fake_openai: FakeOpenAI) -> None:
    summarizer = OpenAISummarizer(
        "default-model", fake_openai.base_url, api_key=KEY, use_cache=False
    )
    summarizer.summarize(SummaryRequest(REQUEST.messages))
    summarizer.summarize(REQUEST)
    assert [r.body["model"] for r in fake_openai.chat_requests()] == [
        "default-model",
        "gpt-4o-mini",
    ]


# -- faults --------------------------------------------------------------------------------------

FAULTS = [
    ("401", ["HTTP 401", "OPENAI_API_KEY"], 1),
    ("401-echo", ["HTTP 401", "check OPENAI_API_KEY"], 1),
    ("403", ["HTTP 403", "permissions", "gpt-4o-mini"], 1),
    ("404", ["HTTP 404", "model name", "base URL"], 1),
    ("429-quota", ["insufficient_quota", "billing"], 1),
    ("non-json", ["not a Chat Completions response", "not JSON", "/v1"], 1),
    ("empty-choices", ["not a Chat Completions response", "no choices"], 1),
    ("no-content", ["not a Chat Completions response", "no message content"], 1),
    ("length", ["finish_reason 'length'", "max_tokens=200", "raise summary_max_tokens"], 1),
]


@pytest.mark.parametrize(("behaviour", "phrases", "requests"), FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_is_one_actionable_error_and_the_history_is_unchanged(
    fake_openai: FakeOpenAI,
    counter: TokenCounter,
    behaviour: str,
    phrases: list[str],
    requests: int,
) -> None:
    fake_openai.always(behaviour)
    history = chat()
    before = copy.deepcopy(history)
    summarizer = make(fake_openai)
    with pytest.raises(SummarizerError) as caught:
        Summarize(OPTIONS).apply(history, counter, summarizer)
    message = str(caught.value)
    for phrase in phrases:
        assert phrase in message
    assert KEY not in message and KEY[8:24] not in message
    assert history == before
    assert len(fake_openai.chat_requests()) == requests
    assert summarizer.cache is not None and len(summarizer.cache) == 0  # nothing cached


@pytest.mark.parametrize("status", ["429", "500", "503"])
def test_retryable_statuses_are_retried_a_bounded_number_of_times(
    fake_openai: FakeOpenAI, status: str
) -> None:
    fake_openai.always(status)
    sleeps: list[float] = []
    with pytest.raises(SummarizerError) as caught:
        make(fake_openai, sleeps, max_retries=2, backoff=0.25).summarize(REQUEST)
    assert f"HTTP {status}" in str(caught.value)
    assert "retried 2 times" in str(caught.value)
    assert len(fake_openai.chat_requests()) == 3
    # 429 carries Retry-After: 0, which is honoured; 5xx back off exponentially.
    assert sleeps == ([0.0, 0.0] if status == "429" else [0.25, 0.5])


def test_a_503_then_ok_succeeds_on_the_retry(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("503", "ok")
    sleeps: list[float] = []
    response = make(fake_openai, sleeps).summarize(REQUEST)
    assert response.text.startswith("Fake summary")
    assert len(fake_openai.chat_requests()) == 2
    assert len(sleeps) == 1


def test_a_429_then_ok_waits_for_retry_after(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("429", "ok")
    sleeps: list[float] = []
    make(fake_openai, sleeps, backoff=5.0).summarize(REQUEST)
    assert sleeps == [0.0]  # Retry-After: 0 wins over the 5 s backoff
    assert len(fake_openai.chat_requests()) == 2


def test_a_long_retry_after_is_capped_by_max_wait(fake_openai: FakeOpenAI) -> None:
    fake_openai.script("429-long", "ok")
    sleeps: list[float] = []
    make(fake_openai, sleeps, max_wait=3.0).summarize(REQUEST)
    assert sleeps == [3.0]


def test_max_retries_zero_sends_exactly_one_request(fake_openai: FakeOpenAI) -> None:
    fake_openai.always("500")
    with pytest.raises(SummarizerError, match="retried 0 times"):
        make(fake_openai, max_retries=0).summarize(REQUEST)
    assert len(fake_openai.chat_requests()) == 1


def test_a_slow_server_times_out_without_retrying(fake_openai: FakeOpenAI) -> None:
    fake_openai.delay = 5.0
    fake_openai.always("slow")
    with pytest.raises(SummarizerError, match=r"within 0\.3 s"):
        make(fake_openai, timeout=0.3).summarize(REQUEST)
    assert len(fake_openai.chat_requests()) == 1


def test_connection_refused_names_host_and_port_after_bounded_retries(closed_port: int) -> None:
    port = closed_port
    sleeps: list[float] = []
    summarizer = OpenAISummarizer(
        "m", f"http://127.0.0.1:{port}/v1", api_key=KEY, max_retries=2, sleep=sleeps.append
    )
    with pytest.raises(SummarizerError) as caught:
        summarizer.summarize(REQUEST)
    assert f"cannot reach 127.0.0.1:{port}" in str(caught.value)
    assert KEY not in str(caught.value)
    assert summarizer.http_requests == 3 and len(sleeps) == 2


def test_missing_key_says_to_set_openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    summarizer = OpenAISummarizer("gpt-4o-mini", use_cache=False)
    with pytest.raises(SummarizerError, match="OPENAI_API_KEY"):
        summarizer.summarize(REQUEST)


def test_key_is_read_from_the_environment(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    OpenAISummarizer("m", fake_openai.base_url, use_cache=False).summarize(REQUEST)
    (received,) = fake_openai.chat_requests()
    assert received.auth_sha256 == hashlib.sha256(f"Bearer {KEY}".encode()).hexdigest()


def test_a_base_url_server_needs_no_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    OpenAISummarizer("llama3", fake_openai.base_url, use_cache=False).summarize(REQUEST)
    (received,) = fake_openai.chat_requests()
    assert received.auth_sha256 == hashlib.sha256(f"Bearer {NO_KEY_NEEDED}".encode()).hexdigest()


def test_the_key_never_appears_in_repr_or_any_error(fake_openai: FakeOpenAI) -> None:
    summarizer = make(fake_openai, max_retries=0)
    assert KEY not in repr(summarizer) and KEY not in str(summarizer)
    messages = []
    for behaviour in ("401", "401-echo", "403", "404", "429", "500", "non-json", "length"):
        fake_openai.script(behaviour)
        with pytest.raises(SummarizerError) as caught:
            summarizer.summarize(REQUEST)
        messages.append(str(caught.value))
    assert all(KEY not in m and KEY[8:24] not in m for m in messages)
    for received in fake_openai.requests:
        assert KEY not in json.dumps(received.headers) + json.dumps(received.body)


# -- cache -------------------------------------------------------------------------------------


def test_the_same_request_twice_hits_the_server_once(fake_openai: FakeOpenAI) -> None:
    summarizer = make(fake_openai)
    first = summarizer.summarize(REQUEST)
    assert summarizer.is_cached(REQUEST)
    second = summarizer.summarize(REQUEST)
    assert len(fake_openai.chat_requests()) == 1
    assert second.cached and not first.cached
    assert second.text == first.text


def test_a_cache_shared_by_two_summarizers_pays_once(fake_openai: FakeOpenAI) -> None:
    cache = SummaryCache()
    make(fake_openai, cache=cache).summarize(REQUEST)
    assert make(fake_openai, cache=cache).summarize(REQUEST).cached
    assert len(fake_openai.chat_requests()) == 1


def test_different_model_or_prompt_is_a_different_cache_entry(fake_openai: FakeOpenAI) -> None:
    summarizer = make(fake_openai)
    summarizer.summarize(REQUEST)
    summarizer.summarize(SummaryRequest(REQUEST.messages, "other-model", 256))
    summarizer.summarize(SummaryRequest(REQUEST.messages[1:], "gpt-4o-mini", 256))
    assert len(fake_openai.chat_requests()) == 3


def test_disk_cache_serves_a_new_process_and_a_corrupted_entry_is_rebuilt(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    make(fake_openai, cache=SummaryCache(tmp_path)).summarize(REQUEST)
    (entry,) = tmp_path.glob("*.json")
    assert make(fake_openai, cache=SummaryCache(tmp_path)).summarize(REQUEST).cached
    assert len(fake_openai.chat_requests()) == 1

    entry.write_text('{"text": "half a JSO', encoding="utf-8")
    rebuilt = make(fake_openai, cache=SummaryCache(tmp_path)).summarize(REQUEST)
    assert not rebuilt.cached
    assert len(fake_openai.chat_requests()) == 2
    assert json.loads(entry.read_text(encoding="utf-8"))["text"] == rebuilt.text
    assert not list(tmp_path.glob(".tmp-*"))  # atomic writes leave no temporary files


@pytest.mark.parametrize(
    "garbage", [b"", b"\xff\xfe\x00", b"[]", b'{"text": 5}', b'{"text": ""}', b"null"]
)
def test_unreadable_disk_entries_are_ignored(tmp_path: Path, garbage: bytes) -> None:
    key = "a" * 64
    (tmp_path / f"{key}.json").write_bytes(garbage)
    cache = SummaryCache(tmp_path)
    assert cache.get(key) is None
    cache.put(key, SummaryResponse("ok", 1, 1, "m"))
    assert SummaryCache(tmp_path).get(key) == SummaryResponse("ok", 1, 1, "m", cached=True)


def test_cache_is_safe_under_concurrent_use(tmp_path: Path) -> None:
    cache = SummaryCache(tmp_path)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(40):
                key = hashlib.sha256(f"{i % 10}".encode()).hexdigest()
                cache.put(key, SummaryResponse(f"summary {i % 10}", i, i, "m"))
                found = cache.get(key)
                assert found is not None and found.text == f"summary {i % 10}"
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 10
    assert len(list(tmp_path.glob("*.json"))) == 10


def test_shared_cache_is_one_instance_per_directory(tmp_path: Path) -> None:
    assert shared_cache() is shared_cache()
    assert shared_cache(tmp_path) is shared_cache(str(tmp_path))
    assert shared_cache(tmp_path) is not shared_cache()


def test_cache_rejects_keys_that_are_not_digests(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        SummaryCache(tmp_path).get("../../etc/passwd")


# -- offline and scripted ------------------------------------------------------------------------


def test_offline_summary_is_deterministic_honest_and_keeps_the_facts() -> None:
    request = SummaryRequest(
        (
            {"role": "system", "content": "Summarize."},
            {
                "role": "user",
                "content": "Conversation to summarize:\n\nUser: hello there\n\n"
                "User: We decided to deploy v2.3 to eu-west-1 on Friday.\n\n"
                "Assistant: ok\n\nTool result of run [c1]: error in src/app_main.py line 42",
            },
        )
    )
    summarizer = OfflineSummarizer()
    first = summarizer.summarize(request)
    assert first == summarizer.summarize(request)
    assert first.text.startswith(OfflineSummarizer.HEADER)
    assert "User: We decided to deploy v2.3 to eu-west-1 on Friday." in first.text
    assert "src/app_main.py line 42" in first.text
    assert first.model == "offline-extractive"


def test_offline_summary_keeps_previous_summary_lines_when_updating() -> None:
    transcript = (
        "Previous summary (update it):\n- user prefers tabs\n- ticket ABC-12 is open\n\n"
        "Conversation since the previous summary:\n\nUser: now fix ABC-13 please"
    )
    text = (
        OfflineSummarizer()
        .summarize(SummaryRequest(({"role": "user", "content": transcript},)))
        .text
    )
    for fact in ("user prefers tabs", "ticket ABC-12 is open", "now fix ABC-13 please"):
        assert fact in text


@given(st.integers(1, 120), st.text(max_size=2000))
def test_offline_summary_never_exceeds_max_tokens(limit: int, text: str) -> None:
    request = SummaryRequest(({"role": "user", "content": text},), max_tokens=limit)
    response = OfflineSummarizer().summarize(request)
    assert ApproxCounter().count_text(response.text) <= limit
    assert response.output_tokens <= limit


def test_offline_summary_respects_max_tokens_with_an_exact_counter(counter: TokenCounter) -> None:
    content = "\n".join(f"User: ticket T-{k} needs fix_{k} in src/f{k}.py." for k in range(200))
    request = SummaryRequest(({"role": "user", "content": content},), max_tokens=60)
    response = OfflineSummarizer(counter).summarize(request)
    assert counter.count_text(response.text) <= 60
    assert response.text.startswith(OfflineSummarizer.HEADER)


def test_offline_summarizer_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the offline summarizer opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert OfflineSummarizer().summarize(REQUEST).text


def test_scripted_summarizer_returns_texts_in_order_and_records_requests() -> None:
    scripted = ScriptedSummarizer(["one", "two", SummarizerError("scripted failure")])
    assert isinstance(scripted, Summarizer)
    assert scripted.summarize(REQUEST).text == "one"
    assert scripted.summarize(REQUEST).text == "two"
    with pytest.raises(SummarizerError, match="scripted failure"):
        scripted.summarize(REQUEST)
    with pytest.raises(SummarizerError, match="no text left"):
        scripted.summarize(REQUEST)
    assert scripted.requests == [REQUEST] * 4
    assert scripted.requests[0] is REQUEST


def test_every_summarizer_satisfies_the_protocol(fake_openai: FakeOpenAI) -> None:
    for summarizer in (OfflineSummarizer(), ScriptedSummarizer([]), make(fake_openai)):
        assert isinstance(summarizer, Summarizer)
        assert summarizer.name and summarizer.model


def test_the_key_never_appears_in_logs_even_at_debug_level(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_openai.script("401-echo", "500", "ok")
    summarizer = make(fake_openai, max_retries=1)
    with pytest.raises(SummarizerError):
        summarizer.summarize(REQUEST)
    summarizer.summarize(REQUEST)
    assert caplog.records  # the client did log at debug level
    assert KEY not in caplog.text and KEY[8:24] not in caplog.text


def test_reasoning_models_get_max_completion_tokens_instead_of_max_tokens() -> None:
    request = SummaryRequest(({"role": "user", "content": "x"},), model="o3-mini", max_tokens=50)
    assert request.body() == {
        "model": "o3-mini",
        "messages": [{"role": "user", "content": "x"}],
        "max_completion_tokens": 50,
    }
    assert request.body("gpt-4o")["max_tokens"] == 50
    assert "max_tokens" not in request.body("openai/gpt-5-mini")


def test_two_sessions_asking_the_same_request_at_once_pay_for_one_call(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.delay = 0.5
    fake_openai.script("slow")
    shared = SummaryCache()
    first, second = make(fake_openai, cache=shared), make(fake_openai, cache=shared)
    answers: list[SummaryResponse] = []
    threads = [
        threading.Thread(target=lambda s=s: answers.append(s.summarize(REQUEST)))
        for s in (first, second)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(answers) == 2 and answers[0].text == answers[1].text
    assert len(fake_openai.chat_requests()) == 1


# -- bounded calls: one deadline, a size cap -----------------------------------------------------


def _timed_failure(summarizer: OpenAISummarizer) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(SummarizerError) as caught:
        summarizer.summarize(REQUEST)
    return str(caught.value), time.monotonic() - started


def test_a_server_trickling_its_answer_is_cut_at_the_call_deadline(
    fake_openai: FakeOpenAI,
) -> None:
    # The issue-22 probe: a byte every 0.2 s kept a timeout=2 call alive past 60 s.
    fake_openai.always("trickle")
    message, took = _timed_failure(make(fake_openai, timeout=2.0))
    assert message.startswith(f"no complete answer from 127.0.0.1:{fake_openai.port} within 2 s")
    assert took < 2.0 + 5.0  # generous: the bound is the deadline, not each read
    assert len(fake_openai.chat_requests()) == 1  # a timeout is not retried


def test_retries_and_their_waits_share_one_deadline(fake_openai: FakeOpenAI) -> None:
    fake_openai.always("503")
    summarizer = make(fake_openai, timeout=2.0, max_retries=20, backoff=0.4, sleep=time.sleep)
    message, took = _timed_failure(summarizer)
    # 0.4 + 0.8 s of waits fit in 2 s, the next 1.6 s does not: the server's own error is shown.
    assert "HTTP 503" in message and "retried 2 times" in message
    assert took < 2.0 + 5.0
    assert len(fake_openai.chat_requests()) == 3


@pytest.mark.parametrize("behaviour", ["huge", "huge-gzip"])
def test_an_answer_over_the_size_cap_is_abandoned_and_named(
    fake_openai: FakeOpenAI, counter: TokenCounter, behaviour: str
) -> None:
    fake_openai.always(behaviour)
    history = chat()
    before = copy.deepcopy(history)
    summarizer = make(fake_openai)  # the default cap: 1 MB; the answer holds 5 MB
    assert summarizer.max_response_bytes == 1_000_000
    with pytest.raises(SummarizerError) as caught:
        Summarize(OPTIONS).apply(history, counter, summarizer)
    message = str(caught.value)
    assert message.startswith(f"the answer from 127.0.0.1:{fake_openai.port} is over 1 MB;")
    assert "xxxxxxxx" not in message and KEY not in message
    assert history == before
    assert summarizer.cache is not None and len(summarizer.cache) == 0
    assert len(fake_openai.chat_requests()) == 1


def test_the_size_cap_is_configurable(fake_openai: FakeOpenAI) -> None:
    fake_openai.huge_bytes = 50_000
    fake_openai.script("huge", "huge")
    with pytest.raises(SummarizerError, match="is over 20 KB;"):
        make(fake_openai, max_response_bytes=20_000).summarize(REQUEST)
    response = make(fake_openai, max_response_bytes=200_000).summarize(REQUEST)
    assert len(response.text) == 50_000


def test_a_trickle_failure_leaves_the_history_unchanged(
    fake_openai: FakeOpenAI, counter: TokenCounter
) -> None:
    fake_openai.always("trickle")
    history = chat()
    before = copy.deepcopy(history)
    with pytest.raises(SummarizerError, match="within 1 s"):
        Summarize(OPTIONS).apply(history, counter, make(fake_openai, timeout=1.0))
    assert history == before


def test_the_memory_cache_keeps_at_most_its_byte_bound_least_recently_used_out() -> None:
    cache = SummaryCache(max_bytes=3_000)
    keys = [hashlib.sha256(str(k).encode()).hexdigest() for k in range(5)]
    for key in keys:
        cache.put(key, SummaryResponse("s" * 900, 1, 1, "m"))
    assert len(cache) < 5
    assert cache.get(keys[-1]) is not None
    assert cache.get(keys[0]) is None


def test_a_response_larger_than_the_memory_bound_is_kept_only_on_disk(tmp_path: Path) -> None:
    key = hashlib.sha256(b"huge").hexdigest()
    memory_only = SummaryCache(max_bytes=1_000)
    memory_only.put(key, SummaryResponse("x" * 5_000, 1, 1, "m"))
    assert len(memory_only) == 0
    assert memory_only.get(key) is None
    on_disk = SummaryCache(tmp_path, max_bytes=1_000)
    on_disk.put(key, SummaryResponse("x" * 5_000, 1, 1, "m"))
    assert len(on_disk) == 0
    found = on_disk.get(key)
    assert found is not None and found.text == "x" * 5_000 and found.cached


def test_key_locks_are_shared_while_held_and_not_kept_after() -> None:
    cache = SummaryCache()
    key = hashlib.sha256(b"k").hexdigest()
    lock = cache.key_lock(key)
    assert cache.key_lock(key) is lock
    del lock
    import gc

    gc.collect()
    assert len(cache._key_locks) == 0
