"""Mistral counters against mistral-common's own request encoding.

The reference of a chat is ``MistralTokenizer.encode_chat_completion(ChatCompletionRequest(...))``
of the same messages and tools. mistral-common's validator refuses many real chats (one ending
with an assistant reply, a system message after a tool result, a tool name with a dot); for
those the reference is the same library's normalizer and instruct tokenizer without the
validator (``encode_instruct(normalizer.from_chat_completion_request(...))``), which is what
ctxlab counts (the validator changes no token), and the test says that the chat was refused.

V11 and V13 ship no bundled vocabulary file: their reference tokenizer is mistral-common loading
the bundled Tekken vocabulary under a config of that version (what a model's ``tekken.json``
holds), so the version's encoding rules are mistral-common's own.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mistral_common")
pytest.importorskip("sentencepiece")

from mistral_common.exceptions import MistralCommonException
from mistral_common.protocol.instruct.messages import (
    AssistantMessage,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from mistral_common.protocol.instruct.request import ChatCompletionRequest
from mistral_common.protocol.instruct.tool_calls import (
    Function,
    FunctionCall,
    Tool,
    ToolCall,
)
from mistral_common.tokens.tokenizers.base import SpecialTokens
from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

from ctxlab.catalog import CATALOG
from ctxlab.formats import load_chat_file
from ctxlab.model import Message, Role
from ctxlab.model import ToolCall as CtxToolCall
from ctxlab.tokenizer_families import FAMILIES
from ctxlab.tokenizer_families.mistral import SPM_FILES, TEKKEN_FILE, data_file
from ctxlab.tokens import ApproxCounter, new_counter

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_CHATS = sorted(
    [
        *ROOT.glob("tests/fixtures/real_chats/*.json"),
        *ROOT.glob("ctxlab/sample_chats/*.json"),
        *ROOT.glob("ctxlab/sample_chats/real/*.json"),
        ROOT / "tests/fixtures/formats/chat_completion/tool_calls_request.json",
        ROOT / "tests/fixtures/formats/openai.json",
        ROOT / "tests/fixtures/formats/legacy_function_call.json",
        ROOT / "tests/fixtures/formats/anthropic.json",
        ROOT / "tests/fixtures/formats/gemini/tool_output_request.json",
        ROOT / "tests/fixtures/formats/responses/tool_output_request.json",
        ROOT / "tests/fixtures/formats/codex/turn_two.jsonl",
        ROOT / "tests/fixtures/formats/claude_code/thinking_session.jsonl",
        ROOT / "tests/fixtures/formats/llama_factory/glaive_toolcall_first3.json",
    ]
)
MISTRAL_FAMILIES = [name for name in FAMILIES if name.startswith("mistral-")]


@pytest.fixture(scope="session")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, MistralTokenizer]:
    """mistral-common's tokenizer for each family (see the module docstring)."""
    out = {
        "mistral-spm-v3": MistralTokenizer.from_file(str(data_file(SPM_FILES[3]))),
        "mistral-spm-v7": MistralTokenizer.from_file(str(data_file(SPM_FILES[7]))),
        "mistral-tekken-v3": MistralTokenizer.from_file(str(data_file(TEKKEN_FILE))),
    }
    tekken = json.loads(data_file(TEKKEN_FILE).read_text(encoding="utf-8"))
    specials = [
        {"rank": rank, "token_str": token.value, "is_control": True}
        for rank, token in enumerate(SpecialTokens)
    ]
    folder = tmp_path_factory.mktemp("tekken")
    for version in ("v7", "v11", "v13"):
        data = dict(tekken, config={**tekken["config"], "version": version})
        data.pop("image", None)
        if version != "v7":  # v7 files may rely on the default special tokens; later ones list them
            data["special_tokens"] = specials
        path = folder / f"tekken_{version}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        out[f"mistral-tekken-{version}"] = MistralTokenizer.from_file(str(path))
    return out


def _reference_messages(messages: tuple[Message, ...]) -> list[Any]:
    out: list[Any] = []
    for m in messages:
        if m.role.is_instruction:
            out.append(SystemMessage(content=m.content))
        elif m.role.is_tool_result:
            out.append(ToolMessage(content=m.content, tool_call_id=m.tool_call_id))
        elif m.role == Role.ASSISTANT:
            calls = [
                ToolCall(
                    id=c.id or "null", function=FunctionCall(name=c.name, arguments=c.arguments)
                )
                for c in m.tool_calls
            ]
            out.append(AssistantMessage(content=m.content or None, tool_calls=calls or None))
        else:
            out.append(UserMessage(content=m.content))
    return out


def _reference_tools(tools: list[dict[str, Any]]) -> list[Tool] | None:
    out = []
    for tool in tools:
        function = tool["function"]
        out.append(
            Tool(
                function=Function(
                    name=function["name"],
                    description=function.get("description") or "",
                    parameters=function.get("parameters") or {},
                )
            )
        )
    return out or None


def reference_count(
    tokenizer: MistralTokenizer, messages: tuple[Message, ...], tools: list[dict[str, Any]]
) -> tuple[int, bool]:
    """(token count, whether encode_chat_completion accepted the request)."""
    request: ChatCompletionRequest[Any] = ChatCompletionRequest(
        messages=_reference_messages(messages), tools=_reference_tools(tools)
    )
    try:
        return len(tokenizer.encode_chat_completion(request).tokens), True
    except MistralCommonException:
        pass
    normalizer = tokenizer._instruct_request_normalizer
    instruct = normalizer.from_chat_completion_request(request)
    return len(tokenizer.instruct_tokenizer.encode_instruct(instruct).tokens), False


def _encodable(messages: tuple[Message, ...], version: int) -> tuple[Message, ...]:
    """The chat mistral-common's normalizer and encoder take: V3 refuses an assistant message
    with both text and tool calls (ctxlab counts both, see test_v3_text_and_calls), every
    version refuses an assistant message with neither, and V13 refuses a call or result without
    an id (which it does not encode); a result without a call id is given an empty one."""
    out = []
    for m in messages:
        if m.role == Role.ASSISTANT and not m.content and not m.tool_calls:
            continue
        if version == 3 and m.role == Role.ASSISTANT and m.content and m.tool_calls:
            m = m.replace(content="")
        if version == 13 and any(c.id is None for c in m.tool_calls):
            # V13 asserts that a call has an id it never encodes (legacy function_call has none)
            calls = tuple(c if c.id else dataclasses.replace(c, id="call") for c in m.tool_calls)
            m = m.replace(tool_calls=calls)
        if m.role.is_tool_result and m.tool_call_id is None:
            # every version asserts a result's call id; ctxlab counts a missing one as empty
            m = m.replace(tool_call_id="call" if version == 13 else "")
        out.append(m)
    return tuple(out)


@pytest.mark.parametrize("family", MISTRAL_FAMILIES)
@pytest.mark.parametrize("path", FIXTURE_CHATS, ids=lambda p: p.name)
def test_fixture_chat_equals_reference(
    family: str, path: Path, references: dict[str, MistralTokenizer]
) -> None:
    loaded = load_chat_file(path)
    version = int(family.rsplit("-v", 1)[1])
    messages = _encodable(loaded.messages, version)
    tools = [t.to_openai() for t in loaded.tools]
    counter = new_counter(family)
    expected, _accepted = reference_count(references[family], messages, tools)
    assert counter.count_messages(messages) + counter.count_tools(tools) == expected


def test_fixture_chats_cut_after_a_user_turn_are_accepted(
    references: dict[str, MistralTokenizer],
) -> None:
    # Most fixture chats end with a reply, which the validator refuses; cut after their last
    # user or tool message, several go through encode_chat_completion itself, and match too.
    accepted = 0
    for path in FIXTURE_CHATS:
        loaded = load_chat_file(path)
        messages = _encodable(loaded.messages, 13)
        ends = [i for i, m in enumerate(messages) if m.role in (Role.USER, Role.TOOL)]
        if not ends:
            continue
        cut = messages[: ends[-1] + 1]
        tools = [t.to_openai() for t in loaded.tools]
        expected, ok = reference_count(references["mistral-tekken-v13"], cut, tools)
        counter = new_counter("mistral-tekken-v13")
        assert counter.count_messages(cut) + counter.count_tools(tools) == expected, path.name
        accepted += ok
    assert accepted >= 3


def test_refused_chat_is_counted_as_encoded(references: dict[str, MistralTokenizer]) -> None:
    # Ends with the assistant's reply: encode_chat_completion refuses it (serving requests end
    # with a user or tool message); ctxlab counts the same encoding without the check.
    chat = (
        Message(Role.USER, "What is 2+2?", "u"),
        Message(Role.ASSISTANT, "4", "a"),
    )
    tokenizer = references["mistral-tekken-v13"]
    request: ChatCompletionRequest[Any] = ChatCompletionRequest(messages=_reference_messages(chat))
    with pytest.raises(MistralCommonException):
        tokenizer.encode_chat_completion(request)
    expected, accepted = reference_count(tokenizer, chat, [])
    assert not accepted
    assert new_counter("mistral-tekken-v13").count_messages(chat) == expected


def test_v3_text_and_calls(references: dict[str, MistralTokenizer]) -> None:
    # V3's normalizer refuses an assistant message with text and tool calls; ctxlab counts the
    # text, then the calls, as V7 encodes them.
    call = CtxToolCall("call_1", "lookup", '{"q": "x"}')
    both = Message(Role.ASSISTANT, "Looking it up.", "a", tool_calls=(call,))
    chat = (
        Message(Role.USER, "find x", "u"),
        both,
        Message(Role.TOOL, "42", "t", tool_call_id="call_1"),
    )
    with pytest.raises(ValueError, match="Tool calls and content"):
        reference_count(references["mistral-spm-v3"], chat, [])
    counter = new_counter("mistral-spm-v3")
    calls_only, _ = reference_count(references["mistral-spm-v3"], _encodable(chat, 3), [])
    text = counter.count_text("Looking it up.")
    assert counter.count_messages(chat) == calls_only + text


def test_v3_system_prompt_moves_to_last_user(references: dict[str, MistralTokenizer]) -> None:
    chat = (
        Message(Role.SYSTEM, "Be brief. ", "s"),
        Message(Role.USER, " first", "u1"),
        Message(Role.USER, "\nsecond", "u2"),
        Message(Role.ASSISTANT, "ok  ", "a"),
        Message(Role.SYSTEM, "Really brief.", "s2"),
        Message(Role.USER, "  third", "u3"),
    )
    for family in ("mistral-spm-v3", "mistral-tekken-v3", "mistral-tekken-v7"):
        expected, _ = reference_count(references[family], chat, [])
        counter = new_counter(family)
        assert counter.count_messages(chat) == expected, family


def test_per_message_counts_add_up_when_nothing_is_joined(
    references: dict[str, MistralTokenizer],
) -> None:
    loaded = load_chat_file(ROOT / "tests/fixtures/formats/chat_completion/tool_calls_request.json")
    counter = new_counter("mistral-tekken-v13")
    messages = loaded.messages
    assert counter.count_messages(messages) == sum(counter.counts(messages)) + 1


SAMPLE_TEXTS = [
    "def f(x):\n        return [i ** 2 for i in range(x)]\n\n\tif x:\n\t\tpass\n",
    "東京都の天気は晴れです。한국어 텍스트와 中文混合 text.",
    "3.14159265358979 1234567890 0x1F -42 1e-9 2026-12-02T11:30:00Z",
    "   leading spaces and trailing   ",
    "emoji 👩‍💻🚀 and symbols ∑∫√ «quotes»",
    "[INST] not a control token [/INST] <s> </s>",
]


@pytest.mark.parametrize("family", ["mistral-tekken-v13", "mistral-spm-v3", "mistral-spm-v7"])
@pytest.mark.parametrize("text", SAMPLE_TEXTS)
def test_ids_equal_reference(
    family: str, text: str, references: dict[str, MistralTokenizer]
) -> None:
    counter = new_counter(family)
    reference = references[family].instruct_tokenizer.tokenizer
    assert counter.encode(text) == reference.encode(text, bos=False, eos=False)  # type: ignore[attr-defined]
    assert counter.count_text(text) == len(reference.encode(text, bos=False, eos=False))


@functools.cache
def _bundled_tekken() -> Any:
    return MistralTokenizer.from_file(str(data_file(TEKKEN_FILE))).instruct_tokenizer.tokenizer


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_hypothesis_texts_equal_reference(text: str) -> None:
    counter = new_counter("mistral-tekken-v13")
    assert counter.encode(text) == _bundled_tekken().encode(text, bos=False, eos=False)


def test_catalog_mistral_models_name_a_mistral_family() -> None:
    models = [m for m in CATALOG if m.provider == "mistral"]
    assert models
    for m in models:
        assert m.tokenizer in MISTRAL_FAMILIES, m.name
        assert new_counter(m.name).is_exact


def test_without_the_extra_the_model_is_approximate(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxlab.tokenizer_families import TokenizerFamily

    monkeypatch.setattr(TokenizerFamily, "available", lambda self: False)
    model = next(m for m in CATALOG if m.provider == "mistral")
    counter = new_counter(model.name)
    assert isinstance(counter, ApproxCounter)
    assert "pip install 'ctxlab[mistral]'" in counter.label
    assert model.exact_hint == "pip install 'ctxlab[mistral]'"


def test_joined_messages_add_up_to_the_request_and_the_run_s_first_carries_the_join(
    references: dict[str, MistralTokenizer],
) -> None:
    # Two user messages in a row are joined by the normalizer into one [INST] block: the
    # per-message counts (what every view shows and adds up) sum to the reference's request;
    # the second message costs what it costs alone, the first carries the join's saving.
    chat = (
        Message(Role.USER, "first part", "u1"),
        Message(Role.USER, "second part", "u2"),
        Message(Role.ASSISTANT, "an answer", "a1"),
    )
    counter = new_counter("mistral-tekken-v13")
    expected, accepted = reference_count(references["mistral-tekken-v13"], chat[:2], [])
    assert accepted
    assert counter.count_messages(chat[:2]) == expected
    counted = counter.counted(chat[:2])
    assert counted.total == expected
    alone = [reference_count(references["mistral-tekken-v13"], (m,), [])[0] - 1 for m in chat[:2]]
    assert sum(alone) + 1 != expected  # the join saves one [INST][/INST] pair
    assert counter.counts(chat[:2]) == [expected - 1 - alone[1], alone[1]]
    # A message the normalizer leaves alone keeps its own count.
    assert counter.counts(chat)[2] == counter.counts(chat[2:])[0]


@pytest.mark.parametrize("family", MISTRAL_FAMILIES)
def test_count_namespace_names_family_and_vocabulary(family: str) -> None:
    namespace = new_counter(family).count_namespace  # type: ignore[attr-defined]
    name, digest = namespace.rsplit(":", 1)
    assert name == family
    assert len(digest) == 16 and int(digest, 16) >= 0


def test_latest_aliases_resolve_to_catalog_entries() -> None:
    assert CATALOG.get("mistral-large-latest").name == "mistral-large-2512"  # type: ignore[union-attr]
    assert CATALOG.get("mistral/codestral-latest").name == "codestral-2508"  # type: ignore[union-attr]
