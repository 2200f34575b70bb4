"""Role redaction rules and credential patterns (ctxlab.redaction)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from secretgen import KNOWN_SECRETS, Planted, filler, planted_in, secrets

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
