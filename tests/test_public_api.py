"""The public surface: ctxlab.__all__ is exactly the intended set, and no Streamlit import."""

from __future__ import annotations

import subprocess
import sys

import ctxlab

INTENDED = {
    "ChatFormatError",
    "CompactionMeta",
    "CtxlabError",
    "Message",
    "ParameterError",
    "Role",
    "SummarizerError",
    "ToolCall",
    "UnknownNameError",
    "__version__",
    "dump_chat",
    "load_chat",
}


def test_all_is_exactly_the_intended_names() -> None:
    assert set(ctxlab.__all__) == INTENDED
    assert len(ctxlab.__all__) == len(INTENDED)
    for name in ctxlab.__all__:
        assert hasattr(ctxlab, name)


def test_importing_the_engine_does_not_import_streamlit() -> None:
    code = (
        "import ctxlab, ctxlab.strategies, ctxlab.tokens, ctxlab.validate; "
        "ctxlab.strategies.discover(); import sys; "
        "assert 'streamlit' not in sys.modules, 'streamlit was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
