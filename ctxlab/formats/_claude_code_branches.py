"""The branch of a Claude Code session's record tree that the model actually saw.

Every record of a session has a ``uuid`` and a ``parentUuid``, so the file is a tree. Rewinding
(Esc Esc, editing an earlier prompt) or a retried response adds a second child to an earlier
record and Claude Code goes on from there; the file keeps both branches, the abandoned one
first (Claude Code only appends). What the model saw at the end is the chain from the last
message record written back to the root (``parentUuid`` walked up from the leaf; the abandoned
branch is the earlier one at a fork, as described in microsoft/amplifier
``ai_working/claude_code_logging/session_format_specification.md``, "Abandoned Branch
Detection", and as the real rewound session in ctxlab's test fixtures shows).

Three things hang off that chain without being on it, and belong to it:

* the other lines of a response on the chain (one line per content block, all sharing
  ``message.id``: parallel tool calls are siblings, not a chain);
* tool results and bookkeeping records (``progress``, ``system``, ...) whose parent is kept:
  each parallel call's result hangs off its own call's line;
* compact boundaries: a ``system`` record with ``parentUuid`` null continues the chain through
  its ``logicalParentUuid`` (the history before ``/compact`` stays, flagged as before).

Everything else that forks off the kept records (a user prompt or a response with another
``message.id``) is an abandoned branch, with all its descendants. Records whose ancestry never
reaches the kept ones (an excerpt whose parents are outside the file, a compaction without
``logicalParentUuid``) are kept in file order, as are all records of a file without links.

Invariants: :func:`split_branches` keeps file order; every message record is either kept or in
exactly one abandoned branch; a file with no fork is returned whole. It costs a few passes over
the records; the context of an abandoned branch (:func:`branch_view`) is built only when asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

Record = tuple[int, dict[str, Any]]
_MESSAGES: Final = ("user", "assistant")


@dataclasses.dataclass(frozen=True, slots=True)
class Branches:
    """A thread's records split at its rewinds.

    Attributes:
        active: the records of the branch the model saw last (and unlinked ones), file order.
        branches: one entry per branch that forks off ``active``: its own message records
            (those not shared with ``active``), file order; a fork inside an abandoned branch is
            part of it.
        leaves: for each branch, the position in the thread's records of its last message
            record; :func:`branch_view` gives the context the model saw there.
        dropped: how many message records (lines) are on abandoned branches.
    """

    active: tuple[Record, ...]
    branches: tuple[tuple[Record, ...], ...] = ()
    leaves: tuple[int, ...] = ()
    dropped: int = 0


def _uuid(d: dict[str, Any]) -> str | None:
    value = d.get("uuid")
    return value if isinstance(value, str) else None


def _parent(d: dict[str, Any]) -> str | None:
    """``parentUuid``; at a compact boundary (no parent) its ``logicalParentUuid``."""
    value = d.get("parentUuid")
    if value is None:
        value = d.get("logicalParentUuid")
    return value if isinstance(value, str) else None


def _response_id(d: dict[str, Any]) -> str | None:
    message = d.get("message")
    own = message.get("id") if isinstance(message, dict) else None
    return own if d.get("type") == "assistant" and isinstance(own, str) else None


def _only_tool_results(d: dict[str, Any]) -> bool:
    """A user record that answers tool calls (no prompt of its own)."""
    message = d.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return (
        d.get("type") == "user"
        and isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _starts_branch(d: dict[str, Any], responses: set[str]) -> bool:
    """A record that would fork off a kept parent: a prompt, or a response not on the chain."""
    if d.get("type") not in _MESSAGES:
        return False
    if d.get("type") == "assistant":
        return _response_id(d) not in responses
    return not _only_tool_results(d)


def _index(records: Sequence[Record]) -> dict[str, int]:
    """Each uuid's first position."""
    index: dict[str, int] = {}
    for k, (_, d) in enumerate(records):
        own = _uuid(d)
        if own is not None:
            index.setdefault(own, k)
    return index


def _kept(records: Sequence[Record], leaf: int, index: dict[str, int]) -> set[int]:
    """Positions of the records on ``leaf``'s chain and those that belong to it (see above);
    ``index`` is :func:`_index` of ``records``."""
    keep: set[int] = set()
    at: int | None = leaf
    while at is not None and at not in keep:
        keep.add(at)
        parent = _parent(records[at][1])
        at = index.get(parent) if parent is not None else None
    uuids = {_uuid(records[k][1]) for k in keep}
    responses = {r for k in keep if (r := _response_id(records[k][1])) is not None}
    for k, (_, d) in enumerate(records):  # parents come before children in the file
        if k in keep:
            continue
        own, parent = _uuid(d), _parent(d)
        same = own is not None and own in uuids  # a record written twice
        sibling = _response_id(d) in responses  # another line of a kept response
        child = (
            parent is not None and index.get(parent) in keep and not _starts_branch(d, responses)
        )
        if same or sibling or child:
            keep.add(k)
            uuids.add(own)
    return keep


def _fork_roots(
    records: Sequence[Record], keep: set[int], index: dict[str, int]
) -> dict[int, int | None]:
    """For each record not kept: the first record of the branch holding it (the ancestor
    whose parent is kept), or None when its ancestry never reaches a kept record."""
    root: dict[int, int | None] = {}
    for k, (_, d) in enumerate(records):
        if k in keep:
            continue
        parent = _parent(d)
        p = index.get(parent) if parent is not None else None
        if p is None or p == k:
            root[k] = None
        elif p in keep:
            root[k] = k
        else:
            root[k] = root.get(p)  # parents come first; a later parent leaves it unlinked
    return root


def split_branches(records: Sequence[Record]) -> Branches:
    """The active branch of ``records`` (one thread, file order) and its abandoned branches."""
    messages = [k for k, (_, d) in enumerate(records) if d.get("type") in _MESSAGES]
    linked = [k for k in messages if _uuid(records[k][1]) is not None]
    if not linked or not any(_parent(records[k][1]) is not None for k in linked):
        return Branches(tuple(records))
    index = _index(records)
    keep = _kept(records, linked[-1], index)
    if all(k in keep for k in messages):
        return Branches(tuple(records))  # no fork: the file is one conversation
    roots = _fork_roots(records, keep, index)
    unlinked = {k for k, r in roots.items() if r is None}  # kept in file order
    grouped: dict[int, list[int]] = {}
    for k, r in roots.items():
        if r is not None and records[k][1].get("type") in _MESSAGES:
            grouped.setdefault(r, []).append(k)
    branches = [grouped[start] for start in sorted(grouped)]
    return Branches(
        active=tuple(records[k] for k in sorted(keep | unlinked)),
        branches=tuple(tuple(records[k] for k in own) for own in branches),
        leaves=tuple(own[-1] for own in branches),
        dropped=sum(len(own) for own in branches),
    )


def branch_view(records: Sequence[Record], leaf: int) -> tuple[Record, ...]:
    """The records of the context at ``records[leaf]`` (an abandoned branch's last message):
    its chain, what belongs to it, and the records unlinked from it, in file order."""
    index = _index(records)
    keep = _kept(records, leaf, index)
    unlinked = {k for k, r in _fork_roots(records, keep, index).items() if r is None}
    return tuple(records[k] for k in sorted(keep | unlinked))
