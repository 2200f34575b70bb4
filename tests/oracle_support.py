"""Running a framework's own code as the oracle of its ctxlab reproduction.

The frameworks live in an environment of their own (``scripts/oracle_env.py``: the pinned
``frameworks`` extra, built once and reused while the pins are unchanged). An oracle script,
``tests/oracles/<framework>.py``, runs there as a subprocess: it reads a JSON payload on
standard input, ``{"cases": [{"chat": [...], "params": {...}, ...}, ...]}``, runs the
framework's own policy on every case and prints ``{"results": [...]}``, one result per case in
order. The test compares each result with what the ctxlab strategy did on the same chat.

A chat crosses as :func:`neutral` messages: plain dicts in the shape of OpenAI Chat Completions
(id, role, content, name, tool_calls with id/name/arguments, tool_call_id), which each oracle
script maps onto its framework's message types. :func:`oracle_chats` gives the chats every
oracle test runs on: the six sample chats and real agent chats from public repositories
(Claude Code, Codex, SWE-agent, tau-bench, ToolBench with the old ``function_call`` format).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load_chat
from ctxlab.model import Message

ROOT = Path(__file__).resolve().parent.parent
ORACLES = Path(__file__).resolve().parent / "oracles"
SAMPLES = ROOT / "ctxlab" / "sample_chats"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

SAMPLE_CHATS = (
    "coding_agent_session",
    "compaction_chain",
    "hostile_content",
    "long_plain_chat",
    "secrets_in_tool_outputs",
    "support_function_calls",
)
"""The sample chats shipped with ctxlab (``ctxlab/sample_chats/<name>.json``)."""

REAL_CHATS: dict[str, Path] = {
    "claude-code-websearch": SAMPLES / "real" / "claude_code_session_websearch.json",
    "claude-code-subagent": SAMPLES / "real" / "claude_code_explore_subagent.json",
    "codex-rollout": FIXTURES
    / "formats"
    / "codex"
    / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl",
    "swe-agent-function-calling": FIXTURES
    / "real_chats"
    / "swe_agent_marshmallow_1867_function_calling.json",
    "tau-bench-fail": FIXTURES / "real_chats" / "tau_bench_airline_gpt4o_task2_trial1_fail.json",
    "toolbench-function-call": FIXTURES
    / "real_chats"
    / "toolbench_g3_query3_chatgpt_function_call.json",
    "aider-census": FIXTURES / "real_chats" / "aider_example_census_gpt4.json",
}
"""Real chats from public repositories (provenance beside each file): agent sessions of Claude
Code and Codex, tool-calling datasets (SWE-agent, tau-bench with reused tool-call ids,
ToolBench's legacy ``function_call``), and a plain coding chat (Aider)."""


@functools.cache
def oracle_chats() -> dict[str, tuple[Message, ...]]:
    """Every chat the oracle tests run on, by a short name: samples first, then real chats."""
    chats: dict[str, tuple[Message, ...]] = {}
    for name in SAMPLE_CHATS:
        chats[name] = tuple(load_chat(SAMPLES / f"{name}.json"))
    for name, path in REAL_CHATS.items():
        chats[name] = tuple(load_chat(path))
    return chats


def neutral(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """``messages`` as plain Chat Completions-shaped dicts for an oracle script.

    Every message keeps its ctxlab ``id`` so results can name messages; ``tool_calls`` carry
    ``id`` (maybe None), ``name`` and ``arguments`` (a JSON text as the API sends it).
    """
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"id": m.id, "role": m.role.value, "content": m.content}
        if m.name is not None:
            item["name"] = m.name
        if m.tool_calls:
            item["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


@functools.cache
def oracle_python() -> Path:
    """The oracle environment's interpreter, built on first use (about a minute and 780 MB,
    once per set of pins; ``scripts/test.sh`` builds it before pytest starts)."""
    explicit = os.environ.get("CTXLAB_ORACLE_PYTHON")
    if explicit:
        return Path(explicit)
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import oracle_env  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    try:
        python: Path = oracle_env.ensure()
    except Exception as exc:  # pip failed: say so, the test cannot run without its oracle
        pytest.fail(f"could not build the framework oracle environment: {exc}")
    return python


def run_oracle(
    script: str, cases: Sequence[Mapping[str, Any]], *, timeout: float = 600
) -> list[Any]:
    """Run ``tests/oracles/<script>.py`` on ``cases`` in the oracle environment; its results,
    one per case. A failing script fails the test with its standard error."""
    payload = json.dumps({"cases": list(cases)})
    env = {
        **os.environ,
        "PYTHONWARNINGS": "ignore",
        "PYTHONHASHSEED": "0",
        # no framework may reach the network or report telemetry from a test
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
        "OPENAI_API_KEY": "sk-oracle-offline",
        "GOOGLE_API_KEY": "oracle-offline",
        "ANONYMIZED_TELEMETRY": "False",
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(oracle_python()), str(ORACLES / f"{script}.py")],
        input=payload,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ORACLES,
    )
    if done.returncode != 0:
        pytest.fail(f"oracle {script} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    try:
        results: list[Any] = json.loads(done.stdout)["results"]
    except (ValueError, KeyError) as exc:
        pytest.fail(f"oracle {script} printed no results ({exc}):\n{done.stdout[-2000:]}")
    if len(results) != len(cases):
        pytest.fail(f"oracle {script} answered {len(results)} of {len(cases)} cases")
    return results
