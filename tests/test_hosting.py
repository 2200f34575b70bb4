"""ctxlab.hosting: which key a summarizer call may use, which addresses it may reach, settings.

The properties: a base URL has one normal form (parsing it again changes nothing); every
spelling of an allowed endpoint (case, trailing slash or dot, explicit default port, IDNA
full-width letters) is that endpoint; anything else never gets the server's key; every
private, loopback, link-local, multicast, reserved or unspecified address is refused in every
spelling (decimal, octal, hex, short IPv4; IPv4-mapped, 6to4, NAT64 IPv6) and public ones pass.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ctxlab.errors import SummarizerError
from ctxlab.hosting import (
    DEFAULT_KEY_MODELS,
    KEY_MODELS_ENV,
    OFFICIAL_ENDPOINT,
    PROFILE_ENV,
    AddressPolicy,
    Endpoint,
    HostingSettings,
    address_policy,
    addresses_for,
    choose_key,
    literal_address_refusal,
    parse_base_url,
    read_settings,
    refusal_of_address,
)

SERVER_KEY = "sk-proj-SERVERKEY" + "x" * 24
OFFICIAL = parse_base_url(OFFICIAL_ENDPOINT)


def hosted(**env: str) -> HostingSettings:
    return read_settings({"OPENAI_API_KEY": SERVER_KEY, **env})


# -- base URLs -------------------------------------------------------------------------------

labels = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
hosts = (
    st.lists(labels, min_size=1, max_size=4)
    .map(".".join)
    .filter(lambda h: not h.replace(".", "").isdigit())
)
segments = st.from_regex(r"[A-Za-z0-9._~-]{1,12}", fullmatch=True).filter(
    lambda s: s not in (".", "..")
)
endpoints = st.builds(
    Endpoint,
    scheme=st.sampled_from(["http", "https"]),
    host=hosts,
    port=st.integers(1, 65535),
    path=st.lists(segments, max_size=3).map(lambda ss: "".join(f"/{s}" for s in ss)),
)


@given(endpoints)
def test_an_endpoints_url_parses_back_to_itself(endpoint: Endpoint) -> None:
    assert parse_base_url(endpoint.url) == endpoint
    assert parse_base_url(parse_base_url(endpoint.url).url) == endpoint


def _spellings(endpoint: Endpoint, data: st.DataObject) -> str:
    """``endpoint`` written another way that means the same API."""
    scheme = "".join(c.upper() if data.draw(st.booleans()) else c for c in endpoint.scheme)
    host = "".join(c.upper() if data.draw(st.booleans()) else c for c in endpoint.host)
    if data.draw(st.booleans()):
        host += "."
    default = {"http": 80, "https": 443}[endpoint.scheme] == endpoint.port
    port = f":{endpoint.port}" if not default or data.draw(st.booleans()) else ""
    slash = "/" * data.draw(st.integers(0, 3))
    return f"{scheme}://{host}{port}{endpoint.path}{slash}"


@given(endpoints, st.data())
def test_every_spelling_of_an_allowed_endpoint_gets_the_server_key(
    endpoint: Endpoint, data: st.DataObject
) -> None:
    settings = hosted(CTXLAB_KEY_ENDPOINTS=endpoint.url)
    choice = choose_key(settings, _spellings(endpoint, data))
    assert choice.source == "server" and choice.key == SERVER_KEY
    assert choice.endpoint == endpoint


@given(st.text(max_size=80) | endpoints.map(lambda e: e.url))
def test_no_text_but_an_allowed_endpoint_gets_the_server_key(text: str) -> None:
    settings = hosted()
    try:
        choice = choose_key(settings, text)
    except SummarizerError:
        return  # refused as a URL: no key at all
    if choice.source == "server":
        assert choice.endpoint in settings.key_endpoints
    else:
        assert choice.key == "" and choice.source == "refused"
        assert "bring your own key for this endpoint" in (choice.refusal or "")


@pytest.mark.parametrize(
    "text",
    [
        "https://api.openai.com@evil.example/v1",
        "https://user:pass@api.openai.com/v1",
        "https://api.openai.com:443@evil.example/v1",
        "https://evil.example/v1?x=https://api.openai.com/v1",
        "https://api.openai.com/v1#frag",
        "https://api.openai.com/v1/../admin",
        "https://api.openai.com/v1/%2e%2e/admin",
        "https://api.openai.com\\@evil.example/v1",
        "https://api.openai.com/v 1",
        "https://api.openai.com/v\n1",
        "file:///etc/passwd",
        "gopher://127.0.0.1:25/",
        "ftp://api.openai.com/v1",
        "//api.openai.com/v1",
        "api.openai.com/v1",
        "https:///v1",
        "https://api.openai.com:0/v1",
        "https://api.openai.com:99999/v1",
        "http://[fe80::1%25eth0]/v1",
        "https://xn--invalid-.com/v1",
    ],
)
def test_tricky_base_urls_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(SummarizerError, match="base URL"):
        parse_base_url(text)


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("HTTPS://API.OPENAI.COM/V1", "https://api.openai.com/V1"),
        ("https://api.openai.com./v1/", OFFICIAL_ENDPOINT),
        ("https://api.openai.com:443/v1", OFFICIAL_ENDPOINT),
        ("https://ＡＰＩ.openai.com/v1", OFFICIAL_ENDPOINT),  # full-width letters (UTS 46)
        ("https://api.openai.com/%76%31", OFFICIAL_ENDPOINT),
        ("http://2130706433/v1", "http://127.0.0.1/v1"),
        ("http://0x7f000001/v1", "http://127.0.0.1/v1"),
        ("http://0177.0.0.1/v1", "http://127.0.0.1/v1"),
        ("http://127.1/v1", "http://127.0.0.1/v1"),
        ("http://[0:0:0:0:0:ffff:7f00:1]:8080/v1", "http://[::ffff:7f00:1]:8080/v1"),
        ("https://bücher.example/v1", "https://xn--bcher-kva.example/v1"),
    ],
)
def test_base_urls_have_one_normal_form(text: str, url: str) -> None:
    assert parse_base_url(text).url == url


def test_the_path_is_case_sensitive_so_another_path_is_another_endpoint() -> None:
    choice = choose_key(hosted(), "https://api.openai.com/V1")
    assert choice.source == "refused"


# -- which key -------------------------------------------------------------------------------


def test_the_default_allows_only_the_official_api() -> None:
    settings = hosted()
    assert settings.key_endpoints == (OFFICIAL,)
    assert choose_key(settings, "").source == "server"
    assert choose_key(settings, "https://api.openai.com/v1").source == "server"
    for other in ("https://api.deepseek.com/v1", "http://api.openai.com/v1", "https://x.test/v1"):
        choice = choose_key(settings, other)
        assert choice.source == "refused" and choice.key == ""


def test_a_visitor_key_is_theirs_to_send_anywhere_and_wins_over_the_server_key() -> None:
    settings = hosted()
    for url in ("https://x.test/v1", ""):
        choice = choose_key(settings, url, " sk-visitor ")
        assert (choice.source, choice.key) == ("visitor", "sk-visitor")


def test_without_a_server_key_nothing_is_refused_and_no_key_is_sent() -> None:
    settings = read_settings({})
    assert settings.profile == "local" and not settings.has_server_key
    choice = choose_key(settings, "http://localhost:11434/v1")
    assert (choice.source, choice.key) == ("none", "")


def test_the_local_profile_sends_the_server_key_anywhere() -> None:
    settings = hosted(CTXLAB_PROFILE="local")
    assert not settings.hosted and settings.allow_private
    assert choose_key(settings, "http://localhost:8000/v1").source == "server"


def test_the_key_and_the_refusal_never_show_the_key() -> None:
    settings = hosted()
    for choice in (choose_key(settings, ""), choose_key(settings, "https://x.test/v1")):
        for text in (repr(choice), choice.describe(), choice.refusal or "", repr(settings)):
            assert SERVER_KEY not in text
    assert "the server's key, for api.openai.com/v1" in choose_key(settings, "").describe()


# -- settings --------------------------------------------------------------------------------


def test_the_hosted_profile_is_the_default_whenever_the_server_holds_a_key() -> None:
    assert hosted().profile == "hosted" and not hosted().allow_private
    assert read_settings({}, {"OPENAI_API_KEY": SERVER_KEY}).profile == "hosted"
    assert read_settings({}).profile == "local"
    assert read_settings({"CTXLAB_PROFILE": "hosted"}).hosted


def test_unreadable_settings_fall_back_to_the_safe_side_and_say_so() -> None:
    settings = hosted(
        CTXLAB_PROFILE="lcoal",
        CTXLAB_ALLOW_PRIVATE_ENDPOINTS="maybe",
        CTXLAB_KEY_ENDPOINTS="https://ok.test/v1, ftp://no.test, ,https://user@x.test/v1",
    )
    assert settings.hosted and not settings.allow_private
    assert settings.key_endpoints == (parse_base_url("https://ok.test/v1"),)
    assert len(settings.problems) == 4, settings.problems


def test_secrets_come_before_the_environment_and_openai_base_url_is_a_key_endpoint(
    tmp_path: Path,
) -> None:
    settings = read_settings(
        {"OPENAI_API_KEY": "env-key", "OPENAI_BASE_URL": "https://proxy.test/openai/v1"},
        {"OPENAI_API_KEY": SERVER_KEY, "CTXLAB_RESULTS_DIR": str(tmp_path)},
    )
    assert settings.server_key == SERVER_KEY
    assert settings.default_endpoint == parse_base_url("https://proxy.test/openai/v1")
    assert choose_key(settings, "").source == "server"
    assert settings.key_endpoints == (OFFICIAL, settings.default_endpoint)
    assert settings.results_dir == tmp_path


def test_allow_private_is_read_as_a_flag() -> None:
    assert hosted(CTXLAB_ALLOW_PRIVATE_ENDPOINTS="1").allow_private
    assert hosted(CTXLAB_ALLOW_PRIVATE_ENDPOINTS="true").allow_private
    assert not hosted(CTXLAB_ALLOW_PRIVATE_ENDPOINTS="0").allow_private
    assert not read_settings({"CTXLAB_ALLOW_PRIVATE_ENDPOINTS": "0"}).allow_private


# -- which addresses -------------------------------------------------------------------------

NON_PUBLIC = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "224.0.0.0/4",
    "240.0.0.0/4",
]
non_public_v4 = st.sampled_from(NON_PUBLIC).flatmap(lambda net: st.ip_addresses(network=net))
non_public_v6 = st.sampled_from(["::1/128", "fe80::/10", "fc00::/7", "ff00::/8", "::/128"]).flatmap(
    lambda net: st.ip_addresses(network=net)
)


def _v4_spellings(ip: ipaddress.IPv4Address) -> list[str]:
    n = int(ip)
    a, b, c, d = ip.packed
    return [
        str(ip),
        str(n),
        hex(n),
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"[::ffff:{ip}]",
        f"[64:ff9b::{ip}]",
        f"[2002:{a:02x}{b:02x}:{c:02x}{d:02x}::1]",
    ]


@given(non_public_v4)
def test_every_spelling_of_a_non_public_ipv4_address_is_refused(
    ip: ipaddress.IPv4Address,
) -> None:
    policy = AddressPolicy(allow_private=False)
    for spelling in _v4_spellings(ip):
        endpoint = parse_base_url(f"http://{spelling}:8000/v1")
        assert literal_address_refusal(endpoint, AddressPolicy(False)), spelling
        assert literal_address_refusal(endpoint, AddressPolicy(True)) is None
        with pytest.raises(SummarizerError, match="does not call private"):
            addresses_for(endpoint.host, endpoint.port, policy, lambda h, p: [h])


@given(non_public_v6)
def test_non_public_ipv6_addresses_are_refused(ip: ipaddress.IPv6Address) -> None:
    endpoint = parse_base_url(f"http://[{ip}]/v1")
    assert literal_address_refusal(endpoint, AddressPolicy(False))


@given(st.ip_addresses())
def test_an_address_passes_exactly_when_it_is_public(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    embedded = isinstance(ip, ipaddress.IPv6Address) and (
        ip.ipv4_mapped or ip.sixtofour or ip.teredo or ip in ipaddress.ip_network("64:ff9b::/96")
    )
    assume(not embedded)  # judged by the IPv4 address inside (test above)
    kinds = ("unspecified", "loopback", "link_local", "multicast", "private", "reserved")
    public = ip.is_global and not any(getattr(ip, f"is_{k}") for k in kinds)
    assert (refusal_of_address(str(ip)) is None) == public, ip


def test_a_name_resolving_to_any_private_address_is_refused_like_an_unknown_name() -> None:
    policy = AddressPolicy(allow_private=False)
    table = {
        "mixed.test": ["93.184.215.14", "10.0.0.7"],
        "internal.test": ["10.1.2.3"],
        "rebind.test": ["::ffff:169.254.169.254"],
    }

    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise socket.gaierror("unknown")
        return table[host]

    messages = set()
    for host in [*table, "unknown.test"]:
        with pytest.raises(SummarizerError) as info:
            addresses_for(host, 443, policy, resolve)
        messages.add(str(info.value).replace(host, "HOST"))
    assert len(messages) == 1, messages  # no oracle for which internal names exist
    assert addresses_for("public.test", 443, policy, lambda h, p: ["93.184.215.14"]) == [
        "93.184.215.14"
    ]


def test_localhost_is_refused_without_asking_dns() -> None:
    def resolve(host: str, port: int) -> list[str]:
        raise AssertionError("no DNS for localhost")

    for host in ("localhost", "LOCALHOST.", "api.localhost"):
        with pytest.raises(SummarizerError, match="loopback"):
            addresses_for(host, 80, AddressPolicy(False), resolve)
        assert literal_address_refusal(parse_base_url(f"http://{host}/v1"), AddressPolicy(False))


def test_the_operators_listed_endpoints_may_be_internal() -> None:
    settings = hosted(CTXLAB_KEY_ENDPOINTS="http://10.0.0.5:8000/v1")
    policy = address_policy(settings)
    assert addresses_for("10.0.0.5", 8000, policy, lambda h, p: [h]) == ["10.0.0.5"]
    with pytest.raises(SummarizerError):
        addresses_for("10.0.0.5", 8001, policy, lambda h, p: [h])


# -- which models the server's key pays for ---------------------------------------------------


def test_the_server_key_pays_only_for_the_listed_small_models_by_default() -> None:
    settings = hosted()
    assert settings.key_models == DEFAULT_KEY_MODELS
    assert choose_key(settings, "", model="gpt-4o-mini").source == "server"
    choice = choose_key(settings, "", model="o1-pro")
    assert choice.source == "refused" and choice.key == ""
    assert choice.refusal is not None
    assert "only used with the models the operator listed" in choice.refusal
    assert "bring your own key for o1-pro" in choice.refusal
    # the visitor's own key pays for any model
    assert choose_key(settings, "", " sk-visitor ", model="o1-pro").source == "visitor"


def test_the_operator_lists_the_models_or_allows_any() -> None:
    listed = hosted(**{KEY_MODELS_ENV: " gpt-5 , gpt-5-mini,gpt-5 "})
    assert listed.key_models == ("gpt-5", "gpt-5-mini")
    assert choose_key(listed, "", model="gpt-5").source == "server"
    assert choose_key(listed, "", model="gpt-4o-mini").source == "refused"
    anything = hosted(**{KEY_MODELS_ENV: "*"})
    assert anything.key_models is None
    assert choose_key(anything, "", model="o1-pro").source == "server"


def test_the_local_profile_does_not_limit_the_models() -> None:
    local = hosted(**{PROFILE_ENV: "local"})
    assert choose_key(local, "", model="o1-pro").source == "server"


@given(st.text(max_size=30))
def test_no_model_outside_the_list_gets_the_server_key(model: str) -> None:
    choice = choose_key(hosted(), "", model=model)
    assert (choice.source == "server") == (model.strip() in DEFAULT_KEY_MODELS)
