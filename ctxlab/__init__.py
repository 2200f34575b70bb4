"""ctxlab: see and tune how LLM chat context is trimmed.

The everyday names live here — what the README teaches: read a chat, count it, build a
strategy, apply it, validate the context. Everything else is in its own module
(``ctxlab.tokens``, ``ctxlab.strategies``, ``ctxlab.summarizers``, ``ctxlab.replay``, ...).
Importing ctxlab imports neither Streamlit (only ``ctxlab.ui`` does) nor ``openai`` (only an
OpenAI-compatible summarizer does, on first use). The strategy and counting names load their
modules on first use, so ``import ctxlab`` stays as light as reading a chat needs.
``ctxlab.validate`` is the function; its module's other names are imported with
``from ctxlab.validate import ...``.
"""

import typing as _typing

from ctxlab._lazy import lazy_names as _lazy_names
from ctxlab.errors import (
    ChatFormatError,
    CtxlabError,
    ParameterError,
    SummarizerError,
    UnknownNameError,
)
from ctxlab.formats import dump_chat, list_conversations, load_chat
from ctxlab.model import CompactionMeta, Message, Role, ToolCall
from ctxlab.validate import validate

if _typing.TYPE_CHECKING:
    from ctxlab._version import __version__
    from ctxlab.strategies import Strategy, TrimResult, build_strategy
    from ctxlab.tokens import TokenCounter, get_counter

__all__ = [
    "ChatFormatError",
    "CompactionMeta",
    "CtxlabError",
    "Message",
    "ParameterError",
    "Role",
    "Strategy",
    "SummarizerError",
    "TokenCounter",
    "ToolCall",
    "TrimResult",
    "UnknownNameError",
    "__version__",
    "build_strategy",
    "dump_chat",
    "get_counter",
    "list_conversations",
    "load_chat",
    "validate",
]

_LAZY = {
    # the installed distribution's version (pyproject.toml's), read on first use
    "__version__": "ctxlab._version",
    "Strategy": "ctxlab.strategies",
    "TrimResult": "ctxlab.strategies",
    "build_strategy": "ctxlab.strategies",
    "TokenCounter": "ctxlab.tokens",
    "get_counter": "ctxlab.tokens",
}


__getattr__, __dir__ = _lazy_names(__name__, globals(), _LAZY, __all__)
