"""ctxlab: see and tune how LLM chat context is trimmed.

The everyday names live here; everything else is in its own module (``ctxlab.tokens``,
``ctxlab.strategies``, ``ctxlab.summarizers``, ``ctxlab.replay``, ...). Importing ctxlab never
imports Streamlit: only ``ctxlab.ui`` does.
"""

from ctxlab.errors import (
    ChatFormatError,
    CtxlabError,
    ParameterError,
    SummarizerError,
    UnknownNameError,
)
from ctxlab.formats import dump_chat, load_chat
from ctxlab.model import CompactionMeta, Message, Role, ToolCall

__all__ = [
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
]

__version__ = "0.1.0"
