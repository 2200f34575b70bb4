"""Redaction: what never leaves the host process on its way to a summarizer.

Two independent mechanisms, both applied by :mod:`ctxlab.transcript` before any text reaches a
:class:`~ctxlab.summarizers.SummaryRequest`:

* **Role redaction** (the summarize_options seed). A non-empty ``redact_roles`` names exactly the
  roles whose content becomes :data:`REDACTED`; otherwise ``redact_tool_content`` redacts tool
  results. ``tool`` always covers the legacy ``function`` role too (both are tool results). When
  tool results are redacted, the ``arguments`` of assistant tool calls are redacted as well; the
  tool names stay, so the summary can still say which tools ran.
* **Pattern redaction** (``redact_patterns``). Credential-looking spans in *every* role are
  replaced by a marker naming the rule that matched, e.g. ``[REDACTED:openai-key]``, and each rule
  counts its matches so the UI can say what was masked.

Marker text has one source of truth: :data:`REDACTED` and :func:`marker`.

>>> redact_patterns("key sk-abcdefghijklmnopqrstuvwx1234 ok").text
'key [REDACTED:openai-key] ok'
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ctxlab.model import Role

__all__ = [
    "MARKER_PATTERN",
    "REDACTED",
    "RULES",
    "Redacted",
    "RedactionPolicy",
    "Rule",
    "marker",
    "merge_counts",
    "redact_patterns",
    "redacted_roles",
]

REDACTED = "[REDACTED]"
"""The one marker that replaces a redacted message body or tool-call argument string."""


def marker(rule: str | None = None) -> str:
    """The marker text for ``rule`` (``[REDACTED:rule]``), or :data:`REDACTED` for none."""
    return REDACTED if rule is None else f"{REDACTED[:-1]}:{rule}]"


MARKER_PATTERN = re.compile(re.escape(REDACTED[:-1]) + r"(?::[A-Za-z0-9_.-]+)?\]")
"""Matches every marker :func:`marker` makes, so views can find and highlight them."""


# A span already masked is never masked again (and never counted twice).
_NOT_MASKED = r"(?!" + re.escape(REDACTED[:-1]) + r")"


@dataclass(frozen=True, slots=True)
class Rule:
    """One named credential pattern.

    When the pattern has groups named ``value...``, only the one that matched is masked (the key
    name of a ``password=...`` pair stays readable); otherwise the whole match is. ``accept``,
    when given, must also say yes to the masked text (for shapes a regex alone would over-match,
    such as the value of any ``*_KEY=`` assignment).
    """

    name: str
    description: str
    pattern: re.Pattern[str]
    # Case-folded substrings of which every match holds at least one: a text holding none is
    # skipped without running the pattern (most messages hold no secret; keeps 100k chats fast).
    hints: tuple[str, ...] = ()
    accept: Callable[[str], bool] | None = None

    def may_match(self, lowered: str) -> bool:
        return not self.hints or any(hint in lowered for hint in self.hints)

    def apply(self, text: str) -> tuple[str, int]:
        """``text`` with every match masked, and the number of matches."""
        masked = marker(self.name)
        value_groups = [g for g in self.pattern.groupindex if g.startswith("value")]

        count = 0

        def replace(match: re.Match[str]) -> str:
            nonlocal count
            group = next((g for g in value_groups if match.group(g) is not None), None)
            value = match.group() if group is None else match.group(group)
            if self.accept is not None and not self.accept(value):
                return match.group()
            count += 1
            if group is None:
                return masked
            start, end = match.span(group)
            return text[match.start() : start] + masked + text[end : match.end()]

        return self.pattern.sub(replace, text), count


def _rule(
    name: str,
    description: str,
    regex: str,
    hints: tuple[str, ...],
    accept: Callable[[str], bool] | None = None,
) -> Rule:
    return Rule(name, description, re.compile(regex), hints, accept)


def _token(prefix: str, body: str) -> str:
    """A provider token: ``prefix`` + ``body``, not glued to a longer word on either side."""
    return r"(?<![A-Za-z0-9_-])" + prefix + body + r"(?![A-Za-z0-9_-])"


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


_WORD = r"(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)[0-9]*"
_IDENTIFIER = re.compile(rf"[./]*{_WORD}(?:[_.:/-]+{_WORD})*|[0-9.:-]+")


def _looks_generated(value: str) -> bool:
    """A value that looks machine-generated (a key), not a name, a number or a word.

    The gitleaks generic-api-key idea: long enough, letters and digits mixed, high entropy; a
    snake/kebab/dotted identifier (``user_profile_v2``), a version or a date is not a key.
    """
    value = value.strip("\"'")
    if len(value) < 16 or _IDENTIFIER.fullmatch(value):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return has_letter and has_digit and _entropy(value) >= 3.2


# Key names whose value is a secret in `name=value`, `name: value` and `"name": "value"` pairs.
_SECRET_NAMES = (
    r"password|passwd|passphrase|pwd|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|auth[_-]?key|signing[_-]?key|encryption[_-]?key"
    r"|(?:access|auth|refresh|id|session|bearer|bot|app)[_-]?token|token"
    # Anything named secret (`STRIPE_SECRET_KEY`, `client_secret`, `SECRET_KEY_BASE`).
    r"|secret(?:[_.-]?(?:key|token|value|base|id)|[_.-][A-Za-z0-9]+){0,2}"
)
# `NAME_KEY=value` names any key: masked only when the value looks generated (see accept).
_KEY_NAMES = r"(?:[A-Za-z0-9]+[_.-])+(?:key|KEY|Key)|[a-z][A-Za-z0-9]*Key"
_PAIR_VALUE = (
    r'(?:\\?"(?P<value_dq>' + _NOT_MASKED + r'(?:[^"\\\n]|\\[^"\n])+)\\?"'
    r"|'(?P<value_sq>" + _NOT_MASKED + r"[^'\n]+)'"
    r"|(?P<value>" + _NOT_MASKED + r"""[^\s"'\\,;&}\])]+))"""
)
# An optional (maybe JSON-escaped) quote closing a key name, then ':' or '='.
_PAIR_SEPARATOR = r"""(?:\\?["'])?\s*[:=]\s*"""

# Order matters: a broad rule must not half-mask what a specific rule would name (a PEM body
# holds base64 that looks like other tokens; sk-ant- keys also start with sk-).
RULES: tuple[Rule, ...] = (
    _rule(
        "private-key",
        "PEM private-key blocks (also a block cut before its END line)",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----"
        r"(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\\:,-]*)",
        ("private key-----",),
    ),
    _rule(
        "url-credentials",
        "passwords in URLs (scheme://user:password@host: database DSNs, git remotes, proxies)",
        r"(?i)(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]{1,30}://[^\s:/?#@\"'<>\\]*:"
        r"(?P<value>" + _NOT_MASKED + r"[^\s/?#@\"'<>\\]+)@(?=[A-Za-z0-9\[])",
        ("://",),
    ),
    _rule(
        "anthropic-key",
        "Anthropic API keys (sk-ant-...)",
        r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}",
        ("sk-ant-",),
    ),
    _rule(
        "openai-key",
        "OpenAI API keys (sk-..., sk-proj-..., sk-svcacct-...)",
        r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
        ("sk-",),
    ),
    _rule(
        "aws-secret-key",
        "AWS secret access keys in aws_secret_access_key=... / SecretAccessKey pairs",
        r"(?i)(?:aws_?)?secret_?access_?key"
        + _PAIR_SEPARATOR
        + r"(?:\\?[\"'])?(?P<value>"
        + _NOT_MASKED
        + r"[A-Za-z0-9/+=]{16,})",
        ("secret",),
    ),
    _rule(
        "aws-access-key-id",
        "AWS access key ids (AKIA/ASIA + 16 characters)",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",
        ("akia", "asia", "abia", "acca"),
    ),
    _rule(
        "github-token",
        "GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule(
        "stripe-key",
        "Stripe keys (sk_live_, sk_test_, rk_live_, rk_test_, pk_live_, whsec_)",
        _token(r"(?:(?:sk|rk|pk)_(?:live|test|prod)_|whsec_)", r"[A-Za-z0-9]{16,}"),
        ("sk_", "rk_", "pk_", "whsec_"),
    ),
    _rule(
        "gitlab-token",
        "GitLab tokens (glpat-, gldt-, glptt-, glrt-, glsoat-, glcbt-, ...)",
        _token(r"gl(?:pat|dt|ptt|rt|soat|cbt|imt|agent|oas|ffct|ft)-", r"[A-Za-z0-9_.-]{20,}"),
        tuple(
            f"gl{p}-"
            for p in ("pat", "dt", "ptt", "rt", "soat", "cbt", "imt", "agent", "oas", "ffct", "ft")
        ),
    ),
    _rule(
        "huggingface-token",
        "Hugging Face tokens (hf_..., api_org_...)",
        _token(r"(?:hf_|api_org_)", r"[A-Za-z0-9]{30,}"),
        ("hf_", "api_org_"),
    ),
    _rule(
        "sendgrid-key",
        "SendGrid API keys (SG.<id>.<secret>)",
        _token(r"SG\.", r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
        ("sg.",),
    ),
    _rule(
        "npm-token",
        "npm access tokens (npm_...)",
        _token(r"npm_", r"[A-Za-z0-9]{36}"),
        ("npm_",),
    ),
    _rule(
        "pypi-token",
        "PyPI upload tokens (pypi-AgE...)",
        _token(r"pypi-AgE", r"[A-Za-z0-9_-]{40,}"),
        ("pypi-age",),
    ),
    _rule(
        "twilio-key",
        "Twilio API key SIDs and account SIDs (SK / AC + 32 hex)",
        r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9])",
        ("sk", "ac"),
    ),
    _rule(
        "slack-token",
        "Slack tokens (xoxb-, xoxa-, xoxp-, xoxr-, xoxs-, xoxe-, xapp-)",
        r"(?<![A-Za-z0-9])(?:xox[abeprs]|xapp)-[A-Za-z0-9-]{10,}",
        ("xox", "xapp-"),
    ),
    _rule(
        "google-api-key",
        "Google API keys (AIza...)",
        r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}",
        ("aiza",),
    ),
    _rule(
        "jwt",
        "JSON Web Tokens (three base64url segments, the first starting eyJ)",
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
        ("eyj",),
    ),
    _rule(
        "bearer-token",
        "bearer/basic credentials in Authorization headers",
        r"(?i)(?:\bbearer|authorization[\"']?\s*[:=]\s*[\"']?(?:basic|token|bearer)?)\s+"
        r"(?P<value>" + _NOT_MASKED + r"[A-Za-z0-9._~+/-]{8,}=*)",
        ("bearer", "authorization"),
    ),
    _rule(
        "secret-pair",
        "password= / passwd: / secret= / api_key= / token= style pairs (the value is masked)",
        r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])*(?:"
        + _SECRET_NAMES
        + r")(?![A-Za-z0-9])"
        + _PAIR_SEPARATOR
        + _PAIR_VALUE,
        ("pass", "pwd", "secret", "key", "token"),
    ),
    _rule(
        "key-assignment",
        "*_KEY= / fooKey: assignments whose value looks generated (entropy, letters and digits)",
        r"(?<![A-Za-z0-9])(?:" + _KEY_NAMES + r")(?![A-Za-z0-9])" + _PAIR_SEPARATOR + _PAIR_VALUE,
        ("key",),
        _looks_generated,
    ),
)


# One search for every rule's hints: most texts hold none and cost a single scan.
_ANY_HINT = re.compile(
    "|".join(sorted({re.escape(h) for rule in RULES for h in rule.hints}, key=len, reverse=True))
)


@dataclass(frozen=True, slots=True)
class Redacted:
    """Text after redaction and how many spans each rule masked (rules that matched only)."""

    text: str
    counts: Mapping[str, int] = field(default_factory=dict)


def redact_patterns(text: str) -> Redacted:
    """Mask every credential-looking span of ``text``; each span becomes ``[REDACTED:<rule>]``.

    Idempotent: redacting the result again changes nothing and counts nothing.

    Args:
        text: any text (message content, tool-call arguments, a previous summary).

    Returns:
        The masked text and the number of spans masked per rule name.
    """
    counts: dict[str, int] = {}
    lowered = text.casefold()
    if not _ANY_HINT.search(lowered):
        return Redacted(text, counts)
    for rule in RULES:
        if not rule.may_match(lowered):
            continue
        text, n = rule.apply(text)
        if n:
            counts[rule.name] = n
    return Redacted(text, counts)


def merge_counts(*parts: Mapping[str, int]) -> dict[str, int]:
    """Sum per-rule counts."""
    out: dict[str, int] = {}
    for part in parts:
        for name, n in part.items():
            out[name] = out.get(name, 0) + n
    return out


def redacted_roles(redact_tool_content: bool, redact_roles: Iterable[Role]) -> frozenset[Role]:
    """The roles whose content is replaced by :data:`REDACTED` (the seed's precedence rule).

    A non-empty ``redact_roles`` is the whole set and ``redact_tool_content`` is ignored;
    otherwise ``redact_tool_content`` selects the tool role. ``tool`` and the legacy ``function``
    role always go together: both are tool results.
    """
    roles = frozenset(redact_roles)
    if not roles:
        roles = frozenset({Role.TOOL}) if redact_tool_content else frozenset()
    if Role.TOOL in roles or Role.FUNCTION in roles:
        roles |= {Role.TOOL, Role.FUNCTION}
    return roles


@dataclass(frozen=True, slots=True)
class RedactionPolicy:
    """What :func:`ctxlab.transcript.render_transcript` masks.

    Attributes:
        roles: roles whose message content is replaced by :data:`REDACTED`.
        patterns: mask credential-looking spans (:data:`RULES`) in everything sent.
    """

    roles: frozenset[Role] = frozenset({Role.TOOL, Role.FUNCTION})
    patterns: bool = True

    @classmethod
    def from_options(
        cls, redact_tool_content: bool, redact_roles: Iterable[Role], redact_patterns: bool
    ) -> RedactionPolicy:
        return cls(redacted_roles(redact_tool_content, redact_roles), redact_patterns)

    @property
    def redacts_tool_arguments(self) -> bool:
        """Tool-call arguments are redacted together with the tool results they produce."""
        return Role.TOOL in self.roles
