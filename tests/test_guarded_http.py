"""The summarizer's guarded connections (ctxlab.summarizers.guarded_http) against a real server.

The address rule is checked where the socket is opened and the socket goes to the address that
was checked: a name that resolves to a loopback address at connect time is refused even when it
looked public before (DNS rebinding), and a name only the checked answer knows still reaches
the server (the connection does not resolve it a second time). Refusals send nothing, are not
retried, and say why.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from ctxlab.errors import SummarizerError
from ctxlab.hosting import AddressPolicy
from ctxlab.summarizers import OpenAISummarizer, SummaryRequest

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI

pytest_plugins = ["fake_openai"]

KEY = "sk-proj-GUARDTEST" + "Zq8Xw3Lm5Nv7Bc9Df1Gh2"
REQUEST = SummaryRequest(({"role": "user", "content": "Why do tests fail on Mondays?"},), "m", 64)


def _client(base_url: str, policy: AddressPolicy, **kwargs: Any) -> OpenAISummarizer:
    return OpenAISummarizer(
        "m",
        base_url=base_url,
        api_key=KEY,
        address_policy=policy,
        use_cache=False,
        timeout=5,
        backoff=0,
        sleep=lambda _s: None,
        **kwargs,
    )


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Names answered from this table (each answer is popped: the next lookup gets the next);
    every other name goes to the real resolver."""
    table: dict[str, list[str]] = {}
    real: Callable[..., Any] = socket.getaddrinfo

    def fake(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in table:
            answer = table[host].pop(0) if len(table[host]) > 1 else table[host][0]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return table


def test_a_loopback_endpoint_is_refused_without_a_request(fake_openai: FakeOpenAI) -> None:
    with pytest.raises(SummarizerError, match="loopback address: this server does not call"):
        _client(fake_openai.base_url, AddressPolicy(False)).summarize(REQUEST)
    assert fake_openai.requests == []


def test_a_name_that_rebinds_to_loopback_is_refused_where_it_connects(
    fake_openai: FakeOpenAI, dns: dict[str, list[str]]
) -> None:
    # The first answer (what an early check would see) is public; the connection's is not.
    dns["rebind.test"] = ["93.184.215.14", "127.0.0.1"]
    socket.getaddrinfo("rebind.test", 80)  # the early look-up takes the public answer
    summarizer = _client(f"http://rebind.test:{fake_openai.port}/v1", AddressPolicy(False))
    with pytest.raises(SummarizerError, match=r"rebind\.test.*not a public internet address"):
        summarizer.summarize(REQUEST)
    assert fake_openai.requests == []
    assert summarizer.http_requests == 1  # refused, not retried


def test_the_connection_goes_to_the_checked_address_not_to_a_second_lookup(
    fake_openai: FakeOpenAI, dns: dict[str, list[str]]
) -> None:
    # Only the checked answer knows this name: reaching the server proves the socket used it.
    dns["pinned.test"] = ["127.0.0.1"]
    summarizer = _client(f"http://pinned.test:{fake_openai.port}/v1", AddressPolicy(True))
    assert summarizer.summarize(REQUEST).text.startswith("Fake summary")
    assert len(fake_openai.chat_requests()) == 1


def test_an_operator_listed_internal_endpoint_is_reached(fake_openai: FakeOpenAI) -> None:
    policy = AddressPolicy(False, frozenset({("127.0.0.1", fake_openai.port)}))
    assert _client(fake_openai.base_url, policy).summarize(REQUEST).text
    assert len(fake_openai.chat_requests()) == 1


@pytest.mark.parametrize("fault", ["401-echo", "non-json", "500"])
def test_without_quoting_an_error_holds_no_reply_text(fault: str, fake_openai: FakeOpenAI) -> None:
    fake_openai.always(fault, times=10)
    policy = AddressPolicy(True)
    with pytest.raises(SummarizerError) as quiet:
        _client(fake_openai.base_url, policy, quote_replies=False).summarize(REQUEST)
    with pytest.raises(SummarizerError) as quoting:
        _client(fake_openai.base_url, policy).summarize(REQUEST)
    for said in ("Incorrect API key", "nginx", "server had an error"):
        assert said not in str(quiet.value)
    assert str(quiet.value) != str(quoting.value)
    assert KEY not in str(quiet.value) + str(quoting.value)
