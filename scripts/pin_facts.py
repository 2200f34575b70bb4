"""Write tests/fixtures/facts/expected_facts.json: the facts today's extract_facts picks.

Run from the repository root (``python scripts/pin_facts.py``). The file pins, for every sample
chat (the committed ones and the generated ``large_agent_10k``) and every chat in
tests/fixtures/real_chats: the default selection (``limit=300``) verbatim, and the count and a
sha256 of the full, unlimited list, for the default roles and for every role. Re-run it only when
the facts are meant to change.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ctxlab.formats import load_chat
from ctxlab.insights import Fact, extract_facts
from ctxlab.model import Role
from ctxlab.samples import list_samples, sample_path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "facts" / "expected_facts.json"
UNLIMITED = 10**9


def digest(facts: tuple[Fact, ...]) -> str:
    """sha256 of the facts as JSON lines of [text, kind, message_id]."""
    h = hashlib.sha256()
    for fact in facts:
        h.update(json.dumps([fact.text, fact.kind, fact.message_id]).encode("utf-8") + b"\n")
    return h.hexdigest()


def pin(path: Path) -> dict[str, object]:
    messages = load_chat(path)
    everything = extract_facts(messages, limit=UNLIMITED)
    every_role = extract_facts(messages, roles=tuple(Role), limit=UNLIMITED)
    return {
        "default": [[f.text, f.kind, f.message_id] for f in extract_facts(messages)],
        "all_count": len(everything),
        "all_sha256": digest(everything),
        "every_role_count": len(every_role),
        "every_role_sha256": digest(every_role),
    }


def main() -> None:
    chats: dict[str, dict[str, object]] = {}
    for sample in list_samples():
        path = sample_path(sample.name)
        chats[f"sample:{sample.name}"] = pin(path)
    for path in sorted((ROOT / "tests" / "fixtures" / "real_chats").glob("*.json")):
        chats[f"fixture:{path.name}"] = pin(path)
    OUT.write_text(json.dumps(chats, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(chats)} chats)")


if __name__ == "__main__":
    main()
