"""Fact retention: which facts of a chat are still in a trimmed context.

A fact is a number, identifier, name, URL, e-mail address, date or path picked from the chat
(or typed by a user); :func:`fact_retention` says whether each survives verbatim, and whether
it survives only inside a summary.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

from ctxlab.model import Message, Role

__all__ = [
    "Fact",
    "FactCheck",
    "FactRetention",
    "extract_facts",
    "fact_retention",
    "searchable_text",
]

# Most specific first: a URL wins over the path and number inside it. The needle, when set, is
# a substring every match contains: a text without it skips that pattern's scan.
_FACT_PATTERNS: tuple[tuple[str, re.Pattern[str], str | None], ...] = (
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
_TOKEN_PATTERNS = _FACT_PATTERNS[:-1]
"""The kinds whose matches never contain whitespace (all but names)."""
_NAME = _FACT_PATTERNS[-1][1]
_NAME_END = re.compile(r"(?<!\w)[A-Z][a-z]+\Z")
_NAME_START = re.compile(r"[A-Z][a-z]")
_TOKEN_REST = re.compile(r"\S*")
_NAME_HINT = re.compile(r"[A-Z](?<![A-Za-z][A-Z])[a-z]+(?=\s+[A-Z][a-z])")
"""Where a name can start; the leading character class lets the regex engine skip ahead fast."""
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s")
_FACT_ROLES = (Role.USER, Role.TOOL, Role.FUNCTION)


@dataclass(frozen=True, slots=True)
class Fact:
    """A piece of text worth keeping: where it was first seen and what kind it is."""

    text: str
    kind: str = "typed"
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class FactCheck:
    fact: Fact
    retained: bool
    found_in: str | None = None  # id of the context message holding it
    via_summary: bool = False


@dataclass(frozen=True, slots=True)
class FactRetention:
    """Per-fact results; ``percent`` is 100 for a chat without facts."""

    checks: tuple[FactCheck, ...]

    @property
    def total(self) -> int:
        return len(self.checks)

    @property
    def retained(self) -> int:
        return sum(c.retained for c in self.checks)

    @property
    def percent(self) -> float:
        return 100.0 * self.retained / self.total if self.checks else 100.0

    def lost(self) -> tuple[Fact, ...]:
        return tuple(c.fact for c in self.checks if not c.retained)


def _is_meaningful_number(text: str) -> bool:
    if text.isdigit():  # the usual case, and the cheap one
        return len(text) >= 3
    digits = sum(ch.isdigit() for ch in text)
    return digits >= 3 or any(ch in text for ch in ".$€£%")


def _scan(text: str, claimed: bytearray) -> Iterator[tuple[str, str]]:
    """``(kind, value)`` of every fact of the kinds in :data:`_TOKEN_PATTERNS` in ``text``.

    Kind by kind, most specific first, each in text order; a match overlapping a span that an
    earlier match claimed (one byte per character of ``text``, set to 1) is skipped, and a kept
    match claims its own span.
    """
    for kind, pattern, needle in _TOKEN_PATTERNS:
        if needle is not None and needle not in text:
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            if claimed.find(1, start, end) != -1:
                continue
            value = match.group()
            if kind == "number" and not _is_meaningful_number(value):
                continue
            claimed[start:end] = b"\x01" * (end - start)
            yield kind, value


def _names(text: str) -> Iterator[str]:
    """The names in ``text`` that no more specific fact claims, in text order.

    A name starts at a capitalised word that follows no letter and is followed by whitespace
    and another capitalised word: :data:`_NAME_HINT` finds exactly those starts, cheaply, and
    the name pattern is tried at each one not inside the previous name, which yields the
    pattern's own left-to-right matches. Claims never cross whitespace, so whether a name
    overlaps one is decided by scanning only the whitespace-delimited stretch around it.
    """
    done = 0
    for hint in _NAME_HINT.finditer(text):
        start = hint.start()
        if start < done:
            continue
        match = _NAME.match(text, start)
        if match is None:
            continue
        end = done = match.end()
        low = start
        while low and not text[low - 1].isspace():
            low -= 1
        high = _TOKEN_REST.match(text, end).end()  # type: ignore[union-attr]
        claimed = bytearray(high - low)
        for _ in _scan(text[low:high], claimed):
            pass
        if claimed.find(1, start - low, end - low) == -1:
            yield match.group()


def extract_facts(
    messages: Sequence[Message], *, roles: Iterable[Role] = _FACT_ROLES, limit: int = 300
) -> tuple[Fact, ...]:
    """Facts from the messages of ``roles`` (user and tool results by default), first seen first.

    A span claimed by a more specific kind (a URL) is not reported again as a less specific one
    (the number inside it). When there are more than ``limit`` facts, an evenly spaced selection
    across the chat is returned, so a long chat's early facts are represented.

    Within a message the facts come kind by kind (URLs, e-mails, paths, dates, identifiers,
    numbers, names), each kind in text order. Every kind but names lies inside one
    whitespace-delimited token and depends on nothing outside it, so a token met in an earlier
    message cannot add a fact: only the chat's new tokens are scanned, joined by spaces (8 MB of
    tool output holds a few hundred kB of distinct tokens). Names span tokens; they are searched
    in the whole text, only when the text has both a token ending in a capitalised word and one
    starting with one (a name needs both).
    """
    wanted = frozenset(roles)
    seen: dict[str, Fact] = {}
    known_texts: set[str] = set()
    known_tokens: set[str] = set()
    name_ends: set[str] = set()  # tokens a name's first word can end
    name_starts: set[str] = set()  # tokens a name's next word can start
    for message in messages:
        if message.role not in wanted or not message.content:
            continue
        text = message.content
        if text in known_texts:  # the same text again adds nothing
            continue
        known_texts.add(text)
        tokens = dict.fromkeys(text.split())  # first-seen order
        new = tokens.keys() - known_tokens
        if new:
            known_tokens |= new
            fresh = list(tokens) if len(new) == len(tokens) else [t for t in tokens if t in new]
            name_ends.update(t for t in fresh if _NAME_END.search(t))
            name_starts.update(t for t in fresh if _NAME_START.match(t))
            joined = " ".join(fresh)
            for kind, value in _scan(joined, bytearray(len(joined))):
                if value not in seen:
                    seen[value] = Fact(value, kind, message.id)
        if tokens.keys().isdisjoint(name_ends) or tokens.keys().isdisjoint(name_starts):
            continue
        for value in _names(text):
            if value not in seen:
                seen[value] = Fact(value, "name", message.id)
    facts = tuple(seen.values())
    if len(facts) <= limit:
        return facts
    step = len(facts) / limit
    return tuple(facts[int(i * step)] for i in range(limit))


def searchable_text(message: Message) -> str:
    parts = [message.content]
    parts.extend(call.arguments for call in message.tool_calls)
    return "\n".join(parts)


def fact_retention(
    original: Sequence[Message],
    context: Sequence[Message],
    facts: Iterable[Fact | str] | None = None,
) -> FactRetention:
    """Which facts of ``original`` are still present, verbatim, in ``context``.

    Args:
        original: the full chat the facts come from (used when ``facts`` is None).
        context: the messages a strategy would send (a summary counts: a fact it states is kept).
        facts: facts to check; strings are facts a user typed. None picks them automatically.

    Returns:
        One :class:`FactCheck` per fact, in order.
    """
    chosen = (
        extract_facts(original)
        if facts is None
        else tuple(f if isinstance(f, Fact) else Fact(f) for f in facts if str(f).strip())
    )
    texts = [searchable_text(m) for m in context]
    # Each message's whitespace-delimited tokens not seen in an earlier message, in message
    # order: a word (\w+) and a fact without whitespace each lie inside one token, so they are
    # found in this text (a tenth of a long agent chat's context) as surely as in the whole
    # context, and the first message holding a fact is the one whose new tokens hold its first
    # occurrence here.
    parts: list[str] = []
    starts: list[int] = []  # where each message's part begins in `vocabulary`
    seen: set[str] = set()
    position = 0
    for text in texts:
        fresh = set(text.split()) - seen
        seen |= fresh
        part = " ".join(fresh)
        parts.append(part)
        starts.append(position)
        position += len(part) + 1
    vocabulary = " ".join(parts)
    words = set(_WORD.findall(vocabulary))
    joined: str | None = None  # the whole context, for facts with whitespace (built on demand)
    offsets: list[int] = []
    checks: list[FactCheck] = []
    for fact in chosen:
        # Fast reject: a fact whose words are not all in the context cannot be in it.
        if not all(w in words for w in _WORD.findall(fact.text)):
            checks.append(FactCheck(fact, False))
            continue
        if fact.text and _SPACE.search(fact.text) is None:
            at, where = vocabulary.find(fact.text), starts
        else:
            if joined is None:
                joined = "\n\x00\n".join(texts)
                offsets = list(accumulate((len(t) + 3 for t in texts[:-1]), initial=0))
            at, where = joined.find(fact.text), offsets
        if at < 0:
            checks.append(FactCheck(fact, False))
            continue
        holder = context[bisect_right(where, at) - 1]
        checks.append(FactCheck(fact, True, holder.id, holder.is_summary))
    return FactRetention(tuple(checks))
