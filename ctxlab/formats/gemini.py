"""Google Gemini (``gemini``): ``generateContent`` requests and responses.

A request is ``{"contents": [{"role", "parts": [...]}], "systemInstruction", "tools"}``; a
response is ``{"candidates": [{"content": ...}], "usageMetadata"}`` (the first candidate is
the reply; ``usageMetadata`` is its billed usage). A bare ``contents`` list is read too. Keys
may be camelCase or snake_case, as the REST API and the Python SDK write them.

* ``systemInstruction`` becomes the leading system message; role ``model`` is the assistant;
  ``user`` parts that are ``functionResponse`` (and turns of role ``function`` / ``tool``)
  become tool messages.
* ``functionCall`` parts are tool calls. Calls and responses are paired by ``id`` where the
  file has ids; otherwise a response answers the earliest unanswered call of the same name
  (else the earliest unanswered call), and the pair gets a made-up id ``gemini-call-<n>``.
* ``thought`` parts (thought summaries) go to ``extra["thinking"]``, shown and not counted
  (Gemini, like Anthropic, does not send earlier turns' thoughts back as text); ``inlineData``
  / ``fileData`` become ``[image]``-style placeholders; ``executableCode`` and
  ``codeExecutionResult`` are counted text. Unknown parts are kept as text, warned once each.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from ctxlab.formats._common import _MISSING, _compact_json, _fail, _got, _kind, _title
from ctxlab.formats._fastpath import _new_message_full, _new_tool_call
from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._tools import read_tools
from ctxlab.formats._usage import read_usage
from ctxlab.formats._values import LoadedChat
from ctxlab.model import Message, Role, ToolCall

_ROLES: Final[dict[str, Role]] = {
    "user": Role.USER,
    "model": Role.ASSISTANT,
    "assistant": Role.ASSISTANT,
    "function": Role.TOOL,
    "tool": Role.TOOL,
    "system": Role.SYSTEM,
}


def _get(d: dict[str, Any], camel: str, snake: str) -> Any:
    return d[camel] if camel in d else d.get(snake, _MISSING)


@dataclasses.dataclass(slots=True)
class _Pairing:
    """Calls waiting for their response, to give both the same id."""

    open: list[ToolCall] = dataclasses.field(default_factory=list)
    made: int = 0

    def call_id(self, given: object) -> str:
        if isinstance(given, str) and given:
            return given
        self.made += 1
        return f"gemini-call-{self.made}"

    def answer(self, given: object, name: object) -> str | None:
        """The id of the call a response answers (and that call is no longer open)."""
        if isinstance(given, str) and given:
            self.open = [c for c in self.open if c.id != given]
            return given
        for pick in (lambda c: c.name == name, lambda c: True):
            for k, call in enumerate(self.open):
                if pick(call):
                    del self.open[k]
                    return call.id
        return None


def _part_text(part: dict[str, Any], where: str, unknown: dict[str, str]) -> str:
    """The counted text of a part that is neither a call, a response nor a thought."""
    if isinstance(part.get("text"), str):
        return str(part["text"])
    for camel, snake in (("inlineData", "inline_data"), ("fileData", "file_data")):
        data = _get(part, camel, snake)
        if isinstance(data, dict):
            mime = _get(data, "mimeType", "mime_type")
            kind = mime.split("/")[0] if isinstance(mime, str) else "file"
            return f"[{kind if kind in ('image', 'audio', 'video') else 'file'}]"
    code = _get(part, "executableCode", "executable_code")
    if isinstance(code, dict):
        return f"[executableCode] {code.get('code', '')}"
    result = _get(part, "codeExecutionResult", "code_execution_result")
    if isinstance(result, dict):
        return f"[codeExecutionResult] {result.get('output', '')}"
    keys = [k for k in part if k not in ("thoughtSignature", "thought_signature")]
    kind = keys[0] if keys else "empty"
    unknown.setdefault(kind, where)
    return f"[{kind}] {_compact_json(part, where)}"


def _read_contents(
    contents: list[Any], base: str, lead: Message | None
) -> tuple[list[Message], dict[str, str]]:
    out: list[Message] = [] if lead is None else [lead]
    pairing = _Pairing()
    unknown: dict[str, str] = {}
    for i, turn in enumerate(contents):
        where = f"{base}[{i}]"
        if not isinstance(turn, dict):
            _fail(where, f"expected a content object {{role, parts}}, got {_kind(turn)}")
        role_name = turn.get("role", "user")
        role = _ROLES.get(role_name) if isinstance(role_name, str) else None
        if role is None:
            _fail(f"{where}.role", f"expected user, model or function, got {_got(role_name)}")
        parts = turn.get("parts", _MISSING)
        if not isinstance(parts, list):
            _fail(f"{where}.parts", f"expected a list of parts, got {_got(parts)}")
        texts: list[str] = []
        calls: list[ToolCall] = []
        thoughts: list[str] = []
        for j, part in enumerate(parts):
            here = f"{where}.parts[{j}]"
            if not isinstance(part, dict):
                _fail(here, f"expected a part object, got {_kind(part)}")
            call = _get(part, "functionCall", "function_call")
            response = _get(part, "functionResponse", "function_response")
            if isinstance(call, dict):
                name = call.get("name", _MISSING)
                if not isinstance(name, str):
                    _fail(f"{here}.functionCall.name", f"expected a string, got {_got(name)}")
                args = _compact_json(call.get("args", {}), f"{here}.functionCall.args")
                made = _new_tool_call(pairing.call_id(call.get("id")), name, args, "function")
                pairing.open.append(made)
                calls.append(made)
            elif isinstance(response, dict):
                name = response.get("name")
                answered = pairing.answer(response.get("id"), name)
                body = _compact_json(response.get("response"), f"{here}.functionResponse.response")
                out.append(
                    _new_message_full(
                        Role.TOOL,
                        body,
                        f"m{len(out)}",
                        name if isinstance(name, str) else None,
                        (),
                        answered,
                        False,
                        False,
                        None,
                        (),
                    )
                )
            elif part.get("thought") is True and isinstance(part.get("text"), str):
                thoughts.append(part["text"])
            else:
                texts.append(_part_text(part, here, unknown))
        if texts or calls or thoughts:
            extra: tuple[tuple[str, Any], ...] = (("thinking", thoughts),) if thoughts else ()
            speaker = Role.ASSISTANT if role is Role.TOOL else role
            out.append(
                _new_message_full(
                    speaker,
                    "\n".join(texts),
                    f"m{len(out)}",
                    None,
                    tuple(calls),
                    None,
                    False,
                    False,
                    None,
                    extra,
                )
            )
    return out, unknown


def _system(value: dict[str, Any]) -> Message | None:
    system = _get(value, "systemInstruction", "system_instruction")
    if system is _MISSING or system is None:
        return None
    if isinstance(system, str):
        text = system
    elif isinstance(system, dict) and isinstance(system.get("parts"), list):
        text = "\n".join(
            p["text"]
            for p in system["parts"]
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    else:
        _fail("$.systemInstruction", f"expected a content object with parts, got {_kind(system)}")
    return Message(Role.SYSTEM, text, "m0") if text else None


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """A request (``contents``), a response (``candidates``) or a bare contents list."""
    value = doc.value
    if isinstance(value, list):
        messages, unknown = _read_contents(value, "$", None)
        return LoadedChat(tuple(messages), warnings=_warnings(unknown), format="gemini")
    if not isinstance(value, dict):
        _fail("$", f'expected an object with "contents" or "candidates", got {_kind(value)}')
    tools = read_tools(value.get("tools"), "$.tools")
    if "candidates" in value and "contents" not in value:
        candidates = value["candidates"]
        if not isinstance(candidates, list) or not candidates:
            _fail("$.candidates", f"expected a non-empty list, got {_kind(candidates)}")
        first = candidates[0]
        content = first.get("content") if isinstance(first, dict) else None
        turn = content if isinstance(content, dict) else {"role": "model", "parts": []}
        messages, unknown = _read_contents([turn], "$.candidates[0].content", None)
        usage = _get(value, "usageMetadata", "usage_metadata")
        billed = (
            read_usage(usage, "$.usageMetadata", messages[-1].id, "openai")
            if messages and usage is not _MISSING
            else ()
        )
        return LoadedChat(tuple(messages), tools, billed, _warnings(unknown), format="gemini")
    contents = value.get("contents", _MISSING)
    if not isinstance(contents, list):
        _fail("$.contents", f"expected a list of contents, got {_got(contents)}")
    messages, unknown = _read_contents(contents, "$.contents", _system(value))
    return LoadedChat(tuple(messages), tools, warnings=_warnings(unknown), format="gemini")


def _warnings(unknown: dict[str, str]) -> tuple[str, ...]:
    return tuple(
        f"{where}: unknown part {kind!r}, kept as text and counted"
        for kind, where in unknown.items()
    )


def sniff(value: Any) -> bool:
    if isinstance(value, dict):
        return isinstance(value.get("contents"), list) or (
            isinstance(value.get("candidates"), list) and "choices" not in value
        )
    if isinstance(value, list) and value:
        first = value[0]
        return isinstance(first, dict) and "parts" in first and "content" not in first
    return False


def conversations(doc: Document) -> list[tuple[str, str]]:
    value = doc.value
    contents = value.get("contents") if isinstance(value, dict) else value
    if isinstance(contents, list):
        for turn in contents:
            if isinstance(turn, dict) and turn.get("role", "user") == "user":
                parts = turn.get("parts")
                if isinstance(parts, list):
                    texts = [
                        p["text"]
                        for p in parts
                        if isinstance(p, dict) and isinstance(p.get("text"), str)
                    ]
                    if texts:
                        return [("0", _title(" ".join(texts)))]
    return [("0", "")]


register(
    ChatFormat(
        name="gemini",
        title="Google Gemini generateContent: contents/parts (+systemInstruction), or a response",
        read=read,
        sniff=sniff,
        conversations=conversations,
        marks=frozenset(
            {"contents", "systemInstruction", "candidates", "parts", "generationConfig"}
        ),
        order=55,
        shown=9,
    )
)
