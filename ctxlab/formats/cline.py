"""Cline task folders (``cline``): ``.../globalStorage/saoudrizwan.claude-dev/tasks/<task id>/``.

A task folder holds (file names from cline/cline at 21cb8d2525bcedf1f4b6890b27a74a14fe7451e4,
``apps/vscode/src/core/storage/disk.ts`` ``GlobalFileNames``; Roo Code, a fork, keeps the same
names):

* ``api_conversation_history.json``: the messages sent to the model, Anthropic-shaped
  (``role``, ``content`` blocks with ``tool_use``/``tool_result``/``thinking``), each possibly
  with Cline's own ``ts``, ``modelInfo`` and ``metrics`` keys (left out, as Cline removes them
  before a request). It is the conversation, read as :mod:`ctxlab.formats.anthropic` reads a
  message list.
* ``ui_messages.json``: what the webview shows. Each request the task made is a ``say``
  message ``api_req_started`` whose ``text`` is JSON with ``tokensIn``, ``tokensOut``,
  ``cacheWrites``, ``cacheReads`` and ``cost`` (``ClineApiReqInfo``); these become one
  :class:`~ctxlab.formats.CallUsage` each, added up as Cline adds them (``getApiMetrics``:
  ``tokensIn`` is the uncached input, so the prompt is ``tokensIn + cacheReads +
  cacheWrites``). A request belongs to the assistant message after the history it was sent
  with: ``conversationHistoryIndex`` (the index of the history's last message when the request
  started) + 1; without that index, requests are matched to assistant messages in order.
  Requests without token counts (cancelled, failed) are skipped. When ``ui_messages.json`` has no
  usage, the ``metrics.tokens`` (``prompt`` with the cache, ``completion``, ``cached``) that newer
  Cline versions keep on assistant messages are read instead.
* ``task_metadata.json``: the models the task used (``model_usage``) and the files in context
  (``files_in_context``), summarised in one reading note.
* ``context_history.json``: Cline's in-place edits of the history (duplicate file reads
  replaced). They are not applied; a note says so. Cline's truncation range
  (``conversationHistoryDeletedRange``) lives in VS Code's state, not in the folder, so the
  conversation is the whole history.

A lone ``api_conversation_history.json`` still loads (as before, Anthropic-shaped) and is named
Cline's when its first message starts with Cline's ``<task>`` tag or its messages carry Cline's
``ts``; given as a path whose folder holds ``ui_messages.json``, the whole task folder is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import orjson

from ctxlab.formats._common import _fail, _index_path, _kind
from ctxlab.formats._messages import _read_messages, _unknown_warnings
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _strip_bom
from ctxlab.formats._usage import _int
from ctxlab.formats._values import CallUsage, LoadedChat

HISTORY: Final = "api_conversation_history.json"
UI_MESSAGES: Final = "ui_messages.json"
METADATA: Final = "task_metadata.json"
CONTEXT_HISTORY: Final = "context_history.json"


def sniff_folder(path: Path) -> bool:
    """A task folder: the API history beside Cline's UI messages or task metadata."""
    return (path / HISTORY).is_file() and (
        (path / UI_MESSAGES).is_file() or (path / METADATA).is_file()
    )


def _first_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else ""
    return ""


def sniff(value: Any) -> bool:
    """A lone API history: a list of messages, the first a user message opening with Cline's
    ``<task>`` tag, or messages carrying Cline's ``ts`` beside ``role`` and ``content``."""
    if not isinstance(value, list) or not value or not isinstance(value[0], dict):
        return False
    first = value[0]
    if first.get("role") != "user" or "content" not in first:
        return False
    return _first_text(first).lstrip().startswith("<task>") or isinstance(first.get("ts"), int)


def _load_json(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        _fail(path.name, f"cannot read it: {exc.strerror or exc}")
    try:
        return orjson.loads(_strip_bom(data))
    except orjson.JSONDecodeError as exc:
        _fail(path.name, f"not valid JSON ({exc})")


_BOOKKEEPING: Final = ("ts", "modelInfo", "metrics")
"""Cline's keys on stored messages, removed before a request (``ClineStorageMessage``)."""


def _with_ids(history: list[Any]) -> list[Any]:
    """The history as sent: without Cline's bookkeeping keys, and with an id on each assistant
    message that has none (``a<index>``), so that usage can name the message a request made."""
    out = []
    for i, m in enumerate(history):
        if isinstance(m, dict):
            m = {k: v for k, v in m.items() if k not in _BOOKKEEPING}
            if m.get("role") == "assistant" and m.get("id") is None:
                m["id"] = f"a{i}"
        out.append(m)
    return out


def _requests(ui: object) -> list[tuple[int, dict[str, Any], int | None]]:
    """``(index in ui_messages, request info, conversationHistoryIndex)`` of each
    ``api_req_started`` that records token counts."""
    if not isinstance(ui, list):
        _fail(f"{UI_MESSAGES}: $", f"expected a list of UI messages, got {_kind(ui)}")
    out = []
    for k, m in enumerate(ui):
        if not isinstance(m, dict) or m.get("say") != "api_req_started":
            continue
        text = m.get("text")
        where = f"{UI_MESSAGES}: $[{k}].text"
        if not isinstance(text, str):
            _fail(where, f"expected the request's JSON as a string, got {_kind(text)}")
        try:
            info = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            _fail(where, f"expected the request's JSON, got text that is not JSON ({exc})")
        if not isinstance(info, dict):
            _fail(where, f"expected a JSON object, got {_kind(info)}")
        if info.get("tokensIn") is None and info.get("tokensOut") is None:
            continue
        index = m.get("conversationHistoryIndex")
        out.append((k, info, index if isinstance(index, int) else None))
    return out


def _usage_from_ui(
    ui: object, history: list[Any], ids: list[str | None]
) -> tuple[tuple[CallUsage, ...], tuple[str, ...]]:
    """One CallUsage per request with token counts, on the assistant message it produced."""
    calls: list[CallUsage] = []
    unmatched: list[int] = []
    taken: set[int] = set()
    cursor = 0
    for k, info, index in _requests(ui):
        where = f"{UI_MESSAGES}: $[{k}].text"
        target: int | None = None
        if index is not None:
            reply = index + 1
            if 0 <= reply < len(history) and ids[reply] is not None:
                target = reply
        else:  # in order: the next assistant message not matched yet
            while cursor < len(history) and (ids[cursor] is None or cursor in taken):
                cursor += 1
            target = cursor if cursor < len(history) else None
        if target is None or target in taken:
            unmatched.append(k)
            continue
        taken.add(target)
        mid = ids[target]
        assert mid is not None
        calls.append(
            CallUsage(
                mid,
                _int(info, "tokensIn", where),
                _int(info, "tokensOut", where),
                _int(info, "cacheReads", where),
                _int(info, "cacheWrites", where),
                "anthropic",  # tokensIn excludes the cache (Cline's getApiMetrics adds them up)
            )
        )
    notes: tuple[str, ...] = ()
    if unmatched:
        shown = ", ".join(f"$[{k}]" for k in unmatched[:5]) + (
            ", ..." if len(unmatched) > 5 else ""
        )
        notes = (
            f"{UI_MESSAGES}: {len(unmatched)} recorded requests have no assistant message in "
            f"{HISTORY} to go with (their response was not kept): {shown}",
        )
    return tuple(calls), notes


def _usage_from_metrics(history: list[Any], ids: list[str | None]) -> tuple[CallUsage, ...]:
    """Newer Cline's ``metrics.tokens`` on assistant messages (``prompt`` includes the cache)."""
    out = []
    for i, m in enumerate(history):
        mid = ids[i]
        metrics = m.get("metrics") if isinstance(m, dict) else None
        tokens = metrics.get("tokens") if isinstance(metrics, dict) else None
        if mid is None or not isinstance(tokens, dict):
            continue
        where = f"{HISTORY}: $[{i}].metrics.tokens"
        out.append(
            CallUsage(
                mid,
                _int(tokens, "prompt", where),
                _int(tokens, "completion", where),
                _int(tokens, "cached", where),
                0,
                "openai",
            )
        )
    return tuple(out)


def _metadata_note(value: object) -> str:
    """One sentence on the models used and the files in context."""
    where = f"{METADATA}: $"
    if not isinstance(value, dict):
        _fail(where, f"expected an object, got {_kind(value)}")
    parts = []
    models = value.get("model_usage") or []
    if not isinstance(models, list):
        _fail(f"{where}.model_usage", f"expected a list, got {_kind(models)}")
    seen: list[str] = []
    for entry in models:
        if isinstance(entry, dict) and isinstance(entry.get("model_id"), str):
            provider = entry.get("model_provider_id")
            name = (
                f"{provider}/{entry['model_id']}"
                if isinstance(provider, str)
                else entry["model_id"]
            )
            mode = entry.get("mode")
            label = f"{name} ({mode})" if isinstance(mode, str) else name
            if label not in seen:
                seen.append(label)
    if seen:
        parts.append(f"model{'s' if len(seen) > 1 else ''} used: {', '.join(seen)}")
    files = value.get("files_in_context") or []
    if not isinstance(files, list):
        _fail(f"{where}.files_in_context", f"expected a list, got {_kind(files)}")
    if files:
        states: dict[str, int] = {}
        for f in files:
            state = f.get("record_state") if isinstance(f, dict) else None
            states[state if isinstance(state, str) else "unknown"] = (
                states.get(state if isinstance(state, str) else "unknown", 0) + 1
            )
        detail = ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
        parts.append(f"{len(files)} files in context ({detail})")
    return f"{METADATA}: {'; '.join(parts)}" if parts else ""


def _history_messages(
    history: object, where: str, trusted: bool
) -> tuple[LoadedChat, list[Any], list[str | None]]:
    if not isinstance(history, list):
        _fail(where, f"expected a list of Anthropic messages, got {_kind(history)}")
    items = _with_ids(history)
    unknown: dict[str, str] = {}
    messages = _read_messages(items, _index_path(where), trusted=trusted, unknown=unknown)
    ids = [m["id"] if isinstance(m, dict) and m.get("role") == "assistant" else None for m in items]
    chat = LoadedChat(messages, warnings=_unknown_warnings(unknown), format="cline")
    return chat, items, ids


def _read_folder(folder: Path) -> LoadedChat:
    history_path = folder / HISTORY
    if not history_path.is_file():
        _fail(None, f"a Cline task folder needs {HISTORY}; {str(folder)!r} has none")
    raw = _load_json(history_path)
    chat, items, ids = _history_messages(raw, f"{HISTORY}: $", True)
    notes: list[str] = []
    usage: tuple[CallUsage, ...] = ()
    if (folder / UI_MESSAGES).is_file():
        usage, unmatched = _usage_from_ui(_load_json(folder / UI_MESSAGES), items, ids)
        notes.extend(unmatched)
    if not usage:
        usage = _usage_from_metrics(raw, ids)
    if not usage:
        notes.append(f"no recorded usage: {UI_MESSAGES} has no request with token counts")
    if (folder / METADATA).is_file():
        note = _metadata_note(_load_json(folder / METADATA))
        if note:
            notes.append(note)
    if (folder / CONTEXT_HISTORY).is_file():
        notes.append(
            f"{CONTEXT_HISTORY}: Cline's in-place edits of the history (duplicate file reads "
            f"replaced) are not applied; the conversation is {HISTORY} as written"
        )
    known = {m.id for m in chat.messages}
    usage = tuple(u for u in usage if u.message_id in known)
    return LoadedChat(
        chat.messages, usage=usage, warnings=chat.warnings + tuple(notes), format="cline"
    )


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """A task folder, or its API history alone (the folder when the path's folder has the
    UI messages)."""
    if doc.folder:
        assert doc.path is not None
        return _read_folder(doc.path)
    if doc.path is not None and sniff_folder(doc.path.parent) and doc.path.name == HISTORY:
        return _read_folder(doc.path.parent)
    chat, _, ids = _history_messages(doc.value, "$", doc.trusted)
    usage = _usage_from_metrics(doc.value, ids)
    note = (
        f"a Cline task's {HISTORY} alone: the recorded usage and task metadata are in "
        f"{UI_MESSAGES} and {METADATA} beside it (load the task folder)"
    )
    return LoadedChat(chat.messages, usage=usage, warnings=(*chat.warnings, note), format="cline")


register(
    ChatFormat(
        name="cline",
        title="Cline (or Roo Code) task folder, or its api_conversation_history.json",
        read=read,
        sniff=sniff,
        sniff_folder=sniff_folder,
        marks=frozenset({"role", "content", "ts", "modelInfo"}),
        order=60,
        shown=14,
    )
)
