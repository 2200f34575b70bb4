"""The fact picker finds exactly the facts it found before it was made fast (issue 15).

``tests/fixtures/facts/expected_facts.json`` was written by ``scripts/pin_facts.py`` with the
code of before the rewrite (see the PROVENANCE.md beside it). The property test compares the
picker with that old algorithm, kept here verbatim as the reference, on generated texts that
mix every kind of fact, whitespace of every sort and names across lines.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.formats import load_chat
from ctxlab.insights import Fact, FactCheck, FactRetention, extract_facts, fact_retention
from ctxlab.insights.facts import searchable_text
from ctxlab.model import Message, Role
from ctxlab.samples import sample_path

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED = json.loads((FIXTURES / "facts" / "expected_facts.json").read_text(encoding="utf-8"))
UNLIMITED = 10**9

# -- the picker as it was before issue 15 (reference) -------------------------------------------

_OLD_PATTERNS: tuple[tuple[str, re.Pattern[str], str | None], ...] = (
    ("url", re.compile(r"\bhttps?://[^\s<>\"'`)\]]+[^\s<>\"'`)\].,;:!?]"), "://"),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "@"),
    ("path", re.compile(r"(?<![\w/.])(?:[\w.-]+/)+[\w-]+\.[A-Za-z0-9]{1,8}\b"), "/"),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "-"),
    (
        "identifier",
        re.compile(
            r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_-]{3,}\b"
            r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"
        ),
        None,
    ),
    ("number", re.compile(r"(?<![\w.])[$€£]?\d{1,3}(?:[,\d]{3,})*(?:\.\d+)?%?(?![\w.])"), None),
    ("name", re.compile(r"(?<![.!?]\s)\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+\b"), None),
)
_DEFAULT_ROLES = (Role.USER, Role.TOOL, Role.FUNCTION)


def _old_meaningful(text: str) -> bool:
    digits = sum(ch.isdigit() for ch in text)
    return digits >= 3 or any(ch in text for ch in ".$€£%")


def old_extract_facts(
    messages: Sequence[Message], *, roles: Iterable[Role] = _DEFAULT_ROLES, limit: int = 300
) -> tuple[Fact, ...]:
    wanted = frozenset(roles)
    seen: dict[str, Fact] = {}
    for message in messages:
        if message.role not in wanted or not message.content:
            continue
        text = message.content
        claimed = bytearray(len(text))
        for kind, pattern, needle in _OLD_PATTERNS:
            if needle is not None and needle not in text:
                continue
            for match in pattern.finditer(text):
                start, end = match.span()
                if claimed.find(1, start, end) != -1:
                    continue
                value = match.group()
                if kind == "number" and not _old_meaningful(value):
                    continue
                claimed[start:end] = b"\x01" * (end - start)
                if value not in seen:
                    seen[value] = Fact(value, kind, message.id)
    facts = tuple(seen.values())
    if len(facts) <= limit:
        return facts
    step = len(facts) / limit
    return tuple(facts[int(i * step)] for i in range(limit))


# -- pinned output on the samples -----------------------------------------------------------------


def _digest(facts: tuple[Fact, ...]) -> str:
    h = hashlib.sha256()
    for fact in facts:
        h.update(json.dumps([fact.text, fact.kind, fact.message_id]).encode("utf-8") + b"\n")
    return h.hexdigest()


def _chat_path(key: str) -> Path:
    where, name = key.split(":", 1)
    if where == "sample":
        return sample_path(name)
    return FIXTURES / "real_chats" / name


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_facts_match_the_ones_pinned_before_the_rewrite(key: str) -> None:
    expected = EXPECTED[key]
    messages = load_chat(_chat_path(key))
    default = extract_facts(messages)
    assert [[f.text, f.kind, f.message_id] for f in default] == expected["default"]
    everything = extract_facts(messages, limit=UNLIMITED)
    assert len(everything) == expected["all_count"]
    assert _digest(everything) == expected["all_sha256"]
    every_role = extract_facts(messages, roles=tuple(Role), limit=UNLIMITED)
    assert len(every_role) == expected["every_role_count"]
    assert _digest(every_role) == expected["every_role_sha256"]


def test_the_large_sample_is_pinned_and_has_many_facts() -> None:
    pinned = EXPECTED["sample:large_agent_10k"]
    assert pinned["all_count"] > 1000
    assert len(pinned["default"]) == 300


# -- same facts as the old algorithm on generated texts --------------------------------------------

_PIECES = st.sampled_from(
    [
        "https://example.com/a/b.html",
        "http://x.io/Foo Bar",
        "(see https://docs.python.org/3/).",
        "mail bob.smith+x@example-mail.co.uk now",
        "Dear Bob@Foo.com",
        "src/orders/api.py",
        "./a/b.Md Then",
        "../x/y_z.tar.gz",
        "2024-01-31",
        "12024-01-31",
        "x2024-01-31",
        "abc123",
        "order_id",
        "Foo-bar2",
        "Hello Foo-bar2",
        "_private_name",
        "snake_case_9",
        "A1b2",
        "$1,234.50",
        "€12",
        "£3",
        "99%",
        "1,2",
        "12",
        "1.5",
        "v1.2.3",
        "3.14159",
        "1,234,567",
        "John Smith",
        "Mary Ann Lee",
        "Ends. Then Next Word",
        "Why? Because Reasons",
        "New\nYork",
        "Los\tAngeles",
        "Hi\u00a0There",
        "Zed\u2003Zap",
        "Über Straße",
        "naïve_ascii1",
        "Émile Zola",
        "x١٢٣",
        "٤٥٦٧",
        "  269\tdef fn():",
        "=====",
        "/",
        "-",
        ".",
        "@",
        ":",
        "://",
        "(",
        ")",
        ",",
        " ",
        "\n",
        "\r\n",
        "\x1c",
        "\x85",
    ]
)
_TEXT = st.one_of(
    st.lists(_PIECES, max_size=25).map("".join),
    st.lists(
        st.sampled_from([*" \n\t.,/:@-_$%", "a", "Z", "Ab", "7", "2024", "Foo"]), max_size=40
    ).map("".join),
    st.text(max_size=60),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(Role)), _TEXT), max_size=8))
def test_facts_equal_the_old_algorithm_on_generated_chats(
    parts: list[tuple[Role, str]],
) -> None:
    messages = [Message(role, text, f"m{i}") for i, (role, text) in enumerate(parts)]
    assert extract_facts(messages, limit=UNLIMITED) == old_extract_facts(messages, limit=UNLIMITED)
    assert extract_facts(messages, roles=tuple(Role), limit=7) == old_extract_facts(
        messages, roles=tuple(Role), limit=7
    )


# -- fact retention: the same checks as before issue 15 -------------------------------------------

_OLD_WORD = re.compile(r"\w+")


def old_fact_retention(
    original: Sequence[Message], context: Sequence[Message], facts: Iterable[Fact | str]
) -> FactRetention:
    chosen = tuple(f if isinstance(f, Fact) else Fact(f) for f in facts if str(f).strip())
    texts = [searchable_text(m) for m in context]
    joined = "\n\x00\n".join(texts)
    offsets: list[int] = []
    position = 0
    for text in texts:
        offsets.append(position)
        position += len(text) + 3
    words = set(_OLD_WORD.findall(joined))
    checks: list[FactCheck] = []
    for fact in chosen:
        if not all(w in words for w in _OLD_WORD.findall(fact.text)):
            checks.append(FactCheck(fact, False))
            continue
        at = joined.find(fact.text)
        if at < 0:
            checks.append(FactCheck(fact, False))
            continue
        holder = context[bisect_right(offsets, at) - 1]
        checks.append(FactCheck(fact, True, holder.id, holder.is_summary))
    return FactRetention(tuple(checks))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(list(Role)), _TEXT), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=8, max_size=8),
    st.lists(st.one_of(_TEXT, _PIECES), max_size=6),
    st.booleans(),
)
def test_fact_retention_equals_the_old_checks(
    parts: list[tuple[Role, str]], keep: list[bool], typed: list[str], summary: bool
) -> None:
    chat = [Message(role, text, f"m{i}") for i, (role, text) in enumerate(parts)]
    context = [m for m, kept in zip(chat, keep, strict=False) if kept]
    if summary:
        context.insert(0, Message(Role.ASSISTANT, " ".join(typed), "s", is_summary=True))
    facts = [*typed, *extract_facts(chat, roles=tuple(Role), limit=UNLIMITED), Fact("x y")]
    assert fact_retention(chat, context, facts) == old_fact_retention(chat, context, facts)
