"""ctxlab: see and tune how LLM chat context is trimmed.

The everyday names live here — what the README teaches: read a chat, count it, build a
strategy, apply it, validate the context. Everything else is in its own module
(``ctxlab.tokens``, ``ctxlab.strategies``, ``ctxlab.summarizers``, ``ctxlab.replay``, ...).
Importing ctxlab imports neither Streamlit (only ``ctxlab.ui`` does) nor ``openai`` (only an
OpenAI-compatible summarizer does, on first use). ``ctxlab.validate`` is the function; its
module's other names are imported with ``from ctxlab.validate import ...``.
"""

from ctxlab.errors import (
    ChatFormatError,
    CtxlabError,
    ParameterError,
    SummarizerError,
    UnknownNameError,
)
from ctxlab.formats import dump_chat, list_conversations, load_chat
from ctxlab.model import CompactionMeta, Message, Role, ToolCall
from ctxlab.strategies import Strategy, TrimResult, build_strategy
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.validate import validate

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

__version__ = "0.1.0"
