"""Claude Code sessions (``claude-code``): ``~/.claude/projects/<project>/<session>.jsonl``.

Each line is one record: ``user`` and ``assistant`` records carry an Anthropic message under
``message``; other records (``summary``, ``system``, ``progress``, ``file-history-snapshot``,
``queue-operation``, ...) are Claude Code's bookkeeping and never reach the model. How they are
read:

* **One API message, several lines.** Claude Code writes one line per content block, so the
  lines of one response share ``message.id``: they are merged, in order, into the first
  (tool results that arrive between them follow the merged message; a block or a record, by
  ``uuid``, written twice is read once). The message keeps that id,
  and its billed ``message.usage`` (the last line's, which is final) becomes a
  :class:`~ctxlab.formats.CallUsage`.
* **Conversations.** The main thread (``isSidechain`` false) is the default conversation. Each
  sub-agent has its own context window, so each is its own conversation in
  :func:`conversations`: inline side chains (``isSidechain`` true; one per ``agentId``, else one
  per root record whose ``parentUuid`` is null) and, in newer versions, the files
  ``<session>/subagents/agent-<id>.jsonl`` beside the session file (read when the session is
  given as a path). Their ids are ``main`` and ``agent-<id>`` (``sidechain-<k>`` without one).
* **A project folder** (the folder of session files) lists its sessions, newest first (by their
  first timestamp); ``conversation`` picks one by id, index, or ``<session>/<conversation>``.
* ``summary`` records give a session its title. ``isMeta`` user records (caveats Claude Code
  injects) are sent to the model, so they stay, flagged ``claude_code_meta`` in ``extra``. The
  summary ``/compact`` leaves (``isCompactSummary``) is flagged ``claude_code_compact_summary``;
  the history before it stays in the file order (the reader does not drop it). The
  ``toolUseResult`` record key repeats the tool result in structured form for the UI: it is not
  read, so that nothing is counted twice.
* A last line cut off mid-write (Claude Code crashed) is skipped with a warning naming it.
* **Rewinds.** The ``parentUuid`` links form a tree: rewinding (Esc Esc, editing an earlier
  prompt) or a retried response forks it, and the file keeps both branches. A conversation is
  the branch the model saw at its last message: the chain from the last message record back to
  the root, with the lines that belong to it (see :mod:`ctxlab.formats._claude_code_branches`).
  Abandoned branches are left out with one warning (``N lines on abandoned branches (rewinds)
  were left out``) and listed as their own conversations, ``rewind-<k>`` (``<thread>-rewind-<k>``
  for a side chain), each the context at that branch's own last message. Records are read in
  file order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import orjson

from ctxlab.errors import ChatFormatError
from ctxlab.formats._claude_code_branches import branch_view, split_branches
from ctxlab.formats._common import _check_json, _fail, _kind, _pick_conversation, _title
from ctxlab.formats._messages import _read_messages, _unknown_warnings
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _jsonl_lines, _parse_lines_lenient, _strip_bom
from ctxlab.formats._usage import read_usage
from ctxlab.formats._values import CallUsage, LoadedChat
from ctxlab.model import Message

_RECORD_TYPES: Final = frozenset(
    {
        "user",
        "assistant",
        "summary",
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "attachment",
    }
)
_MARK_KEYS: Final = ("sessionId", "parentUuid", "leafUuid", "isSidechain")
_HEAD_BYTES: Final = 256 * 1024

Record = tuple[int, dict[str, Any]]


@dataclasses.dataclass(frozen=True, slots=True)
class _Thread:
    """One conversation of a session: its id, title and records (or the file holding them),
    and what reading it should warn about."""

    id: str
    title: str
    records: tuple[Record, ...] = ()
    path: Path | None = None
    note: str = ""
    leaf: int | None = None  # an abandoned branch: the position of its last message record


def sniff_line(first: Any) -> bool:
    """A record: a known ``type`` with Claude Code's linking keys (Codex lines have ``payload``)."""
    if not isinstance(first, dict) or "payload" in first:
        return False
    kind = first.get("type")
    if not isinstance(kind, str):
        return False
    if kind in ("summary", "file-history-snapshot", "queue-operation"):
        return True
    return kind in _RECORD_TYPES and any(k in first for k in _MARK_KEYS)


def sniff(value: Any) -> bool:
    """Records given as JSON: a list of them (or one), as a viewer or notebook holds them."""
    first = value[0] if isinstance(value, list) and value else value
    return sniff_line(first)


def sniff_folder(path: Path) -> bool:
    """A project folder: it holds ``.jsonl`` session files."""
    return any(_session_files(path))


def _session_files(folder: Path) -> list[Path]:
    try:
        return sorted(
            p for p in folder.glob("*.jsonl") if p.is_file() and not p.name.startswith("agent-")
        )
    except OSError as exc:
        _fail(None, f"cannot list {str(folder)!r}: {exc.strerror or exc}")


def _records(
    lines: tuple[tuple[int, bytes], ...], name: str | None = None
) -> tuple[list[Record], tuple[str, ...]]:
    """Every record with its line number (a cut-off last line skipped with a warning naming
    the file ``name`` and the line)."""
    parsed, warnings = _parse_lines_lenient(lines, name)
    out: list[Record] = []
    for n, value in parsed:
        if not isinstance(value, dict):
            _fail(f"line {n}", f"expected a Claude Code record object, got {_kind(value)}")
        out.append((n, value))
    return out, warnings


def _file_lines(path: Path) -> tuple[tuple[int, bytes], ...]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        _fail(None, f"cannot read {str(path)!r}: {exc.strerror or exc}")
    return tuple(_jsonl_lines(_strip_bom(data))) if data.strip() else ()


def _threads(records: list[Record], session_path: Path | None) -> list[_Thread]:
    """The main thread, then inline side chains, then sub-agent files beside the session."""
    main: list[Record] = []
    chains: dict[str, list[Record]] = {}
    chain_of: dict[str, str] = {}  # record uuid -> chain id
    current: str | None = None
    summary = ""
    for n, d in records:
        if d.get("type") == "summary" and isinstance(d.get("summary"), str) and not summary:
            summary = d["summary"]
        if d.get("isSidechain") is not True:
            main.append((n, d))
            continue
        agent = d.get("agentId")
        parent = d.get("parentUuid")
        if isinstance(agent, str) and agent:
            chain = f"agent-{agent}"
        elif isinstance(parent, str) and parent in chain_of:
            chain = chain_of[parent]
        elif parent is None or current is None:
            chain = f"sidechain-{len(chains)}"
        else:
            chain = current  # a parent outside the file: the chain being written
        current = chain
        chains.setdefault(chain, []).append((n, d))
        uuid = d.get("uuid")
        if isinstance(uuid, str):
            chain_of[uuid] = chain
    inline = [_Thread("main", _title(summary) or _records_title(main), tuple(main))]
    inline.extend(_Thread(cid, _records_title(rs), tuple(rs)) for cid, rs in chains.items())
    if len(inline) > 1 and not any(d.get("type") in ("user", "assistant") for _, d in main):
        inline.pop(0)  # a sub-agent's own file: its chain is the conversation
    out: list[_Thread] = []
    for thread in inline:
        out.extend(_without_rewinds(thread))
    if session_path is not None:
        folder = session_path.with_suffix("") / "subagents"
        if folder.is_dir():
            for path in sorted(folder.glob("*.jsonl")):
                out.append(_Thread(path.stem, "", path=path))
    return out


def _without_rewinds(thread: _Thread) -> list[_Thread]:
    """The thread as the model saw it last, then one thread per abandoned branch."""
    split = split_branches(thread.records)
    if not split.branches:
        return [thread]
    prefix = "" if thread.id == "main" else f"{thread.id}-"
    ids = [f"{prefix}rewind-{k}" for k in range(1, len(split.branches) + 1)]
    starts = [own[0][0] for own in split.branches]
    where = ", ".join(f"{cid} (from line {n})" for cid, n in zip(ids, starts, strict=True))
    lines = "line" if split.dropped == 1 else "lines"
    note = (
        f"{split.dropped} {lines} on abandoned branches (rewinds) were left out; "
        f"each branch is its own conversation: {where}"
    )
    out = [dataclasses.replace(thread, records=split.active, note=note)]
    for cid, own, leaf, first in zip(ids, split.branches, split.leaves, starts, strict=True):
        asked = _records_title(own)
        title = f"rewound: {asked}" if asked else f"abandoned response (line {first})"
        out.append(_Thread(cid, title, thread.records, leaf=leaf))
    return out


def _records_title(records: list[Record] | tuple[Record, ...]) -> str:
    """The start of the first user text of the records."""
    for _, d in records:
        if d.get("type") != "user" or d.get("isMeta") is True:
            continue
        message = d.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return _title(content)
        if isinstance(content, list):
            texts = [
                b["text"]
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            ]
            if texts:
                return _title(" ".join(texts))
    return ""


def _as_blocks(content: object) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return list(content)
    return [content]  # the reader names the bad value


def _read_thread(
    records: tuple[Record, ...] | list[Record],
) -> tuple[tuple[Message, ...], tuple[CallUsage, ...], tuple[str, ...]]:
    """The messages of one thread, the billed usage of each response, and warnings."""
    api: list[dict[str, Any]] = []
    line_of: list[int] = []
    position: dict[str, int] = {}  # message.id -> index in `api`
    usage: dict[str, tuple[int, Any]] = {}  # message.id -> (line, last usage seen)
    seen: set[str] = set()  # record uuids: a record written twice is read once
    for n, d in records:
        kind = d.get("type")
        if kind not in ("user", "assistant"):
            continue
        uuid = d.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        message = d.get("message")
        if not isinstance(message, dict):
            what = "missing" if message is None else _kind(message)
            _fail(f"line {n}, $.message", f"expected an Anthropic message object, got {what}")
        content = message.get("content")
        own = message.get("id") if kind == "assistant" else None
        if isinstance(own, str) and own in position:
            merged = api[position[own]]
            blocks = _as_blocks(merged["content"])
            blocks += [b for b in _as_blocks(content) if b not in blocks]  # no block twice
            merged["content"] = blocks
            if message.get("usage") is not None:
                usage[own] = (n, message["usage"])
            continue
        entry: dict[str, Any] = {"role": message.get("role", kind), "content": content}
        ident = own if isinstance(own, str) else d.get("uuid")
        if isinstance(ident, str):
            entry["id"] = ident
        if d.get("isMeta") is True:
            entry["claude_code_meta"] = True
        if d.get("isCompactSummary") is True:  # the summary /compact left in place of history
            entry["claude_code_compact_summary"] = True
        if isinstance(own, str):
            position[own] = len(api)
            if message.get("usage") is not None:
                usage[own] = (n, message["usage"])
        api.append(entry)
        line_of.append(n)
    unknown: dict[str, str] = {}
    messages = _read_messages(
        api, lambda i: f"line {line_of[i]}, $.message", trusted=True, unknown=unknown
    )
    calls: list[CallUsage] = []
    for mid, (n, value) in usage.items():
        calls.extend(read_usage(value, f"line {n}, $.message.usage", mid, "anthropic"))
    return messages, tuple(calls), _unknown_warnings(unknown)


def _load_session(
    lines: tuple[tuple[int, bytes], ...],
    path: Path | None,
    conversation: int | str | None,
    name: str | None = None,
) -> LoadedChat:
    records, warnings = _records(lines, name)
    threads = _threads(records, path)
    k = _pick_conversation(conversation, len(threads), [(t.id, t.title) for t in threads])
    thread = threads[k]
    prefix = ""
    if thread.path is not None:
        sub_name = f"{thread.path.parent.parent.name}/subagents/{thread.path.name}"
        sub_records, more = _records(_file_lines(thread.path), sub_name)
        warnings += more
        prefix = f"{sub_name}: "
        body = tuple(sub_records)
    elif thread.leaf is not None:
        body = branch_view(thread.records, thread.leaf)
    else:
        body = thread.records
    try:
        messages, usage, notes = _read_thread(body)
    except ChatFormatError as exc:  # a sub-agent file's errors name that file
        if not prefix:
            raise
        raise ChatFormatError(exc.reason, prefix + (exc.where or "")) from None
    if thread.note:
        notes = (thread.note, *notes)
    return LoadedChat(messages, usage=usage, warnings=warnings + notes, format="claude-code")


def _head_records(path: Path) -> list[Record]:
    """The complete records in the first :data:`_HEAD_BYTES` of a session (for its listing)."""
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError as exc:
        _fail(None, f"cannot read {str(path)!r}: {exc.strerror or exc}")
    if len(head) == _HEAD_BYTES:
        head = head[: head.rfind(b"\n") + 1]  # the last line may go on
    lines = tuple(_jsonl_lines(_strip_bom(head))) if head.strip() else ()
    records, _ = _records(lines) if lines else ([], ())
    return records


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Errors inside a folder's session file name that file (``<file>: line 3: ...``)."""
    try:
        yield
    except ChatFormatError as exc:
        where = f"{path.name}: {exc.where}" if exc.where else path.name
        raise ChatFormatError(exc.reason, where) from None


def _folder_sessions(folder: Path) -> list[tuple[str, str, str, Path]]:
    """``(session id, title, first timestamp, path)`` of each session, newest first; only the
    head of each file is read, so listing a large project stays quick."""
    out = []
    for path in _session_files(folder):
        with _naming(path):
            records = _head_records(path)
        stamp = next(
            (d["timestamp"] for _, d in records if isinstance(d.get("timestamp"), str)), ""
        )
        threads = _threads(records, None)
        out.append((path.stem, threads[0].title, stamp, path))
    out.sort(key=lambda s: (s[2], s[0]), reverse=True)
    return out


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The chosen conversation (default: the main thread; in a folder, the newest session)."""
    if doc.folder:
        assert doc.path is not None
        sessions = _folder_sessions(doc.path)
        which, inner = options.conversation, None
        if isinstance(which, str) and "/" in which:
            which, inner = which.split("/", 1)
        k = _pick_conversation(which, len(sessions), [(s[0], s[1]) for s in sessions])
        path = sessions[k][3]
        with _naming(path):
            return _load_session(_file_lines(path), path, inner, path.name)
    if not doc.jsonl:
        value = doc.value
        if isinstance(value, dict):  # one record given as JSON
            value = [value]
        if not isinstance(value, list):
            _fail("$", f"expected a list of Claude Code records, got {_kind(value)}")
        if not doc.trusted:
            _check_json(value, "$")  # Python values: only JSON ones can be written out again
        lines = tuple((i + 1, orjson.dumps(v)) for i, v in enumerate(value))
        return _load_session(lines, None, options.conversation)
    return _load_session(doc.lines, doc.path, options.conversation, doc.name)


def conversations(doc: Document) -> list[tuple[str, str]]:
    """A session's threads (``main``, then sub-agents), or a project folder's sessions."""
    if doc.folder:
        assert doc.path is not None
        return [(sid, title) for sid, title, _, _ in _folder_sessions(doc.path)]
    records, _ = _records(doc.lines)
    return [(t.id, t.title or t.id) for t in _threads(records, doc.path)]


register(
    ChatFormat(
        name="claude-code",
        title="Claude Code session JSONL (~/.claude/projects/...), or a project folder of them",
        read=read,
        sniff=sniff,
        sniff_line=sniff_line,
        sniff_folder=sniff_folder,
        conversations=conversations,
        marks=frozenset({"sessionId", "parentUuid", "uuid", "isSidechain", "message", "type"}),
        jsonl=True,
        order=20,
        shown=6,
    )
)
