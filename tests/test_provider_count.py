"""Counting a chat with the provider (ctxlab.provider_count), against a fake endpoint.

The fake (tests/fake_counting.py) runs on 127.0.0.1 and records what it receives: the exact
body and headers, the key in its header and nowhere else, redaction applied, one-line errors
that never hold the key, and a cache hit that sends nothing. Expected bodies are written out
by hand from the providers' documented shapes, not produced by the code under test.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from secretgen import Planted, secrets

from ctxlab.errors import ProviderCountError
from ctxlab.formats import ToolDefinition, load_chat_file
from ctxlab.model import Message, Role, ToolCall
from ctxlab.provider_count import (
    COUNTS,
    ProviderCount,
    api_model,
    choose_count_key,
    comparison,
    count_request,
    count_with_provider,
    endpoint_of,
    key_from_env,
    provider_of,
)
from ctxlab.redaction import RedactionPolicy
from ctxlab.samples import list_samples, sample_path

if TYPE_CHECKING:
    from fake_counting import FakeCounting

pytest_plugins = ["fake_counting"]

KEY = "test-key-Zq81-counting-0001"
SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"

CHAT = (
    Message(Role.SYSTEM, "You are terse.", "m0"),
    Message(Role.USER, "Weather in Paris?", "m1"),
    Message(
        Role.ASSISTANT,
        "Checking.",
        "m2",
        tool_calls=(ToolCall("call_1", "get_weather", '{"city": "Paris"}'),),
    ),
    Message(Role.TOOL, '{"temp_c": 21}', "m3", tool_call_id="call_1"),
    Message(Role.ASSISTANT, "21 °C.", "m4"),
    Message(Role.USER, "Thanks", "m5"),
)
TOOLS = (
    ToolDefinition(
        "get_weather",
        "Current weather of a city.",
        '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
    ),
)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    COUNTS.clear()


def test_the_anthropic_body_is_the_documented_messages_shape() -> None:
    request = count_request("claude-sonnet-4-5", CHAT, TOOLS)
    assert request.path == "/v1/messages/count_tokens"
    assert request.body == {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "You are terse."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": '{"temp_c": 21}'}
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "21 °C."}]},
            {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
        ],
        "tools": [
            {
                "name": "get_weather",
                "description": "Current weather of a city.",
                "input_schema": SCHEMA,
            }
        ],
    }


def test_the_gemini_body_is_a_generate_content_request_with_system_and_tools() -> None:
    request = count_request("gemini-2.5-flash", CHAT, TOOLS)
    assert request.path == "/v1beta/models/gemini-2.5-flash:countTokens"
    assert request.body == {
        "generateContentRequest": {
            "model": "models/gemini-2.5-flash",
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                {
                    "role": "model",
                    "parts": [
                        {"text": "Checking."},
                        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "get_weather",
                                "response": {"temp_c": 21},
                            }
                        }
                    ],
                },
                {"role": "model", "parts": [{"text": "21 °C."}]},
                {"role": "user", "parts": [{"text": "Thanks"}]},
            ],
            "systemInstruction": {"parts": [{"text": "You are terse."}]},
            "tools": [
                {
                    "functionDeclarations": [
                        {
                            "name": "get_weather",
                            "description": "Current weather of a city.",
                            "parametersJsonSchema": SCHEMA,
                        }
                    ]
                }
            ],
        }
    }


def test_odd_messages_still_make_a_request_the_api_accepts() -> None:
    """Legacy id-less calls, arguments that are not a JSON object, an empty assistant text and
    a text result: every tool_use has an id its result names, every input is an object."""
    chat = (
        Message(Role.USER, "go", "u"),
        Message(Role.ASSISTANT, "", "a", tool_calls=(ToolCall(None, "run", "not json"),)),
        Message(Role.FUNCTION, "done", "f", name="run"),
        Message(Role.ASSISTANT, "", "b", tool_calls=(ToolCall("c2", "ls", "[1, 2]"),)),
        Message(Role.TOOL, "a.txt", "t", tool_call_id="c2"),
    )
    body = count_request("claude-haiku-4-5", chat).body
    turns = body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"] == [
        {"type": "tool_use", "id": "call_1_0", "name": "run", "input": {"arguments": "not json"}}
    ]
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1_0", "content": "done"}
    ]
    assert turns[3]["content"][0]["input"] == {"arguments": "[1, 2]"}
    gemini = count_request("gemini-2.5-pro", chat).body["generateContentRequest"]
    assert gemini["contents"][2]["parts"] == [
        {"functionResponse": {"name": "run", "response": {"result": "done"}}}
    ]


def test_every_sample_chat_pairs_each_tool_result_with_an_earlier_tool_use() -> None:
    for sample in list_samples():
        if sample.generated:
            continue
        loaded = load_chat_file(sample_path(sample.name))
        body = count_request("claude-sonnet-4-5", loaded.messages, loaded.tools).body
        seen: set[str] = set()
        for turn in body["messages"]:
            for block in turn["content"]:
                if block["type"] == "tool_use":
                    assert isinstance(block["input"], dict)
                    seen.add(block["id"])
                elif block["type"] == "tool_result":
                    assert block["tool_use_id"] in seen, sample.name
                else:
                    assert block["type"] == "text" and block["text"], sample.name
        roles = [t["role"] for t in body["messages"]]
        assert all(a != b for a, b in itertools.pairwise(roles)), sample.name


def test_catalog_short_names_are_sent_as_the_apis_aliases() -> None:
    assert api_model("claude-3-7-sonnet") == "claude-3-7-sonnet-latest"
    assert api_model("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5-20250929"
    assert provider_of("claude-sonnet-4-5-20250929") == "anthropic"
    assert provider_of("gpt-4o") is None
    odd = count_request("gemini-x/../y?key=z", CHAT)
    assert odd.path == "/v1beta/models/gemini-x%2F..%2Fy%3Fkey%3Dz:countTokens"
    with pytest.raises(ProviderCountError, match="not an Anthropic or Gemini model"):
        count_request("gpt-4o", CHAT)


def test_anthropic_receives_the_body_and_the_key_in_its_header_only(
    fake_counting: FakeCounting,
) -> None:
    request = count_request("claude-sonnet-4-5", CHAT, TOOLS)
    count = count_with_provider(request, KEY, endpoint=fake_counting.base_url)
    assert count == ProviderCount("anthropic", "claude-sonnet-4-5", 41_230, request.digest)
    [got] = fake_counting.requests
    assert got.path == "/v1/messages/count_tokens" and got.query == ""
    assert got.headers["x-api-key"] == KEY
    assert got.headers["anthropic-version"] == "2023-06-01"
    assert got.headers["content-type"] == "application/json"
    assert got.body == request.body
    assert KEY not in got.path and KEY.encode() not in got.raw
    assert "authorization" not in got.headers


def test_gemini_receives_the_key_in_the_x_goog_api_key_header_never_the_url(
    fake_counting: FakeCounting,
) -> None:
    request = count_request("gemini-2.5-flash", CHAT, TOOLS)
    count = count_with_provider(request, KEY, endpoint=fake_counting.base_url)
    assert count.tokens == 41_230 and count.provider == "gemini"
    [got] = fake_counting.requests
    assert got.path == "/v1beta/models/gemini-2.5-flash:countTokens"
    assert got.query == ""  # no ?key=
    assert got.headers["x-goog-api-key"] == KEY
    assert "x-api-key" not in got.headers
    assert got.body == request.body


def test_redaction_masks_credentials_and_tool_content_before_anything_is_sent(
    fake_counting: FakeCounting,
) -> None:
    chat = (
        Message(Role.USER, f"my key is {SECRET}", "u"),
        Message(
            Role.ASSISTANT,
            "",
            "a",
            tool_calls=(ToolCall("c1", "login", json.dumps({"token": SECRET})),),
        ),
        Message(Role.TOOL, f"logged in with {SECRET}", "t", tool_call_id="c1"),
    )
    patterns = count_request("claude-sonnet-4-5", chat, redaction=RedactionPolicy(frozenset()))
    assert patterns.redactions and sum(patterns.redactions.values()) >= 3
    roles = count_request("claude-sonnet-4-5", chat, redaction=RedactionPolicy())
    assert roles.redactions["role:tool"] == 1
    assert roles.body["messages"][1]["content"][0]["input"] == {"arguments": "[REDACTED]"}
    assert roles.body["messages"][2]["content"][0]["content"] == "[REDACTED]"
    for request in (patterns, roles):
        count_with_provider(request, KEY, endpoint=fake_counting.base_url)
    assert len(fake_counting.requests) == 2
    for got in fake_counting.requests:
        assert SECRET.encode() not in got.raw
    unmasked = count_request("claude-sonnet-4-5", chat)
    assert SECRET in unmasked.body_json() and not unmasked.redactions


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(secrets())
def test_a_planted_credential_never_reaches_either_body(secret: Planted) -> None:
    chat = (Message(Role.USER, f"note: {secret.text} end", "u"),)
    for model in ("claude-sonnet-4-5", "gemini-2.5-pro"):
        request = count_request(model, chat, redaction=RedactionPolicy(frozenset()))
        assert secret.secret not in json.dumps(request.body, ensure_ascii=False)


def test_comparison_says_how_far_ctxlab_is_off() -> None:
    count = ProviderCount("anthropic", "claude-sonnet-4-5", 41_230, "")
    assert comparison(count, 38_900, exact=False) == (
        "Anthropic counts 41,230 tokens; ctxlab's approximate count is 38,900 (5.7% low)."
    )
    gemini = ProviderCount("gemini", "gemini-2.5-pro", 1_000, "")
    assert comparison(gemini, 1_100, exact=False).endswith("is 1,100 (10.0% high).")
    assert comparison(gemini, 1_000, exact=True).endswith("ctxlab's count is 1,000 (the same).")


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [
        ("401", "Anthropic's count_tokens refused the request: 401 invalid x-api-key [REDACTED]"),
        ("429", "Anthropic's count_tokens is rate limiting this key: 429"),
        ("500", "Anthropic's count_tokens failed: 500 Internal error; try again later"),
        ("garbage", "Anthropic's count_tokens answered without a token count (no input_tokens)"),
        ("no-count", "answered without a token count (no input_tokens)"),
        ("redirect", "answered a redirect (307), which is not followed"),
    ],
)
def test_a_failure_is_one_line_without_the_key_and_caches_nothing(
    fake_counting: FakeCounting, behaviour: str, expected: str
) -> None:
    fake_counting.script(behaviour)
    request = count_request("claude-sonnet-4-5", CHAT)
    with pytest.raises(ProviderCountError) as caught:
        count_with_provider(request, KEY, endpoint=fake_counting.base_url)
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message and KEY not in message
    assert len(fake_counting.requests) == 1  # the redirect was not followed
    assert count_with_provider(request, KEY, endpoint=fake_counting.base_url).cached is False


def test_gemini_errors_name_gemini_and_mask_the_key(fake_counting: FakeCounting) -> None:
    fake_counting.script("401")
    request = count_request("gemini-2.5-pro", CHAT)
    with pytest.raises(ProviderCountError) as caught:
        count_with_provider(request, KEY, endpoint=fake_counting.base_url)
    assert str(caught.value) == (
        "Gemini's countTokens refused the request: 401 API key not valid: [REDACTED]"
    )


def test_a_server_that_does_not_answer_in_time_is_one_line(fake_counting: FakeCounting) -> None:
    fake_counting.script("slow")
    request = count_request("claude-sonnet-4-5", CHAT)
    with pytest.raises(ProviderCountError) as caught:
        count_with_provider(request, KEY, endpoint=fake_counting.base_url, timeout=0.3)
    assert (
        str(caught.value) == "Anthropic's count_tokens did not answer within 0.3 s: try again later"
    )


def test_a_closed_port_is_one_line(fake_counting: FakeCounting) -> None:
    url = fake_counting.base_url
    fake_counting.close()
    with pytest.raises(ProviderCountError, match=r"^cannot reach Anthropic's count_tokens at"):
        count_with_provider(count_request("claude-sonnet-4-5", CHAT), KEY, endpoint=url)


def test_a_cached_count_sends_nothing(fake_counting: FakeCounting) -> None:
    request = count_request("claude-sonnet-4-5", CHAT, TOOLS)
    first = count_with_provider(request, KEY, endpoint=fake_counting.base_url)
    again = count_with_provider(
        count_request("claude-sonnet-4-5", CHAT, TOOLS), "", endpoint=fake_counting.base_url
    )
    assert (first.cached, again.cached, again.tokens) == (False, True, 41_230)
    assert len(fake_counting.requests) == 1
    other = count_request("claude-sonnet-4-5", CHAT[:-1], TOOLS)
    assert other.digest != request.digest
    count_with_provider(other, KEY, endpoint=fake_counting.base_url)
    assert len(fake_counting.requests) == 2


def test_no_key_sends_nothing(fake_counting: FakeCounting) -> None:
    with pytest.raises(ProviderCountError, match=r"no Anthropic API key \(set ANTHROPIC_API_KEY"):
        count_with_provider(
            count_request("claude-sonnet-4-5", CHAT), " ", endpoint=fake_counting.base_url
        )
    assert fake_counting.requests == []


def test_the_servers_key_counts_only_in_the_local_profile() -> None:
    env = {"ANTHROPIC_API_KEY": "server-key"}
    assert choose_count_key("anthropic", env=env).source == "refused"
    assert choose_count_key("anthropic", env={**env, "CTXLAB_PROFILE": "hosted"}).source == (
        "refused"
    )
    local = choose_count_key("anthropic", env={**env, "CTXLAB_PROFILE": "local"})
    assert (local.source, local.key) == ("server", "server-key")
    assert "server-key" not in repr(local) and "server-key" not in local.describe()
    visitor = choose_count_key("anthropic", "  mine  ", env=env)
    assert (visitor.source, visitor.key) == ("visitor", "mine")
    assert choose_count_key("gemini", env=env).source == "none"
    from_secrets = choose_count_key(
        "gemini", env={"CTXLAB_PROFILE": "local"}, secrets={"GEMINI_API_KEY": "s"}
    )
    assert (from_secrets.source, from_secrets.key) == ("server", "s")
    assert key_from_env("gemini", {"GOOGLE_API_KEY": "g"}) == "g"


def test_the_endpoint_is_the_official_api_or_the_operators_variable() -> None:
    assert endpoint_of("anthropic", {}) == "https://api.anthropic.com"
    assert endpoint_of("gemini", {}) == "https://generativelanguage.googleapis.com"
    assert endpoint_of("anthropic", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}) == (
        "http://127.0.0.1:9"
    )
    with pytest.raises(ProviderCountError, match=r"^GOOGLE_GEMINI_BASE_URL: base URL"):
        endpoint_of("gemini", {"GOOGLE_GEMINI_BASE_URL": "http://x?key=1"})
