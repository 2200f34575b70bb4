"""Role redaction rules and credential patterns (ctxlab.redaction)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from secretgen import KNOWN_SECRETS, PROVIDER_SECRETS, Planted, filler, planted_in, secrets

from ctxlab.model import Role
from ctxlab.redaction import (
    REDACTED,
    RULES,
    RedactionPolicy,
    marker,
    redact_patterns,
    redacted_roles,
)


def test_marker_text_has_one_source_of_truth() -> None:
    assert marker() == REDACTED == "[REDACTED]"
    assert marker("openai-key") == "[REDACTED:openai-key]"


def test_rule_names_are_unique_kebab_case() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert all(name == name.lower() and " " not in name for name in names)


@pytest.mark.parametrize("planted", KNOWN_SECRETS, ids=lambda p: p.kind)
def test_each_rule_masks_its_known_example_and_counts_it(planted: Planted) -> None:
    out = redact_patterns(f"see {planted.text} here")
    assert planted.secret not in out.text
    assert marker(planted.kind) in out.text
    assert out.counts[planted.kind] >= 1
    assert out.text.startswith("see ") and out.text.endswith(" here")


@pytest.mark.parametrize(
    "planted", PROVIDER_SECRETS, ids=lambda p: f"{p.kind}:{p.text[:14].rstrip()}"
)
@pytest.mark.parametrize(
    "frame",
    ["{}", "value {} end", '{{"k": "{}"}}', "export X={}\n", "`{}`", "'{}',", "({})"],
)
def test_every_provider_format_is_masked_and_named(planted: Planted, frame: str) -> None:
    out = redact_patterns(frame.format(planted.text))
    assert planted.secret not in out.text
    assert out.counts.get(planted.kind, 0) >= 1, out
    assert redact_patterns(out.text).counts == {}


def test_the_rules_cover_every_provider_kind_the_tests_plant() -> None:
    names = {rule.name for rule in RULES}
    assert {p.kind for p in PROVIDER_SECRETS} <= names
    assert {p.kind for p in KNOWN_SECRETS} <= names


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "STRIPE_SECRET_KEY=" + "x9" * 12,
            "STRIPE_SECRET_KEY=[REDACTED:secret-pair]",
        ),
        ("JWT_SECRET: not-so-secret-42", "JWT_SECRET: [REDACTED:secret-pair]"),
        ('"SLACK_BOT_TOKEN": "anything 1"', '"SLACK_BOT_TOKEN": "[REDACTED:secret-pair]"'),
        ("client_secret = abc", "client_secret = [REDACTED:secret-pair]"),
        ("SECRET_KEY_BASE=abc123", "SECRET_KEY_BASE=[REDACTED:secret-pair]"),
        (
            "  maps_api_key: Qm9Xz7Lk2Pw4Rt8Vb6Nc",
            "  maps_api_key: [REDACTED:secret-pair]",
        ),
        (
            "MAPBOX_KEY=Qm9Xz7Lk2Pw4Rt8Vb6Nc1",
            "MAPBOX_KEY=[REDACTED:key-assignment]",
        ),
        (
            '{"signingKey": "Qm9Xz7Lk2Pw4Rt8Vb6Nc1"}',
            '{"signingKey": "[REDACTED:secret-pair]"}',
        ),
    ],
)
def test_secret_named_assignments_in_env_json_and_yaml_form(text: str, expected: str) -> None:
    assert redact_patterns(text).text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "postgres://orders_app:pA55-w0rd@db.internal:5432/orders",
            "postgres://orders_app:[REDACTED:url-credentials]@db.internal:5432/orders",
        ),
        (
            "DATABASE_URL=mysql://root:r00t!pw@10.0.0.7/app",
            "DATABASE_URL=mysql://root:[REDACTED:url-credentials]@10.0.0.7/app",
        ),
        ("redis://:s3cret@cache:6379/0", "redis://:[REDACTED:url-credentials]@cache:6379/0"),
        (
            "git clone https://deploy:tok3n-value@git.example.invalid/team/repo.git",
            "git clone https://deploy:[REDACTED:url-credentials]@git.example.invalid/team/repo.git",
        ),
        (
            '{"dsn": "amqp://guest:gu3st@rabbit/"}',
            '{"dsn": "amqp://guest:[REDACTED:url-credentials]@rabbit/"}',
        ),
    ],
)
def test_credentials_in_urls_mask_the_password_and_keep_user_and_host(
    text: str, expected: str
) -> None:
    assert redact_patterns(text).text == expected


@pytest.mark.parametrize(
    "benign",
    [
        "The secretary: Jane Doe. The tokenizer: o200k_base.",
        "sort_key = created_at; cache_key: user_profile_settings_v2; primary_key=True",
        "request id 123e4567-e89b-12d3-a456-426614174000, trace 3f2b9c1e-aaaa-4bbb-8ccc-0123",
        "commit 9f3c2e1b4a7d8e6f5c4b3a2918273645afbecd01 (short 9f3c2e1)",
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "git@github.com:org/repo.git and ssh://git@host/repo and https://user@host/x",
        "http://localhost:8080/v1 and https://example.com:443/a?b=c#d",
        "max_tokens=500, max_completion_tokens: 1000, tokens_used = 12, num_tokens: 3",
        "hf_hub_download(repo_id) and npm_config_cache and sk_learn_model and glob-pattern",
        "SG.1 is a section heading; pypi-simple is a package; AC/DC and SKU codes",
        "Authorization headers carry a scheme. Use Basic auth carefully.",
        "password_hint: ask the admin; forgot_password_url=https://example.com/reset",
    ],
)
def test_identifiers_hashes_uuids_and_prose_are_not_masked(benign: str) -> None:
    out = redact_patterns(benign)
    assert out.counts == {}, out
    assert out.text == benign


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter22", "password=[REDACTED:secret-pair]"),
        ("passwd: s3cr3t!", "passwd: [REDACTED:secret-pair]"),
        ("DB_PASSWORD='a b c'", "DB_PASSWORD='[REDACTED:secret-pair]'"),
        ('{"api_key": "abc 123"}', '{"api_key": "[REDACTED:secret-pair]"}'),
        ('{\\"token\\": \\"t0ken\\"}', '{\\"token\\": \\"[REDACTED:secret-pair]\\"}'),
        ("secret = xyz;next", "secret = [REDACTED:secret-pair];next"),
    ],
)
def test_secret_pairs_mask_the_value_and_keep_the_key(text: str, expected: str) -> None:
    assert redact_patterns(text).text == expected


def test_authorization_header_keeps_scheme_and_masks_credential() -> None:
    out = redact_patterns('curl -H "Authorization: Bearer abc.def-ghi_jkl12345" https://x')
    assert out.text == 'curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://x'


def test_private_key_block_cut_before_its_end_line_is_still_masked() -> None:
    text = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\nAAAA"
    out = redact_patterns(text)
    assert "b3BlbnNzaC1rZXkt" not in out.text
    assert out.counts == {"private-key": 1}


def test_a_key_inside_a_secret_pair_is_named_by_the_specific_rule_once() -> None:
    out = redact_patterns("api_key=sk-abcdefghijklmnopqrstuvwx1234")
    assert out.text == "api_key=[REDACTED:openai-key]"
    assert out.counts == {"openai-key": 1}


@pytest.mark.parametrize(
    "benign",
    [
        "The risk-assessment-of-the-quarterly-report is due on 2024-05-01.",
        "max_tokens: 500 and token_count = 12",
        "def summarize(messages, options):\n    return None",
        "Paris is sunny, 21 C. The task-management-dashboard-for-everyone shipped.",
        "Use the Bearer scheme.",
        "AKIA is a prefix; ASIAN markets opened.",
        "see https://example.com/path?q=1 and docs/api_reference.md",
    ],
)
def test_ordinary_text_is_left_alone(benign: str) -> None:
    out = redact_patterns(benign)
    assert out.text == benign
    assert out.counts == {}


@given(st.text(max_size=300))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_patterns(text)
    twice = redact_patterns(once.text)
    assert twice.text == once.text
    assert twice.counts == {}


@given(secrets(), st.data())
def test_a_realistic_secret_anywhere_in_text_never_survives(
    planted: Planted, data: st.DataObject
) -> None:
    text = data.draw(planted_in(planted))
    out = redact_patterns(text)
    assert planted.secret not in out.text
    assert sum(out.counts.values()) >= 1


@given(filler())
def test_filler_text_is_never_masked(text: str) -> None:
    # Guards the property above: the filler itself never looks like a secret.
    assert redact_patterns(text).counts == {}


def test_redact_roles_when_set_is_exactly_the_redacted_set() -> None:
    assert redacted_roles(True, [Role.SYSTEM]) == {Role.SYSTEM}
    assert redacted_roles(False, [Role.USER, Role.SYSTEM]) == {Role.USER, Role.SYSTEM}


def test_redact_tool_content_alone_redacts_tool_and_legacy_function_results() -> None:
    assert redacted_roles(True, ()) == {Role.TOOL, Role.FUNCTION}
    assert redacted_roles(False, ()) == frozenset()


def test_tool_in_redact_roles_covers_legacy_function_role() -> None:
    assert redacted_roles(False, [Role.TOOL]) == {Role.TOOL, Role.FUNCTION}


def test_policy_redacts_tool_arguments_exactly_when_tool_role_is_redacted() -> None:
    assert RedactionPolicy.from_options(True, (), True).redacts_tool_arguments
    assert not RedactionPolicy.from_options(True, [Role.SYSTEM], True).redacts_tool_arguments
    assert not RedactionPolicy.from_options(False, (), True).redacts_tool_arguments
