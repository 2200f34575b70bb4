"""Exact counts for Mistral models, with the vocabularies ``mistral-common`` bundles.

Two vocabularies: Tekken (tiktoken-style BPE, ``data/tekken_240911.json``; regular ids are
offset by the file's 1,000 special tokens) and SentencePiece (``*.model.v3``, ``*.model.v7``,
run by the ``sentencepiece`` package). The request encoding is that of mistral-common's
``MistralTokenizer.encode_chat_completion``: its normalizer, then the instruct tokenizer of the
version the model uses (family ``mistral-<vocabulary>-v<version>``):

* the request opens with ``<s>`` (:attr:`ChatAccounting.reply_priming` = 1; nothing follows the
  last message: the model continues after ``[/INST]`` or ``[/TOOL_RESULTS]``);
* user: ``[INST]`` content ``[/INST]``;
* system: V7 and later ``[SYSTEM_PROMPT]`` content ``[/SYSTEM_PROMPT]`` where it stands; V3
  joins every system message (blank line between) and prepends the result, plus a blank line,
  to the *last* user message;
* assistant: its content (trailing spaces stripped), its tool calls, ``</s>``. Tool calls: V3
  and V7 ``[TOOL_CALLS]`` + one JSON list of ``{"name", "arguments", "id"}``; V11
  ``[TOOL_CALLS]`` name ``[CALL_ID]`` id ``[ARGS]`` arguments per call; V13 the same without the
  id;
* tool result: V3 ``[TOOL_RESULTS]`` ``{"content", "call_id"}`` ``[/TOOL_RESULTS]``; V7 and
  V11 ``[TOOL_RESULTS]`` call id ``[TOOL_CONTENT]`` content ``[/TOOL_RESULTS]``; V13
  ``[TOOL_RESULTS]`` content ``[/TOOL_RESULTS]``;
* tool definitions (:meth:`MistralCounter.count_tools`): ``[AVAILABLE_TOOLS]`` JSON list
  ``[/AVAILABLE_TOOLS]``, before the last user message (V3 to V11) or the first (V13).

Mistral's encoding is not a sum of independent messages: the normalizer joins consecutive
messages of one role into one (user and assistant texts with a blank line between), V3 moves the
system prompt into the last user message, and V3 opens a chat that does not start with a user
message with an empty ``[INST][/INST]``. So:

* :meth:`~MistralCounter.counts` (what trimming adds up and every view shows) adds up to the
  request's exact total: the chat is normalized as mistral-common does, and only the runs the
  normalizer changed are counted again (a joined run as one text, the last user message with
  the system prompt); the difference goes to the run's first message. A message the normalizer
  leaves alone costs what it costs alone, the common case on V7 and later; a system message on
  V3 counts its text plus the blank line that joins it to the user message.

Chats mistral-common refuses are still counted, by the same rules: an assistant message with
both text and tool calls on V3 (refused by the V3 normalizer) counts its text then its calls as
V7 does; an assistant message with neither (refused) counts ``</s>``; a tool result without a
call id counts an empty one. The role-order and last-message checks of
mistral-common's validator do not change the encoding and are not applied.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ctxlab.model import Message, Role, ToolCall
from ctxlab.tokens import ChatAccounting, _CachingCounter

if TYPE_CHECKING:
    from ctxlab.tokenizer_families import TokenizerFamily
    from ctxlab.tokens import TokenCounter

__all__ = ["MistralCounter", "make_counter"]

TEKKEN_FILE = "tekken_240911.json"
SPM_FILES = {
    3: "mistral_instruct_tokenizer_240323.model.v3",
    7: "mistral_instruct_tokenizer_241114.model.v7",
}
_JOIN = "\n\n"
"""What mistral-common's normalizer puts between joined texts (``_DEFAULT_JOIN_STR``)."""


@dataclass(frozen=True, slots=True)
class _Version:
    vocabulary: str  # "tekken" | "spm"
    number: int  # instruct tokenizer version: 3, 7, 11, 13


_VERSIONS = {
    "mistral-tekken-v13": _Version("tekken", 13),
    "mistral-tekken-v11": _Version("tekken", 11),
    "mistral-tekken-v7": _Version("tekken", 7),
    "mistral-tekken-v3": _Version("tekken", 3),
    "mistral-spm-v7": _Version("spm", 7),
    "mistral-spm-v3": _Version("spm", 3),
}


def data_file(name: str) -> Path:
    """A vocabulary file bundled with the installed mistral-common."""
    return Path(str(resources.files("mistral_common").joinpath("data", name)))


@functools.cache
def _tekken_encoder(path: Path) -> tuple[Callable[[str], list[int]], int]:
    """Tekken's encoder, as mistral-common's ``Tekkenizer`` builds it: the first
    ``default_vocab_size - default_num_special_tokens`` ranks under the file's pattern, no
    special tokens in text; ids shifted by the number of special tokens. Built once per
    process (reading the 19 MB file takes a second): every counter shares it."""
    import base64

    import tiktoken

    data = json.loads(path.read_text(encoding="utf-8"))
    config = data["config"]
    num_special = int(config["default_num_special_tokens"])
    inner = int(config["default_vocab_size"]) - num_special
    ranks = {base64.b64decode(t["token_bytes"]): t["rank"] for t in data["vocab"][:inner]}
    encoding = tiktoken.Encoding(
        name=path.name, pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={}
    )
    return encoding.encode_ordinary, num_special


@functools.cache
def _spm_processor(path: Path) -> Any:
    from sentencepiece import SentencePieceProcessor

    return SentencePieceProcessor(model_file=str(path))


def _loads_or_text(text: str) -> Any:
    """mistral-common's ``_parse_json_content``: the JSON value, or the text when it is not
    JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _arguments(call: ToolCall) -> Any:
    """A call's arguments after the normalizer (empty -> ``{}``) and ``_prepare_function_call``."""
    return _loads_or_text(call.arguments) if call.arguments else {}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _call_id(call: ToolCall) -> str | None:
    return call.id if call.id and call.id != "null" else None


def tool_definitions(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``[tool.model_dump() ...]`` of mistral-common's ``Tool``: type, then the function's
    name, description and parameters (``strict`` and other keys left out)."""
    out = []
    for tool in tools:
        function = tool.get("function", tool)
        parameters = function.get("parameters")
        if isinstance(parameters, str):
            parameters = _loads_or_text(parameters)
        out.append(
            {
                "type": str(tool.get("type", "function")) if "function" in tool else "function",
                "function": {
                    "name": str(function.get("name", "")),
                    "description": str(function.get("description") or ""),
                    "parameters": parameters if isinstance(parameters, dict) else {},
                },
            }
        )
    return out


class MistralCounter(_CachingCounter):
    """Exact counts with a Mistral vocabulary and instruct tokenizer version (module docstring)."""

    is_exact = True
    _namespaces: ClassVar[dict[str, str]] = {}

    def __init__(self, model: str, family: TokenizerFamily) -> None:
        version = _VERSIONS[family.name]
        self.version = version.number
        self._encode_batch: Callable[[list[str]], list[list[int]]] | None = None
        if version.vocabulary == "tekken":
            path = data_file(TEKKEN_FILE)
            self._encode, self._offset = _tekken_encoder(path)
        else:
            path = data_file(SPM_FILES[version.number])
            processor = _spm_processor(path)
            self._encode, self._offset = processor.encode, 0
            # sentencepiece encodes a list on several threads
            self._encode_batch = processor.encode
        namespace = self._namespaces.get(family.name)
        if namespace is None:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            namespace = self._namespaces[family.name] = f"{family.name}:{digest}"
        self.count_namespace = namespace
        super().__init__(ChatAccounting(tokens_per_message=2, tokens_per_name=0, reply_priming=1))
        self.name = model
        self.label = f"{model} · {family.name} (mistral-common)"

    def encode(self, text: str) -> list[int]:
        """The ids mistral-common gives ``text``: ``encode(text, bos=False, eos=False)``."""
        offset = self._offset
        return [token + offset for token in self._encode(text)]

    def _count_uncached(self, texts: list[str]) -> list[int]:
        if self._encode_batch is not None and len(texts) > 1:
            return [len(ids) for ids in self._encode_batch(texts)]
        encode = self._encode
        return [len(encode(t)) if t else 0 for t in texts]

    # -- one message -----------------------------------------------------------------------------
    def _tool_call_fields(self, calls: Sequence[ToolCall]) -> tuple[list[str], int]:
        if self.version <= 7:
            prepared = []
            for call in calls:
                entry: dict[str, Any] = {"name": call.name, "arguments": _arguments(call)}
                call_id = _call_id(call)
                if call_id is not None:
                    entry["id"] = call_id
                prepared.append(entry)
            return [_dumps(prepared)], 1  # [TOOL_CALLS]
        fields: list[str] = []
        specials = 0
        for call in calls:
            fields.append(call.name)
            specials += 2  # [TOOL_CALLS], [ARGS]
            call_id = _call_id(call)
            if self.version == 11 and call_id is not None:
                fields.append(call_id)
                specials += 1  # [CALL_ID]
            fields.append(_dumps(_arguments(call)))
        return fields, specials

    def _parts(self, message: Message) -> tuple[list[str], int]:
        """The texts ``message`` encodes to and its count of special tokens."""
        role = message.role
        version = self.version
        if role.is_instruction:
            if version >= 7:
                return [message.content], 2  # [SYSTEM_PROMPT] [/SYSTEM_PROMPT]
            return [message.content, _JOIN], 0
        if role.is_tool_result:
            call_id = message.tool_call_id or ""
            if version == 3:
                content = _loads_or_text(message.content) if message.content else {}
                return [_dumps({"content": content, "call_id": call_id})], 2
            if version in (7, 11):
                return [call_id or "", message.content], 3  # + [TOOL_CONTENT]
            return [message.content], 2
        if role == Role.ASSISTANT:
            texts = [message.content.rstrip(" ")] if message.content else []
            specials = 1  # </s>
            if message.tool_calls:
                fields, extra = self._tool_call_fields(message.tool_calls)
                texts.extend(fields)
                specials += extra
            return texts, specials
        return [message.content], 2  # [INST] [/INST]

    def _fields(self, message: Message) -> list[str]:  # type: ignore[override]
        return self._parts(message)[0]

    def _overhead(self, message: Message) -> int:
        return self._parts(message)[1]

    def _count_parts(self, role: Role, content: str, calls: Sequence[ToolCall] = ()) -> int:
        texts, specials = self._parts(Message(role, content, "", tool_calls=tuple(calls)))
        return specials + sum(self._count_texts(texts))

    # -- a request ---------------------------------------------------------------------------------
    def counts(
        self, messages: Sequence[Message], progress: Callable[[int, int], None] | None = None
    ) -> list[int]:
        """Each message's tokens, adding up to the request mistral-common encodes: a message
        the normalizer leaves alone costs what it costs alone; the first message of a run the
        normalizer joins (and, on V3, the last user message, which takes the system prompt)
        also carries the difference the joining makes (module docstring)."""
        own = super().counts(messages, progress)
        for index, delta in self._corrections(messages, own).items():
            own[index] += delta
        return own

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of the request mistral-common encodes from ``messages`` (module docstring)."""
        return sum(self.counts(messages)) + self.accounting.reply_priming

    def _corrections(self, messages: Sequence[Message], counts: Sequence[int]) -> dict[int, int]:
        """Message index -> tokens to add so that ``counts`` sum to the normalized request
        (without ``<s>``): each run of one role the normalizer keeps as it is costs its
        messages' own counts; a joined run and the last user message of V3 (which takes the
        system prompt) are counted as encoded, and the difference goes to the run's first
        message."""
        if not messages:
            return {}
        version = self.version
        system_texts: list[str] = []
        system_indices: list[int] = []
        # Runs of the normalized message list: (role, indices of ctxlab messages).
        runs: list[tuple[str, list[int]]] = []
        for i, message in enumerate(messages):
            role = message.role
            if role.is_instruction:
                if version == 3:
                    system_indices.append(i)
                    if message.content:
                        system_texts.append(message.content)
                    continue
                kind = "system"
            elif role.is_tool_result:
                kind = "tool"
            elif role == Role.ASSISTANT:
                kind = "assistant"
            else:
                kind = "user"
            if runs and runs[-1][0] == kind and kind in ("user", "assistant"):
                runs[-1][1].append(i)
            else:
                runs.append((kind, [i]))
        if version == 3 and (not runs or runs[0][0] != "user"):
            runs.insert(0, ("user", []))  # the normalizer's empty first user message
        last_user = max((n for n, (kind, _) in enumerate(runs) if kind == "user"), default=-1)
        system_prompt = _JOIN.join(system_texts) if system_texts else None
        out: dict[int, int] = {}
        if version == 3 and system_prompt is None:
            for i in system_indices:  # empty system messages: nothing of them is encoded
                out[i] = -counts[i]
        for n, (kind, indices) in enumerate(runs):
            takes_system = version == 3 and n == last_user and system_prompt is not None
            if len(indices) == 1 and not takes_system:
                continue
            parts = [messages[i] for i in indices]
            text = _JOIN.join(m.content for m in parts if m.content)
            if takes_system:
                text = f"{system_prompt}{_JOIN}{text}"
            if kind == "user":
                encoded = self._count_parts(Role.USER, text)
            else:
                calls = [call for m in parts for call in m.tool_calls]
                encoded = self._count_parts(Role.ASSISTANT, text, calls)
            own = sum(counts[i] for i in indices)
            if takes_system:
                own += sum(counts[i] for i in system_indices)
            target = indices[0] if indices else (system_indices or [0])[0]
            out[target] = out.get(target, 0) + encoded - own
        return out

    # -- tool definitions ---------------------------------------------------------------------
    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """``[AVAILABLE_TOOLS]`` + the JSON list of ``tools`` + ``[/AVAILABLE_TOOLS]``."""
        if not tools:
            return 0
        return 2 + self.count_text(_dumps(tool_definitions(tools)))


def make_counter(model: str, family: TokenizerFamily) -> TokenCounter:
    return MistralCounter(model, family)
