"""Shapes ctxlab recognises but does not read: stream chunks, SillyTavern chats, config files.

When a file is one of these, "not in any supported format; found keys ..." leaves the user
guessing; the refusal instead names the shape, the place that shows it (a JSON path or a JSONL
line) and what to load instead, in one line. Each entry is a cheap predicate on the parsed JSON
value (or a JSONL file's first line) that returns the path that gives the shape away, or None.

The registry asks this table before the formats' sniffers: the generic readers accept any list
(OpenAI) or any object with ``choices`` (a Chat Completions response), so a stream-chunk array
would otherwise be read as messages and fail on ``$[0].role``. The predicates are narrow (exact
marker values, several keys together), so no file a format reads matches one; the format tests
and the fixture sweep check that.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

_ANTHROPIC_EVENTS: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
_GEMINI_METHODS: Final = frozenset(
    {"generateContent", "generateContentStream", "countTokens", "embedContent"}
)
_CLAUDE_HOOK_EVENTS: Final = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
)
_CLAUDE_CONFIG_KEYS: Final = (
    "numStartups",
    "firstStartTime",
    "installMethod",
    "autoUpdates",
    "hasCompletedOnboarding",
    "oauthAccount",
    "userID",
)


@dataclasses.dataclass(frozen=True, slots=True)
class KnownShape:
    """One recognisable shape.

    Attributes:
        what: what the file is, as the refusal says it ("a Gemini ... chunk array").
        advice: what to do instead, one clause.
        value: the JSON path (``$...``) showing the shape in a parsed JSON document, or None.
        line: the same for a JSONL file's parsed first line (a path inside the line), or None.
    """

    what: str
    advice: str
    value: Callable[[Any], str | None] | None = None
    line: Callable[[Any], str | None] | None = None


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _first(value: Any) -> tuple[dict[str, Any] | None, str]:
    """The object to look at (a list's first item) and its path."""
    if isinstance(value, list):
        return (_dict(value[0]), "$[0]") if value else (None, "$")
    return _dict(value), "$"


def _gemini_chunks(value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return None
    item = _dict(value[0])
    if item is not None and isinstance(item.get("candidates"), list) and "contents" not in item:
        return "$[0].candidates"
    return None


def _gemini_recorded(value: Any) -> str | None:
    d = _dict(value)
    method = d.get("method") if d is not None else None
    if isinstance(method, str) and method in _GEMINI_METHODS and "response" in (d or {}):
        return "$.method"
    return None


def _openai_chunk(value: Any) -> str | None:
    item, at = _first(value)
    if item is not None and item.get("object") == "chat.completion.chunk":
        return f"{at}.object"
    return None


def _responses_event(value: Any) -> str | None:
    item, at = _first(value)
    kind = item.get("type") if item is not None else None
    if (
        item is not None
        and isinstance(kind, str)
        and kind.startswith("response.")
        and any(k in item for k in ("response", "sequence_number", "item_id", "output_index"))
    ):
        return f"{at}.type"
    return None


def _anthropic_event(value: Any) -> str | None:
    item, at = _first(value)
    kind = item.get("type") if item is not None else None
    if item is None or not isinstance(kind, str) or kind not in _ANTHROPIC_EVENTS:
        return None
    if kind == "message_start" and not isinstance(item.get("message"), dict):
        return None
    return f"{at}.type"


def _sillytavern_line(value: Any) -> str | None:
    d = _dict(value)
    if d is None:
        return None
    if "user_name" in d and "character_name" in d:
        return "$.character_name"
    if isinstance(d.get("is_user"), bool) and "mes" in d:
        return "$.mes"
    return None


def _sillytavern(value: Any) -> str | None:
    if not isinstance(value, list):
        return _sillytavern_line(value)  # a one-line chat reads as a JSON document
    if not value:
        return None
    found = _sillytavern_line(value[0])
    return found.replace("$", "$[0]", 1) if found else None


def _gemini_cli_logs(value: Any) -> str | None:
    if not isinstance(value, list) or not value:
        return None
    item = _dict(value[0])
    if (
        item is not None
        and isinstance(item.get("sessionId"), str)
        and isinstance(item.get("messageId"), int)
        and "message" in item
        and "timestamp" in item
    ):
        return "$[0].messageId"
    return None


def _claude_config(value: Any) -> str | None:
    d = _dict(value)
    if d is None or "messages" in d:
        return None
    found = [k for k in _CLAUDE_CONFIG_KEYS if k in d]
    if len(found) >= 2 or (found and isinstance(d.get("projects"), dict)):
        return f"$.{found[0]}"
    return None


def _claude_settings(value: Any) -> str | None:
    d = _dict(value)
    if d is None or "messages" in d:
        return None
    schema = d.get("$schema")
    if isinstance(schema, str) and "claude-code-settings" in schema:
        return '$["$schema"]'
    hooks = _dict(d.get("hooks"))
    if hooks is not None and any(event in hooks for event in _CLAUDE_HOOK_EVENTS):
        return "$.hooks"
    permissions = _dict(d.get("permissions"))
    if permissions is not None and any(
        isinstance(permissions.get(k), list) for k in ("allow", "deny", "ask")
    ):
        return "$.permissions"
    return None


def _hf_rows(value: Any) -> str | None:
    d = _dict(value)
    rows = d.get("rows") if d is not None else None
    if isinstance(rows, list) and rows:
        row = _dict(rows[0])
        if row is not None and "row_idx" in row and isinstance(row.get("row"), dict):
            return "$.rows[0].row"
    return None


def _cline_ui_messages(value: Any) -> str | None:
    item, at = _first(value)
    if (
        at == "$[0]"
        and item is not None
        and isinstance(item.get("ts"), int)
        and item.get("type") in ("say", "ask")
        and "role" not in item
    ):
        return f"{at}.type"
    return None


def _cline_task_metadata(value: Any) -> str | None:
    d = _dict(value)
    if d is not None and isinstance(d.get("files_in_context"), list) and "messages" not in d:
        return "$.files_in_context"
    return None


SHAPES: Final[tuple[KnownShape, ...]] = (
    KnownShape(
        "a Gemini streamGenerateContent chunk array",
        "join the chunks' candidates[0].content.parts into one response first, or load the "
        "request (its contents) instead",
        value=_gemini_chunks,
    ),
    KnownShape(
        "a Gemini CLI recorded-responses file (one API call's response per line)",
        "it holds the model's answers only; the chat is the session file in "
        "~/.gemini/tmp/<project>/chats/",
        value=_gemini_recorded,
        line=_gemini_recorded,
    ),
    KnownShape(
        "OpenAI Chat Completions stream chunks",
        "join the chunks' choices[0].delta (content, tool_calls) into one message first, or "
        "load the request (its messages) instead",
        value=_openai_chunk,
        line=_openai_chunk,
    ),
    KnownShape(
        "OpenAI Responses API stream events",
        "the response.completed event's response is the whole response: load that object",
        value=_responses_event,
        line=_responses_event,
    ),
    KnownShape(
        "Anthropic Messages stream events (message_start, content_block_delta, ...)",
        "the response is message_start's message with each block's deltas joined: load that "
        "message, or the request (its messages) instead",
        value=_anthropic_event,
        line=_anthropic_event,
    ),
    KnownShape(
        "a SillyTavern chat (a header line with user_name and character_name, then one "
        "message a line with is_user and mes)",
        "ctxlab does not read SillyTavern chats; the prompt SillyTavern built (character card, "
        "world info) is not in the file, so convert the mes lines to user/assistant messages",
        value=_sillytavern,
        line=_sillytavern_line,
    ),
    KnownShape(
        "Gemini CLI's logs.json (the prompts it logged, not a chat)",
        "the session is chats/session-*.json in the same ~/.gemini/tmp/<project>/ folder",
        value=_gemini_cli_logs,
    ),
    KnownShape(
        "Claude Code's ~/.claude.json (its settings and per-project state, no conversation)",
        "sessions are ~/.claude/projects/<project>/<session>.jsonl",
        value=_claude_config,
    ),
    KnownShape(
        "a Claude Code settings file (settings.json: permissions, hooks)",
        "sessions are ~/.claude/projects/<project>/<session>.jsonl",
        value=_claude_settings,
    ),
    KnownShape(
        "Cline's ui_messages.json (the task's UI log: what the extension showed, not what the "
        "model was sent)",
        "open the task folder (it holds api_conversation_history.json, the chat, and this "
        "file's recorded usage)",
        value=_cline_ui_messages,
    ),
    KnownShape(
        "Cline's task_metadata.json (the files and models of a task, no conversation)",
        "open the task folder (it holds api_conversation_history.json, the chat)",
        value=_cline_task_metadata,
    ),
    KnownShape(
        "a Hugging Face datasets-server rows response",
        "each rows[i].row is one example: save the rows' messages (or conversations) as JSONL "
        "and load that",
        value=_hf_rows,
    ),
)


def recognise(value: Any, *, lines: bool = False) -> tuple[KnownShape, str] | None:
    """The known shape of a parsed document (or JSONL first line) and the path showing it."""
    for shape in SHAPES:
        test = shape.line if lines else shape.value
        if test is None:
            continue
        where = test(value)
        if where is not None:
            return shape, where
    return None


def refusal(shape: KnownShape) -> str:
    """The one-line reason of a refusal."""
    return f"this is {shape.what}, not a chat ctxlab reads: {shape.advice}"
