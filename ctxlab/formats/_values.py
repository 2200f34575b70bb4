"""What a loaded file says besides its messages: tool definitions, billed usage, warnings.

These are pure values: no I/O, no counting. :class:`LoadedChat` is what
:func:`ctxlab.formats.load_chat_file` returns; :func:`ctxlab.formats.load_chat` returns its
``messages`` alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import orjson

from ctxlab.model import Message

__all__ = ["CallUsage", "LoadedChat", "ToolDefinition"]


@dataclasses.dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One tool the model was offered, whatever the provider's spelling.

    OpenAI ``tools[].function``, Anthropic ``tools[]`` (``input_schema``), Gemini
    ``functionDeclarations[]`` and ShareGPT ``tools`` all become this; :meth:`to_openai` gives
    the OpenAI shape that :meth:`ctxlab.tokens.TokenCounter.count_tools` counts.

    Attributes:
        name: the function name.
        description: its description ("" when the file has none).
        parameters: the JSON schema of its arguments as compact JSON text ("{}" when none).
        kind: the provider's tool type (``function``, ``custom``, or a server tool's type such as
            ``web_search_20250305``).
    """

    name: str
    description: str = ""
    parameters: str = "{}"
    kind: str = "function"

    def schema(self) -> dict[str, Any]:
        """The parameters schema as a JSON object (``{}`` when it is not one)."""
        value = orjson.loads(self.parameters)
        return value if isinstance(value, dict) else {}

    def to_openai(self) -> dict[str, Any]:
        """``{"type": "function", "function": {name, description, parameters}}``."""
        function: dict[str, Any] = {"name": self.name}
        if self.description:
            function["description"] = self.description
        function["parameters"] = self.schema()
        return {"type": "function", "function": function}


@dataclasses.dataclass(frozen=True, slots=True)
class CallUsage:
    """What the provider billed for one call, as the transcript recorded it.

    ``message_id`` is the id of the (last) assistant message the call produced, so the numbers
    sit beside ctxlab's count of the same call. ``input_tokens`` is the uncached input only when
    the provider splits the cache out (Anthropic: the prompt is ``input_tokens +
    cache_read_input_tokens + cache_creation_input_tokens``); OpenAI's and Codex's
    ``input_tokens`` include ``cache_read_input_tokens`` (their ``cached_tokens``) and
    ``cache_creation_input_tokens`` (their ``cache_write_tokens``), which :attr:`prompt_tokens`
    accounts for.

    Attributes:
        provider: ``anthropic`` or ``openai`` (how to add the numbers up).
        cache_creation_1h_input_tokens: the part of ``cache_creation_input_tokens`` written
            with a 1-hour lifetime (Anthropic's ``cache_creation.ephemeral_1h_input_tokens``),
            which costs 2x input instead of 1.25x; 0 when the usage does not split writes.
    """

    message_id: str
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    provider: str = "anthropic"
    cache_creation_1h_input_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Every input token of the call, cached or not."""
        if self.provider == "anthropic":
            return (
                self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens
            )
        return self.input_tokens


@dataclasses.dataclass(frozen=True, slots=True, weakref_slot=True)
class LoadedChat:
    """A chat with what its file says about the requests.

    Attributes:
        messages: the conversation, as :func:`~ctxlab.formats.load_chat` returns it.
        tools: the tool definitions sent with every call (``()`` when the file has none).
        usage: the provider's billed numbers per call, in call order (``()`` when not recorded).
        warnings: what was read leniently (a cut-off last line, unknown block types), one
            sentence each, naming the line or path.
        format: the name of the format that read the file.
    """

    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...] = ()
    usage: tuple[CallUsage, ...] = ()
    warnings: tuple[str, ...] = ()
    format: str = ""

    def usage_by_message(self) -> Mapping[str, CallUsage]:
        """:attr:`usage` keyed by assistant message id."""
        return {u.message_id: u for u in self.usage}

    def openai_tools(self) -> list[dict[str, Any]]:
        """:attr:`tools` in OpenAI's request shape (what ``count_tools`` reads)."""
        return [t.to_openai() for t in self.tools]
