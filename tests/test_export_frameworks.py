"""Export of framework policies: ``native`` is the framework's own configuration (exact), refused
for ctxlab's strategies with a message naming the other targets; the ctxlab export of a
framework policy rebuilds it by name and makes the same decisions; the other targets point to
``native`` instead of guessing a translation."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from framework_policy import NAME, OTHER_NAME, registered

from ctxlab import load_chat
from ctxlab.errors import CtxlabError
from ctxlab.export import NATIVE, TARGETS, export_details, export_policy, targets_for
from ctxlab.strategies import build_strategy
from ctxlab.tokens import TokenCounter

CHAT = Path(__file__).resolve().parent / "fixtures" / "real_chats"


@pytest.fixture(autouse=True)
def test_policies() -> Iterator[None]:
    with registered():
        yield


def test_native_export_is_the_policys_configuration_code_for_these_settings() -> None:
    strategy = build_strategy(NAME, {"trigger": "tokens=2000", "keep": "3"})
    details = export_details(strategy, NATIVE)
    assert details.exact and details.notes == ()
    assert details.code == strategy.config_code()  # type: ignore[attr-defined]
    assert 'trigger=("tokens", 2000), keep=3' in details.code


def test_native_export_of_a_ctxlab_strategy_says_which_targets_to_use() -> None:
    with pytest.raises(CtxlabError) as caught:
        export_details(build_strategy("summarize", {}), NATIVE)
    text = str(caught.value)
    assert text.startswith("native export is for framework policies;")
    assert "--target ctxlab/langchain/semantic-kernel/autogen/openai-agents" in text


def test_targets_offer_native_first_for_framework_policies_only() -> None:
    assert targets_for(build_strategy(NAME, {}))[0] == NATIVE
    assert set(targets_for(build_strategy(NAME, {}))) == set(TARGETS)
    assert NATIVE not in targets_for(build_strategy("window-drop", {}))


@pytest.mark.parametrize("target", ["langchain", "semantic-kernel", "autogen", "openai-agents"])
def test_library_targets_point_a_framework_policy_to_native(target: str) -> None:
    details = export_details(build_strategy(OTHER_NAME, {}), target)
    assert not details.exact
    assert "--target native" in details.notes[0] and "OtherFramework" in details.notes[0]


def test_ctxlab_export_of_a_framework_policy_runs_with_the_engines_decisions(
    tmp_path: Path, counter: TokenCounter
) -> None:
    chat_path = CHAT / "tau_bench_airline_gpt4o_task2_trial1_fail.json"
    strategy = build_strategy(NAME, {"trigger": "tokens=500", "keep": "5"})
    source = export_policy(strategy, "ctxlab")
    assert f"build_strategy(\n    {NAME!r}," in source
    script = tmp_path / "policy.py"
    # the exported script names the policy; the subprocess registers it as a plug-in would
    script.write_text(
        "from framework_policy import register_test_policy\nregister_test_policy()\n" + source
    )
    env_path = f"{Path(__file__).resolve().parent}"
    run = subprocess.run(
        [sys.executable, str(script), str(chat_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": _pythonpath(env_path)},
    )
    assert run.returncode == 0, run.stderr
    printed = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    expected = strategy.apply(load_chat(chat_path), counter).decisions
    assert printed == {k: v.value for k, v in expected.items()}
    assert "dropped" in printed.values()


def _pythonpath(tests: str) -> str:

    return os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH", "")) if p)
