"""Hypothesis strategies of realistic credentials, for the redaction properties.

``secrets()`` draws a :class:`Planted`: the text to plant (e.g. ``password=hunter2...``) and the
part that must never reach a summarizer (the value). Every secret holds characters that
:func:`filler` never produces (digits, upper case, ``-`` or ``_``), so a test that finds the
secret in a request has found a leak, not a coincidence.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import string
from dataclasses import dataclass

from hypothesis import strategies as st

__all__ = [
    "KNOWN_SECRETS",
    "PROVIDER_SECRETS",
    "Planted",
    "filler",
    "planted_in",
    "secrets",
]

_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits
_URLSAFE = _ALNUM + "-_"
_B64 = _ALNUM + "+/"


@dataclass(frozen=True)
class Planted:
    """``text`` is planted in a chat; ``secret`` (a substring of it) must never be sent."""

    kind: str
    text: str
    secret: str


def _chars(alphabet: str, size: int, max_size: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=max_size if max_size else size)


def _with_digit(s: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Values that also contain a digit, so filler text can never contain them."""
    return st.tuples(s, st.sampled_from(string.digits)).map(lambda t: t[0][:-1] + t[1])


def _simple(kind: str, s: st.SearchStrategy[str]) -> st.SearchStrategy[Planted]:
    return s.map(lambda text: Planted(kind, text, text))


def _pem() -> st.SearchStrategy[Planted]:
    def build(label: str, body: bytes, escaped: bool) -> Planted:
        b64 = base64.b64encode(body).decode()
        lines = [b64[i : i + 64] for i in range(0, len(b64), 64)]
        newline = "\\n" if escaped else "\n"
        text = (
            f"-----BEGIN {label}PRIVATE KEY-----{newline}"
            + newline.join(lines)
            + f"{newline}-----END {label}PRIVATE KEY-----"
        )
        return Planted("private-key", text, lines[0])

    labels = st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "])
    return st.builds(build, labels, st.binary(min_size=48, max_size=300), st.booleans())


def _jwt() -> st.SearchStrategy[Planted]:
    def build(header: str, payload: str, signature: str) -> Planted:
        def seg(raw: str) -> str:
            return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

        text = f"{seg(header)}.{seg(payload)}.{signature}"
        return Planted("jwt", text, text)

    headers = st.sampled_from(['{"alg":"HS256","typ":"JWT"}', '{"alg":"RS256","kid":"k1"}'])
    payloads = st.builds(
        lambda sub, exp: f'{{"sub":"{sub}","exp":{exp}}}',
        _chars(_ALNUM, 4, 20),
        st.integers(1_600_000_000, 2_000_000_000),
    )
    return st.builds(build, headers, payloads, _chars(_URLSAFE, 43))


def _pair() -> st.SearchStrategy[Planted]:
    names = st.sampled_from(
        [
            "password",
            "passwd",
            "DB_PASSWORD",
            "secret",
            "client_secret",
            "api_key",
            "apiKey",
            "X-API-KEY",
            "token",
            "access_token",
            "refresh_token",
        ]
    )
    value = _with_digit(_chars(_ALNUM + "!@#$%^*+~", 10, 24))
    styles = st.sampled_from(["{k}={v}", "{k}: {v}", '"{k}": "{v}"', "{k}='{v}'", "{k} = {v}"])
    return st.builds(
        lambda k, v, style: Planted("secret-pair", style.format(k=k, v=v), v), names, value, styles
    )


@functools.cache
def secrets() -> st.SearchStrategy[Planted]:
    """Realistic credential shapes of every rule in :mod:`ctxlab.redaction` (built once)."""
    aws_secret = _with_digit(_chars(_B64, 40))
    return st.one_of(
        _simple("openai-key", _chars(_ALNUM, 48).map(lambda s: f"sk-{s}")),
        _simple("openai-key", _chars(_URLSAFE, 40, 120).map(lambda s: f"sk-proj-{s}A1")),
        _simple("anthropic-key", _chars(_URLSAFE, 93).map(lambda s: f"sk-ant-api03-{s}AA")),
        _simple("aws-access-key-id", _chars(_UPPER_DIGITS, 16).map(lambda s: f"AKIA{s}")),
        _simple("aws-access-key-id", _chars(_UPPER_DIGITS, 16).map(lambda s: f"ASIA{s}")),
        st.builds(
            lambda v, style: Planted("aws-secret-key", style.format(v=v), v),
            aws_secret,
            st.sampled_from(
                [
                    "aws_secret_access_key={v}",
                    "aws_secret_access_key = {v}",
                    '"SecretAccessKey": "{v}"',
                ]
            ),
        ),
        _simple(
            "github-token",
            st.builds(
                lambda p, s: f"{p}_{s}",
                st.sampled_from("pousr").map("gh".__add__),
                _chars(_ALNUM, 36),
            ),
        ),
        _simple("github-token", _chars(_ALNUM + "_", 82).map(lambda s: f"github_pat_{s}")),
        _simple(
            "slack-token",
            st.builds(
                lambda kind, a, b, c: f"xox{kind}-{a}-{b}-{c}",
                st.sampled_from("baprs"),
                _chars(string.digits, 12),
                _chars(string.digits, 13),
                _chars(_ALNUM, 24),
            ),
        ),
        _simple("google-api-key", _chars(_URLSAFE, 35).map(lambda s: f"AIza{s}")),
        _jwt(),
        _pem(),
        st.builds(
            lambda v, scheme: Planted("bearer-token", f"Authorization: {scheme} {v}", v),
            _with_digit(_chars(_ALNUM + "._~+/-", 20, 60)),
            st.sampled_from(["Bearer", "bearer", "Basic", "Token"]),
        ),
        _pair(),
        _simple(
            "stripe-key",
            st.builds(
                lambda kind, mode, body: f"{kind}_{mode}_{body}",
                st.sampled_from(["sk", "rk", "pk"]),
                st.sampled_from(["live", "test"]),
                _with_digit(_chars(_ALNUM, 24, 99)),
            ),
        ),
        _simple("gitlab-token", _with_digit(_chars(_URLSAFE, 20)).map(lambda s: f"glpat-{s}")),
        _simple(
            "huggingface-token",
            _with_digit(_chars(string.ascii_letters, 34)).map(lambda s: f"hf_{s}"),
        ),
        _simple(
            "sendgrid-key",
            st.builds(
                lambda a, b: f"SG.{a}.{b}",
                _with_digit(_chars(_URLSAFE, 22)),
                _with_digit(_chars(_URLSAFE, 43)),
            ),
        ),
        _simple("npm-token", _with_digit(_chars(_ALNUM, 36)).map(lambda s: f"npm_{s}")),
        _simple(
            "pypi-token",
            _with_digit(_chars(_URLSAFE, 60, 180)).map(lambda s: f"pypi-AgEIcHlwaS5vcmc{s}"),
        ),
        _simple(
            "twilio-key",
            st.builds(
                lambda p, s: p + s, st.sampled_from(["SK", "AC"]), _chars("0123456789abcdef", 32)
            ).filter(lambda s: any(c.isdigit() for c in s[2:])),
        ),
        st.builds(
            lambda scheme, user, password, host: Planted(
                "url-credentials", f"{scheme}://{user}:{password}@{host}/db", password
            ),
            st.sampled_from(["postgres", "postgresql", "mysql", "redis", "amqp", "https"]),
            _chars(string.ascii_lowercase + "_", 1, 12),
            _with_digit(_chars(_ALNUM + "-_.~!$*+", 8, 30)),
            st.sampled_from(["db.internal:5432", "10.0.0.7", "cache.example.invalid"]),
        ),
        st.builds(
            lambda name, value, style: Planted(
                "secret-pair" if "SECRET" in name or "TOKEN" in name else "key-assignment",
                style.format(k=name, v=value),
                value,
            ),
            st.sampled_from(
                ["STRIPE_SECRET_KEY", "JWT_SECRET", "SLACK_BOT_TOKEN", "MAPBOX_KEY", "signingKey"]
            ),
            _with_digit(_chars(_ALNUM, 32, 64)).filter(
                lambda v: len(set(v)) >= 12 and not v.islower() and not v.isupper()
            ),
            st.sampled_from(["{k}={v}", "{k}: {v}", '"{k}": "{v}"', "export {k}='{v}'"]),
        ),
    )


# Filler never contains digits, upper case, '-' or '_', so no secret can appear in it by chance.
_FILLER = string.ascii_lowercase + " .,:!?\n"
_SEPARATORS = [" ", "\n", "\t", " (", ") ", ' "', '" ', ", "]


def filler(max_size: int = 80) -> st.SearchStrategy[str]:
    """Ordinary text around a planted secret."""
    return st.text(_FILLER, max_size=max_size)


@st.composite
def planted_in(draw: st.DrawFn, secret: Planted) -> str:
    """Filler text with ``secret.text`` at a random position, set off by a separator."""
    text = draw(filler())
    at = draw(st.integers(0, len(text)))
    before = draw(st.sampled_from(_SEPARATORS))
    after = draw(st.sampled_from(_SEPARATORS))
    return text[:at] + before + secret.text + after + text[at:]


KNOWN_SECRETS: tuple[Planted, ...] = (
    Planted(
        "openai-key",
        "sk-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQR1234",
        "sk-abcdefghijklmnopqrstuvwxyz",
    ),
    Planted(
        "openai-key",
        "sk-proj-Ab3_dE-fGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH",
        "Ab3_dE-fGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    Planted(
        "anthropic-key",
        "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa0123456789_-ZyXwVuTsRqPoNmLkJiHgAA",
        "ZyXwVuTsRqPoNmLkJiHgFeDcBa0123456789",
    ),
    Planted("aws-access-key-id", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    Planted(
        "aws-secret-key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    Planted(
        "github-token",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    Planted(
        "github-token",
        "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234",
        "11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789",
    ),
    Planted(
        "slack-token",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    Planted(
        "google-api-key",
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    ),
    Planted(
        "jwt",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    Planted(
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\nQ9x8Vk2=\n"
        "-----END RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM",
    ),
    Planted(
        "bearer-token", "Authorization: Bearer Zm9vYmFyYmF6cXV4MTIz.abc", "Zm9vYmFyYmF6cXV4MTIz.abc"
    ),
    Planted("secret-pair", "password=Hunter2Hunter2!", "Hunter2Hunter2!"),
    Planted("secret-pair", '"api_key": "k3y with spaces 42"', "k3y with spaces 42"),
)
"""Hand-written examples, one or two per rule (the secret is the part that must vanish)."""


def _fake(label: str, alphabet: str, size: int) -> str:
    """``size`` characters of ``alphabet``, derived from ``label`` (stable, obviously made up)."""
    out = ""
    counter = 0
    while len(out) < size:
        digest = hashlib.sha256(f"{label}/{counter}".encode()).digest()
        out += "".join(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    return out[:size]


def _provider_secrets() -> tuple[Planted, ...]:
    # Built from parts at import time: no string in this file is a credential a secret scanner
    # would flag, yet every value has the exact shape of the provider's real tokens.
    def tok(kind: str, prefix: str, alphabet: str, size: int) -> Planted:
        value = prefix + _fake(kind + prefix, alphabet, size)
        return Planted(kind, value, value)

    hex_ = "0123456789abcdef"
    jwt_head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    jwt_body = base64.urlsafe_b64encode(b'{"sub":"planted"}').decode().rstrip("=")
    jwt = f"{jwt_head}.{jwt_body}.{_fake('jwt', _URLSAFE, 43)}"
    pem_body = _fake("pem", _B64, 64 * 4)
    pem_lines = "\n".join(pem_body[i : i + 64] for i in range(0, len(pem_body), 64))
    pem = "-----BEGIN " + "PRIVATE KEY-----\n" + pem_lines + "\n-----END " + "PRIVATE KEY-----"
    pg_password = _fake("pg", _ALNUM, 18)
    stripe_env = "sk_" + "live_" + _fake("stripe-env", _ALNUM, 24)
    aws_secret = _fake("aws-secret", _B64, 40)
    bearer = _fake("bearer", _ALNUM, 40)
    basic = base64.b64encode(b"deploy:" + _fake("basic", _ALNUM, 16).encode()).decode()
    env_key = _fake("env-key", _ALNUM, 40)
    return (
        tok("openai-key", "sk-" + "proj-", _URLSAFE, 120),
        tok("openai-key", "sk-", _ALNUM, 48),
        tok("anthropic-key", "sk-" + "ant-api03-", _URLSAFE, 95),
        tok("stripe-key", "sk_" + "live_", _ALNUM, 24),
        tok("stripe-key", "sk_" + "test_", _ALNUM, 24),
        tok("stripe-key", "rk_" + "live_", _ALNUM, 24),
        tok("stripe-key", "pk_" + "live_", _ALNUM, 24),
        tok("github-token", "gh" + "p_", _ALNUM, 36),
        tok("github-token", "gh" + "o_", _ALNUM, 36),
        tok("github-token", "gh" + "u_", _ALNUM, 36),
        tok("github-token", "gh" + "s_", _ALNUM, 36),
        tok("github-token", "gh" + "r_", _ALNUM, 36),
        tok("github-token", "github" + "_pat_", _ALNUM + "_", 82),
        tok("gitlab-token", "gl" + "pat-", _URLSAFE, 20),
        tok("slack-token", "xo" + "xb-", string.digits, 12),
        tok("slack-token", "xo" + "xp-", _ALNUM, 40),
        tok("aws-access-key-id", "AK" + "IA", _UPPER_DIGITS, 16),
        tok("aws-access-key-id", "AS" + "IA", _UPPER_DIGITS, 16),
        Planted("aws-secret-key", f"AWS_SECRET_ACCESS_KEY={aws_secret}", aws_secret),
        tok("google-api-key", "AI" + "za", _URLSAFE, 35),
        tok("huggingface-token", "hf" + "_", string.ascii_letters, 34),
        Planted(
            "sendgrid-key",
            "SG." + _fake("sg-id", _URLSAFE, 22) + "." + _fake("sg", _URLSAFE, 43),
            _fake("sg", _URLSAFE, 43),
        ),
        tok("npm-token", "np" + "m_", _ALNUM, 36),
        tok("pypi-token", "py" + "pi-AgEIcHlwaS5vcmc", _URLSAFE, 140),
        tok("twilio-key", "S" + "K", hex_, 32),
        tok("twilio-key", "A" + "C", hex_, 32),
        Planted("jwt", jwt, jwt),
        Planted("private-key", pem, pem_body[:64]),
        Planted(
            "url-credentials",
            f"postgres://orders_app:{pg_password}@db-stg.internal:5432/orders",
            pg_password,
        ),
        Planted("bearer-token", f"Authorization: Bearer {bearer}", bearer),
        Planted("bearer-token", f"Authorization: Basic {basic}", basic),
        Planted("stripe-key", f"STRIPE_SECRET_KEY={stripe_env}", stripe_env),
        Planted("secret-pair", f"DB_PASSWORD={pg_password}", pg_password),
        Planted("key-assignment", f"MAPBOX_KEY={env_key}", env_key),
    )


PROVIDER_SECRETS: tuple[Planted, ...] = _provider_secrets()
"""One realistic fake of every provider format and assignment form, built at import time.

``kind`` is the rule expected to name it (for ``STRIPE_SECRET_KEY=sk_live_...`` the provider rule
wins over the pair rule: the most specific name is the one counted).
"""
