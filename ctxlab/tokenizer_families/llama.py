"""Exact counts for Llama 3.1 / 3.3 and Llama 4, with Meta's ``llama-models`` package.

The vocabularies are the ``tokenizer.model`` files (tiktoken format) that ``llama-models``
installs; they are read from the installed package at run time and never copied (Llama licence).
The chat overhead is that of ``ChatFormat.encode_dialog_prompt`` in the package's
``llama3/chat_format.py`` and ``llama4/chat_format.py``:

* a request opens with ``<|begin_of_text|>`` and ends with the generation prompt, the assistant
  header (:attr:`ChatAccounting.reply_priming`: 1 + the header's tokens);
* each message is a header, ``<|start_header_id|>role<|end_header_id|>`` then ``\\n\\n``
  (Llama 4: ``<|header_start|>role<|header_end|>``), its content, each tool call, and one end
  token (``<|eot_id|>`` / ``<|eom_id|>``; Llama 4 ``<|eot|>`` / ``<|eom|>``); tool results take
  the ``ipython`` role; a system-like role (system, developer) is ``system``;
* a tool call is the text ``ToolUtils.encode_tool_call`` makes in its default JSON format,
  ``{"type": "function", "name": ..., "parameters": {...}}`` (``json.dumps``), Meta's built-in
  tools (``brave_search``, ``wolfram_alpha``, ``photogen``: ``name.call(query="...")``;
  ``code_interpreter``: the code, after ``<|python_tag|>`` on Llama 3) as the format writes them.

Every piece is tokenized on its own, as the reference does, so each message's count is exact on
its own and a chat's count is their sum plus the priming. The reference splits a text into
400,000-character windows and cuts runs of more than 25,000 whitespace or non-whitespace
characters (``Tokenizer.encode``); :func:`_pieces` makes the same cuts.

Tool definitions have no place in ``ChatFormat``: the caller writes them into a message
(``llama3_1/prompt_format.md``: the tools as indented JSON in a user message).
:meth:`LlamaCounter.count_tools` counts that message, one ``json.dumps(tool, indent=4)`` per
tool separated by a blank line, without the instruction sentences a serving stack adds around
them (those are the stack's own text, a few dozen tokens).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import tiktoken

from ctxlab.model import Message, Role, ToolCall
from ctxlab.tokens import ChatAccounting, _CachingCounter

if TYPE_CHECKING:
    from ctxlab.tokenizer_families import TokenizerFamily
    from ctxlab.tokens import TokenCounter

__all__ = ["Llama3Counter", "Llama4Counter", "LlamaCounter", "make_counter"]

_WINDOW = 400_000
"""``TIKTOKEN_MAX_ENCODE_CHARS`` of llama-models' tokenizers."""
_MAX_RUN = 25_000
"""``MAX_NO_WHITESPACES_CHARS``: a longer run is cut every this many characters."""
_LONG_RUN = re.compile(rf"\s{{{_MAX_RUN + 1},}}|\S{{{_MAX_RUN + 1},}}")
_RUNS = re.compile(r"\s+|\S+")

_BUILTIN_QUERY_TOOLS = ("brave_search", "wolfram_alpha", "photogen")
_CODE_INTERPRETER = "code_interpreter"


def _pieces(text: str) -> Iterator[str]:
    """The substrings llama-models' ``Tokenizer.encode`` encodes one by one: 400,000-character
    windows, each cut inside a run of whitespace (``str.isspace``) or non-whitespace longer than
    25,000 characters at every 25,000th character of the run."""
    if len(text) <= _MAX_RUN:
        yield text
        return
    for lo in range(0, len(text), _WINDOW):
        window = text[lo : lo + _WINDOW]
        if _LONG_RUN.search(window) is None:
            yield window
            continue
        start = 0
        for run in _RUNS.finditer(window):
            cut = run.start() + _MAX_RUN
            while cut < run.end():
                yield window[start:cut]
                start = cut
                cut += _MAX_RUN
        yield window[start:]


@dataclass(frozen=True, slots=True)
class _Format:
    """What differs between the Llama 3 and Llama 4 chat formats."""

    package: str
    """The llama-models subpackage holding ``tokenizer.py`` and ``tokenizer.model``."""
    python_tag: bool
    """Llama 3 puts ``<|python_tag|>`` before a call whose first tool is code_interpreter."""


_LLAMA3 = _Format("llama3", python_tag=True)
_LLAMA4 = _Format("llama4", python_tag=False)


def _vocabulary_path(fmt: _Format) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(f"llama_models.{fmt.package}")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"llama_models.{fmt.package}")
    return Path(next(iter(spec.submodule_search_locations))) / "tokenizer.model"


def _namespace(family: str, path: Path) -> str:
    return f"{family}:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"


def _arguments(call: ToolCall) -> Any:
    """The call's arguments as llama-models' ``ToolCall.arguments`` holds them: the JSON object
    when the text is one, else the text itself."""
    try:
        value = json.loads(call.arguments)
    except ValueError:
        return call.arguments
    return value if isinstance(value, dict) else call.arguments


def _tool_call_text(call: ToolCall) -> str:
    """``ToolUtils.encode_tool_call`` in its default (JSON) format."""
    arguments = _arguments(call)
    if isinstance(arguments, dict):
        if call.name in _BUILTIN_QUERY_TOOLS and "query" in arguments:
            return f'{call.name}.call(query="{arguments["query"]}")'
        if call.name == _CODE_INTERPRETER and "code" in arguments:
            return str(arguments["code"])
    return json.dumps({"type": "function", "name": call.name, "parameters": arguments})


def _role(role: Role) -> str:
    if role.is_tool_result:
        return "ipython"
    if role.is_instruction:
        return "system"
    return role.value


class LlamaCounter(_CachingCounter):
    """Exact counts with a Llama tokenizer of ``llama-models`` and its chat format."""

    is_exact = True
    _format: ClassVar[_Format]

    def __init__(self, model: str, family: TokenizerFamily) -> None:
        import importlib

        module = importlib.import_module(f"llama_models.{self._format.package}.tokenizer")
        tokenizer = module.Tokenizer.get_instance()
        self.encoding: tiktoken.Encoding = tokenizer.model
        self.special_tokens: dict[str, int] = dict(tokenizer.special_tokens)
        header = self._count_plain("assistant") + self._count_plain("\n\n") + 2
        super().__init__(
            ChatAccounting(tokens_per_message=3, tokens_per_name=0, reply_priming=1 + header)
        )
        self.name = model
        self.label = f"{model} · {family.name} (llama-models)"

    def _count_plain(self, text: str) -> int:
        encode = self.encoding.encode_ordinary
        return sum(len(encode(piece)) for piece in _pieces(text))

    def encode(self, text: str) -> list[int]:
        """The ids llama-models gives ``text``: ``Tokenizer.encode(text, bos=False, eos=False)``."""
        encode = self.encoding.encode_ordinary
        return [token for piece in _pieces(text) for token in encode(piece)]

    def _count_uncached(self, texts: list[str]) -> list[int]:
        return [self._count_plain(t) for t in texts]

    def _fields(self, message: Message) -> list[str]:  # type: ignore[override]
        out = [_role(message.role), "\n\n", message.content]
        if message.role == Role.ASSISTANT:
            out.extend(_tool_call_text(call) for call in message.tool_calls)
        return out

    def _overhead(self, message: Message) -> int:
        # header start, header end, end of turn (or of message)
        extra = 3
        calls = message.tool_calls
        if (
            self._format.python_tag
            and message.role == Role.ASSISTANT
            and calls
            and calls[0].name == _CODE_INTERPRETER
        ):
            extra += 1
        return extra

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of the message holding ``tools``: a user header, each tool's
        ``json.dumps(tool, indent=4)`` separated by a blank line, the end of turn (see the
        module docstring)."""
        if not tools:
            return 0
        return (
            3
            + self.count_text("user")
            + self.count_text("\n\n")
            + self.count_text(tools_message_text(tools))
        )


def tools_message_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """The text of the message :meth:`LlamaCounter.count_tools` counts."""
    return "\n\n".join(json.dumps(dict(tool), indent=4) for tool in tools)


class Llama3Counter(LlamaCounter):
    """Llama 3.1 / 3.2 / 3.3: ``llama_models/llama3/tokenizer.model``."""

    _format = _LLAMA3


class Llama4Counter(LlamaCounter):
    """Llama 4 (Scout, Maverick): ``llama_models/llama4/tokenizer.model``."""

    _format = _LLAMA4


_COUNTERS: dict[str, type[LlamaCounter]] = {
    "llama3-tiktoken": Llama3Counter,
    "llama4-tiktoken": Llama4Counter,
}


def make_counter(model: str, family: TokenizerFamily) -> TokenCounter:
    cls = _COUNTERS[family.name]
    if "count_namespace" not in cls.__dict__:
        # The persistent per-text counts are keyed by the vocabulary actually installed.
        cls.count_namespace = _namespace(family.name, _vocabulary_path(cls._format))
    return cls(model, family)
