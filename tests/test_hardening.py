"""Issue 6 in the app: size limits, summarizer faults, the shared cache under concurrent use.

* Limits: pasted text gets the same limit as uploads (``server.maxUploadSize``), with a message
  that says the size, the limit and what to do; the limit is stated next to both inputs; peak
  memory of loading the largest allowed chat through the app's load path is measured.
* Faults: with the summarize strategy and an OpenAI-compatible endpoint that misbehaves on cue,
  "Run summarizer" shows an actionable error and leaves the chat, the parameters and the shown
  results exactly as they were.
* The summary cache: two threads summarizing the same request at once get the same answer from
  a bounded number of server calls; a corrupted disk entry is rebuilt (see also
  tests/test_summarizers.py).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from app_support import PLAYGROUND, ROOT, page, param_widget
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from ctxlab import summarizers
from ctxlab.errors import CtxlabError
from ctxlab.summarizers import OpenAISummarizer, SummaryCache, SummaryRequest
from ctxlab.ui.session import check_size

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

pytest_plugins = ["fake_openai"]

CHAT = "support_function_calls"
KEY = "sk-proj-HARDENINGTEST" + "q8Zx3Lm5Nv7Bc9Df1Gh"


# -- limits ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "over"),
    [
        ("x" * (1024 * 1024), False),
        ("x" * (1024 * 1024 + 1), True),
        ("é" * (512 * 1024), False),  # 2 bytes each: exactly 1 MB
        ("é" * (512 * 1024 + 1), True),
        ("€" * 349_525, False),  # 3 bytes each: 1,048,575 bytes
        ("€" * 349_526, True),
        (b"x" * (1024 * 1024), False),
        (b"x" * (1024 * 1024 + 1), True),
        (b"", False),
    ],
)
def test_check_size_counts_utf8_bytes_against_the_limit(data: str | bytes, over: bool) -> None:
    if over:
        with pytest.raises(CtxlabError, match=r"over the 1 MB limit.*maxUploadSize"):
            check_size(data, "pasted chat", 1)
    else:
        check_size(data, "pasted chat", 1)


@pytest.fixture
def small_limit() -> Any:
    """``server.maxUploadSize`` set to 1 MB for one test (AppTest runs in this process)."""
    before = st_config.get_option("server.maxUploadSize")
    st_config.set_option("server.maxUploadSize", 1)
    yield 1
    st_config.set_option("server.maxUploadSize", before)


def _caption(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def test_a_paste_over_the_limit_is_refused_with_a_clear_message_and_the_chat_stays(
    small_limit: int,
) -> None:
    at = page(PLAYGROUND, chat=CHAT)
    at.run()
    before = _caption(at)
    at.sidebar.radio(key="ctx.source").set_value("Paste").run()
    area = at.sidebar.text_area(key="ctx.paste")
    assert f"up to {small_limit} MB" in area.label
    message = {"role": "user", "content": "y" * (1024 * 1024)}
    area.input(json.dumps([message])).run()
    assert not at.exception
    errors = [e.value for e in at.sidebar.error]
    assert errors and "over the 1 MB limit" in errors[0] and "maxUploadSize" in errors[0]
    assert all(b.key != "ctx.paste_load" for b in at.sidebar.button)  # nothing to load
    assert before.split(" · ")[0] in _caption(at)


def test_the_upload_limit_is_stated_next_to_the_uploader() -> None:
    at = page(PLAYGROUND, chat=CHAT)
    at.run()
    at.sidebar.radio(key="ctx.source").set_value("Upload").run()
    assert not at.exception
    limit = st_config.get_option("server.maxUploadSize")
    assert limit == 200  # .streamlit/config.toml
    assert any(f"up to {limit} MB" in str(node.proto) for node in at.sidebar)


RSS_PROBE = r"""
import json, sys, time
from pathlib import Path
from ctxlab.tokens import get_counter
from ctxlab.ui.session import load_source
def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1
counter = get_counter("gpt-4o")
counter.counted(load_source(b'[{"role": "user", "content": "warm up"}]', "w.json"))
data = Path(sys.argv[1]).read_bytes()  # what the uploader hands over: the file's bytes
Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
base = status("VmHWM")
start = time.perf_counter()
messages = load_source(data, "big.json", limit_mb=50)
loaded = time.perf_counter() - start
after_load = status("VmHWM")
counted = counter.counted(messages)
peak = status("VmHWM")
print(json.dumps({"bytes": len(data), "messages": len(messages), "tokens": counted.total,
                  "rss_before_kb": base, "rss_after_load_kb": after_load, "rss_peak_kb": peak,
                  "rss_now_kb": status("VmRSS"), "load_s": round(loaded, 2)}))
"""


def _fifty_megabyte_chat(path: Path) -> None:
    """A realistic chat just under 50 MB: alternating turns of a few kB each."""
    limit = 50 * 1024 * 1024 - 4096
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        size, i = 1, 0
        while True:
            text = f"message {i}: " + "lorem ipsum dolor sit amet, consectetur adipiscing. " * 40
            role = "user" if i % 2 == 0 else "assistant"
            item = json.dumps({"role": role, "content": text})
            if size + len(item) + 3 > limit:
                break
            out.write(("," if i else "") + item)
            size += len(item) + 1
            i += 1
        out.write("]")


def test_peak_memory_of_loading_the_largest_allowed_chat_is_bounded(tmp_path: Path) -> None:
    """Load and count a 50 MB chat through the app's load path in a fresh process.

    The bound is generous (growth under 4x the file; measured: 2x), a guard against a copy per
    message, not a benchmark; the figures are printed for the report.
    """
    chat = tmp_path / "big.json"
    _fifty_megabyte_chat(chat)
    out = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, str(chat)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    growth_mb = (figures["rss_peak_kb"] - figures["rss_before_kb"]) / 1024
    print(f"\n50 MB chat through load_source + count: {figures}, growth {growth_mb:.0f} MB")
    assert 49 * 1024 * 1024 < figures["bytes"] <= 50 * 1024 * 1024
    assert growth_mb < 4 * 50


# -- summarizer faults in the app -------------------------------------------------------------

FAULTS = {
    "401": "API key",
    "403": "403",
    "404": "model",
    "429": "rate",
    "429-quota": "quota",
    "500": "500",
    "503": "503",
    "slow": "within",
    "non-json": "JSON",
    "empty-choices": "choice",
    "length": "length",
}


@pytest.fixture
def quick_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's OpenAISummarizer with a 1 s timeout and no real waiting between retries."""
    quick = functools.partial(
        OpenAISummarizer, timeout=1.0, backoff=0.0, max_wait=0.0, sleep=lambda _s: None
    )
    monkeypatch.setattr(summarizers, "OpenAISummarizer", quick)


def _endpoint_app(fake_openai: FakeOpenAI) -> AppTest:
    at = page(PLAYGROUND, chat=CHAT, strategy="summarize", trigger_token_budget="0")
    at.run()
    at.sidebar.radio(key="ctx.backend").set_value("OpenAI-compatible endpoint").run()
    at.sidebar.text_input(key="ctx.base_url").input(fake_openai.base_url).run()
    at.sidebar.text_input(key="ctx.api_key").input(KEY).run()
    assert not at.exception
    return at


def _state(at: AppTest) -> dict[str, Any]:
    """What the user sees: chat caption, parameter values, metrics, shown code blocks."""
    return {
        "chat": _caption(at),
        "params": {w.key: w.value for w in at.sidebar.slider},
        "numbers": {w.key: w.value for w in at.sidebar.number_input},
        "metrics": [(m.label, m.value) for m in at.metric],
        "code": [c.value for c in at.code],
        "url": {k: at.query_params[k] for k in at.query_params},
    }


@pytest.mark.parametrize("fault", list(FAULTS))
def test_run_summarizer_against_a_failing_endpoint_shows_why_and_changes_nothing(
    fault: str, fake_openai: FakeOpenAI, quick_client: None
) -> None:
    at = _endpoint_app(fake_openai)
    before = _state(at)
    assert not at.error
    fake_openai.always(fault, times=10)
    at.button(key="run-sum").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors, f"{fault}: no error shown"
    assert "nothing was changed" in errors[0]
    assert FAULTS[fault].lower() in errors[0].lower(), errors[0]
    assert KEY not in " ".join(errors)
    assert _state(at) == before
    assert 1 <= len(fake_openai.chat_requests()) <= 3  # retried a bounded number of times


def test_a_key_echoing_401_is_shown_without_the_key(
    fake_openai: FakeOpenAI, quick_client: None
) -> None:
    at = _endpoint_app(fake_openai)
    fake_openai.script("401-echo")
    at.button(key="run-sum").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "API key" in errors and KEY not in errors and KEY[:20] not in errors


def test_after_a_fault_the_next_press_succeeds_and_shows_the_summary(
    fake_openai: FakeOpenAI, quick_client: None
) -> None:
    at = _endpoint_app(fake_openai)
    fake_openai.script("500", "500", "500")
    at.button(key="run-sum").click().run()
    assert at.error
    at.button(key="run-sum").click().run()
    assert not at.exception and not at.error
    assert not any("Preview" in i.value for i in at.info)  # the real summary, not a placeholder
    assert len(fake_openai.chat_requests()) == 4
    at.run()  # a plain rerun serves the summary from the cache: no new call, no preview
    assert not any("Preview" in i.value for i in at.info)
    assert len(fake_openai.chat_requests()) == 4


def test_the_secrets_sample_shows_masked_spans_per_rule_next_to_the_transcript() -> None:
    at = page(PLAYGROUND, chat="secrets_in_tool_outputs", strategy="summarize")
    at.run()
    param_widget(at, "trigger_token_budget").set_value(0)
    at.session_state["pg-tabs"] = "Summarizer request"  # tabs are lazy: open the request tab
    at.run()
    assert not at.exception
    tables = [d.value for d in at.dataframe if list(d.value.columns) == ["rule", "spans"]]
    assert tables, "a table of masked spans per rule"
    per_rule = dict(zip(tables[0]["rule"], tables[0]["spans"], strict=True))
    print(f"\nsecrets sample, masked spans per rule: {per_rule}")
    assert len(per_rule) >= 3 and all(int(n) > 0 for n in per_rule.values())


# -- the shared cache --------------------------------------------------------------------------


def _make_request() -> SummaryRequest:
    messages = (
        {"role": "system", "content": "Summarize the conversation."},
        {"role": "user", "content": "user: Why does the integration test fail on Mondays?"},
    )
    return SummaryRequest(messages, "gpt-4o-mini", 128)


@pytest.mark.parametrize("threads", [2, 8])
def test_threads_summarizing_the_same_request_at_once_get_one_answer_from_bounded_calls(
    fake_openai: FakeOpenAI, threads: int
) -> None:
    request = _make_request()
    cache = SummaryCache()
    barrier = threading.Barrier(threads)
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        summarizer = OpenAISummarizer(
            "gpt-4o-mini", base_url=fake_openai.base_url, api_key=KEY, cache=cache
        )
        try:
            barrier.wait()
            results.append(summarizer.summarize(request).text)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=60)
    assert errors == []
    assert len(results) == threads and len(set(results)) == 1
    calls = len(fake_openai.chat_requests())
    print(f"\n{threads} threads, same request at once: {calls} server call(s)")
    assert 1 <= calls <= threads
    # Once answered, every later call is a cache hit.
    again = OpenAISummarizer("gpt-4o-mini", base_url=fake_openai.base_url, api_key=KEY, cache=cache)
    assert again.summarize(request).cached
    assert len(fake_openai.chat_requests()) == calls


def test_a_corrupted_disk_entry_is_ignored_and_rebuilt(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    request = _make_request()

    def make() -> OpenAISummarizer:
        return OpenAISummarizer(
            "gpt-4o-mini", base_url=fake_openai.base_url, api_key=KEY, cache=SummaryCache(tmp_path)
        )

    first = make().summarize(request)
    (entry,) = tmp_path.glob("*.json")
    entry.write_bytes(b"\x00\xff{not json")
    rebuilt = make().summarize(request)
    assert not rebuilt.cached and rebuilt.text == first.text
    assert len(fake_openai.chat_requests()) == 2
    assert make().summarize(request).cached
