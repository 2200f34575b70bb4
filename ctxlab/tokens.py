"""Token counting with OpenAI's published chat accounting, cached per message.

Every message costs ``tokens_per_message`` plus the tokens of each string field OpenAI sends
(role, content, name, tool_call_id), ``tokens_per_name`` more when it has a name, and the tokens
of each tool call (name and arguments plus a small per-call overhead, an estimate: OpenAI does
not publish it). A request adds ``reply_priming`` (``<|start|>assistant<|message|>``). These are
the rules of OpenAI's cookbook "How to count tokens with tiktoken", and the counts equal its
figures for its example messages and tool definitions.

Counts are cached per message (keyed by id + content, see :class:`Message`) and per text, and a
whole chat's :class:`CountedChat` is cached by identity, so a second count of the same chat does
no tokenization at all. The caches are bounded: a message's count and a chat's
:class:`CountedChat` are kept while someone holds the message or the chat (weak references: a
chat's counts are released with the last session holding it), and the per-text cache keeps its
counts under a 128-bit digest of each text (no text is kept alive by it) within
``CTXLAB_TEXT_COUNT_CACHE_MB``, least recently used first out (:mod:`ctxlab.caches`); a text of
at most :data:`SHORT_TEXT` characters is kept under itself, since hashing it costs more than it.

Between processes, counters of the verified offline encodings share the persistent count store
(:mod:`ctxlab.count_store`): per text by digest, and per message list: a list of at least
:data:`CHAT_ENTRY_MIN` messages none of which is counted in memory is looked up as one entry
under a digest of all its fields (:func:`_chat_key`), so re-opening a 100k-message chat after a
restart costs one read and one pass of BLAKE2b over its text (about half a second), where
looking up its 100k texts one by one cost 1.3 s. A list not found whole is counted text by
text, each text from the store when another chat had it (an edited or replayed chat).

The first count of a chat is the tokenizer's time plus ctxlab's own: the fields of each message,
one batch of distinct texts, digests only for the texts the memory keeps (the newest that fit its
bound) or the store is asked for, the cyclic GC paused while the long-lived lists are built, and
the per-message weak references made in bulk (:func:`_remember`).

Why ``bpe-openai`` and not ``rs_bpe`` (PyPI 0.1.0, MIT, a 25.7 MB wheel for CPython 3.11 on
x86-64 Linux; wheels for macOS and Windows too), evaluated for issue 26: its ids equal tiktoken's
on every token of both vocabularies, every fixture and sample file, the adversarial texts and
long runs of tests/test_linear_counter.py and tests/test_long_runs.py and 3,500 generated texts;
like bpe-openai it raises on lone surrogates (``UnicodeEncodeError``: Rust strings cannot hold
them), which ctxlab replaces as tiktoken does before counting. So it is exact, but barely faster:
counting the 100k chat's distinct texts in five interleaved rounds took 2.35 s at best (median
2.48 s) against bpe-openai's 2.56 s (median 2.71 s), 8% less, within what one tokenizer's own
ratio to tiktoken varied between runs on this shared 2-core machine (0.41x to 0.61x); neither
reaches issue 26's 0.5x reliably here. For 8% it would add a second 25 MB Rust tokenizer
(bpe-openai stays for :mod:`ctxlab.long_runs`) from a single 0.1.0 release with one maintainer.
Its tokenizer loads in 0.05 s where bpe-openai's takes 0.2 s, which ``ctxlab show`` avoids
anyway by loading the tokenizer only when a text has to be tokenized (``TiktokenCounter._linear``).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import sys
import threading
import weakref
from array import array
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import tiktoken

from ctxlab.caches import BoundedCache, megabytes_from_env
from ctxlab.catalog import CATALOG
from ctxlab.counted import CountedChat
from ctxlab.encodings import OFFLINE_ENCODINGS, encoding_identity, load_encoding
from ctxlab.errors import UnknownNameError
from ctxlab.long_runs import LONG_RUN, count_tokens, linear_counter
from ctxlab.model import Message
from ctxlab.tokenizer_families import TokenizerFamily, family_of

if TYPE_CHECKING:
    from ctxlab.count_store import CountStore

__all__ = [
    "COUNTER_NAMES",
    "ApproxCounter",
    "ChatAccounting",
    "TiktokenCounter",
    "TokenCounter",
    "compact_shared_counters",
    "get_counter",
    "new_counter",
]

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ChatAccounting:
    """The chat-format overheads of one model family (OpenAI cookbook constants)."""

    tokens_per_message: int = 3
    tokens_per_name: int = 1
    reply_priming: int = 3
    tokens_per_tool_call: int = 3  # estimate; see the module docstring
    # num_tokens_for_tools constants
    func_init: int = 7
    prop_init: int = 3
    prop_key: int = 3
    enum_init: int = -3
    enum_item: int = 3
    func_end: int = 12


ACCOUNTING_O200K = ChatAccounting()
ACCOUNTING_CL100K = ChatAccounting(func_init=10)
# gpt-3.5-turbo-0301: <|start|>{role/name}\n{content}<|end|>\n, and a name replaces the role.
ACCOUNTING_0301 = ChatAccounting(tokens_per_message=4, tokens_per_name=-1, func_init=10)


@runtime_checkable
class TokenCounter(Protocol):
    """What strategies, replay and the app count with."""

    name: str
    label: str
    is_exact: bool
    accounting: ChatAccounting

    def count_text(self, text: str) -> int: ...

    def count_message(self, message: Message) -> int: ...

    def count_messages(self, messages: Sequence[Message]) -> int: ...

    def counts(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> list[int]: ...

    def counted(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> CountedChat: ...

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int: ...


class _CachingCounter:
    """Shared accounting and caching; subclasses only say how to count a batch of texts."""

    name: str
    label: str
    is_exact: bool
    count_namespace: str | None = None
    """The tokenizer whose per-text counts this counter shares with other processes through
    :mod:`ctxlab.count_store` (None: no store). Per-text counts depend on the tokenizer only,
    so a namespace names it exactly, e.g. ``"o200k_base:<sha256 of its verified ranks>"``; a
    counter whose counts are estimates must leave it None."""

    def __init__(self, accounting: ChatAccounting, text_cache_bytes: int | None = None) -> None:
        self.accounting = accounting
        # Kept while the message lives (whoever holds its chat): no count outlives its chat.
        self._by_message: weakref.WeakKeyDictionary[Message, int] = weakref.WeakKeyDictionary()
        if text_cache_bytes is None:
            text_cache_bytes = megabytes_from_env("CTXLAB_TEXT_COUNT_CACHE_MB")
        # Keyed by each text's digest (:func:`_text_key`), not the text: an entry costs the
        # same small size whatever the text's length, and keeps no chat's text alive.
        self._by_text: BoundedCache[bytes | str, int] = BoundedCache(
            max_bytes=text_cache_bytes, weigh=_entry_weight
        )
        # id(messages tuple) -> its CountedChat, while someone holds the CountedChat (which
        # holds the tuple, so the id cannot name another tuple while the entry lives).
        self._by_chat: weakref.WeakValueDictionary[int, CountedChat] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()
        self.texts_tokenized = 0  # observable proof that caches work (tests, benchmarks)
        self.texts_from_store = 0  # counts read from the persistent store
        self.chats_from_store = 0  # whole message lists read from it (:meth:`counts`)

    # -- to override -------------------------------------------------------------------------
    def _count_uncached(self, texts: list[str]) -> list[int]:
        raise NotImplementedError

    def compact(self, *, forget_texts: bool = False) -> None:
        """Rebuild the weak per-message and per-chat tables from their live entries: a dict's
        table never shrinks, so after the chats of sessions that left are released the tables
        would keep the size of the largest chats ever held.

        ``forget_texts`` also empties the per-text counts (a server that no session uses any
        more): their small entries, written while the chats were counted, lie scattered among
        the freed chats' memory and keep the allocator from returning it."""
        if forget_texts:
            self._by_text.clear()
        # Counting writes these tables without the lock: a copy that meets a write gives up
        # (RuntimeError) and the next release tries again; a count written to the old table
        # during the swap is only a cache miss later, never a wrong count.
        with self._lock:
            try:
                self._by_message = weakref.WeakKeyDictionary(self._by_message)
                self._by_chat = weakref.WeakValueDictionary(self._by_chat)
            except RuntimeError:
                return

    # -- text level --------------------------------------------------------------------------
    def _count_texts(self, texts: list[str]) -> list[int]:
        """Counts of ``texts``, tokenizing each distinct text once: found in memory, else in
        the persistent store (:attr:`count_namespace`), else tokenized and written to both."""
        found: dict[str, int | None] = dict.fromkeys(texts)
        distinct = list(found)
        by_text = self._by_text
        # Digests only where they are looked up or kept: an empty memory has nothing to find.
        memory_keys = [_memory_key(t) for t in distinct] if len(by_text) else None
        cached: list[int | None] = (
            by_text.get_many(memory_keys) if memory_keys else [None] * len(distinct)
        )
        todo = [i for i, n in enumerate(cached) if n is None]
        store = _count_store(self.count_namespace) if todo else None
        store_keys: list[bytes] = []
        if store is not None:
            store_keys = [_text_key(distinct[i]) for i in todo]
            stored = store.get_many(store_keys)
            hits = [i for i, n in zip(todo, stored, strict=True) if n is not None]
            if hits:
                for i, n in zip(todo, stored, strict=True):
                    cached[i] = n
                self._keep(distinct, cached, hits, memory_keys)
                self.texts_from_store += len(hits)
                store_keys = [k for k, n in zip(store_keys, stored, strict=True) if n is None]
                todo = [i for i in todo if cached[i] is None]
        if todo:
            counted = self._count_uncached([distinct[i] for i in todo])
            for i, n in zip(todo, counted, strict=True):
                cached[i] = n
            self._keep(distinct, cached, todo, memory_keys)
            if store is not None:
                store.put_many_later(list(zip(store_keys, counted, strict=True)))
            self.texts_tokenized += len(todo)
        for text, n in zip(distinct, cached, strict=True):
            found[text] = n
        return [found[t] for t in texts]  # type: ignore[misc]

    def _keep(
        self,
        distinct: list[str],
        counts: list[int | None],
        which: list[int],
        memory_keys: list[bytes | str] | None,
    ) -> None:
        """Put the counts of ``distinct[i]`` for ``i`` in ``which`` in the per-text memory.

        Only the newest that fit its bound are put (and hashed): a first count of a large chat
        would evict the older ones again within the same call."""
        by_text = self._by_text
        room = by_text.max_bytes
        newest: list[tuple[bytes | str, int]] = []
        held = 0
        for i in reversed(which):
            key = memory_keys[i] if memory_keys is not None else _memory_key(distinct[i])
            held += _entry_weight(key, 0)
            if room is not None and held > room:
                break
            newest.append((key, counts[i]))  # type: ignore[arg-type]
        newest.reverse()
        by_text.put_many(newest)

    def count_text(self, text: str) -> int:
        return self._count_texts([text])[0]

    # -- message level -----------------------------------------------------------------------
    @staticmethod
    def _fields(message: Message) -> list[str]:
        """The strings OpenAI receives for ``message``, role first."""
        # ``_value_``, not ``value``: the enum's property costs a Python call per message.
        out = [message.role._value_, message.content]
        if message.name is not None:
            out.append(message.name)
        if message.tool_call_id is not None:
            out.append(message.tool_call_id)
        for call in message.tool_calls:
            out.append(call.name)
            out.append(call.arguments)
        return out

    def _overhead(self, message: Message) -> int:
        acc = self.accounting
        extra = acc.tokens_per_message + acc.tokens_per_tool_call * len(message.tool_calls)
        if message.name is not None:
            extra += acc.tokens_per_name
        return extra

    def _field_sums(
        self,
        fields: Sequence[list[str]],
        progress: ProgressCallback | None,
    ) -> list[int]:
        """The tokens of each message's fields (no accounting), in chunks for ``progress``."""
        total = len(fields)
        sums: list[int] = []
        # Chunks only to report progress: one batch dedupes across the whole list at once.
        step = max(2048, total // 50) if progress is not None else max(total, 1)
        for lo in range(0, len(fields), step):
            chunk = fields[lo : lo + step]
            flat = self._count_texts([text for group in chunk for text in group])
            pos = 0
            for group in chunk:
                width = len(group)
                sums.append(sum(flat[pos : pos + width]))
                pos += width
            if progress is not None:
                progress(min(lo + step, total), total)
        return sums

    def counts(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> list[int]:
        """Tokens of each message; cached messages cost a dict lookup.

        When none of them is cached in memory and there are at least :data:`CHAT_ENTRY_MIN`,
        the persistent store is asked for the whole list first, by a digest of every message's
        fields (:func:`_chat_key`): a chat counted before in any process costs one read."""
        cache = self._by_message
        if len(cache):
            out = [cache.get(m, -1) for m in messages]
            missing = [i for i, n in enumerate(out) if n < 0]
        else:
            out = [-1] * len(messages)
            missing = list(range(len(messages)))
        if not missing:
            return out
        if len(missing) < _GC_PAUSE_MIN:
            self._count_missing(messages, missing, out, progress)
            return out
        from ctxlab.formats._fastpath import _gc_paused

        # The lists, keys and weak references built here live as long as the chat: walking
        # them in young collections cost a fifth of a 100k-message first count.
        with _gc_paused():
            self._count_missing(messages, missing, out, progress)
        return out

    def _count_missing(
        self,
        messages: Sequence[Message],
        missing: list[int],
        out: list[int],
        progress: ProgressCallback | None,
    ) -> None:
        """Fill ``out[i]`` for each ``i`` of ``missing`` (see :meth:`counts`)."""
        total = len(missing)
        fields = [self._fields(messages[i]) for i in missing]
        store = None
        if total == len(messages) and total >= CHAT_ENTRY_MIN:
            store = _count_store(self.count_namespace)
        if store is not None:
            chat_key = _chat_key(fields)
            sums = _field_sums_from(store.get_blob(chat_key), total)
            if sums is not None:
                self.chats_from_store += 1
                if progress is not None:
                    progress(total, total)
            else:
                before = self.texts_tokenized + self.texts_from_store
                sums = self._field_sums(fields, progress)
                # Kept for a list new to this process (its texts were not in memory), not for
                # new message objects over known texts (a strategy's rewritten copies).
                if 4 * (self.texts_tokenized + self.texts_from_store - before) >= total:
                    store.put_blob(chat_key, _field_sums_blob(sums))
        else:
            sums = self._field_sums(fields, progress)
        counted: list[int] = []
        if type(self)._overhead is not _CachingCounter._overhead:
            # A family's own framing (Mistral's [INST], Llama's headers): its method says it.
            overhead = self._overhead
            for i, n in zip(missing, sums, strict=True):
                n += overhead(messages[i])
                counted.append(n)
                out[i] = n
        else:
            # OpenAI's accounting, inlined: a method call per message is a tenth of a count.
            acc = self.accounting
            per_message, per_call, per_name = (
                acc.tokens_per_message,
                acc.tokens_per_tool_call,
                acc.tokens_per_name,
            )
            for i, n in zip(missing, sums, strict=True):
                message = messages[i]
                n += per_message
                if message.tool_calls:
                    n += per_call * len(message.tool_calls)
                if message.name is not None:
                    n += per_name
                counted.append(n)
                out[i] = n
        _remember(self._by_message, [messages[i] for i in missing], counted)

    def count_message(self, message: Message) -> int:
        return self.counts([message])[0]

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of ``messages`` sent as one request, reply priming included."""
        return sum(self.counts(messages)) + self.accounting.reply_priming

    def counted(
        self, messages: Sequence[Message], progress: ProgressCallback | None = None
    ) -> CountedChat:
        """The :class:`CountedChat` of ``messages``; O(1) when this very tuple was counted and
        its CountedChat is still held by someone (hold it to keep re-trims O(1))."""
        key = id(messages)
        with self._lock:
            hit = self._by_chat.get(key)
        if hit is not None and hit.messages is messages:
            return hit
        if len(messages) < _GC_PAUSE_MIN:
            counts = self.counts(messages, progress)
            chat = CountedChat(tuple(messages), tuple(counts), self.accounting.reply_priming)
        else:
            from ctxlab.formats._fastpath import _gc_paused

            with _gc_paused():  # as in counts: a large chat's prefix sums and rounds live long
                counts = self.counts(messages, progress)
                chat = CountedChat(tuple(messages), tuple(counts), self.accounting.reply_priming)
        with self._lock:
            # Only a tuple is its CountedChat's own messages (``tuple(t) is t``), which the entry
            # keeps alive; a list's id could be reused by another list once it is freed.
            self._by_chat[id(chat.messages)] = chat
        return chat

    # -- tool definitions ----------------------------------------------------------------------
    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of a request's ``tools`` definitions (the cookbook's ``num_tokens_for_tools``).

        Only name, description and the properties' type, description and enum are modelled, as
        in the cookbook; nested schemas are not.
        """
        acc = self.accounting
        total = 0
        for tool in tools:
            function = tool.get("function", tool)
            total += acc.func_init
            description = str(function.get("description", "")).removesuffix(".")
            total += self.count_text(f"{function.get('name', '')}:{description}")
            properties = (function.get("parameters") or {}).get("properties") or {}
            if properties:
                total += acc.prop_init
                for key, spec in properties.items():
                    total += acc.prop_key
                    if "enum" in spec:
                        total += acc.enum_init
                        for item in spec["enum"]:
                            total += acc.enum_item + self.count_text(str(item))
                    p_desc = str(spec.get("description", "")).removesuffix(".")
                    total += self.count_text(f"{key}:{spec.get('type', '')}:{p_desc}")
        return total + acc.func_end if tools else total


class TiktokenCounter(_CachingCounter):
    """Exact counts of a tiktoken encoding: tiktoken's ``encode_ordinary`` token counts.

    For cl100k_base and o200k_base (the offline encodings) the counts come from GitHub's
    linear-time BPE (``bpe-openai``, :func:`ctxlab.long_runs.linear_counter`): the same tokens
    as tiktoken (tests compare ids on every token of the vocabularies, every fixture, generated
    and adversarial text), at about half tiktoken's CPU on chats and in linear time on any
    text, so a 16 MB word costs what 16 MB of prose costs. tiktoken's own encoding is then
    built only if someone asks for :attr:`encoding`. Without that package, and for any other
    encoding, tiktoken counts, with long batches split across two threads (tiktoken releases
    the GIL while encoding, and a plain loop per thread beats ``encode_ordinary_batch`` on
    these 2-core machines).

    Counters built from an offline encoding's name share their per-text counts with other
    processes through :mod:`ctxlab.count_store` (:attr:`count_namespace`).
    """

    is_exact = True
    _PARALLEL_MIN_TEXTS = 4096

    def __init__(
        self, name: str, encoding: tiktoken.Encoding | str, accounting: ChatAccounting
    ) -> None:
        """``encoding``: a tiktoken encoding, or the name of an offline one (then loaded only
        when tiktoken itself has to count)."""
        super().__init__(accounting)
        self.name = name
        self._encoding: tiktoken.Encoding | None = None
        if isinstance(encoding, str):
            if encoding not in OFFLINE_ENCODINGS:
                self._encoding = load_encoding(encoding)  # raises UnknownNameError
            self.encoding_name = encoding
        else:
            self._encoding = encoding
            self.encoding_name = encoding.name
        self.label = f"{self.encoding_name} (tiktoken)"
        # Only the verified offline encodings are known by name: an Encoding object built by
        # someone else under the same name may have other ranks.
        verified = self.encoding_name in OFFLINE_ENCODINGS and (
            self._encoding is None or self._encoding is load_encoding(self.encoding_name)
        )
        if verified:
            self.count_namespace = encoding_identity(self.encoding_name)
        self._verified = verified
        self._linear_loaded = False
        self._linear_count: Callable[[str], int] | None = None

    @property
    def _linear(self) -> Callable[[str], int] | None:
        """The linear BPE's count, loaded when a text is first tokenized (about 0.2 s): a
        command whose counts all come from the persistent store never loads it."""
        if not self._linear_loaded:
            self._linear_count = linear_counter(self.encoding_name) if self._verified else None
            self._linear_loaded = True
        return self._linear_count

    @property
    def encoding(self) -> tiktoken.Encoding:
        """tiktoken's encoding (built on first use when counts come from the linear BPE)."""
        if self._encoding is None:
            self._encoding = load_encoding(self.encoding_name)
        return self._encoding

    def _encode_lengths(self, texts: Sequence[str]) -> list[int]:
        encoding = self.encoding
        encode = encoding.encode_ordinary
        # A text long enough to hold a piece tiktoken is slow on takes long_runs' linear path.
        return [len(encode(t)) if len(t) < LONG_RUN else count_tokens(encoding, t) for t in texts]

    def _count_uncached(self, texts: list[str]) -> list[int]:
        linear = self._linear
        if linear is not None:
            return [linear(t) for t in texts]
        if len(texts) < self._PARALLEL_MIN_TEXTS:
            return self._encode_lengths(texts)
        half = len(texts) // 2
        with ThreadPoolExecutor(max_workers=2) as pool:
            first, second = pool.map(self._encode_lengths, (texts[:half], texts[half:]))
        return first + second


class ApproxCounter(_CachingCounter):
    """The character heuristic most libraries default to: ceil(characters / 4) per text.

    Labelled approximate everywhere; useful for model families without a public tokenizer.
    """

    is_exact = False

    def __init__(self, chars_per_token: float = 4.0) -> None:
        super().__init__(ACCOUNTING_O200K)
        self.chars_per_token = chars_per_token
        self.name = "approx"
        self.label = f"approximate (characters / {chars_per_token:g})"

    def _count_uncached(self, texts: list[str]) -> list[int]:
        per = self.chars_per_token
        return [math.ceil(len(t) / per) for t in texts]


# Names offered by the UI and CLI; any model tiktoken knows is accepted too.
COUNTER_NAMES: tuple[str, ...] = (
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-5",
    "o3",
    "gpt-4",
    "gpt-4-turbo",
    "gpt-3.5-turbo",
    "o200k_base",
    "cl100k_base",
    "approx",
)


TEXT_KEY_BYTES = 16
"""Size of the digest a per-text count is kept under: 128 bits, so two different texts sharing
one is as likely as guessing a random 128-bit number."""

TEXT_ENTRY_BYTES = 200
"""What one per-text cache entry costs, roughly: the digest (a 49-byte bytes object), the
ordered dict's slot and node, and the (count, weight) tuple."""


SHORT_TEXT = 64
"""Texts of at most this many characters are kept in memory under themselves rather than a
digest: hashing them would cost more than the few dozen bytes the text itself holds. The
persistent store knows every text by its digest (computed for a short text on a memory miss)."""

_GC_PAUSE_MIN = 4096
"""Messages from which counting pauses the cyclic GC (it files what it built as old when done:
worth it for a large chat, not for every small count)."""

CHAT_ENTRY_MIN = 64
"""Messages from which :meth:`_CachingCounter.counts` keeps a whole list's counts as one entry
of the persistent store (fewer cost no more to look up text by text)."""


def _remember(
    cache: weakref.WeakKeyDictionary[Message, int], messages: list[Message], counts: list[int]
) -> None:
    """``cache[m] = n`` for each pair, in two C calls when the dictionary is CPython's.

    ``WeakKeyDictionary.__setitem__`` is ``self.data[ref(key, self._remove)] = value`` in
    Python: building the same weak references with ``map`` and storing them with
    ``dict.update`` costs a quarter as much for the 100k messages of a large chat."""
    data = getattr(cache, "data", None)
    remove = getattr(cache, "_remove", None)
    if not isinstance(data, dict) or remove is None:
        for message, n in zip(messages, counts, strict=True):
            cache[message] = n
        return
    data.update(zip(map(weakref.ref, messages, itertools.repeat(remove)), counts, strict=True))


def _memory_key(text: str) -> bytes | str:
    """The key of ``text`` in a counter's per-text memory: a short text itself, else its
    digest (:data:`SHORT_TEXT`)."""
    return text if len(text) <= SHORT_TEXT else _text_key(text)


def _text_key(text: str) -> bytes:
    """The key a text's count is cached under: a 128-bit BLAKE2b digest of its UTF-8 bytes
    (a lone surrogate, which a JSON file can hold, is encoded as such rather than refused)."""
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=TEXT_KEY_BYTES
    ).digest()


def _count_store(namespace: str | None) -> CountStore | None:
    """The persistent store of ``namespace``, loaded only when a count misses in memory."""
    if namespace is None:
        return None
    from ctxlab.count_store import store_for

    return store_for(namespace)


def _entry_weight(key: bytes | str, count: int) -> int:
    """What keeping one count in a per-text cache costs (:data:`TEXT_ENTRY_BYTES`, and a short
    text kept as its own key: its size)."""
    del count
    return TEXT_ENTRY_BYTES if isinstance(key, bytes) else TEXT_ENTRY_BYTES + sys.getsizeof(key)


def _chat_key(fields: Sequence[list[str]]) -> bytes:
    """The persistent store's key of a message list's counts: a 128-bit BLAKE2b digest of every
    message's fields in order, with the number of fields of each message and the length of each
    field, so that no two different lists share the bytes hashed."""
    digest = hashlib.blake2b(digest_size=TEXT_KEY_BYTES, person=b"ctxlab-chat")
    lengths = array("q")
    widths = array("q", map(len, fields))
    for lo in range(0, len(fields), 4096):
        texts = [text for group in fields[lo : lo + 4096] for text in group]
        lengths.extend(map(len, texts))
        digest.update("".join(texts).encode("utf-8", "surrogatepass"))
    for numbers in (lengths, widths):
        if sys.byteorder != "little":
            numbers.byteswap()
        digest.update(numbers.tobytes())
    return b"chat:" + digest.digest()


def _field_sums_blob(sums: list[int]) -> bytes:
    numbers = array("q", sums)
    if sys.byteorder != "little":
        numbers.byteswap()
    return numbers.tobytes()


def _field_sums_from(blob: bytes | None, length: int) -> list[int] | None:
    """The per-message sums of :func:`_field_sums_blob`, None unless ``blob`` holds ``length``."""
    if blob is None or len(blob) != 8 * length:
        return None
    numbers = array("q")
    numbers.frombytes(blob)
    if sys.byteorder != "little":
        numbers.byteswap()
    return numbers.tolist()


def _accounting_for(model: str) -> ChatAccounting:
    if model.startswith("gpt-3.5-turbo-0301"):
        return ACCOUNTING_0301
    if model.startswith(("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4")):
        return ACCOUNTING_O200K
    return ACCOUNTING_CL100K


_COUNTERS: dict[str, TokenCounter] = {}
_COUNTERS_LOCK = threading.Lock()


def get_counter(name: str = "gpt-4o") -> TokenCounter:
    """The shared counter for a model name (``gpt-4o``), an encoding (``o200k_base``) or ``approx``.

    Every model of :data:`ctxlab.catalog.CATALOG` is accepted (its ``tokenizer`` field picks the
    counter; snapshots such as ``gpt-4o-2024-08-06`` too), as is any model tiktoken maps to an
    offline encoding.

    Counters are shared per name so their caches serve every caller.

    Raises:
        UnknownNameError: neither a model tiktoken maps to an offline encoding, nor an encoding.
    """
    with _COUNTERS_LOCK:
        counter = _COUNTERS.get(name)
        if counter is None:
            counter = _make_counter(name)
            _COUNTERS[name] = counter
        return counter


def compact_shared_counters(*, forget_texts: bool = False) -> None:
    """:meth:`~_CachingCounter.compact` every shared counter of :func:`get_counter` (a server
    calls this once the sessions that held chats have left; with ``forget_texts`` when none is
    left at all)."""
    with _COUNTERS_LOCK:
        counters = list(_COUNTERS.values())
    for counter in counters:
        compact = getattr(counter, "compact", None)
        if compact is not None:
            compact(forget_texts=forget_texts)


def new_counter(name: str = "gpt-4o") -> TokenCounter:
    """A counter of its own for ``name``, with empty caches, not shared with anyone.

    A batch job over many chats (``ctxlab.corpus``) takes one per chat, so its memory stays
    flat: the shared counter of :func:`get_counter` keeps up to ``CTXLAB_TEXT_COUNT_CACHE_MB``
    of per-text counts beside the counts of the chats still held.

    Raises:
        UnknownNameError: as :func:`get_counter`.
    """
    return _make_counter(name)


def _family_counter(model: str, family: TokenizerFamily) -> TokenCounter:
    """The family's exact counter when its extra is installed, else the approximate counter
    labelled with the extra that would make it exact."""
    if family.available():
        return family.make_counter(model)
    approx = ApproxCounter()
    approx.label = (
        f"{model} · approximate (characters / 4): {family.install_hint()} counts it exactly"
    )
    return approx


def _make_counter(name: str) -> TokenCounter:
    if name == "approx":
        return ApproxCounter()
    if name in OFFLINE_ENCODINGS:
        accounting = ACCOUNTING_O200K if name == "o200k_base" else ACCOUNTING_CL100K
        return TiktokenCounter(name, name, accounting)
    family = family_of(name)
    if family is not None:
        return _family_counter(name, family)
    info = CATALOG.get(name)
    if info is not None:
        family = family_of(info.tokenizer)
        if family is not None:
            return _family_counter(info.name, family)
        # The catalog says which counter counts the model (Anthropic, Gemini: approximate).
        if not info.is_exact:
            approx = ApproxCounter()
            approx.label = f"{info.name} · approximate (characters / 4): no public tokenizer"
            return approx
        tiktoken_counter = TiktokenCounter(
            # The snapshot's own accounting (gpt-3.5-turbo-0301 differs from gpt-3.5-turbo).
            name,
            info.tokenizer,
            _accounting_for(name.strip().lower().rsplit("/", 1)[-1]),
        )
        tiktoken_counter.label = f"{name} · {info.tokenizer} (tiktoken)"
        return tiktoken_counter
    try:
        encoding_name = tiktoken.encoding_name_for_model(name)
    except KeyError:
        encoding_name = ""
    if encoding_name not in OFFLINE_ENCODINGS:
        known = ", ".join(COUNTER_NAMES)
        raise UnknownNameError(
            f"unknown model or tokenizer {name!r}: use an OpenAI model name, an encoding "
            f"(o200k_base, cl100k_base) or 'approx' for other model families; e.g. {known}"
        )
    counter = TiktokenCounter(name, encoding_name, _accounting_for(name))
    counter.label = f"{name} · {encoding_name} (tiktoken)"
    return counter
