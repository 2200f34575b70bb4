"""Insights no context library shows: what a trimmed context lost, costs and silently breaks.

Pure functions over messages and counts:

* :func:`fact_retention` — which facts (numbers, identifiers, names, URLs, paths) picked from the
  chat, or typed by a user, are still in a context, verbatim or inside a summary;
* :func:`cacheable_prefix` — how many leading tokens of a call equal the previous call's (the part
  a provider's prompt cache can serve), and :func:`cached_input_tokens` for OpenAI's rule;
* :func:`resummarization_risk` — a summarize configuration that would fire on (almost) every call;
* :func:`token_disagreement` — the real tokenizer against the chars/4 heuristic, per message;
* :func:`summary_lineage` and :func:`word_diff` — what each summary of a compaction chain covers
  and how it changed.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.model import Message, Role

if TYPE_CHECKING:
    from ctxlab.strategies.base import Strategy
    from ctxlab.tokens import TokenCounter

__all__ = [
    "CacheStep",
    "Fact",
    "FactCheck",
    "FactRetention",
    "LineageEntry",
    "ResummarizationGuard",
    "ResummarizationRisk",
    "TokenDisagreement",
    "cache_series",
    "cacheable_prefix",
    "cached_input_tokens",
    "extract_facts",
    "fact_retention",
    "resummarization_guard",
    "resummarization_risk",
    "sent_form",
    "summary_lineage",
    "token_disagreement",
    "word_diff",
]


# -- fact retention ----------------------------------------------------------------------------

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
_WORD = re.compile(r"\w+")
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
    digits = sum(ch.isdigit() for ch in text)
    return digits >= 3 or any(ch in text for ch in ".$€£%")


def extract_facts(
    messages: Sequence[Message], *, roles: Iterable[Role] = _FACT_ROLES, limit: int = 300
) -> tuple[Fact, ...]:
    """Facts from the messages of ``roles`` (user and tool results by default), first seen first.

    A span claimed by a more specific kind (a URL) is not reported again as a less specific one
    (the number inside it). When there are more than ``limit`` facts, an evenly spaced selection
    across the chat is returned, so a long chat's early facts are represented.
    """
    wanted = frozenset(roles)
    seen: dict[str, Fact] = {}
    for message in messages:
        if message.role not in wanted or not message.content:
            continue
        text = message.content
        # One byte per character, 1 where a more specific kind already claimed it: checking a
        # match costs its length, not the number of matches so far (tool outputs hold thousands).
        claimed = bytearray(len(text))
        for kind, pattern, needle in _FACT_PATTERNS:
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
                if value not in seen:
                    seen[value] = Fact(value, kind, message.id)
    facts = tuple(seen.values())
    if len(facts) <= limit:
        return facts
    step = len(facts) / limit
    return tuple(facts[int(i * step)] for i in range(limit))


def _searchable_text(message: Message) -> str:
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
    texts = [_searchable_text(m) for m in context]
    joined = "\n\x00\n".join(texts)
    offsets: list[int] = []
    position = 0
    for text in texts:
        offsets.append(position)
        position += len(text) + 3
    words = set(_WORD.findall(joined))
    checks: list[FactCheck] = []
    for fact in chosen:
        # Fast reject: a fact whose words are not all in the context cannot be in it.
        if not all(w in words for w in _WORD.findall(fact.text)):
            checks.append(FactCheck(fact, False))
            continue
        at = joined.find(fact.text)
        if at < 0:
            checks.append(FactCheck(fact, False))
            continue
        holder = context[bisect_right(offsets, at) - 1]
        checks.append(FactCheck(fact, True, holder.id, holder.is_summary))
    return FactRetention(tuple(checks))


# -- prompt cache ------------------------------------------------------------------------------


def sent_form(m: Message) -> tuple[object, ...]:
    """What a provider receives of ``m`` (ids and ctxlab's own fields aside)."""
    return (m.role, m.content, m.name, m.tool_calls, m.tool_call_id)


def _common_prefix_length(previous: Sequence[Message], following: Sequence[Message]) -> int:
    limit = min(len(previous), len(following))
    prev, nxt = tuple(previous[:limit]), tuple(following[:limit])
    if prev == nxt:  # the usual case between two calls: C-speed identity comparisons
        return limit
    k = 0
    while k < limit and (prev[k] is nxt[k] or sent_form(prev[k]) == sent_form(nxt[k])):
        k += 1
    return k


def cacheable_prefix(
    previous_call: Sequence[Message], next_call: Sequence[Message], counter: TokenCounter
) -> int:
    """Tokens at the start of ``next_call`` identical to the start of ``previous_call``.

    Providers cache prompts by exact prefix, so this is the most a prompt cache can serve. The
    comparison is by whole messages in the form sent (role, content, name, tool calls): the first
    message that differs ends the prefix. Zero when either call is empty.
    """
    k = _common_prefix_length(previous_call, next_call)
    return sum(counter.counts(next_call[:k])) if k else 0


def cached_input_tokens(prefix_tokens: int, provider: str = "openai") -> int:
    """The part of a cacheable prefix a provider actually bills as cached.

    OpenAI caches prompts of at least 1,024 tokens, in increments of 128 tokens.
    """
    if provider != "openai":
        return prefix_tokens
    if prefix_tokens < 1024:
        return 0
    return prefix_tokens - (prefix_tokens - 1024) % 128


@dataclass(frozen=True, slots=True)
class CacheStep:
    """One call of a replay: tokens sent, the cacheable prefix and the part billed as cached."""

    call: int
    tokens_sent: int
    prefix_tokens: int
    cached_tokens: int

    @property
    def breaks_cache(self) -> bool:
        """True when less than half of what the previous call sent could be served from cache."""
        return self.call > 1 and self.cached_tokens == 0


def cache_series(contexts: Sequence[Sequence[Message]], counter: TokenCounter) -> list[CacheStep]:
    """:class:`CacheStep` for each call of a replay, given the context sent at each call."""
    steps: list[CacheStep] = []
    previous: Sequence[Message] = ()
    for number, context in enumerate(contexts, start=1):
        prefix = cacheable_prefix(previous, context, counter) if previous else 0
        steps.append(
            CacheStep(number, counter.count_messages(context), prefix, cached_input_tokens(prefix))
        )
        previous = context
    return steps


# -- re-summarization guard ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResummarizationRisk:
    """Whether a summarize configuration fires again right after it compacts.

    ``floor_tokens`` is what the history holds just after a compaction (pinned messages, the
    kept tail, the summary); when it is at or over the trigger, the very next call summarizes again.
    """

    fires_every_call: bool
    floor_tokens: int
    trigger_tokens: int
    suggestion: str


def resummarization_risk(
    messages: Sequence[Message],
    *,
    trigger_token_budget: int,
    keep_recent_messages: int,
    summary_max_tokens: int | None,
    counter: TokenCounter,
) -> ResummarizationRisk:
    """Flag a trigger at or below what survives a compaction (pinned + tail + summary).

    The summary is assumed to use its whole ``summary_max_tokens`` (or 500 tokens when uncapped),
    the worst case the configuration allows.
    """
    counts = counter.counts(messages)
    pinned = 0
    for message, n in zip(messages, counts, strict=True):
        if not message.role.is_instruction:
            break
        pinned += n
    tail = sum(counts[-keep_recent_messages:]) if keep_recent_messages else 0
    summary = summary_max_tokens if summary_max_tokens is not None else 500
    floor = pinned + tail + summary + 2 * counter.accounting.tokens_per_message + 16
    floor += counter.accounting.reply_priming
    fires = floor >= trigger_token_budget
    if fires:
        suggestion = (
            f"After a compaction about {floor:,} tokens remain (system prompt, the last "
            f"{keep_recent_messages} messages and the summary), at or over the trigger of "
            f"{trigger_token_budget:,}: the next call summarizes again. Raise the trigger above "
            f"{int(floor * 1.5):,} tokens, or keep fewer recent messages."
        )
    else:
        suggestion = (
            f"After a compaction about {floor:,} tokens remain, "
            f"{trigger_token_budget - floor:,} below the trigger: compactions are spaced out."
        )
    return ResummarizationRisk(fires, floor, trigger_token_budget, suggestion)


@dataclass(frozen=True, slots=True)
class ResummarizationGuard:
    """The risk of one configured strategy and the parameter change that removes it."""

    risk: ResummarizationRisk
    changes: dict[str, int]  # parameter name -> suggested value; empty when nothing fires


_GUARD_FIELDS = ("trigger_token_budget", "keep_recent_messages")


def resummarization_guard(
    strategy: Strategy, messages: Sequence[Message], counter: TokenCounter
) -> ResummarizationGuard | None:
    """:func:`resummarization_risk` for any summarizing strategy, read from its parameters.

    Works for every strategy with ``uses_summarizer`` whose parameters (by leaf name, see
    :func:`ctxlab.strategies.registry.current_params`) include ``trigger_token_budget`` and
    ``keep_recent_messages``; None for any other strategy. The suggested trigger is the floor
    times 1.5, rounded up to a multiple of 100.
    """
    if not strategy.uses_summarizer:
        return None
    from ctxlab.strategies.registry import current_params

    params = current_params(strategy)
    trigger, keep = (params.get(name) for name in _GUARD_FIELDS)
    if not isinstance(trigger, int) or not isinstance(keep, int):
        return None
    cap = params.get("summary_max_tokens")
    risk = resummarization_risk(
        messages,
        trigger_token_budget=trigger,
        keep_recent_messages=keep,
        summary_max_tokens=cap if isinstance(cap, int) else None,
        counter=counter,
    )
    changes: dict[str, int] = {}
    if risk.fires_every_call:
        changes["trigger_token_budget"] = -(-int(risk.floor_tokens * 1.5) // 100) * 100
    return ResummarizationGuard(risk, changes)


# -- token-count disagreement ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TokenDisagreement:
    """One message counted three ways."""

    message_id: str
    role: Role
    exact: int  # the real tokenizer, chat-format overhead included
    heuristic: int  # characters / 4 of the text, as most libraries default to
    overhead: int  # chat-format tokens (per-message, name, tool-call framing)

    @property
    def error(self) -> int:
        """Heuristic minus exact: negative means a chars/4 budget would trim too late."""
        return self.heuristic - self.exact


def token_disagreement(
    messages: Sequence[Message], counter: TokenCounter
) -> list[TokenDisagreement]:
    """Per message: exact count, the chars/4 heuristic of its text, and the format overhead."""
    exact = counter.counts(messages)
    out: list[TokenDisagreement] = []
    for message, n in zip(messages, exact, strict=True):
        text = _searchable_text(message)
        heuristic = -(-len(text) // 4)
        text_tokens = counter.count_text(message.content) + sum(
            counter.count_text(c.name) + counter.count_text(c.arguments) for c in message.tool_calls
        )
        out.append(TokenDisagreement(message.id, message.role, n, heuristic, n - text_tokens))
    return out


# -- summary lineage -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineageEntry:
    """One compaction of a chain: what it summarizes and which compaction it updated."""

    compaction_id: str
    summary_id: str | None
    previous_compaction_id: str | None
    tail_start_id: str | None
    summary_text: str
    covers: tuple[str, ...]  # ids of original messages folded into it, where known


def summary_lineage(
    history: Sequence[Message], covers: dict[str, tuple[str, ...]] | None = None
) -> list[LineageEntry]:
    """The compaction chain held in ``history``, oldest first.

    Args:
        history: a chat holding compaction pairs (user ``is_compaction`` + assistant
            ``is_summary``).
        covers: compaction id -> ids of the original messages it folded, when known (a replay
            records them); a loaded chat only tells where each tail starts.
    """
    entries: list[LineageEntry] = []
    for i, message in enumerate(history):
        if not message.is_compaction:
            continue
        meta = message.compaction_meta
        summary = history[i + 1] if i + 1 < len(history) and history[i + 1].is_summary else None
        text = (meta.summary_text if meta and meta.summary_text else None) or (
            summary.content if summary else ""
        )
        entries.append(
            LineageEntry(
                compaction_id=message.id,
                summary_id=summary.id if summary else None,
                previous_compaction_id=meta.previous_compaction_id if meta else None,
                tail_start_id=meta.tail_start_id if meta else None,
                summary_text=text,
                covers=(covers or {}).get(message.id, ()),
            )
        )
    return entries


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """A word-level diff: ``(op, text)`` pairs with op in ``=``, ``-``, ``+``."""
    a, b = old.split(), new.split()
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", " ".join(a[i1:i2])))
            continue
        if tag in ("delete", "replace"):
            out.append(("-", " ".join(a[i1:i2])))
        if tag in ("insert", "replace"):
            out.append(("+", " ".join(b[j1:j2])))
    return out
