"""Every chat file of the test fixtures and the samples loads completely, or is refused with a
message that names what it is (issue 25: "every real file ... loads completely or is refused
with a message naming its shape").

The folders of non-chat data (expected facts, the cookbook's token counts) are left out by name;
everything else under ``tests/fixtures`` and ``ctxlab/sample_chats`` is a file someone may hand
to ctxlab.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.errors import CtxlabError
from ctxlab.formats import load_chat_file

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLES = ROOT / "ctxlab" / "sample_chats"
NOT_CHATS = {
    FIXTURES / "facts": "the facts tests expect of the samples",
    FIXTURES / "ground_truth": "the OpenAI cookbook's token counts",
    FIXTURES / "token_counts": "the OpenAI cookbook's token counts",
    FIXTURES / "chat_templates": "reference chat templates of the open-model tokenizer tests",
}


def _chat_files() -> list[Path]:
    found: list[Path] = []
    for base in (FIXTURES, SAMPLES):
        for suffix in ("*.json", "*.jsonl"):
            found.extend(
                p
                for p in base.rglob(suffix)
                if not any(folder in p.parents for folder in NOT_CHATS)
                and "generated" not in p.parts
                # The fleet sample's deliberately broken files (cut short, bad UTF-8, not a
                # chat) are there to show how Fleet reports the files it cannot read.
                and not p.name.startswith("broken_")
            )
    return sorted(found)


FILES = _chat_files()


def test_the_sweep_sees_the_real_files() -> None:
    names = {p.name for p in FILES}
    assert len(FILES) > 60
    assert "guideai_codex_0.45.0.jsonl" in names
    assert "vibecodingtracker_session.json" in names


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_fixture_loads_or_is_refused_by_name(path: Path) -> None:
    try:
        chat = load_chat_file(path)
    except CtxlabError as exc:
        message = str(exc)
        assert message.startswith(f"{path.name}: "), message
        # A refusal names the shape ("this is ...") and the place, never only the keys found.
        assert ": this is " in message, message
        assert "found keys" not in message, message
        return
    assert chat.messages, f"{path}: loaded no message"
