"""The ctxlab.strategies entry-point group: built-ins declared, plug-ins loaded, bad ones skipped.

The end-to-end check (a real plug-in package installed into a venv) is in test_install.py; these
tests drive :func:`discover` with hand-made entry points and a fresh registry.
"""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxlab.strategies import (
    ENTRY_POINT_GROUP,
    Strategy,
    StrategyPluginWarning,
    TrimResult,
    param,
    registry,
    strategy_names,
)

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class KeepLast(Strategy):
    name = "keep-last"
    title = "Keep last"
    summary = "Keep the last N messages."
    count: int = param(4, label="Messages kept", help="How many messages to keep.", min=1)

    def apply(self, messages, counter, summarizer=None):  # type: ignore[no-untyped-def]
        kept = tuple(messages[-self.count :])
        ids = {m.id for m in kept}
        return TrimResult(
            kept, {m.id: "kept" if m.id in ids else "dropped" for m in messages}, 0, 0
        )


class NotAStrategy:
    name = "not-a-strategy"


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """A module holding the test classes, and an empty, undiscovered registry (restored after)."""
    module = types.ModuleType("ctxlab_test_plugin")
    module.KeepLast = KeepLast  # type: ignore[attr-defined]
    module.NotAStrategy = NotAStrategy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ctxlab_test_plugin", module)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_DISCOVERED", False)
    yield module


def _entry_points(monkeypatch: pytest.MonkeyPatch, *pairs: tuple[str, str]) -> None:
    """Make ``importlib.metadata.entry_points(group=...)`` answer the built-ins plus ``pairs``."""
    real = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    fake = [importlib.metadata.EntryPoint(n, v, ENTRY_POINT_GROUP) for n, v in pairs]

    def entry_points(*, group: str) -> list[importlib.metadata.EntryPoint]:
        assert group == ENTRY_POINT_GROUP
        return [*real, *fake]

    monkeypatch.setattr(registry.importlib.metadata, "entry_points", entry_points)


def test_pyproject_declares_every_built_in_strategy_as_an_entry_point() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = pyproject["project"]["entry-points"][ENTRY_POINT_GROUP]
    built_in = {
        cls.name: f"{cls.__module__}:{cls.__qualname__}"
        for cls in registry.builtin_strategy_classes()
    }
    assert declared == built_in


def test_a_plugin_entry_point_adds_its_strategy(
    fresh_registry: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    _entry_points(monkeypatch, ("keep-last", "ctxlab_test_plugin:KeepLast"))
    names = strategy_names()
    assert "keep-last" in names and "window-drop" in names and "summarize" in names
    assert registry.build_strategy("keep-last", {"count": "2"}) == KeepLast(count=2)


@pytest.mark.parametrize(
    ("pair", "why"),
    [
        (("missing", "ctxlab_no_such_module:Thing"), "ModuleNotFoundError"),
        (("not-a-strategy", "ctxlab_test_plugin:NotAStrategy"), "not a subclass"),
        (("keep-first", "ctxlab_test_plugin:KeepLast"), "not 'keep-first'"),
    ],
)
def test_a_broken_plugin_is_skipped_with_a_warning_naming_it(
    fresh_registry: types.ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    pair: tuple[str, str],
    why: str,
) -> None:
    _entry_points(monkeypatch, pair)
    with pytest.warns(StrategyPluginWarning, match=why) as caught:
        names = strategy_names()
    assert pair[0] in str(caught[0].message)
    assert pair[0] not in names
    assert {"window-drop", "sliding-window", "summarize"} <= set(names)


def test_without_built_in_entry_points_the_package_is_scanned(
    fresh_registry: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry.importlib.metadata, "entry_points", lambda *, group: [])
    assert set(strategy_names()) == {cls.name for cls in registry.builtin_strategy_classes()}


def test_register_refuses_a_class_that_is_not_a_frozen_dataclass_strategy() -> None:
    with pytest.raises(TypeError, match="not a subclass"):
        registry.register(NotAStrategy)  # type: ignore[type-var]

    class Loose(Strategy):
        name = "loose"
        title = "Loose"
        summary = "Not a dataclass."

    with pytest.raises(TypeError, match="frozen dataclass"):
        registry.register(Loose)


def test_the_readme_plugin_works_as_written(fresh_registry: types.ModuleType) -> None:
    import re

    from ctxlab.model import Message, Role
    from ctxlab.tokens import get_counter

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (code,) = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "class KeepLast" in b]
    assert len([line for line in code.splitlines() if line.strip()]) <= 12
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    entry = re.search(r'^keep-last = "my_package\.module:KeepLast"$', readme, re.M)
    assert entry, "the README shows the entry point line"
    registry.register(namespace["KeepLast"])  # type: ignore[type-var]
    messages = [Message(Role.USER, f"m{i}", f"id{i}") for i in range(6)]
    result = registry.build_strategy("keep-last", {"count": "2"}).apply(
        messages, get_counter("gpt-4o")
    )
    assert [m.id for m in result.messages] == ["id4", "id5"]
    assert result.decision_counts()[next(iter(result.decisions.values()))] == 4
