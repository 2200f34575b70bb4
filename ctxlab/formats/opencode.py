"""OpenCode sessions (``opencode``): ``opencode export <sessionID>`` JSON, or the storage folder.

The schema and the rules are OpenCode's own (anomalyco/opencode, formerly sst/opencode, MIT:
``packages/opencode/src/session/message-v2.ts``, read at 007a9409bafea06d6b9084ff1f6d1fe9f5e3a803):

* ``opencode export <sessionID>`` prints ``{"info": <session>, "messages": [{"info", "parts"}]}``.
  Releases before the SQLite store kept the same objects as files under
  ``~/.local/share/opencode/storage/``: ``session/<projectID>/<sessionID>.json``,
  ``message/<sessionID>/msg_*.json`` and ``part/<messageID>/prt_*.json``; that folder (or the
  ``opencode`` folder holding it) reads as a multi-session source, newest session first. Current
  releases keep them in ``~/.local/share/opencode/opencode.db`` (``session/session.sql.ts``):
  tables ``session``, ``message`` (``data``: the info without ``id``/``sessionID``) and ``part``
  (``data``: the part without its ids); the database file reads the same way (opened read-only).
* What is sent is ``toModelMessages``: a user message's ``text`` parts (not ``ignored`` ones),
  its files (as placeholders, text files having been inlined as text parts), a ``compaction``
  part as "What did we do so far?" and a ``subtask`` part as "The following tool was executed by
  the user". An assistant message is split at its ``step-start`` parts, as the AI SDK's
  ``convertToModelMessages`` splits it: each step is one call, an assistant message with the
  step's text and tool calls followed by one tool message per call. A ``completed`` tool's
  output is sent (``[Old tool result content cleared]`` once pruned: ``time.compacted``); an
  ``error`` tool sends its error (or, when ``metadata.interrupted``, the output it had); a
  ``pending`` or ``running`` tool (the session was interrupted) sends "[Tool execution was
  interrupted]". ``reasoning`` parts are kept as the message's thinking, shown apart and not
  counted, as for Claude Code. An assistant message that ended in an error is not sent (unless
  it was aborted after producing something) and is left out with a warning.
* **Usage.** Each ``step-finish`` part records its call: ``tokens.input`` (without the cache),
  ``tokens.output`` + ``tokens.reasoning``, ``tokens.cache.read`` and ``tokens.cache.write``,
  read as a :class:`~ctxlab.formats.CallUsage` whose prompt is ``input + cache.read +
  cache.write``; ``cost`` is summed in one note.
* **Compaction** (``filterCompacted``): once a compaction finished (a ``summary`` assistant
  message answering a user message with a ``compaction`` part), OpenCode sends only that user
  message and what follows it (from ``tail_start_id`` when the part names one). The default
  conversation is that context, with a warning saying how many messages were left out;
  conversation ``full`` is every message.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import Any, Final

import orjson

from ctxlab.errors import ChatFormatError
from ctxlab.formats._common import _compact_json, _fail, _kind, _pick_conversation, _title
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _strip_bom
from ctxlab.formats._usage import _int
from ctxlab.formats._values import CallUsage, LoadedChat
from ctxlab.model import Message, Role, ToolCall

COMPACTION_PROMPT: Final = "What did we do so far?"
SUBTASK_PROMPT: Final = "The following tool was executed by the user"
CLEARED_OUTPUT: Final = "[Old tool result content cleared]"
INTERRUPTED: Final = "[Tool execution was interrupted]"
_INLINED_MIMES: Final = frozenset({"text/plain", "application/x-directory"})


@dataclasses.dataclass(frozen=True, slots=True)
class _Msg:
    """One stored message: its info, its parts and where it came from (for errors)."""

    info: dict[str, Any]
    parts: tuple[dict[str, Any], ...]
    where: str


def _is_export(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    info, messages = value.get("info"), value.get("messages")
    if not isinstance(info, dict) or not isinstance(messages, list):
        return False
    own = info.get("id")
    if isinstance(own, str) and own.startswith("ses_"):
        return True
    first = messages[0] if messages else None
    return isinstance(first, dict) and isinstance(first.get("parts"), list) and "info" in first


def sniff(value: Any) -> bool:
    """``opencode export``: ``{"info": {"id": "ses_..."}, "messages": [{"info", "parts"}]}``."""
    return _is_export(value)


def _storage(path: Path) -> Path | None:
    """The ``storage`` folder of an OpenCode data folder, or the folder itself."""
    for candidate in (path, path / "storage"):
        if (candidate / "session").is_dir() and (candidate / "message").is_dir():
            return candidate
    return None


_TABLES: Final = frozenset({"session", "message", "part"})


def _open_db(path: Path) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        _fail(None, f"cannot open the database {path.name!r}: {exc}")
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        db.close()
        _fail(None, f"cannot read the database {path.name!r}: {exc}")
    if not tables >= _TABLES:
        db.close()
        _fail(None, f"{path.name!r} is not an OpenCode database (no session/message/part tables)")
    return db


def _is_db(path: Path) -> bool:
    if not path.is_file():
        return False
    try:
        _open_db(path).close()
    except ChatFormatError:
        return False
    return True


def sniff_folder(path: Path) -> bool:
    """The storage folder (or the folder holding it), or the SQLite database."""
    return _storage(path) is not None or _is_db(path)


def _db_sessions(db: sqlite3.Connection) -> list[tuple[str, str]]:
    rows = db.execute("SELECT id, title FROM session ORDER BY time_updated DESC, id").fetchall()
    return [(str(own), _title(title) if isinstance(title, str) else "") for own, title in rows]


def _db_json(text: object, where: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text if isinstance(text, str | bytes) else b"")
    except orjson.JSONDecodeError as exc:
        _fail(where, f"expected JSON data, got text that is not JSON ({exc})")
    if not isinstance(value, dict):
        _fail(where, f"expected a JSON object, got {_kind(value)}")
    return value


def _db_messages(db: sqlite3.Connection, session_id: str) -> list[_Msg]:
    parts: dict[str, list[dict[str, Any]]] = {}
    for own, message_id, data in db.execute(
        "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id",
        (session_id,),
    ):
        part = _db_json(data, f"part {own}: data")
        part.update(id=own, sessionID=session_id, messageID=message_id)
        parts.setdefault(str(message_id), []).append(part)
    out = []
    for own, data in db.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
        (session_id,),
    ):
        where = f"message {own}"
        info = _db_json(data, f"{where}: data")
        info.update(id=own, sessionID=session_id)
        out.append(_Msg(info, tuple(parts.get(str(own), ())), where))
    return out


def _load_json(path: Path, shown: str) -> Any:
    try:
        return orjson.loads(_strip_bom(path.read_bytes()))
    except OSError as exc:
        _fail(shown, f"cannot read it: {exc.strerror or exc}")
    except orjson.JSONDecodeError as exc:
        _fail(shown, f"not valid JSON ({exc})")


def _sessions(storage: Path) -> list[tuple[dict[str, Any], str]]:
    """Every session's info with its file, newest first (by ``time.updated``)."""
    found = []
    for file in sorted((storage / "session").glob("*/*.json")):
        shown = str(file.relative_to(storage))
        info = _load_json(file, shown)
        if isinstance(info, dict) and isinstance(info.get("id"), str):
            found.append((info, shown))

    def updated(item: tuple[dict[str, Any], str]) -> float:
        time = item[0].get("time")
        value = time.get("updated") if isinstance(time, dict) else None
        return float(value) if isinstance(value, int | float) else 0.0

    found.sort(key=updated, reverse=True)
    return found


def _folder_messages(storage: Path, session_id: str) -> list[_Msg]:
    out = []
    for file in sorted((storage / "message" / session_id).glob("*.json")):
        shown = str(file.relative_to(storage))
        info = _load_json(file, shown)
        if not isinstance(info, dict) or not isinstance(info.get("id"), str):
            _fail(shown, "expected a message object with an id")
        part_dir = storage / "part" / info["id"]
        parts = []
        for pfile in sorted(part_dir.glob("*.json")) if part_dir.is_dir() else []:
            part = _load_json(pfile, str(pfile.relative_to(storage)))
            if isinstance(part, dict):
                parts.append(part)
        out.append(_Msg(info, tuple(parts), shown))
    out.sort(key=lambda m: str(m.info["id"]))
    return out


def _export_messages(value: dict[str, Any]) -> list[_Msg]:
    out = []
    for k, item in enumerate(value["messages"]):
        where = f"$.messages[{k}]"
        if not isinstance(item, dict):
            _fail(where, f"expected a message object, got {_kind(item)}")
        info, parts = item.get("info"), item.get("parts")
        if not isinstance(info, dict):
            _fail(f"{where}.info", f"expected a message info object, got {_kind(info)}")
        if not isinstance(parts, list):
            _fail(f"{where}.parts", f"expected a list of parts, got {_kind(parts)}")
        if not isinstance(info.get("id"), str):
            _fail(f"{where}.info.id", f"expected a message id string, got {_kind(info.get('id'))}")
        for j, part in enumerate(parts):
            if not isinstance(part, dict):
                _fail(f"{where}.parts[{j}]", f"expected a part object, got {_kind(part)}")
        out.append(_Msg(info, tuple(parts), where))
    return out


def _finished_compactions(messages: list[_Msg]) -> set[str]:
    """Ids of user messages whose compaction finished (a summary answered them)."""
    done = set()
    for m in messages:
        info = m.info
        if (
            info.get("role") == "assistant"
            and info.get("summary")
            and info.get("finish")
            and not info.get("error")
            and isinstance(info.get("parentID"), str)
        ):
            done.add(info["parentID"])
    return done


def _after_compaction(messages: list[_Msg]) -> int:
    """Index of the first message OpenCode still sends (``filterCompacted``), 0 if all."""
    done = _finished_compactions(messages)
    for k in range(len(messages) - 1, -1, -1):
        m = messages[k]
        if m.info.get("role") != "user" or m.info.get("id") not in done:
            continue
        part = next((p for p in m.parts if p.get("type") == "compaction"), None)
        if part is None:
            continue
        tail = part.get("tail_start_id")
        if isinstance(tail, str):
            for j in range(k, -1, -1):
                if messages[j].info.get("id") == tail:
                    return j
        return k
    return 0


def _user(m: _Msg) -> Message | None:
    texts = []
    for p in m.parts:
        kind = p.get("type")
        if kind == "text" and not p.get("ignored") and isinstance(p.get("text"), str):
            texts.append(p["text"])
        elif kind == "file" and not (
            isinstance(p.get("mime"), str) and p["mime"] in _INLINED_MIMES
        ):
            texts.append(f"[file {p.get('filename') or p.get('url', '')} ({p.get('mime', '')})]")
        elif kind == "compaction":
            texts.append(COMPACTION_PROMPT)
        elif kind == "subtask":
            texts.append(SUBTASK_PROMPT)
    if not texts:
        return None
    return Message(Role.USER, "\n".join(texts), str(m.info["id"]))


def _tool_result(state: dict[str, Any]) -> tuple[str, bool]:
    """What a tool part sends back, and whether it is an error."""
    status = state.get("status")
    if status == "completed":
        time = state.get("time")
        if isinstance(time, dict) and time.get("compacted"):
            return CLEARED_OUTPUT, False
        output = state.get("output")
        return (output if isinstance(output, str) else ""), False
    if status == "error":
        metadata = state.get("metadata")
        if (
            isinstance(metadata, dict)
            and metadata.get("interrupted") is True
            and isinstance(metadata.get("output"), str)
        ):
            return metadata["output"], False
        error = state.get("error")
        return (error if isinstance(error, str) else ""), True
    return INTERRUPTED, True


@dataclasses.dataclass(slots=True)
class _Step:
    texts: list[str] = dataclasses.field(default_factory=list)
    thinking: list[str] = dataclasses.field(default_factory=list)
    calls: list[ToolCall] = dataclasses.field(default_factory=list)
    results: list[tuple[str, str, bool]] = dataclasses.field(default_factory=list)
    finish: dict[str, Any] | None = None
    finish_where: str = ""


def _steps(m: _Msg) -> list[_Step]:
    steps = [_Step()]
    for j, p in enumerate(m.parts):
        kind = p.get("type")
        step = steps[-1]
        if kind == "step-start":
            if step.texts or step.calls or step.thinking or step.finish is not None:
                steps.append(_Step())
        elif kind == "text" and isinstance(p.get("text"), str):
            step.texts.append(p["text"])
        elif kind == "reasoning" and isinstance(p.get("text"), str):
            step.thinking.append(p["text"])
        elif kind == "tool":
            state = p.get("state")
            call_id, name = p.get("callID"), p.get("tool")
            where = f"{m.where}.parts[{j}]"
            if not isinstance(call_id, str):
                _fail(f"{where}.callID", f"expected a call id string, got {_kind(call_id)}")
            if not isinstance(name, str):
                _fail(f"{where}.tool", f"expected a tool name string, got {_kind(name)}")
            if not isinstance(state, dict):
                _fail(f"{where}.state", f"expected a tool state object, got {_kind(state)}")
            args = _compact_json(state.get("input") or {}, f"{where}.state.input")
            step.calls.append(ToolCall(call_id, name, args))
            output, is_error = _tool_result(state)
            step.results.append((call_id, output, is_error))
        elif kind == "step-finish":
            step.finish = p
            step.finish_where = f"{m.where}.parts[{j}]"
    return [s for s in steps if s.texts or s.calls or s.thinking or s.finish is not None]


def _step_usage(step: _Step, mid: str) -> CallUsage | None:
    tokens = step.finish.get("tokens") if step.finish is not None else None
    if not isinstance(tokens, dict):
        return None
    where = f"{step.finish_where}.tokens"
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    return CallUsage(
        mid,
        _int(tokens, "input", where),
        _int(tokens, "output", where) + _int(tokens, "reasoning", where),
        _int(cache, "read", f"{where}.cache"),
        _int(cache, "write", f"{where}.cache"),
        "anthropic",  # OpenCode's input excludes the cache: the prompt is the sum
    )


def _sendable(m: _Msg) -> bool:
    """OpenCode drops an errored reply, unless it was aborted after producing something."""
    error = m.info.get("error")
    if not error:
        return True
    aborted = isinstance(error, dict) and error.get("name") == "MessageAbortedError"
    return aborted and any(p.get("type") not in ("step-start", "reasoning") for p in m.parts)


def _assistant(m: _Msg, out: list[Message], usage: list[CallUsage]) -> float:
    """Append the calls of an assistant message; returns the cost its steps recorded."""
    cost = 0.0
    base = str(m.info["id"])
    steps = _steps(m)
    model = m.info.get("modelID")
    for k, step in enumerate(steps):
        mid = base if len(steps) == 1 else f"{base}:{k}"
        extra: tuple[tuple[str, Any], ...] = ()
        if step.thinking:
            extra = (
                ("thinking", tuple({"type": "thinking", "thinking": t} for t in step.thinking)),
            )
        if isinstance(model, str):
            extra = (*extra, ("model", model))
        if step.texts or step.calls:
            out.append(
                Message(
                    Role.ASSISTANT,
                    "\n".join(step.texts),
                    mid,
                    tool_calls=tuple(step.calls),
                    is_summary=bool(m.info.get("summary")),
                    extra=extra,
                )
            )
            for call_id, output, is_error in step.results:
                flags = (("is_error", True),) if is_error else ()
                out.append(
                    Message(
                        Role.TOOL, output, f"{mid}:{call_id}", tool_call_id=call_id, extra=flags
                    )
                )
            call = _step_usage(step, mid)
            if call is not None:
                usage.append(call)
        if step.finish is not None and isinstance(step.finish.get("cost"), int | float):
            cost += float(step.finish["cost"])
    return cost


def _build(messages: list[_Msg], conversation: int | str | None) -> LoadedChat:
    start = _after_compaction(messages)
    labels = [("main", "")] + ([("full", "the whole session")] if start else [])
    k = _pick_conversation(conversation, len(labels), labels)
    chosen = messages if labels[k][0] == "full" else messages[start:]
    out: list[Message] = []
    usage: list[CallUsage] = []
    dropped: list[str] = []
    cost = 0.0
    for m in chosen:
        if not isinstance(m.info.get("id"), str):
            _fail(f"{m.where}.id", f"expected a message id string, got {_kind(m.info.get('id'))}")
        role = m.info.get("role")
        if role == "user":
            user = _user(m)
            if user is not None:
                out.append(user)
        elif role == "assistant":
            if not _sendable(m):
                dropped.append(str(m.info["id"]))
                continue
            cost += _assistant(m, out, usage)
        else:
            _fail(f"{m.where}.role", f"expected user or assistant, got {role!r}")
    warnings = []
    if labels[k][0] == "main" and start:
        warnings.append(
            f"{start} messages before the last compaction were left out (OpenCode sends the "
            "compaction summary instead; conversation 'full' has the whole session)"
        )
    if dropped:
        warnings.append(
            f"{len(dropped)} assistant messages that ended in an error were left out (OpenCode "
            f"does not send them again): {', '.join(dropped[:5])}"
        )
    if cost:
        warnings.append(f"OpenCode recorded a cost of ${cost:.4f} for these calls")
    return LoadedChat(tuple(out), usage=tuple(usage), warnings=tuple(warnings), format="opencode")


def _session_title(info: dict[str, Any]) -> str:
    title = info.get("title")
    return _title(title) if isinstance(title, str) else ""


def _folder_labels(storage: Path) -> list[tuple[str, str]]:
    return [(str(info["id"]), _session_title(info)) for info, _ in _sessions(storage)]


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The context OpenCode sends (``main``) or every message (``full``) of an export, or of
    one session of a storage folder (``<sessionID>`` or ``<sessionID>/full``)."""
    if doc.folder:
        assert doc.path is not None
        wanted = options.conversation
        inner: str | None = None
        if isinstance(wanted, str) and "/" in wanted:
            wanted, inner = wanted.split("/", 1)
        storage = _storage(doc.path)
        if storage is not None:
            labels = _folder_labels(storage)
            k = _pick_conversation(wanted, len(labels), labels)
            return _build(_folder_messages(storage, labels[k][0]), inner)
        db = _open_db(doc.path)
        try:
            labels = _db_sessions(db)
            k = _pick_conversation(wanted, len(labels), labels)
            messages = _db_messages(db, labels[k][0])
        except sqlite3.Error as exc:
            _fail(None, f"cannot read the OpenCode database {doc.path.name!r}: {exc}")
        finally:
            db.close()
        return _build(messages, inner)
    value = doc.value
    if not _is_export(value):
        _fail("$", 'expected an OpenCode export {"info", "messages": [{"info", "parts"}]}')
    return _build(_export_messages(value), options.conversation)


def conversations(doc: Document) -> list[tuple[str, str]]:
    """An export: ``main`` (and ``full`` after a compaction); a folder: one per session."""
    if doc.folder:
        assert doc.path is not None
        storage = _storage(doc.path)
        if storage is not None:
            return _folder_labels(storage)
        db = _open_db(doc.path)
        try:
            return _db_sessions(db)
        except sqlite3.Error as exc:
            _fail(None, f"cannot read the OpenCode database {doc.path.name!r}: {exc}")
        finally:
            db.close()
    value = doc.value
    title = _session_title(value["info"]) if _is_export(value) else ""
    messages = _export_messages(value) if _is_export(value) else []
    out = [("main", title)]
    if _after_compaction(messages):
        out.append(("full", f"{title} (the whole session)"))
    return out


register(
    ChatFormat(
        name="opencode",
        title="OpenCode session: `opencode export <id>` JSON, opencode.db, or the storage folder",
        read=read,
        sniff=sniff,
        sniff_folder=sniff_folder,
        conversations=conversations,
        marks=frozenset({"info", "messages", "parts"}),
        order=16,
        shown=15,
    )
)
