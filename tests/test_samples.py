"""The shipped sample chats load, validate and show what each one promises."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxlab import Message, Role, load_chat
from ctxlab.errors import UnknownNameError
from ctxlab.samples import (
    DEFAULT_SAMPLE,
    Sample,
    ensure_generated,
    ensure_large_chat,
    generate_large_chat,
    list_samples,
    sample_path,
)
from ctxlab.strategies.summarize import SummarizeOptions, build_summary_request
from ctxlab.tokens import get_counter
from ctxlab.validate import validate

COMMITTED = [s for s in list_samples() if not s.generated]
PROMISED = {
    "coding_agent_session",
    "support_function_calls",
    "long_plain_chat",
    "secrets_in_tool_outputs",
    "compaction_chain",
    "hostile_content",
}


def load(name: str) -> list[Message]:
    return load_chat(sample_path(name))


def tool_call_names(messages: list[Message]) -> set[str]:
    return {call.name for m in messages for call in m.tool_calls}


def test_every_promised_sample_is_listed_and_the_default_comes_first() -> None:
    names = [s.name for s in list_samples()]
    assert set(names) >= PROMISED
    assert names[0] == DEFAULT_SAMPLE
    assert "large_agent_10k" in names
    assert len(names) == len(set(names)), "sample names must be unique (they go in the URL)"


def test_real_public_chats_are_included_with_source_and_licence() -> None:
    real = [s for s in COMMITTED if s.path.parent.name == "real"]
    assert len(real) >= 3
    for sample in real:
        assert sample.source and sample.license, sample.name


@pytest.mark.parametrize("sample", COMMITTED, ids=lambda s: s.name)
def test_sample_loads_validates_and_has_unique_ids(sample: Sample) -> None:
    messages = load_chat(sample.path)
    assert len(messages) == sample.messages_hint
    assert len({m.id for m in messages}) == len(messages)
    assert list(validate(messages)) == []


@pytest.mark.parametrize(
    "sample", [s for s in COMMITTED if s.name in PROMISED], ids=lambda s: s.name
)
def test_written_sample_has_metadata_and_stable_ids_in_the_file(sample: Sample) -> None:
    data = json.loads(sample.path.read_text(encoding="utf-8"))
    assert {"title", "description", "source", "license", "messages"} <= set(data)
    assert all("id" in m for m in data["messages"])


def test_coding_session_is_long_with_many_tool_calls_and_large_outputs() -> None:
    messages = load("coding_agent_session")
    assert 150 <= len(messages) <= 300
    assert {"read_file", "run_tests", "grep", "edit_file"} <= tool_call_names(messages)
    tool_outputs = [m.content for m in messages if m.role is Role.TOOL]
    assert len(tool_outputs) >= 60
    assert max(len(t) for t in tool_outputs) >= 5000
    assert any("Traceback (most recent call last)" in t for t in tool_outputs)
    assert any(re.search(r"\d+ failed, \d+ passed", t) for t in tool_outputs)


def test_support_chat_has_function_calls_with_json_results() -> None:
    messages = load("support_function_calls")
    assert 40 <= len(messages) <= 80
    assert {"lookup_order", "check_refund_eligibility", "issue_refund"} <= tool_call_names(messages)
    for m in messages:
        if m.role is Role.TOOL:
            json.loads(m.content)


def test_long_plain_chat_has_no_tools_and_early_facts_asked_again_later() -> None:
    messages = load("long_plain_chat")
    assert len(messages) >= 120
    assert {m.role for m in messages} == {Role.USER, Role.ASSISTANT}
    assert "LH715" in messages[2].content
    assert any("LH715" in m.content for m in messages[-12:])


SECRET_PATTERNS = {
    "openai": r"sk-proj-[A-Za-z0-9_-]{40,}",
    "anthropic": r"sk-ant-api03-[A-Za-z0-9_-]{40,}",
    "aws_id": r"AKIA[0-9A-Z]{16}",
    "aws_secret": r"AWS_SECRET_ACCESS_KEY=[A-Za-z0-9/+]{40}",
    "github": r"ghp_[A-Za-z0-9]{36}",
    "jwt": r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
    "pem": r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    "dsn_password": r"password=\S+",
}


@pytest.mark.parametrize("kind", sorted(SECRET_PATTERNS))
def test_secrets_chat_holds_each_kind_of_fake_credential(kind: str) -> None:
    messages = load("secrets_in_tool_outputs")
    text = "\n".join(m.content for m in messages if m.role is Role.TOOL)
    assert re.search(SECRET_PATTERNS[kind], text)


def test_secrets_chat_has_secrets_in_call_arguments_and_one_pasted_by_the_user() -> None:
    messages = load("secrets_in_tool_outputs")
    arguments = " ".join(c.arguments for m in messages for c in m.tool_calls)
    assert re.search(SECRET_PATTERNS["jwt"], arguments)
    assert re.search(SECRET_PATTERNS["dsn_password"], arguments)
    pasted = [m for m in messages if m.role is Role.USER and re.search("sk-proj-", m.content)]
    assert len(pasted) == 1


# Every credential value in the secrets sample (the group is the part that must not be sent).
SAMPLE_SECRET_VALUES = [
    *SECRET_PATTERNS.values(),
    r"sk_live_[A-Za-z0-9]+",
    r"STRIPE_SECRET_KEY=(\S+)",
    r"password=([^\s\\\"]+)",
    r'"password": "([^"]+)"',
    r'db_password: "([^"]+)"',
    r"[A-Za-z0-9+/]{64}",  # every line of the PEM body
]


@pytest.mark.parametrize("redact_tool_content", [False, True])
def test_secrets_chat_sends_none_of_its_credentials_to_the_summarizer(
    redact_tool_content: bool,
) -> None:
    # The issue-22 probe: `ctxlab trim secrets_in_tool_outputs --strategy summarize --param
    # trigger_token_budget=100 --param redact_tool_content=false --show-request`. Pattern
    # redaction is on by default, so turning tool redaction off still masks every credential.
    messages = load("secrets_in_tool_outputs")
    raw = sample_path("secrets_in_tool_outputs").read_text(encoding="utf-8")
    texts = [m.content for m in messages] + [c.arguments for m in messages for c in m.tool_calls]
    values = {
        match.group(match.lastindex or 0)
        for pattern in SAMPLE_SECRET_VALUES
        for text in texts
        for match in re.finditer(pattern, text)
    }
    values = {v for v in values if "REDACTED" not in v and len(v) >= 8}
    assert len(values) >= 12 and all(json.dumps(v)[1:-1] in raw for v in values)
    options = SummarizeOptions(trigger_token_budget=100, redact_tool_content=redact_tool_content)
    built = build_summary_request(messages, options, get_counter("gpt-4o"))
    assert built is not None
    request, plan = built
    assert len(plan.folded) >= 20
    sent = json.dumps(request.body("m"), ensure_ascii=False)
    leaked = sorted(v for v in values if v in sent or json.dumps(v)[1:-1] in sent)
    assert leaked == []


def test_secrets_chat_credentials_are_marked_fake() -> None:
    text = sample_path("secrets_in_tool_outputs").read_text(encoding="utf-8")
    for match in re.finditer(r"sk-proj-\S+|sk-ant-\S+|ghp_\S+|sk_live_\S+|AKIA\w+", text):
        assert "FAKE" in match.group() or "EXAMPLE" in match.group(), match.group()


def test_compaction_chain_links_two_pairs_and_a_tail() -> None:
    messages = load("compaction_chain")
    ids = [m.id for m in messages]
    compactions = [i for i, m in enumerate(messages) if m.is_compaction]
    assert len(compactions) == 2
    first, second = (messages[i] for i in compactions)
    for i in compactions:
        assert messages[i].role is Role.USER
        assert messages[i + 1].is_summary and messages[i + 1].role is Role.ASSISTANT
        meta = messages[i].compaction_meta
        assert meta is not None and meta.summary_text == messages[i + 1].content
        assert meta.tail_start_id == ids[i + 2]
    assert (
        first.compaction_meta is not None and first.compaction_meta.previous_compaction_id is None
    )
    assert second.compaction_meta is not None
    assert second.compaction_meta.previous_compaction_id == first.id
    tail = len(messages) - (compactions[1] + 2)
    assert 30 <= tail <= 60


def test_hostile_chat_holds_markup_trackers_and_invisible_characters() -> None:
    text = "\n".join(m.content for m in load("hostile_content"))
    assert "<script>alert(1)</script>" in text
    assert "onerror=" in text
    assert "![x](http://example.invalid/pixel.png)" in text
    assert "\u200b" in text and "\u202e" in text


def test_large_chat_generator_is_deterministic_and_every_call_is_answered() -> None:
    chat = generate_large_chat(2_000, seed=7)
    assert chat == generate_large_chat(2_000, seed=7)
    assert len(chat) >= 2_000
    assert len({m["id"] for m in chat}) == len(chat)
    pending: list[str] = []
    for m in chat:
        if m["role"] == "tool":
            assert pending and m["tool_call_id"] == pending.pop(0)
        else:
            assert not pending, "a tool call was left unanswered"
            pending = [c["id"] for c in m.get("tool_calls", [])]
    assert not pending


def test_large_sample_is_generated_on_demand_with_10k_messages(tmp_path: Path) -> None:
    path = ensure_generated("large_agent_10k")
    messages = load_chat(path)
    assert len(messages) >= 10_000
    assert list(validate(messages)) == []
    assert ensure_generated("large_agent_10k") == path
    other = ensure_large_chat(tmp_path / "nested" / "big.json", 10_000)
    assert other.read_bytes() == path.read_bytes()


def test_a_stale_generated_file_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"messages": []}', encoding="utf-8")
    ensure_large_chat(path, 500)
    assert len(load_chat(path)) >= 500


def test_unknown_sample_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="coding_agent_session"):
        sample_path("no-such-chat")


def test_every_sample_has_a_title_a_person_would_give_it() -> None:
    """Issue 23: "tau bench airline gpt4o task2 trial2 pass" is a file name, not a title."""
    from ctxlab.samples import list_samples

    for sample in list_samples():
        stem_words = sample.name.replace("_", " ")
        assert sample.title != stem_words, sample.name
        assert sample.title[0].isupper(), sample.title
        assert ":" in sample.title or "(" in sample.title, sample.title


def test_only_regular_files_inside_the_samples_folder_are_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO would block every page's listing; a symlink must not lead out of the folder."""
    import os

    folder = tmp_path / "samples"
    folder.mkdir()
    chat = '{"title": "Kept", "messages": [{"role": "user", "content": "hi"}]}'
    (folder / "kept.json").write_text(chat, encoding="utf-8")
    outside = tmp_path / "outside.json"
    outside.write_text(chat, encoding="utf-8")
    (folder / "leak.json").symlink_to(outside)
    os.mkfifo(folder / "fifo.json")
    (folder / "dir.json").mkdir()
    monkeypatch.setenv("CTXLAB_SAMPLES_DIR", str(folder))
    names = {s.name for s in list_samples() if not s.generated}
    assert names == {"kept"}
