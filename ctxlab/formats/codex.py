"""OpenAI Codex CLI rollouts (``codex``): ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``:

* ``response_item``: a Responses API item, read as :mod:`ctxlab.formats.responses` reads items
  (messages, function calls and their outputs, reasoning kept apart and not counted);
* ``session_meta``: its ``base_instructions.text`` is Codex's system prompt (the ``instructions``
  of every request) and becomes the leading system message; the older ``instructions`` field
  holds the user's AGENTS.md text, which the rollout also records as a user message, so it is
  not read twice;
* ``event_msg`` of type ``token_count``: ``info.last_token_usage`` is what the last request
  was billed (``input_tokens`` includes ``cached_input_tokens``), recorded for the latest
  assistant message; a ``user_message`` event becomes a user message only when no user item was
  recorded for that turn (some rollouts keep the event alone); other events repeat items
  (``agent_message``, ``agent_reasoning``) or are bookkeeping, and are not read;
* ``compacted``: Codex replaced the model's history here (``/compact``, or automatically near
  the context window); see below;
* an ``event_msg`` of type ``thread_rolled_back`` (the user went back ``num_turns`` turns):
  the history loses its last ``num_turns`` user turns, as in Codex's replay
  (``drop_last_n_user_turns``); the turns stay in ``full``;
* ``turn_context`` and other line types are bookkeeping and are not read.

**Compaction.** The rule is Codex's own replay of a rollout (openai/codex,
``codex-rs/core/src/compact.rs`` at 0100b103625752f6a10c21b79a8c423761dc4c6a:
``build_compacted_history``, ``collect_user_messages``; and the replay in ``codex-rs/core``,
``reconstruct_history_from_rollout`` / ``replay_rollout_response_items``, which applies
``RolloutItem::Compacted``): at a ``compacted`` line the history *becomes*

* its ``replacement_history`` items, when the line has them (remote compaction; a
  ``compaction`` item there holds the summary encrypted for the server, shown as a user
  message giving its size, since its text and token count are not in the rollout); else
* the initial context (the items before the first user turn), then the most recent real user
  messages, newest first within :data:`USER_MESSAGES_MAX_TOKENS` approximate tokens (4 bytes a
  token; the message that does not fit is cut in the middle, which Codex does by tokens and
  ctxlab approximates by characters), back in order, then ``payload.message`` (the summary,
  already carrying Codex's summary prefix) as a *user* message. Real user messages exclude
  earlier summaries and Codex's own context messages (``<environment_context>``,
  ``<user_instructions>``, AGENTS.md instructions, ...).

Items before it are no longer sent. The default conversation (``context``) is therefore what
the model saw after the last compaction (and rollbacks), with a warning saying how many items
were left out; ``full`` is the whole rollout in file order with each summary inline. The
summary message is flagged ``codex_compaction_summary`` in ``extra``. A rollout without a
compaction or rollback is one conversation, as before.

**Billing.** Each model call ends with a ``token_count`` whose ``info.total_token_usage``
grew; a ``token_count`` repeating the previous totals (Codex re-sends them with new rate limits,
and after every ``turn_context``) is not a call. Where the call's items stand depends on the
version, so the reader goes by the order in the file, not by ``cli_version``:

* Codex 0.4x (``codex-rs/core/src/codex.rs``, ``try_run_turn``) writes a ``turn_context``
  before every sampling request, sends ``TokenCount`` on ``ResponseEvent::Completed``, and only
  then (back in ``run_task``) records the response's items: the ``token_count`` comes right
  after ``turn_context``, *before* the items it bills;
* later versions record each item as it streams (``OutputItemDone``), so the ``token_count``
  comes *after* the items it bills.

A new ``token_count`` after model output (since the last ``turn_context``, ``compacted`` line or
placed bill) bills that output's latest assistant message at once; one with no output before it
waits for the output that follows and bills it at the next ``turn_context``, ``compacted`` line,
new ``token_count`` or the end of the file. One still waiting at a ``compacted`` line billed the
summarizing call (its output is the summary, not a message of the chat) and is not recorded; one
that no response follows is reported in the warnings, never dropped silently.

**Items Codex never sends.** Codex keeps only "API messages" in the history it sends
(``is_api_message`` in ``codex-rs/core/src/conversation_history.rs`` at 0.4x, moved to
``codex-rs/core/src/context_manager/history.rs`` from 0.5x on): ``ghost_snapshot`` items (the
git snapshots behind ``/undo``), ``compaction_trigger`` markers and ``system`` messages are
recorded in the rollout but never sent, so they are left out here too and counted in the
warnings.

A last line cut off mid-write is skipped with a warning naming it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from ctxlab.formats._common import _fail, _kind, _pick_conversation, _title
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._source import _parse_lines_lenient
from ctxlab.formats._values import LoadedChat
from ctxlab.formats.responses import ItemReader
from ctxlab.model import Message, Role

_LINE_TYPES: Final = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)


def sniff_line(first: Any) -> bool:
    if not isinstance(first, dict) or not isinstance(first.get("payload"), dict):
        return False
    kind = first.get("type")
    return isinstance(kind, str) and kind in _LINE_TYPES


def sniff(value: Any) -> bool:
    """Rollout lines given as JSON: a list of them (or one)."""
    first = value[0] if isinstance(value, list) and value else value
    return sniff_line(first)


NEVER_SENT: Final = {
    "ghost_snapshot": "Codex /undo snapshots, never sent to the model",
    "compaction_trigger": "Codex compaction markers, never sent to the model",
}
"""Item types ``is_api_message`` answers ``false`` for (besides ``Other``, an unknown type);
openai/codex ``codex-rs/core/src/context_manager/history.rs`` (0.5x to 0.1xx) and
``codex-rs/core/src/conversation_history.rs`` (0.4x)."""

USER_MESSAGES_MAX_TOKENS: Final = 20_000
"""Codex's ``COMPACT_USER_MESSAGE_MAX_TOKENS``: the user messages a rebuilt history keeps."""
_NO_SUMMARY: Final = "(no summary available)"
_COMPACTION_ITEMS: Final = frozenset({"compaction", "compaction_summary"})
_CONTEXT_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "<turn_aborted>",
    "<context_update>",
    "<subagent_notification>",
    "<user_shell_command>",
    "# agents.md instructions for",
)


@dataclasses.dataclass(frozen=True, slots=True)
class _Op:
    """One step of the history: an item to read, or billed usage for the latest response.

    ``summary`` marks a compaction summary ctxlab inserted (not a real user message).
    """

    kind: str  # "item" or "bill"
    value: Any
    where: str
    summary: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class _Rollout:
    """A rollout read as two histories: what the model saw last, and everything."""

    lead: Message | None
    context: tuple[_Op, ...]
    full: tuple[_Op, ...]
    warnings: tuple[str, ...]  # about the file: a cut-off last line, never-sent items, usage
    notes: tuple[str, ...]  # what the context leaves out: compactions, rollbacks


def _system_prompt(payload: dict[str, Any], where: str) -> Message | None:
    base = payload.get("base_instructions")
    text = base.get("text") if isinstance(base, dict) else base
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        _fail(f"{where}.base_instructions", f"expected a string, got {_kind(text)}")
    return Message(Role.SYSTEM, text, "base_instructions")


def _user_text(op: _Op, summaries: bool = False) -> str | None:
    """The text of a real user message item, else None; a compaction summary counts only
    with ``summaries`` (it starts a user turn for Codex, but is no user message to keep)."""
    item = op.value
    if op.kind != "item" or (op.summary and not summaries) or not isinstance(item, dict):
        return None
    if item.get("type", "message") != "message" or item.get("role") != "user":
        return None
    content = item.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
    else:
        return None
    if any(t.lstrip().lower().startswith(_CONTEXT_PREFIXES) for t in texts):
        return None
    return "\n".join(texts)


def _approx_tokens(text: str) -> int:
    """Codex's ``approx_token_count``: 4 bytes a token, rounded up."""
    return -(-len(text.encode()) // 4)


def _cut(text: str, tokens: int) -> str:
    """``text`` cut in the middle to about ``tokens`` tokens, saying how many were removed."""
    keep = tokens * 4 // 2
    removed = _approx_tokens(text) - tokens
    return f"{text[:keep]}…{removed} tokens truncated…{text[len(text) - keep :]}"


def _user_item(text: str, where: str, summary: bool = False, own: str | None = None) -> _Op:
    item: dict[str, Any] = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
    }
    if own is not None:
        item["id"] = own
    return _Op("item", item, where, summary)


def _rebuilt(history: list[_Op], summary: _Op) -> tuple[list[_Op], int]:
    """Codex's ``build_compacted_history`` over ``history`` (see the module docstring), and
    how many items of ``history`` it carries over whole (initial context, uncut messages)."""
    texts = [t for op in history if (t := _user_text(op)) is not None]
    first = next(
        (k for k, op in enumerate(history) if _user_text(op, True) is not None), len(history)
    )
    chosen: list[str] = []
    whole = 0
    remaining = USER_MESSAGES_MAX_TOKENS
    for text in reversed(texts):
        if remaining == 0:
            break
        tokens = _approx_tokens(text)
        if tokens <= remaining:
            chosen.append(text)
            whole += 1
            remaining -= tokens
        else:
            chosen.append(_cut(text, remaining))
            break
    kept = [_user_item(t, summary.where) for t in reversed(chosen)]
    carried = sum(op.kind == "item" for op in history[:first]) + whole
    return [*history[:first], *kept, summary], carried


def _compaction(payload: object, n: int, history: list[_Op]) -> tuple[list[_Op], _Op | None, int]:
    """The history after the ``compacted`` line ``n``, the summary to show inline, and how
    many items of ``history`` it carries over."""
    where = f"line {n}, $.payload"
    if not isinstance(payload, dict):
        _fail(where, f"expected a compacted object, got {_kind(payload)}")
    message = payload.get("message")
    if message is not None and not isinstance(message, str):
        _fail(f"{where}.message", f"expected a string, got {_kind(message)}")
    replacement = payload.get("replacement_history")
    own = f"codex-compaction-line-{n}"
    if replacement is None:
        summary = _user_item(message or _NO_SUMMARY, where, summary=True, own=own)
        new, carried = _rebuilt(history, summary)
        return new, summary, carried
    if not isinstance(replacement, list):
        _fail(f"{where}.replacement_history", f"expected a list of items, got {_kind(replacement)}")
    new = [
        _Op("item", item, f"{where}.replacement_history[{i}]") for i, item in enumerate(replacement)
    ]
    inline = _user_item(message, where, summary=True, own=own) if message else None
    return new, inline, 0


def _rolled_back(history: list[_Op], turns: int) -> list[_Op]:
    """``history`` without its last ``turns`` user turns (Codex's ``drop_last_n_user_turns``:
    everything from the ``turns``-th last real user message on; from the first one when there
    are fewer)."""
    starts = [k for k, op in enumerate(history) if _user_text(op, True) is not None]
    if turns == 0 or not starts:
        return history
    return history[: starts[max(len(starts) - turns, 0)]]


def _produces_output(item: object) -> bool:
    """An item the model wrote (a new response has started)."""
    if not isinstance(item, dict):
        return False
    return item.get("role") == "assistant" or item.get("type") not in (None, "message")


def _never_sent(item: object) -> str | None:
    """The kind of an item Codex records but never sends to the model (``is_api_message``
    false), else None."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if isinstance(kind, str) and kind in NEVER_SENT:
        return kind
    if kind in (None, "message") and item.get("role") == "system":
        return "system message"
    return None


def _skipped_warning(kind: str, count: int) -> str:
    why = NEVER_SENT.get(kind, "Codex never sends system items to the model")
    items = "item" if count == 1 else "items"
    return f"skipped {count:,} {kind} {items} ({why})"


@dataclasses.dataclass(slots=True)
class _Billing:
    """Which response each ``token_count`` bills (see "Billing" in the module docstring)."""

    totals: object = None  # the last token_count's total_token_usage
    pending: _Op | None = None  # a bill written before the items of its response
    answered: bool = False  # model output since the last turn_context, compaction or bill
    unplaced: list[str] = dataclasses.field(default_factory=list)

    def output(self) -> None:
        self.answered = True

    def count(self, info: dict[str, Any], where: str) -> list[_Op]:
        """The bills to place now for the ``token_count`` at ``where``."""
        totals = info.get("total_token_usage", info.get("last_token_usage"))
        last = info.get("last_token_usage")
        if last is None or (totals is not None and totals == self.totals):
            return []  # a repeat of the previous call's numbers
        self.totals = totals
        bill = _Op("bill", last, f"{where}, $.payload.info.last_token_usage")
        placed = self._flush()
        if self.pending is not None:  # two calls in a row with no response between them
            self.unplaced.append(self.pending.where.split(",")[0])
        if self.answered and not placed:
            self.answered = False
            return [bill]  # written after its response's items
        self.pending, self.answered = bill, False
        return placed

    def boundary(self, compaction: bool = False) -> list[_Op]:
        """A turn_context, compacted line, rollback or the end of the file: a waiting bill
        goes to the response read since it, else it billed no response of the chat."""
        placed = self._flush()
        if self.pending is not None:
            if not compaction:
                self.unplaced.append(self.pending.where.split(",")[0])
            self.pending = None
        self.answered = False
        return placed

    def _flush(self) -> list[_Op]:
        if self.pending is None or not self.answered:
            return []
        bill, self.pending = self.pending, None
        return [bill]

    def warnings(self) -> tuple[str, ...]:
        if not self.unplaced:
            return ()
        lines = ", ".join(self.unplaced[:5]) + (", ..." if len(self.unplaced) > 5 else "")
        n = len(self.unplaced)
        return (
            f"{n} token_count event{'' if n == 1 else 's'} billed a call with no response in "
            f"the rollout ({lines}); their usage is not recorded",
        )


def _read_lines(lines: list[tuple[int, Any]], warnings: tuple[str, ...]) -> _Rollout:
    lead: Message | None = None
    context: list[_Op] = []
    full: list[_Op] = []
    compactions: list[tuple[int, int]] = []
    notes: list[str] = []  # rollbacks, in file order
    skipped: dict[str, int] = {}
    user_recorded = False  # a user item (or event) already stands for the current turn
    billing = _Billing()

    def place(ops: list[_Op]) -> None:
        context.extend(ops)
        full.extend(ops)

    for n, line in lines:
        where = f"line {n}"
        if not isinstance(line, dict):
            _fail(where, f"expected a rollout line object, got {_kind(line)}")
        kind, payload = line.get("type"), line.get("payload")
        op: _Op | None = None
        if kind == "response_item":
            unsent = _never_sent(payload)
            if unsent is not None:
                skipped[unsent] = skipped.get(unsent, 0) + 1
                continue
            op = _Op("item", payload, f"{where}, $.payload")
            if isinstance(payload, dict) and payload.get("type") != "reasoning":
                user_recorded = payload.get("role") == "user"
            if _produces_output(payload):
                billing.output()
        elif kind == "session_meta" and isinstance(payload, dict) and lead is None:
            lead = _system_prompt(payload, f"{where}, $.payload")
        elif kind == "turn_context":  # Codex writes one before every turn and compaction
            place(billing.boundary())
        elif kind == "event_msg" and isinstance(payload, dict):
            event = payload.get("type")
            info = payload.get("info")
            if event == "token_count" and isinstance(info, dict):
                place(billing.count(info, where))
            elif (
                event == "user_message"
                and isinstance(payload.get("message"), str)
                and not user_recorded
            ):
                op = _user_item(payload["message"], f"{where}, $.payload")
                user_recorded = True
            elif event == "thread_rolled_back":
                turns = payload.get("num_turns")
                if not isinstance(turns, int) or isinstance(turns, bool) or turns < 0:
                    number = isinstance(turns, int | float) and not isinstance(turns, bool)
                    got = repr(turns) if number else _kind(turns)
                    _fail(
                        f"{where}, $.payload.num_turns",
                        f"expected a whole number of turns (0 or more), got {got}",
                    )
                place(billing.boundary())
                kept = _rolled_back(context, turns)
                gone = sum(op.kind == "item" for op in context[len(kept) :])
                notes.append(
                    f"{where}: the user rolled back {turns} turn{'' if turns == 1 else 's'}; "
                    f"their {gone} items are left out (conversation 'full' has the whole "
                    "rollout)"
                )
                context, user_recorded = kept, False
        elif kind == "compacted":
            place(billing.boundary(compaction=True))
            before = sum(op.kind == "item" for op in context)
            context, inline, carried = _compaction(payload, n, context)
            compactions.append((n, before - carried))
            if inline is not None:
                full.append(inline)
            user_recorded = False
        if op is not None:
            context.append(op)
            full.append(op)
    place(billing.boundary())
    if compactions:
        last, _ = compactions[-1]
        left = sum(k for _, k in compactions)
        times = "once" if len(compactions) == 1 else f"{len(compactions)} times"
        notes.insert(
            0,
            f"line {last}: Codex compacted the history {times}; the conversation is what the "
            f"model saw after the last compaction ({left} earlier items left out; "
            "conversation 'full' has the whole rollout)",
        )
    about = (
        *warnings,
        *(_skipped_warning(k, c) for k, c in skipped.items()),
        *billing.warnings(),
    )
    return _Rollout(lead, tuple(context), tuple(full), about, tuple(notes))


def _encrypted_summary(op: _Op, k: int) -> _Op | None:
    """A ``compaction`` item (``compaction_summary`` in older rollouts) as a visible user
    message: the summary the server decrypts, whose text and size the rollout does not hold."""
    item = op.value
    if op.kind != "item" or not isinstance(item, dict):
        return None
    kind = item.get("type")
    if not isinstance(kind, str) or kind not in _COMPACTION_ITEMS:
        return None
    secret = item.get("encrypted_content")
    size = f"{len(secret):,} characters" if isinstance(secret, str) else "no content"
    text = f"[compacted history, encrypted by the server: {size}; its size in tokens is unknown]"
    own = item.get("id") if isinstance(item.get("id"), str) else None
    return _user_item(text, op.where, summary=True, own=own or f"codex-compaction-{k}")


def _messages(rollout: _Rollout, ops: tuple[_Op, ...], notes: tuple[str, ...]) -> LoadedChat:
    reader = ItemReader()
    ops = tuple(_encrypted_summary(op, k) or op for k, op in enumerate(ops))
    for op in ops:
        if op.kind == "item":
            reader.add(op.value, op.where)
        else:
            reader.bill_last_assistant(op.value, op.where)
    messages, usage, more = reader.finish(rollout.lead)
    summaries = {op.value["id"] for op in ops if op.summary and isinstance(op.value.get("id"), str)}
    if summaries:
        messages = tuple(
            m.replace(extra=tuple(sorted((*m.extra, ("codex_compaction_summary", True)))))
            if m.id in summaries
            else m
            for m in messages
        )
    return LoadedChat(messages, usage=usage, warnings=notes + more, format="codex")


def _title_of(rollout: _Rollout) -> str:
    texts = (_user_text(op) for op in rollout.full)
    return _title(next((t for t in texts if t is not None), ""))


def _labels(rollout: _Rollout) -> list[tuple[str, str]]:
    title = _title_of(rollout)
    if not rollout.notes:
        return [("0", title)]
    return [
        ("context", f"{title} (what the model saw last)"),
        ("full", f"{title} (the whole rollout)"),
    ]


def _rollout(doc: Document) -> _Rollout:
    if doc.jsonl:
        parsed, warnings = _parse_lines_lenient(doc.lines, doc.name)
        return _read_lines(parsed, warnings)
    value = doc.value
    if isinstance(value, dict):  # one line given as JSON
        value = [value]
    if not isinstance(value, list):
        _fail("$", f"expected a list of rollout lines, got {_kind(value)}")
    return _read_lines(list(enumerate(value, 1)), ())


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """The model's context after the last compaction (the whole rollout when there is none),
    or, as conversation ``full``, every item in file order."""
    rollout = _rollout(doc)
    labels = _labels(rollout)
    k = _pick_conversation(options.conversation, len(labels), labels)
    if k == 1:
        return _messages(rollout, rollout.full, rollout.warnings)
    return _messages(rollout, rollout.context, rollout.warnings + rollout.notes)


def conversations(doc: Document) -> list[tuple[str, str]]:
    """One conversation; two (``context``, ``full``) when the history was compacted."""
    return _labels(_rollout(doc))


register(
    ChatFormat(
        name="codex",
        title="OpenAI Codex CLI rollout JSONL (~/.codex/sessions/.../rollout-*.jsonl)",
        read=read,
        sniff=sniff,
        sniff_line=sniff_line,
        conversations=conversations,
        marks=frozenset({"timestamp", "type", "payload"}),
        jsonl=True,
        order=21,
        shown=7,
    )
)
