"""The shared sidebar: which chat, which model, which strategy; and the URL that restores them.

Every page calls :func:`sidebar` first. The loaded chat is a tuple of messages kept in
``st.session_state`` (samples, folder chats and uploads come from a cache shared while any session
holds them, which hands back the very same object), and the session holds its counted chat, so
the counter's identity cache makes every rerun after the first count free of tokenization and a
second session of the chat costs none either. What no session holds any more is released
(:mod:`ctxlab.ui.memory_release`). A chat that fails to load shows an error naming the problem
and the place, and the previously loaded chat stays loaded.

Only the chat (sample name), model, strategy and strategy parameters enter the URL; an API key
never does (it lives in a password widget's session state only).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import streamlit as st

from ctxlab.caches import SharedWhileHeld
from ctxlab.catalog import CATALOG, ModelInfo
from ctxlab.chats_folder import FolderChat, folder_chat, list_folder_chats
from ctxlab.counted import CountedChat
from ctxlab.errors import CtxlabError
from ctxlab.formats import CallUsage, ToolDefinition, list_conversations, load_chat_file
from ctxlab.formats import LoadedChat as FileChat
from ctxlab.hosting import HostingSettings
from ctxlab.model import Message
from ctxlab.plural import plural
from ctxlab.pricing import format_usd
from ctxlab.strategies import (
    Strategy,
    build_strategy,
    get_strategy_class,
    parameters,
    strategy_names,
)
from ctxlab.strategies.frameworks import FrameworkStrategy
from ctxlab.strategies.registry import coerce_value, format_value
from ctxlab.tokens import TokenCounter, get_counter
from ctxlab.tool_overhead import ToolOverhead, WithOverhead, tool_overhead
from ctxlab.ui import notices
from ctxlab.ui.frameworks import strategy_picker
from ctxlab.ui.text import markdown_literal, visible
from ctxlab.ui.widgets import remember_params, remembered_params, strategy_widgets

__all__ = [
    "LoadedChat",
    "Workspace",
    "apply_params",
    "build_or_error",
    "check_size",
    "content_key",
    "first_showing",
    "hosting_settings",
    "load_source",
    "load_source_file",
    "opening_caption",
    "opening_query",
    "params_to_query",
    "pasted_bytes",
    "sidebar",
    "strategy_params",
    "sync_url",
    "upload_limit_mb",
]

CHAT = "ctx.chat"
ERROR = "ctx.load_error"
SOURCE = "ctx.source"
SAMPLE = "ctx.sample"
MODEL = "ctx.model"
STRATEGY = "ctx.strategy"
STRATEGY_GROUP = "ctx.strategy_group"
PASTE = "ctx.paste"
UPLOAD = "ctx.upload"
URL_DONE = "ctx.url_restored"
OPENING_QUERY = "ctx.opening_query"
# Widget keys whose values must survive a page switch (Streamlit drops the state of widgets a
# page does not draw; re-assigning a key makes it plain session state for one more run).
PERSISTENT = (
    SOURCE,
    SAMPLE,
    MODEL,
    STRATEGY,
    STRATEGY_GROUP,
    PASTE,
    "ctx.backend",
    "ctx.base_url",
    "ctx.sum_model",
)
RESERVED_QUERY = ("chat", "upload", "strategy", "model", "conv")
CONV_QUERY = "conv"
"""The URL entry naming the conversation of a file holding several."""
ENCODINGS = ("o200k_base", "cl100k_base", "approx")
MODEL_CHOICES: tuple[str, ...] = (*CATALOG.names(), *ENCODINGS)
"""The model picker's options: every catalog model (grouped by provider), then raw encodings."""
DEFAULT_MODEL = "gpt-4o"
UPLOAD_LINK = "ctx.upload_link"
PASTED = "pasted chat"
SOURCES = ("Sample", "Upload", "Paste")
NO_TOOLS = ToolOverhead(0)


@dataclass(frozen=True, slots=True, eq=False)
class LoadedChat:
    """The chat on screen. ``slot`` names it in widget keys; ``sample`` is its URL name.

    ``tools``, ``usage`` and ``warnings`` are what the file said besides its messages (see
    :class:`ctxlab.formats.LoadedChat`): the tool definitions sent with every call, the
    provider's billed numbers per call, and what was read leniently. A chat without them has
    empty tuples and behaves as a plain list of messages.
    """

    messages: tuple[Message, ...]
    label: str
    slot: str
    sample: str | None = None
    tools: tuple[ToolDefinition, ...] = ()
    usage: tuple[CallUsage, ...] = ()
    warnings: tuple[str, ...] = ()
    file: FileChat | None = field(default=None, repr=False)
    """What was read, as the shared chat cache holds it: a session holding this chat keeps it
    shared with every other session that opens the same chat."""
    conversation: str | None = None
    """Which conversation of a file holding several (its id; the URL's ``conv=``); None for a
    file of one conversation."""

    @classmethod
    def of(
        cls,
        file: FileChat,
        label: str,
        slot: str,
        sample: str | None = None,
        conversation: str | None = None,
    ) -> LoadedChat:
        """The UI's chat from what :func:`~ctxlab.formats.load_chat_file` read."""
        return cls(
            file.messages,
            label,
            slot,
            sample,
            file.tools,
            file.usage,
            file.warnings,
            file,
            conversation,
        )


@dataclass(frozen=True, slots=True, eq=False)
class Workspace:
    """What the sidebar chose: the chat counted with the chosen model's counter, a strategy.

    ``counter`` is the model's counter with the chat's tool definitions added to every request
    (:func:`ctxlab.tool_overhead.with_tools`), so every budget, metric and chart includes them;
    for a chat without tools it is the model's counter itself.
    """

    chat: LoadedChat
    model: str
    counter: TokenCounter
    counted: CountedChat
    strategy_cls: type[Strategy]
    tools: ToolOverhead = NO_TOOLS
    """The chat's tool definitions counted (``tokens`` is what ``counter`` adds per request)."""

    @property
    def model_info(self) -> ModelInfo | None:
        """The chosen model's catalog entry; None for a raw encoding (no window known)."""
        return CATALOG.get(self.model)


def upload_limit_mb() -> int:
    """``server.maxUploadSize`` in MB (what Streamlit enforces)."""
    try:
        return int(st.get_option("server.maxUploadSize"))
    except (RuntimeError, TypeError, ValueError):  # pragma: no cover - option always exists
        return 200


def check_size(data: bytes | str, name: str, limit_mb: int) -> None:
    """Refuse ``data`` over ``limit_mb`` MB (the upload limit, applied to pasted text too).

    Streamlit's uploader enforces ``server.maxUploadSize`` itself; pasted text has no such
    limit, so the same one is checked here before anything is parsed.

    Raises:
        CtxlabError: the size, the limit and what to do.
    """
    limit = limit_mb * 1024 * 1024
    if isinstance(data, str):
        # Cheap bounds first: UTF-8 needs 1 to 4 bytes per character.
        if len(data) <= limit // 4:
            return
        size = len(data) if len(data) > limit else len(data.encode("utf-8", "surrogatepass"))
    else:
        size = len(data)
    if size > limit:
        raise CtxlabError(
            f"{name}: {size / 1024 / 1024:,.1f} MB is over the {limit_mb} MB limit for a chat; "
            "load a smaller chat, or raise server.maxUploadSize in .streamlit/config.toml"
        )


def load_source(
    data: bytes | str, name: str, conversation: str | None = None, *, limit_mb: int | None = None
) -> tuple[Message, ...]:
    """The messages of :func:`load_source_file` (same arguments, same errors)."""
    return load_source_file(data, name, conversation, limit_mb=limit_mb).messages


def load_source_file(
    data: bytes | str, name: str, conversation: str | None = None, *, limit_mb: int | None = None
) -> FileChat:
    """The upload/paste handler: read ``data`` (any format ``load_chat_file`` knows), with its
    tool definitions, billed usage and warnings.

    Args:
        data: the file's bytes or the pasted text (read as the chat itself: text that names a
            file on the server is not a chat, and is refused like any other text).
        name: the display name used in error messages.
        conversation: which conversation of a multi-conversation file (None: the first).
        limit_mb: refuse data over this many MB (None: no limit).

    Raises:
        ChatFormatError: the problem and the place (``name`` is used in the message).
        CtxlabError: an empty chat, or one over ``limit_mb``.
    """
    if limit_mb is not None:
        check_size(data, name, limit_mb)
    if isinstance(data, str):  # text is the chat itself, never a path (see pasted_bytes)
        data = pasted_bytes(data)
    loaded = load_chat_file(data, name=name, conversation=conversation)
    if not loaded.messages:
        raise CtxlabError(f"{name}: the chat holds no messages")
    return loaded


_CHATS: SharedWhileHeld[tuple[str, ...], FileChat] = SharedWhileHeld()
"""Every chat read (sample, folder chat, upload, paste), shared by all the sessions holding it
and released with the last of them."""


def _sample_messages(name: str, conversation: str | None = None) -> FileChat:
    from ctxlab.samples import sample_path

    def read() -> FileChat:
        with st.spinner("Loading the sample chat…"):
            return load_chat_file(sample_path(name), name=name, conversation=conversation)

    return _CHATS.get_or_build(("sample", name, conversation or ""), read)


def _folder_messages(path: str, mtime_ns: int, conversation: str | None = None) -> FileChat:
    """A chat of the server's chats folder, read once per file version while a session holds it
    (an edited file is read again)."""
    return _CHATS.get_or_build(
        ("folder", path, str(mtime_ns), conversation or ""),
        lambda: load_chat_file(Path(path), name=Path(path).name, conversation=conversation),
    )


LIST_CONVERSATIONS_MAX_MB = 20
"""A named chat (sample or chats folder) larger than this opens its first conversation (or the
link's ``conv=``) without a picker: listing its conversations reads the whole file once more."""


@lru_cache(maxsize=64)
def _listed_conversations(path: str, mtime_ns: int) -> tuple[tuple[str, str], ...]:
    """The conversations of the file at ``path`` (its version ``mtime_ns``), read once."""
    try:
        return tuple(list_conversations(Path(path), name=Path(path).name))
    except CtxlabError:
        return ()  # reading the chat reports the problem


def _named_conversations(name: str) -> tuple[tuple[str, str], ...]:
    """The conversations of the sample or folder chat ``name``; () when it is generated, too
    large to list, or unreadable."""
    from ctxlab.samples import GENERATED, list_samples

    if name in GENERATED:
        return ()
    try:
        # one listing: sample_path() would list the samples folder again to find the file
        sample = next((s for s in list_samples() if s.name == name), None)
        path = sample.path if sample is not None else folder_chat(name).path
        stat = path.stat()
    except (CtxlabError, OSError):
        return ()
    if stat.st_size > LIST_CONVERSATIONS_MAX_MB * 1024 * 1024:
        return ()
    return _listed_conversations(str(path), stat.st_mtime_ns)


def _folder_chats() -> dict[str, FolderChat]:
    """The server's chats folder (``CTXLAB_CHATS_DIR``), by name."""
    return {c.name: c for c in list_folder_chats()}


def _samples() -> dict[str, str]:
    """Chat name -> title, in display order: the samples, then the server's chats folder."""
    try:
        from ctxlab.samples import list_samples

        titles = {s.name: s.title for s in list_samples()}
    except (ImportError, OSError):  # pragma: no cover - samples ship with the app
        titles = {}
    for name, chat in _folder_chats().items():
        if name not in titles:
            titles[name] = f"{name} (chats folder, {chat.size_mb:,.1f} MB)"
    return titles


def _set_chat(chat: LoadedChat) -> None:
    st.session_state[CHAT] = chat
    st.session_state.pop(ERROR, None)
    st.session_state.pop(UPLOAD_LINK, None)


def upload_link_notice(name: str) -> str:
    """What a link made from an uploaded (or pasted) chat says when it is opened (Markdown; the
    name, which comes from the URL, is shown literally)."""
    if name == PASTED:
        return (
            "This link was made from a pasted chat, which a link cannot carry: paste it again "
            "(the strategy and parameters of the link apply to it)."
        )
    shown = markdown_literal(visible_title(name))
    return (
        f"This link was made from an uploaded chat ({shown}), which a link "
        "cannot carry: upload it again (the strategy and parameters of the link apply to it)."
    )


def _next_slot(prefix: str) -> str:
    n = int(st.session_state.get("ctx.loads", 0)) + 1
    st.session_state["ctx.loads"] = n
    return f"{prefix}{n}"


def _read_chat(name: str, conversation: str | None = None) -> FileChat:
    """A sample by name, else the chat of the server's chats folder with that name (its
    ``conversation``; None: the first).

    Reading a folder chat shows its size while it is read (a 100k-message chat takes seconds).
    """
    from ctxlab.samples import GENERATED, list_samples

    if name in GENERATED or any(s.name == name for s in list_samples()):
        return _sample_messages(name, conversation)
    chat = folder_chat(name)
    try:
        with st.spinner(
            f"Reading {markdown_literal(chat.path.name)} ({chat.size_mb:,.1f} MB)…", show_time=True
        ):
            return _folder_messages(str(chat.path), chat.path.stat().st_mtime_ns, conversation)
    except OSError as exc:  # removed or unreadable since it was listed
        raise CtxlabError(f"{chat.path.name}: cannot be read ({exc.strerror or exc})") from exc


def _load_sample(name: str, titles: Mapping[str, str], conversation: str | None = None) -> None:
    try:
        loaded = _read_chat(name, conversation)
    except CtxlabError as exc:
        st.session_state[ERROR] = str(exc)
        return
    # Each conversation is a chat of its own: its own slot, so its own widgets and parameters.
    slot = name if conversation is None else f"{name}#{conversation}"
    _set_chat(LoadedChat.of(loaded, titles.get(name, name), slot, name, conversation))


def content_key(data: bytes | str) -> str:
    """The sha256 of an upload's bytes (of a paste's UTF-8): what the parsed-chat cache keys
    on, so the same file uploaded in several sessions is parsed and held once."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()


def _parsed_upload(
    digest: str, name: str, conversation: str | None, limit_mb: int, data: bytes | str
) -> FileChat:
    """:func:`load_source_file` of ``data``, shared by every session that loads the same
    content (``digest``) under the same name and conversation while one of them holds it;
    errors are not cached."""
    key = ("upload", digest, name, conversation or "", str(limit_mb))
    return _CHATS.get_or_build(
        key, lambda: load_source_file(data, name, conversation, limit_mb=limit_mb)
    )


def _try_load(data: bytes | str, name: str, conversation: str | None, prefix: str) -> bool:
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    try:
        with st.spinner(
            f"Reading {markdown_literal(visible_title(name))} ({size / 1024 / 1024:,.1f} MB)…"
        ):
            limit = upload_limit_mb()
            check_size(data, name, limit)
            loaded = _parsed_upload(content_key(data), name, conversation, limit, data)
    except CtxlabError as exc:
        st.session_state[ERROR] = str(exc)
        return False
    _set_chat(LoadedChat.of(loaded, name, _next_slot(prefix), conversation=conversation))
    return True


_CONVERSATIONS = "ctx.conversations"


def _conversation_picker(
    data: bytes | Callable[[], bytes], name: str, key: str, fingerprint: object = None
) -> str | None:
    """A picker when the source holds several conversations; the chosen id (None: the first).

    The list is read once per source, not on every rerun (listing reads the whole file): an
    upload's ``key`` holds its file id; pasted text is told apart by its ``fingerprint``, and
    its bytes (``data`` as a function) are only made when the list is read.
    """
    marker = (key, name, fingerprint if callable(data) else len(data))
    held = st.session_state.get(_CONVERSATIONS)
    if held is not None and held[0] == marker:
        conversations = held[1]
    else:
        try:
            conversations = list_conversations(data() if callable(data) else data, name=name)
        except CtxlabError:
            conversations = []  # load_chat reports the problem
        st.session_state[_CONVERSATIONS] = (marker, conversations)
    return _pick_conversation(tuple(conversations), key)


_CONV_CHOSEN = "ctx.conv_chosen"
"""``{picker key: conversation id}``: the picked conversation as plain session state. A run
that does not draw a picker (``st.switch_page`` from Tune's Apply runs without the uploader's
file) drops the widget's state; the next run that draws it starts from here, not from the
file's first conversation."""
_CONV_SHOWN = "ctx.conv_shown"
"""``(picker key, conversations)`` of the picker drawn for the chat on screen."""
_URL_CONV = "ctx.url_conv"
"""The conversation a shared link named (``conv=``), applied to the first picker that has it."""


def _pick_conversation(conversations: tuple[tuple[str, str], ...], key: str) -> str | None:
    """The conversation picker for a source holding ``conversations`` (none drawn for one);
    the chosen id, None when the source holds one conversation."""
    if len(conversations) <= 1:
        return None
    ids = [cid for cid, _ in conversations]
    titles = dict(conversations)
    chosen: dict[str, str] = st.session_state.setdefault(_CONV_CHOSEN, {})
    from_link = st.session_state.get(_URL_CONV)
    if from_link in ids:
        st.session_state.pop(_URL_CONV, None)
        st.session_state[key] = from_link
    elif st.session_state.get(key) not in ids and chosen.get(key) in ids:
        st.session_state[key] = chosen[key]
    picked: str = st.sidebar.selectbox(
        f"Conversation ({len(ids)} in this file)",
        ids,
        key=key,
        format_func=lambda cid: f"{ids.index(cid) + 1}. {visible_title(titles.get(cid) or cid)}",
    )
    chosen[key] = picked
    st.session_state[_CONV_SHOWN] = (key, conversations)
    return picked


def visible_title(text: str) -> str:
    return visible(text)[:80]


def _restore_from_url(samples: Mapping[str, str]) -> None:
    """Once per session: seed the sidebar from ``st.query_params`` (a shared link)."""
    if st.session_state.get(URL_DONE):
        return
    st.session_state[URL_DONE] = True
    query = st.query_params.to_dict()
    st.session_state[OPENING_QUERY] = dict(query)
    if query.get(CONV_QUERY):
        st.session_state[_URL_CONV] = query[CONV_QUERY][:200]
    chat = query.get("chat")
    if chat in samples:
        st.session_state[SAMPLE] = chat
        st.session_state[SOURCE] = "Sample"
    elif query.get("upload"):
        # The chat itself is not in the link: ask for it instead of opening a sample.
        st.session_state[UPLOAD_LINK] = query["upload"][:200]
        st.session_state[SOURCE] = "Paste" if query["upload"] == PASTED else "Upload"
    model = query.get("model")
    if model in MODEL_CHOICES:
        st.session_state[MODEL] = model
    elif model and model in CATALOG:  # a dated snapshot in a link: its catalog model
        info = CATALOG.get(model)
        assert info is not None
        st.session_state[MODEL] = info.name
    name = query.get("strategy")
    if name not in strategy_names():
        return
    st.session_state[STRATEGY] = name
    raw = {k: v for k, v in query.items() if k not in RESERVED_QUERY}
    if raw:
        st.session_state["ctx.url_params"] = (name, chat, raw)


def opening_query() -> dict[str, str]:
    """The URL's query the session opened with (a page's own entries, e.g. Compare's, are read
    from here: the URL itself is rewritten as soon as the sidebar is drawn)."""
    found: dict[str, str] = st.session_state.get(OPENING_QUERY, {})
    return dict(found)


def _pending_url_params(ws: Workspace) -> dict[str, Any]:
    """Parameters from a shared link, coerced; applied once, to the chat the link names."""
    pending = st.session_state.pop("ctx.url_params", None)
    if not pending:
        return {}
    name, chat, raw = pending
    if name != ws.strategy_cls.name or chat != ws.chat.sample:
        return {}
    infos = {info.name: info for info in parameters(ws.strategy_cls)}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        info = infos.get(key)
        if info is None:
            continue
        try:
            out[key] = coerce_value(info, value)
        except CtxlabError:
            continue
    return out


_COUNTED = "ctx.counted"


def _count(counter: TokenCounter, messages: tuple[Message, ...]) -> CountedChat:
    """``counter.counted(messages)`` with a progress bar while tokens are actually counted."""
    holder = st.sidebar.empty()
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        text = f"Counting tokens… {done:,} / {total:,} messages"
        if bar is None:
            bar = holder.progress(0.0, text=text)
        bar.progress(min(done / max(total, 1), 1.0), text=text)

    counted = counter.counted(messages, progress=progress)
    holder.empty()
    # The session holds its counted chat: the counter keeps it (and so every other session of
    # the chat finds it counted) only while some session does.
    first_showing = st.session_state.get(_COUNTED) is not counted
    st.session_state[_COUNTED] = counted
    run_scope()[FIRST_SHOWING] = first_showing
    return counted


FIRST_SHOWING = "first_showing"
"""The :func:`run_scope` entry that is True in the session's first run on the chat on screen
(what is not on that first screen can wait until it is drawn)."""


def first_showing() -> bool:
    """This run is the session's first on the chat it shows (see :data:`FIRST_SHOWING`)."""
    return bool(run_scope().get(FIRST_SHOWING, False))


def _model_label(name: str) -> str:
    """``OpenAI · gpt-4o · 128k window`` for a catalog model; encodings say what they are."""
    if name == "approx":
        return "approx (approximate: characters / 4)"
    info = CATALOG.get(name)
    if info is None:
        return f"{name} (encoding only: no window)"
    approx = "" if info.is_exact else " · approximate count"
    w = info.context_window
    size = f"{w / 1_000_000:.3g}M" if w >= 1_000_000 else f"{w / 1000:,.0f}k"
    return f"{info.provider_title} · {name} · {size} window{approx}"


def model_caption(info: ModelInfo | None) -> str:
    """The sidebar's line under the model picker: window, maximum output and prices."""
    if info is None:
        return "A raw encoding: no model, so no context window or price is known."
    cached = (
        ""
        if info.cached_input_per_mtok is None
        else f", {format_usd(info.cached_input_per_mtok)} cached"
    )
    if info.cache_write_per_mtok is not None:
        cached += f", {format_usd(info.cache_write_per_mtok)} cache write"
    return (
        f"Window **{info.context_window:,}** tokens · max output **{info.max_output:,}** · "
        f"{format_usd(info.input_per_mtok)} in{cached}, {format_usd(info.output_per_mtok)} out "
        f"per million tokens (catalog as of {CATALOG.as_of})"
    )


def sidebar() -> Workspace | None:
    """Draw the shared sidebar (chat source, model, strategy) and return the workspace.

    Returns None only when no chat could be loaded at all (an error is shown).
    """
    for key in PERSISTENT:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
    samples = _samples()
    _restore_from_url(samples)
    side = st.sidebar
    side.header("Chat")
    source = side.radio("Source", SOURCES, key=SOURCE, horizontal=True)
    current: LoadedChat | None = st.session_state.get(CHAT)
    if source == "Sample" and samples:
        if SAMPLE not in st.session_state or st.session_state[SAMPLE] not in samples:
            st.session_state[SAMPLE] = next(iter(samples))
        name = side.selectbox(
            "Sample chat", list(samples), key=SAMPLE, format_func=lambda n: samples.get(n, n)
        )
        listed = _named_conversations(name)
        conversation = _pick_conversation(listed, f"ctx.conv.chat.{name}")
        if not listed and current is not None and current.sample == name:
            conversation = current.conversation
        if (
            not listed
            and _URL_CONV in st.session_state
            and (current is None or current.sample != name)
        ):
            # a file too large to list: the link's conversation is still the one opened
            conversation = st.session_state.pop(_URL_CONV)
        if current is None or current.sample != name or current.conversation != conversation:
            _load_sample(name, samples, conversation)
    elif source == "Upload":
        _upload_panel(samples)
    elif source == "Paste":
        _paste_panel()
    link = st.session_state.get(UPLOAD_LINK)
    if link and st.session_state.get(CHAT) is None:
        st.info(upload_link_notice(str(link)), icon=":material/upload_file:")
        return None
    if st.session_state.get(CHAT) is None and samples:
        _load_sample(next(iter(samples)), samples)
    error = st.session_state.get(ERROR)
    if error:
        notices.error(error, where=side)
    chat: LoadedChat | None = st.session_state.get(CHAT)
    if chat is None:
        st.error("No chat is loaded: pick a sample, upload a file or paste JSON.")
        return None
    if error:
        side.caption(
            f"Still showing the previous chat: {markdown_literal(visible_title(chat.label))}"
        )

    side.header("Model")
    if st.session_state.get(MODEL) not in MODEL_CHOICES:
        st.session_state[MODEL] = DEFAULT_MODEL
    model = side.selectbox("Model / tokenizer", MODEL_CHOICES, key=MODEL, format_func=_model_label)
    side.caption(model_caption(CATALOG.get(model)))
    try:
        base = get_counter(model)
        counter, tools = _request_counter(base, chat.tools, chat.messages)
    except CtxlabError as exc:
        notices.error(str(exc))
        return None
    if not counter.is_exact:
        info = CATALOG.get(model)
        hint = None if info is None else info.exact_hint
        notices.caption(
            "Approximate counts: no public tokenizer for this family."
            if hint is None
            else f"Approximate counts: {hint} counts this model exactly.",
            where=side,
        )
    counted = _count_request(base, tools.tokens, chat.messages)
    label = markdown_literal(visible_title(chat.label))
    side.caption(
        f"{label} · {plural(len(counted), 'message')} · {plural(len(counted.starts), 'round')} · "
        f"{plural(counted.total, 'token')} ({counter.label})"
    )
    _reading_warnings(chat.warnings)
    names = strategy_names()
    side.header("Strategy")
    picked = strategy_picker(side, names, key=STRATEGY, group_key=STRATEGY_GROUP)
    cls = get_strategy_class(picked)
    side.caption(cls.summary)
    return Workspace(chat, model, counter, counted, cls, tools)


_TOOL_COUNTER = "ctx.tool_counter"


def _request_counter(
    counter: TokenCounter, tools: tuple[ToolDefinition, ...], messages: tuple[Message, ...]
) -> tuple[TokenCounter, ToolOverhead]:
    """The counter whose requests include ``tools``, and the tools counted.

    This is :func:`ctxlab.tool_overhead.with_tools`, made the same object on every rerun for the
    same counter and tools (its counted-chat cache, and so every ``derived`` value, survives
    reruns); ``counter`` itself when there are no tools (or they count as nothing). A counter
    that counts whole requests measures the tools on ``messages`` (the chat).
    """
    if not tools:
        return counter, NO_TOOLS
    held = st.session_state.get(_TOOL_COUNTER)
    if held is not None and held[0] is counter and held[1] is tools and held[2] is messages:
        return held[3], held[4]
    cost = tool_overhead(counter, tools, messages)
    shapes = [t.to_openai() for t in tools]
    wrapped = WithOverhead(counter, cost.tokens, shapes) if cost.tokens else counter
    st.session_state[_TOOL_COUNTER] = (counter, tools, messages, wrapped, cost)
    return wrapped, cost


_TOOL_CHAT = "ctx.tool_chat"


def _count_request(base: TokenCounter, overhead: int, messages: tuple[Message, ...]) -> CountedChat:
    """The chat counted by ``base`` with ``overhead`` added to every request: the same object on
    every rerun while ``base`` still holds the chat (the identity that the Replay cache and every
    ``derived`` value key on), whatever else the pages counted since."""
    inner = _count(base, messages)
    if not overhead:
        return inner
    held = st.session_state.get(_TOOL_CHAT)
    if held is not None and held[0] is inner and held[1] == overhead:
        kept: CountedChat = held[2]
        return kept
    wrapped = inner.with_overhead(overhead)
    st.session_state[_TOOL_CHAT] = (inner, overhead, wrapped)
    return wrapped


def _reading_warnings(warnings: tuple[str, ...]) -> None:
    """What the file reader read leniently, under the chat's caption (escaped, one per line)."""
    if not warnings:
        return
    with st.sidebar.expander(f"{len(warnings):,} reading warning(s)", icon=":material/warning:"):
        for warning in warnings:
            notices.caption(warning)


def _upload_panel(samples: Mapping[str, str]) -> None:
    side = st.sidebar
    limit = upload_limit_mb()
    uploaded = side.file_uploader(
        f"Chat file (.json / .jsonl, up to {limit} MB)", type=["json", "jsonl"], key=UPLOAD
    )
    if uploaded is None:
        _held_picker()
        return
    data = uploaded.getvalue()
    conversation = _conversation_picker(data, uploaded.name, key=f"ctx.conv.{uploaded.file_id}")
    marker = (uploaded.file_id, conversation)
    if st.session_state.get("ctx.upload_seen") == marker:
        return
    st.session_state["ctx.upload_seen"] = marker
    _try_load(data, uploaded.name, conversation, prefix="upload")


def _held_picker() -> None:
    """The conversation picker of the uploaded chat on screen, in a run where the uploader has
    no file: ``st.switch_page`` (Tune's Apply) runs without the browser's widget values, so the
    uploader is empty for that one run while the chat stays loaded. The picker keeps showing
    (and keeps its choice); a choice made in it is loaded on the next run, which has the file."""
    chat: LoadedChat | None = st.session_state.get(CHAT)
    shown = st.session_state.get(_CONV_SHOWN)
    if chat is None or chat.sample is not None or chat.conversation is None or shown is None:
        return
    key, conversations = shown
    if key.startswith("ctx.conv.chat."):
        return
    _pick_conversation(conversations, key)


def _paste_panel() -> None:
    side = st.sidebar
    limit = upload_limit_mb()
    text = side.text_area(
        f"Paste chat JSON (OpenAI messages, Anthropic, ShareGPT, JSONL…; up to {limit} MB)",
        key=PASTE,
        height=160,
    )
    if not text.strip():
        return
    try:
        check_size(text, "pasted chat", limit)
    except CtxlabError as exc:
        notices.error(str(exc), where=side)
        return
    conversation = _conversation_picker(
        lambda: pasted_bytes(text),
        PASTED,
        key="ctx.conv.paste",
        fingerprint=(len(text), hash(text)),
    )
    if side.button("Load pasted chat", key="ctx.paste_load", type="primary"):
        try:
            data = pasted_bytes(text)
        except CtxlabError as exc:
            st.session_state[ERROR] = str(exc)
            return
        _try_load(data, PASTED, conversation, prefix="paste")


def pasted_bytes(text: str) -> bytes:
    """Pasted text as the bytes a chat is read from: only ever text, never a path.

    :func:`ctxlab.formats.load_chat` reads a ``str`` naming an existing file or folder from
    disk (a convenience for Python callers); bytes are always parsed as the chat itself, so a
    pasted path is as much "not a chat" as any other text and says nothing about the server's
    files.

    Raises:
        CtxlabError: the text holds an unpaired surrogate (it cannot be UTF-8).
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CtxlabError(
            f"{PASTED}: the text holds an unpaired surrogate at character {exc.start}"
        ) from None


def strategy_params(
    ws: Workspace,
    cls: type[Strategy] | None = None,
    *,
    namespace: str = "",
    container: Any = None,
) -> dict[str, Any]:
    """The parameter widgets of ``cls`` (the sidebar's strategy by default); values by name.

    Values from a shared link are applied first (once), then the widgets are drawn.
    """
    cls = cls or ws.strategy_cls
    if not namespace:
        from_url = _pending_url_params(ws)
        if from_url:
            apply_params(namespace, cls.name, ws.chat.slot, from_url, ws)
    box = container if container is not None else st.sidebar
    values = strategy_widgets(
        cls,
        ws.counted,
        namespace=namespace,
        token=_token(ws.chat.slot),
        container=box,
        model=ws.model_info,
    )
    if not namespace:
        note = opening_caption(ws, values)
        if note:
            notices.caption(note, where=box)
    return values


def opening_caption(ws: Workspace, values: Mapping[str, Any]) -> str:
    """The caption saying why the sidebar's strategy opened with these values on this chat
    ("budget 3,200 tokens: 50% of this 6,420-token chat, so you see what is dropped; change it
    in the sidebar"); "" once the user changed them."""
    from ctxlab.ui.widgets import opening_note

    note = opening_note(ws.strategy_cls, ws.counted, ws.model_info, values)
    if not note:
        return ""
    return f"{note[0].upper()}{note[1:]}; change it in the sidebar."


def _token(slot: str) -> int:
    """A small stable integer per chat slot (widget keys stay short)."""
    tokens: dict[str, int] = st.session_state.setdefault("ctx.slots", {})
    if slot not in tokens:
        tokens[slot] = len(tokens) + 1
    return tokens[slot]


def apply_params(
    namespace: str, strategy: str, slot: str, values: Mapping[str, Any], ws: Workspace
) -> None:
    """Make ``values`` the parameters the next run's widgets start from (Tune, shared links)."""
    from ctxlab.ui.widgets import initial_values, param_key

    cls = get_strategy_class(strategy)
    token = _token(slot)
    merged = {
        **initial_values(cls, ws.counted, ws.model_info),
        **remembered_params(st.session_state, namespace, strategy, token),
    }
    merged.update(values)
    remember_params(st.session_state, namespace, strategy, merged, token)
    for name in values:
        key = param_key(namespace, strategy, name, token)
        st.session_state.pop(key, None)
        st.session_state.pop(f"{key}.scale", None)


def build_or_error(
    name: str, values: Mapping[str, Any], usage: Sequence[CallUsage] = ()
) -> Strategy | None:
    """``build_strategy(name, values)``, or None after showing the ParameterError; a framework
    policy is given the chat's recorded ``usage`` (some frameworks count from it)."""
    try:
        strategy = build_strategy(name, values)
    except CtxlabError as exc:
        notices.error(str(exc))
        return None
    if isinstance(strategy, FrameworkStrategy) and usage:
        return strategy.with_recorded_usage(usage)
    return strategy


def params_to_query(values: Mapping[str, Any]) -> dict[str, str]:
    """Parameter values as URL strings (:func:`~ctxlab.strategies.format_value`; unset left out)."""
    return {key: format_value(value) for key, value in values.items() if value is not None}


def sync_url(
    ws: Workspace,
    strategy: str,
    values: Mapping[str, Any],
    extra: Mapping[str, str] | None = None,
) -> None:
    """Write chat, model, strategy, parameters and a page's ``extra`` entries to the URL (only
    when they changed).

    Long text parameters (a prompt) stay out of the URL to keep links short.
    """
    wanted: dict[str, str] = {}
    if ws.chat.sample:
        wanted["chat"] = ws.chat.sample
    else:  # an uploaded or pasted chat: the link says so instead of naming a sample
        wanted["upload"] = ws.chat.label[:200]
    if ws.chat.conversation is not None:
        wanted[CONV_QUERY] = ws.chat.conversation[:200]
    wanted["model"] = ws.model
    wanted["strategy"] = strategy
    for key, text in params_to_query(values).items():
        if len(text) <= 200:
            wanted[key] = text
    wanted.update(extra or {})
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


def secret_settings(names: Sequence[str] | None = None) -> dict[str, object]:
    """The root-level entries of ``.streamlit/secrets.toml`` named ``names`` (default: those
    :mod:`ctxlab.hosting` reads); empty when there is no secrets file (``st.secrets`` raises
    then, even for ``.get``)."""
    from ctxlab.hosting import SETTING_NAMES

    found: dict[str, object] = {}
    for name in SETTING_NAMES if names is None else names:
        try:
            value = st.secrets.get(name)
        except Exception:  # no secrets.toml, or one that does not parse: no secrets
            return {}
        if isinstance(value, str | bool | int):
            found[name] = value
    return found


def hosting_settings() -> HostingSettings:
    """The operator's hosting settings: ``.streamlit/secrets.toml``, then the environment."""
    from ctxlab.hosting import read_settings

    return read_settings(os.environ, secret_settings())


ProgressCallback = Callable[[int, int], None]

_RUN = "ctx.run"


def new_run_scope() -> None:
    """Start this run's scratch space (the router does, before drawing anything)."""
    st.session_state[_RUN] = {}


def run_scope() -> dict[str, Any]:
    """Values computed at most once per script run (the summarizer backend, the page's URL
    entries); emptied by :func:`new_run_scope` at the start of every run."""
    scope: dict[str, Any] = st.session_state.setdefault(_RUN, {})
    return scope
