"""Issue 13 item 3: reading, counting and trimming never import ``openai`` or ``streamlit``.

Each check runs in a fresh interpreter, so modules other tests loaded do not hide an import.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules_after(code: str) -> set[str]:
    """The top-level module names in ``sys.modules`` after running ``code`` in a new process."""
    script = (
        f"{code}\nimport sys\nprint('\\n'.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_engine_import_and_discover_leave_openai_and_streamlit_out() -> None:
    loaded = _modules_after(
        "import ctxlab, ctxlab.strategies, ctxlab.summarizers, ctxlab.replay, ctxlab.cli\n"
        "ctxlab.strategies.discover()"
    )
    assert "ctxlab" in loaded
    assert "openai" not in loaded
    assert "streamlit" not in loaded


def test_a_summary_with_the_offline_summarizer_imports_no_openai() -> None:
    loaded = _modules_after(
        "from ctxlab import Message, Role\n"
        "from ctxlab.strategies import build_strategy\n"
        "from ctxlab.summarizers import OfflineSummarizer\n"
        "from ctxlab.tokens import get_counter\n"
        "ms = [Message(Role.USER if i % 2 == 0 else Role.ASSISTANT, 'word ' * 50, f'm{i}')"
        " for i in range(12)]\n"
        "r = build_strategy('summarize', {'trigger_token_budget': 100, "
        "'keep_recent_messages': 2}).apply(ms, get_counter('gpt-4o'), OfflineSummarizer())\n"
        "assert r.summary_request is not None"
    )
    assert "openai" not in loaded


def test_the_openai_summarizer_loads_openai_on_first_use() -> None:
    loaded = _modules_after(
        "import ctxlab.summarizers as s\n"
        "assert s.OpenAISummarizer.__module__ == 'ctxlab.summarizers.openai_compat'"
    )
    assert "openai" in loaded


def test_the_cli_lists_strategies_without_openai() -> None:
    loaded = _modules_after(
        "import contextlib, io\n"
        "from ctxlab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['strategies']) == 0"
    )
    assert "openai" not in loaded
    assert "pandas" not in loaded


def test_the_cli_shows_a_small_chat_without_openai_pandas_or_plotly() -> None:
    loaded = _modules_after(
        "import contextlib, io\n"
        "from ctxlab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['show', 'ctxlab/sample_chats/support_function_calls.json']) == 0"
    )
    assert "tiktoken" in loaded  # it does count
    for heavy in ("openai", "pandas", "numpy", "plotly", "streamlit", "duckdb", "ray"):
        assert heavy not in loaded, heavy


def test_the_cli_shows_a_small_chat_without_plugin_metadata_or_prices() -> None:
    # Issue 15 (CLI start): no format plug-in is installed, so `show` never imports
    # importlib.metadata (reading every installed package's metadata cost ~30 ms), and it prints
    # no cost, so the price table stays unloaded.
    script = (
        "import contextlib, io, sys\n"
        "from ctxlab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['show', 'ctxlab/sample_chats/support_function_calls.json']) == 0\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "ctxlab.formats" in loaded
    unneeded = ["ctxlab.pricing", "ctxlab.strategies", "csv"]
    if not importlib.metadata.entry_points(group="ctxlab.formats"):
        unneeded.append("importlib.metadata")  # (a format plug-in installed here must be read)
    for name in unneeded:
        assert name not in loaded, name
