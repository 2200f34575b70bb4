"""Exact counting of a chat rendered by a model's chat template, segment by segment.

A chat template turns messages into one string of text and special tokens. A tokenizer splits
special tokens out before anything else, so the tokens of the rendered request are: one per
special token, plus the tokens of each run of text between two special tokens. A family counter
renders each message into its pieces (:class:`Special` tokens and text), and counts every run of
text once. A run that lies inside one message is that message's; a run that spans messages (a
template that joins consecutive tool results into one turn) is counted whole, each message
getting its own part's tokens and the first one the difference, so the counts of a chat always
sum to the tokens of the request.

Runs are counted through the counter's per-text cache: a second count of the same chat, or of a
chat sharing most messages, tokenizes only what is new.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.model import Message, Role
from ctxlab.tokens import ChatAccounting, ProgressCallback, _CachingCounter

__all__ = ["Piece", "Rendered", "SegmentCounter", "Special", "vocabulary_digest"]


class Special(str):
    """A special token of the template: one token, and the end of a run of text."""

    __slots__ = ()


Piece = str
"""A piece of a rendered message: text, or a :class:`Special`."""


class Rendered:
    """A request rendered into pieces: a head (tool definitions), one list per message, and a
    tail (the generation prompt)."""

    __slots__ = ("head", "messages", "tail")

    def __init__(self, head: list[Piece], messages: list[list[Piece]], tail: list[Piece]) -> None:
        self.head = head
        self.messages = messages
        self.tail = tail

    def text(self) -> str:
        """The request as one string (what the template renders)."""
        parts = [*self.head, *(p for m in self.messages for p in m), *self.tail]
        return "".join(parts)


@functools.cache
def vocabulary_digest(path: Path) -> str:
    """The first 16 hex digits of the SHA-256 of a vocabulary file (a count namespace); read
    once per process."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def api_role(message: Message) -> str:
    """The role a chat template sees: a developer message is a system message, a legacy
    function result a tool result (as OpenAI-compatible servers pass them on)."""
    if message.role is Role.DEVELOPER:
        return "system"
    if message.role is Role.FUNCTION:
        return "tool"
    return message.role.value


class SegmentCounter(_CachingCounter):
    """A counter that renders a chat with its family's template and counts runs of text.

    Subclasses implement :meth:`render` and :meth:`_count_uncached`; the per-message counts of
    :meth:`counts` depend on a message's neighbours where the template does (a tool result
    after another tool result costs less than one after an assistant message), so they are
    computed per chat rather than cached per message.
    """

    is_exact = True
    count_namespace: str

    def __init__(self, accounting: ChatAccounting) -> None:
        super().__init__(accounting)

    # -- to override -------------------------------------------------------------------------
    def render(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> Rendered:
        """``messages`` (and ``tools``) rendered as the family's chat template renders them."""
        raise NotImplementedError

    # -- counting ------------------------------------------------------------------------------
    def _count_groups(self, groups: Sequence[Sequence[Piece]]) -> list[int]:
        """Tokens of each group of pieces, runs of text spanning groups counted whole."""
        out = [0] * len(groups)
        runs: list[list[tuple[int, str]]] = []
        current: list[tuple[int, str]] = []
        for owner, pieces in enumerate(groups):
            for piece in pieces:
                if type(piece) is Special:
                    out[owner] += 1
                    if current:
                        runs.append(current)
                        current = []
                elif piece:
                    current.append((owner, piece))
        if current:
            runs.append(current)
        texts: list[str] = []
        plan: list[tuple[int, list[tuple[int, int]]]] = []  # (run text index, owner parts)
        for run in runs:
            owners: dict[int, list[str]] = {}
            for owner, text in run:
                owners.setdefault(owner, []).append(text)
            texts.append("".join(text for _, text in run))
            run_index = len(texts) - 1
            parts: list[tuple[int, int]] = []
            if len(owners) > 1:
                for owner, pieces in owners.items():
                    texts.append("".join(pieces))
                    parts.append((owner, len(texts) - 1))
            else:
                parts.append((run[0][0], -1))
            plan.append((run_index, parts))
        counted = self._count_texts(texts)
        for run_index, parts in plan:
            whole = counted[run_index]
            if parts[0][1] < 0:
                out[parts[0][0]] += whole
                continue
            own = [counted[i] for _, i in parts]
            out[parts[0][0]] += whole - sum(own[1:])
            for (owner, _), n in zip(parts[1:], own[1:], strict=True):
                out[owner] += n
        return out

    def counts(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> list[int]:
        """Tokens of each message as the template renders it in this chat."""
        rendered = self.render(messages, None)
        out = self._count_groups(rendered.messages)
        if progress is not None:
            progress(len(messages), len(messages))
        return out

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of ``messages`` sent as one request without tools, generation prompt
        included."""
        return self.count_request(messages, None)

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """Tokens the tool definitions add to a request whose first message is not a system
        message (the template then opens a system turn of its own for them)."""
        if not tools:
            return 0
        return self._count_groups([self.render((), tools).head])[0]

    def count_request(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> int:
        """Tokens of the whole request (messages, tool definitions, generation prompt), exact
        also where a system message and the tool definitions share one turn."""
        rendered = self.render(messages, tools or None)
        return sum(self._count_groups([rendered.head, *rendered.messages, rendered.tail]))
