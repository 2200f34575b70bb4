"""export_policy: the ctxlab export reproduces the engine's decisions when run as a script;
every other target is valid Python that names the library's real API and states its caveats."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab import load_chat
from ctxlab.errors import CtxlabError, UnknownNameError
from ctxlab.export import TARGETS, export_details, export_policy, targets_for
from ctxlab.strategies import build_strategy, strategy_names
from ctxlab.tokens import TokenCounter

REAL_CHATS = Path(__file__).resolve().parent / "fixtures" / "real_chats"
CHAT = REAL_CHATS / "tau_bench_airline_gpt4o_task2_trial1_fail.json"
PROJECTIONS = {
    "window-drop": {"budget": 3000},
    "sliding-window": {"window": 10, "trigger_at": 15},
    "trim-last": {"max_tokens": 2500},
    "clear-tool-results": {"trigger_tokens": 1000, "keep_tool_results": 2},
}


@pytest.fixture(scope="module")
def chat_path() -> Path:
    return CHAT


@pytest.mark.parametrize("name", sorted(PROJECTIONS))
def test_exported_ctxlab_script_prints_the_same_decisions_as_the_engine(
    name: str, chat_path: Path, tmp_path: Path, counter: TokenCounter
) -> None:
    strategy = build_strategy(name, PROJECTIONS[name])
    script = tmp_path / "policy.py"
    script.write_text(export_policy(strategy, "ctxlab", model="gpt-4o"))
    run = subprocess.run(
        [sys.executable, str(script), str(chat_path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    printed = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    expected = strategy.apply(load_chat(chat_path), counter).decisions
    assert printed == {k: v.value for k, v in expected.items()}


def test_exported_summarize_policy_runs_offline_with_the_same_decisions(
    chat_path: Path, tmp_path: Path, counter: TokenCounter
) -> None:
    from ctxlab.summarizers import OfflineSummarizer

    strategy = build_strategy(
        "summarize", {"trigger_token_budget": "2000", "keep_recent_messages": "6"}
    )
    script = tmp_path / "policy.py"
    script.write_text(export_policy(strategy, "ctxlab"))
    run = subprocess.run(
        [sys.executable, str(script), str(chat_path)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    printed = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    expected = strategy.apply(load_chat(chat_path), counter, OfflineSummarizer()).decisions
    assert printed == {k: v.value for k, v in expected.items()}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", strategy_names())
def test_every_strategy_exports_for_each_of_its_targets(name: str, target: str) -> None:
    from ctxlab.strategies import get_strategy_class

    strategy = get_strategy_class(name)()
    if target not in targets_for(strategy):
        assert target == "native" and strategy.framework_policy is None
        with pytest.raises(CtxlabError, match="native export is for framework policies"):
            export_policy(strategy, target)
        return
    details = export_details(strategy, target)
    if target == "native":  # the framework's own configuration: Python, TOML, JSON, ...
        assert details.exact and not details.notes
        assert details.code.strip() == strategy.config_code().strip()  # type: ignore[attr-defined]
        return
    ast.parse(export_policy(strategy, target))
    assert details.exact == (target == "ctxlab")
    if target != "ctxlab":
        assert details.notes, "a translation to another library must state what differs"


@pytest.mark.parametrize(
    ("name", "target", "api"),
    [
        ("window-drop", "langchain", "trim_messages("),
        ("trim-last", "langchain", 'strategy="last"'),
        ("summarize", "langchain", "SummarizationMiddleware("),
        ("sliding-window", "semantic-kernel", "ChatHistoryTruncationReducer("),
        ("summarize", "semantic-kernel", "ChatHistorySummarizationReducer("),
        ("sliding-window", "autogen", "BufferedChatCompletionContext(buffer_size="),
        ("window-drop", "autogen", "TokenLimitedChatCompletionContext("),
        ("window-drop", "openai-agents", "class PolicySession(SQLiteSession)"),
    ],
)
def test_exports_use_each_librarys_real_api(name: str, target: str, api: str) -> None:
    from ctxlab.strategies import get_strategy_class

    assert api in export_policy(get_strategy_class(name)(), target)


def test_message_level_exports_warn_about_tool_pairs() -> None:
    source = export_policy(build_strategy("window-drop", {"budget": 500}), "autogen")
    assert "tool result" in source and "NOTE" in source


def test_parameters_reach_the_export() -> None:
    source = export_policy(build_strategy("window-drop", {"budget": 1234}), "langchain")
    assert "max_tokens=1234" in source


def test_unknown_target_is_named_in_the_error() -> None:
    with pytest.raises(UnknownNameError, match="llamaindex"):
        export_policy(build_strategy("window-drop", {}), "llamaindex")
