"""The public surface, guarded without a hand-kept list.

``ctxlab.__all__`` must be exactly the public non-module names the package binds, every name a
README example imports from ``ctxlab`` or ``ctxlab.strategies`` must be exported, and every
built-in strategy class must be importable from ``ctxlab.strategies`` by its class name.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import ctxlab
import ctxlab.strategies
import ctxlab.strategies.frameworks
from ctxlab.strategies.frameworks import FrameworkStrategy
from ctxlab.strategies.registry import builtin_strategy_classes

ROOT = Path(__file__).resolve().parents[1]


def _public_bindings(module: ModuleType) -> set[str]:
    """Names bound in ``module`` that are neither private nor a submodule.

    Every exported name is read first, so names a module loads lazily are bound too.
    """
    for name in module.__all__:
        getattr(module, name)
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }


def _readme_imports(module: str) -> set[str]:
    """Names the README's Python examples import with ``from <module> import ...``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    names: set[str] = set()
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module == module:
                names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("module", [ctxlab, ctxlab.strategies], ids=lambda m: m.__name__)
def test_all_is_exactly_the_public_names_the_module_binds(module: ModuleType) -> None:
    exported = set(module.__all__)
    assert len(exported) == len(module.__all__), "a name is listed twice"
    assert exported - {"__version__"} == _public_bindings(module)


def test_the_names_the_readme_teaches_are_exported() -> None:
    taught = _readme_imports("ctxlab")
    assert taught, "the README no longer imports from ctxlab"
    assert taught <= set(ctxlab.__all__)
    assert _readme_imports("ctxlab.strategies") <= set(ctxlab.strategies.__all__)
    for name in ("get_counter", "build_strategy", "TrimResult", "validate", "list_conversations"):
        assert name in ctxlab.__all__


def test_every_built_in_strategy_class_is_importable_by_name() -> None:
    classes = builtin_strategy_classes()
    assert classes
    for cls in classes:
        if issubclass(cls, FrameworkStrategy):  # framework policies: their own subpackage
            assert getattr(ctxlab.strategies.frameworks, cls.__name__) is cls
            continue
        assert getattr(ctxlab.strategies, cls.__name__) is cls
        assert cls.__name__ in ctxlab.strategies.__all__
    assert any(issubclass(cls, FrameworkStrategy) for cls in classes)
    options = ctxlab.strategies.SummarizeOptions  # the nested options of Summarize
    assert (
        ctxlab.strategies.Summarize(options(trigger_token_budget=5)).options.trigger_token_budget
        == 5
    )


def test_importing_the_engine_does_not_import_streamlit() -> None:
    code = (
        "import ctxlab, ctxlab.strategies, ctxlab.tokens, ctxlab.validate; "
        "ctxlab.strategies.discover(); import sys; "
        "assert 'streamlit' not in sys.modules, 'streamlit was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
