"""ctxlab's own JSON (``ctxlab``): what :func:`~ctxlab.formats.dump_chat` writes.

OpenAI Chat Completions JSON plus ctxlab's fields (``id``, compaction flags and metadata,
``extra`` keys), so the OpenAI reader reads it; it has its own name so that
:func:`~ctxlab.formats.detect_format` can say a file is a ctxlab dump. It is never sniffed:
auto-detection reads such files as ``openai``, which gives the same messages.
"""

from __future__ import annotations

from ctxlab.formats._registry import ChatFormat, Document, ReadOptions, register
from ctxlab.formats._values import LoadedChat
from ctxlab.formats.openai import conversations
from ctxlab.formats.openai import read as read_openai


def read(doc: Document, options: ReadOptions) -> LoadedChat:
    """As :mod:`ctxlab.formats.openai` reads it."""
    loaded = read_openai(doc, options)
    return LoadedChat(loaded.messages, loaded.tools, format="ctxlab")


register(
    ChatFormat(
        name="ctxlab",
        title="ctxlab's own JSON (OpenAI JSON with ids and compaction fields)",
        read=read,
        conversations=conversations,
        order=200,
        shown=1000,
    )
)
