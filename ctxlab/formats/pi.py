"""The pi coding agent's sessions (``pi``): ``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``.

The schema and the rules are pi's own (badlogic/pi-mono at
83378aad7e74a0e2bb8f37c007a9685fb4609d8a: ``packages/coding-agent/src/core/session-manager.ts``
``buildSessionContext`` and the v1 -> v3 migrations, ``src/core/messages.ts`` ``convertToLlm``,
``packages/ai/src/providers/transform-messages.ts``; ``docs/session.md`` documents the file):

* The first line is the header ``{"type": "session", "id", "cwd", "version"?}``. Every other
  line is an entry with ``id`` and ``parentId``: the entries form a tree, and the session's
  position (its leaf) is the last entry of the file. Version 1 files have no ids: each entry's
  parent is the entry before it (pi's ``migrateV1ToV2``), and a compaction names the first
  entry it keeps by its index in the file (``firstKeptEntryIndex``, the header being 0).
* ``message`` entries hold pi's messages: ``user`` (a string or text/image blocks),
  ``assistant`` (``text``, ``thinking`` and ``toolCall`` blocks, with ``usage``) and
  ``toolResult`` (the result of the call ``toolCallId``; ``isError``). pi's own kinds are sent as
  user messages, as ``convertToLlm`` does: ``bashExecution`` (the ``!`` command and its output,
  unless ``excludeFromContext``), ``custom`` and ``custom_message`` entries (extensions),
  ``branch_summary`` entries and compaction summaries (with pi's prefixes). Thinking is kept
  apart and not counted, as for Anthropic. An assistant message that ended in ``error`` or
  ``aborted`` is not sent again (pi's ``transformMessages``) and is left out with a warning.
* ``model_change``, ``thinking_level_change``, ``label``, ``session_info`` (the session's name,
  its title here) and ``custom`` entries never reach the model.
* **Usage.** Each assistant message records its call's ``usage``: ``input`` (uncached),
  ``output``, ``cacheRead``, ``cacheWrite`` (pi's ``totalTokens`` is their sum), read as a
  :class:`~ctxlab.formats.CallUsage` whose prompt is ``input + cacheRead + cacheWrite``.
* **Compaction.** When the path to the leaf holds a ``compaction`` entry, pi sends its summary
  first, then the entries from ``firstKeptEntryId`` up to the compaction, then those after it;
  the default conversation (``main``) is that context, with a warning saying how many messages
  were left out, and conversation ``full`` is the whole path in order with each summary inline
  (flagged ``pi_compaction_summary`` in ``extra``).
* **Branches.** Entries off the path to the leaf (``/tree`` navigation, forks) are left out with
  one warning, and each other leaf of the tree is its own conversation ``branch-<k>``: the
  context pi builds at that leaf.

A last line cut off mid-write is skipped with a warning naming it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from ctxlab.formats._common import _fail, _kind, _pick_conversation, _title
from ctxlab.formats._messages import _read_messages, _unknown_warnings
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _parse_lines_lenient
from ctxlab.formats._usage import _int
from ctxlab.formats._values import CallUsage, LoadedChat

# pi's prefixes (packages/coding-agent/src/core/messages.ts).
COMPACTION_SUMMARY_PREFIX: Final = (
    "The conversation history before this point was compacted into the following summary:"
    "\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX: Final = "\n</summary>"
BRANCH_SUMMARY_PREFIX: Final = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"

_ENTRY_TYPES: Final = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Entry:
    """One entry of the tree: its line, id, parent and the raw object."""

    line: int
    id: str
    parent: str | None
    value: dict[str, Any]


@dataclasses.dataclass(frozen=True, slots=True)
class _Session:
    entries: tuple[_Entry, ...]
    by_id: dict[str, _Entry]
    title: str
    warnings: tuple[str, ...]


def sniff_line(first: Any) -> bool:
    """pi's header: ``{"type": "session", "id": ..., "cwd": ...}`` (no Codex ``payload``)."""
    return (
        isinstance(first, dict)
        and first.get("type") == "session"
        and isinstance(first.get("id"), str)
        and "cwd" in first
        and "payload" not in first
    )


def sniff(value: Any) -> bool:
    """Session lines given as JSON: a list of them, header first."""
    return isinstance(value, list) and bool(value) and sniff_line(value[0])


def _session(parsed: list[tuple[int, Any]], warnings: tuple[str, ...]) -> _Session:
    """The entries of a session, as a tree (version 1 files migrated as pi migrates them)."""
    if not parsed:
        _fail(None, "empty pi session: expected a header line")
    n0, header = parsed[0]
    if not sniff_line(header):
        _fail(f"line {n0}", 'expected the pi session header {"type": "session", "id", "cwd"}')
    version = header.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        _fail(f"line {n0}, $.version", f"expected a whole number, got {_kind(version)}")
    entries: list[_Entry] = []
    by_id: dict[str, _Entry] = {}
    previous: str | None = None
    title = ""
    order: list[str] = [""]  # version 1: entry ids by position in the file, the header first
    for n, d in parsed[1:]:
        if not isinstance(d, dict):
            _fail(f"line {n}", f"expected a pi session entry object, got {_kind(d)}")
        kind = d.get("type")
        if not isinstance(kind, str):
            what = "missing" if kind is None else _kind(kind)
            _fail(f"line {n}, $.type", f"expected an entry type string, got {what}")
        own: Any = f"line-{n}"
        parent: Any = previous
        if version >= 2:
            own = d.get("id")
            if not isinstance(own, str):
                what = "missing" if own is None else _kind(own)
                _fail(f"line {n}, $.id", f"expected an entry id string, got {what}")
            parent = d.get("parentId")
            if parent is not None and not isinstance(parent, str):
                _fail(f"line {n}, $.parentId", f"expected a string or null, got {_kind(parent)}")
        if own in by_id:
            _fail(f"line {n}, $.id", f"duplicate entry id {own!r} (line {by_id[own].line})")
        index = d.get("firstKeptEntryIndex")
        if (
            version < 2
            and kind == "compaction"
            and isinstance(index, int)
            and 0 < index < len(order)
        ):
            d = {**d, "firstKeptEntryId": order[index]}  # pi's migrateV1ToV2
        order.append(own)
        entry = _Entry(n, own, parent, d)
        entries.append(entry)
        by_id[own] = entry
        previous = own
        if kind == "session_info" and isinstance(d.get("name"), str):
            title = d["name"]
    return _Session(tuple(entries), by_id, title, warnings)


def _path(session: _Session, leaf: _Entry) -> list[_Entry]:
    """The entries from the root to ``leaf``."""
    out: list[_Entry] = []
    seen: set[str] = set()
    current: _Entry | None = leaf
    while current is not None and current.id not in seen:
        seen.add(current.id)
        out.append(current)
        current = session.by_id.get(current.parent) if current.parent else None
    out.reverse()
    return out


def _leaves(session: _Session) -> list[_Entry]:
    """The leaves of the tree other than the session's own (the last entry), in file order."""
    if not session.entries:
        return []
    parents = {e.parent for e in session.entries}
    last = session.entries[-1]
    return [e for e in session.entries if e.id not in parents and e is not last]


def _text_blocks(content: object, where: str) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    _fail(where, f"expected a string or a list of content blocks, got {_kind(content)}")


def _user(text: str, entry: _Entry, **flags: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "id": entry.id, **flags}


def _assistant_blocks(content: object, where: str) -> list[Any]:
    """pi's assistant blocks as Anthropic blocks (``toolCall`` -> ``tool_use``)."""
    if not isinstance(content, list):
        _fail(where, f"expected a list of content blocks, got {_kind(content)}")
    out: list[Any] = []
    for j, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "toolCall":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str):
                _fail(f"{where}[{j}].id", f"expected a tool call id string, got {_kind(call_id)}")
            if not isinstance(name, str):
                _fail(f"{where}[{j}].name", f"expected a tool name string, got {_kind(name)}")
            args = block.get("arguments")
            out.append({"type": "tool_use", "id": call_id, "name": name, "input": args or {}})
        else:
            out.append(block)
    return out


def _bash_text(m: dict[str, Any]) -> str:
    """pi's ``bashExecutionToText``."""
    text = f"Ran `{m.get('command', '')}`\n"
    output = m.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = m.get("exitCode")
    if m.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if m.get("truncated") and m.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {m['fullOutputPath']}]"
    return text


@dataclasses.dataclass(slots=True)
class _Built:
    api: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    where: list[str] = dataclasses.field(default_factory=list)
    usage: list[tuple[str, Any, str]] = dataclasses.field(default_factory=list)
    skipped: list[int] = dataclasses.field(default_factory=list)  # errored/aborted replies


def _append(built: _Built, entry: _Entry) -> None:
    """What ``entry`` adds to the model's context (pi's ``appendMessage`` + ``convertToLlm``)."""
    d, n = entry.value, entry.line
    kind = d.get("type")
    where = f"line {entry.line}, $"
    item: dict[str, Any] | None = None
    if kind == "custom_message":
        blocks = _text_blocks(d.get("content"), f"{where}.content")
        item = {"role": "user", "content": blocks, "id": entry.id, "pi_custom": True}
    elif kind == "branch_summary" and isinstance(d.get("summary"), str) and d["summary"]:
        text = BRANCH_SUMMARY_PREFIX + d["summary"] + BRANCH_SUMMARY_SUFFIX
        item = _user(text, entry, pi_branch_summary=True)
    elif kind == "message":
        m = d.get("message")
        if not isinstance(m, dict):
            what = "missing" if m is None else _kind(m)
            _fail(f"{where}.message", f"expected a pi message object, got {what}")
        where += ".message"
        role = m.get("role")
        if role == "user":
            item = {"role": "user", "content": m.get("content"), "id": entry.id}
        elif role == "assistant":
            if m.get("stopReason") in ("error", "aborted"):
                built.skipped.append(n)
                return
            blocks = _assistant_blocks(m.get("content"), f"{where}.content")
            item = {"role": "assistant", "content": blocks, "id": entry.id}
            if m.get("usage") is not None:
                built.usage.append((entry.id, m["usage"], f"{where}.usage"))
        elif role == "toolResult":
            call_id = m.get("toolCallId")
            if not isinstance(call_id, str):
                what = "missing" if call_id is None else _kind(call_id)
                _fail(f"{where}.toolCallId", f"expected a tool call id string, got {what}")
            item = {
                "role": "tool",
                "tool_call_id": call_id,
                "content": _text_blocks(m.get("content"), f"{where}.content"),
                "id": entry.id,
            }
            if isinstance(m.get("toolName"), str):
                item["name"] = m["toolName"]
            if m.get("isError") is True:
                item["is_error"] = True
        elif role == "bashExecution":
            if m.get("excludeFromContext") is True:
                return
            item = _user(_bash_text(m), entry, pi_bash_execution=True)
        elif role in ("custom", "hookMessage"):  # hookMessage: its name before version 3
            blocks = _text_blocks(m.get("content"), f"{where}.content")
            item = {"role": "user", "content": blocks, "id": entry.id, "pi_custom": True}
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + str(m.get("summary", "")) + BRANCH_SUMMARY_SUFFIX
            item = _user(text, entry, pi_branch_summary=True)
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + str(m.get("summary", "")) + COMPACTION_SUMMARY_SUFFIX
            item = _user(text, entry, pi_compaction_summary=True)
        else:
            what = "missing" if role is None else repr(role)
            _fail(
                f"{where}.role",
                "expected user, assistant, toolResult, bashExecution, custom, branchSummary or "
                f"compactionSummary, got {what}",
            )
    if item is not None:
        built.api.append(item)
        built.where.append(where)


def _summary(entry: _Entry) -> dict[str, Any]:
    summary = entry.value.get("summary")
    if not isinstance(summary, str):
        _fail(f"line {entry.line}, $.summary", f"expected a string, got {_kind(summary)}")
    text = COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX
    return _user(text, entry, pi_compaction_summary=True)


def _context(path: list[_Entry], full: bool) -> tuple[_Built, str]:
    """pi's ``buildSessionContext`` over ``path`` (``full``: every entry, summaries inline),
    and a note on what a compaction left out."""
    built = _Built()
    compactions = [k for k, e in enumerate(path) if e.value.get("type") == "compaction"]
    if full or not compactions:
        for e in path:
            if e.value.get("type") == "compaction":
                built.api.append(_summary(e))
                built.where.append(f"line {e.line}, $")
            else:
                _append(built, e)
        return built, ""
    at = compactions[-1]
    compaction = path[at]
    built.api.append(_summary(compaction))
    built.where.append(f"line {compaction.line}, $")
    first = compaction.value.get("firstKeptEntryId")
    keep = False
    dropped = _Built()
    for e in path[:at]:
        keep = keep or e.id == first
        _append(built if keep else dropped, e)
    for e in path[at + 1 :]:
        _append(built, e)
    times = "once" if len(compactions) == 1 else f"{len(compactions)} times"
    note = (
        f"line {compaction.line}: pi compacted the history {times}; the conversation is what "
        f"the model saw after the last compaction ({len(dropped.api)} earlier messages left "
        "out; conversation 'full' has the whole session)"
    )
    return built, note


def _usage(built: _Built) -> tuple[CallUsage, ...]:
    out = []
    for mid, value, where in built.usage:
        if not isinstance(value, dict):
            _fail(where, f"expected a usage object, got {_kind(value)}")
        out.append(
            CallUsage(
                mid,
                _int(value, "input", where),
                _int(value, "output", where),
                _int(value, "cacheRead", where),
                _int(value, "cacheWrite", where),
                "anthropic",  # input excludes the cache: the prompt is the sum, as Anthropic's
            )
        )
    return tuple(out)


def _labels(session: _Session) -> list[tuple[str, str]]:
    main = _path(session, session.entries[-1]) if session.entries else []
    title = _title(session.title) or _path_title(main)
    out = [("main", title)]
    if any(e.value.get("type") == "compaction" for e in main):
        out.append(("full", f"{title} (the whole session)"))
    for k, leaf in enumerate(_leaves(session), 1):
        asked = _path_title(_path(session, leaf)[::-1])
        out.append((f"branch-{k}", f"branch (line {leaf.line}): {asked}" if asked else ""))
    return out


def _path_title(path: list[_Entry]) -> str:
    """The start of the first user text of ``path``."""
    for e in path:
        m = e.value.get("message")
        if e.value.get("type") == "message" and isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return _title(content)
            if isinstance(content, list):
                texts = [
                    b["text"]
                    for b in content
                    if isinstance(b, dict) and isinstance(b.get("text"), str)
                ]
                if texts:
                    return _title(" ".join(texts))
    return ""


def _load(session: _Session, conversation: int | str | None) -> LoadedChat:
    labels = _labels(session)
    k = _pick_conversation(conversation, len(labels), labels)
    chosen = labels[k][0]
    notes: list[str] = []
    if not session.entries:
        return LoadedChat((), warnings=session.warnings, format="pi")
    leaf = session.entries[-1]
    if chosen.startswith("branch-"):
        leaf = _leaves(session)[int(chosen.removeprefix("branch-")) - 1]
    path = _path(session, leaf)
    built, note = _context(path, full=chosen == "full")
    if note:
        notes.append(note)
    if chosen == "main":
        off = len(session.entries) - len(path)
        if off:
            others = ", ".join(label for label, _ in labels if label.startswith("branch-"))
            notes.append(
                f"{off} {'entry' if off == 1 else 'entries'} on other branches of the session "
                f"tree were left out; each branch is its own conversation: {others}"
            )
    if built.skipped:
        lines = ", ".join(str(n) for n in built.skipped)
        notes.append(
            f"line{'s' if len(built.skipped) > 1 else ''} {lines}: assistant messages that "
            "ended in an error or were aborted are left out (pi does not send them again)"
        )
    unknown: dict[str, str] = {}
    messages = _read_messages(built.api, lambda i: built.where[i], trusted=True, unknown=unknown)
    kept = {m.id for m in messages}
    usage = tuple(u for u in _usage(built) if u.message_id in kept)
    warnings = session.warnings + tuple(notes) + _unknown_warnings(unknown)
    return LoadedChat(messages, usage=usage, warnings=warnings, format="pi")


def _read_session(doc: Document) -> _Session:
    if doc.jsonl:
        parsed, warnings = _parse_lines_lenient(doc.lines, doc.name)
        return _session(parsed, warnings)
    value = doc.value
    if not isinstance(value, list):
        _fail("$", f"expected a list of pi session entries, got {_kind(value)}")
    return _session(list(enumerate(value, 1)), ())


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The context pi builds at the session's leaf (``main``), the whole path (``full``) or
    another leaf of the tree (``branch-<k>``)."""
    return _load(_read_session(doc), options.conversation)


def conversations(doc: Document) -> list[tuple[str, str]]:
    """``main``; ``full`` when the history was compacted; one ``branch-<k>`` per other leaf."""
    return _labels(_read_session(doc))


register(
    ChatFormat(
        name="pi",
        title="pi coding agent session JSONL (~/.pi/agent/sessions/.../<time>_<id>.jsonl)",
        read=read,
        sniff=sniff,
        sniff_line=sniff_line,
        conversations=conversations,
        marks=frozenset({"type", "id", "parentId", "cwd", "message", "timestamp"}),
        jsonl=True,
        order=22,
        shown=13,
    )
)
