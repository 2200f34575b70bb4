"""Fuzzing ``load_chat``: whatever it is fed, it loads or raises ChatFormatError naming the place.

Every input goes through :func:`check`, which allows exactly two outcomes: a tuple of messages
with unique ids, or a :class:`ChatFormatError` whose ``where`` names the place (only errors
about the input as a whole, such as its encoding or emptiness, may have no place). Any other
exception fails the example, and so does an example that takes longer than a generous bound
(:data:`SLOW_S`; 5 s for the 50 MB message): a hang guard, not a speed test.

Two profiles:

* fast (default, CI): a few hundred examples over all properties, well under a minute;
* long, on demand: ``CTXLAB_FUZZ_EXAMPLES=20000 python -m pytest tests/test_fuzz_formats.py -m
  slow`` spreads that many examples over the properties (skipped unless the variable is set).
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab.errors import ChatFormatError
from ctxlab.formats import load_chat
from ctxlab.model import Message

ROOT = Path(__file__).resolve().parent.parent
REAL_CHATS = ROOT / "tests" / "fixtures" / "real_chats"
SLOW_S = 2.0
"""Per-example bound in seconds (inputs here are at most a few hundred kB)."""
HUGE_S = 5.0
"""Bound for the 50 MB single message."""
LONG_EXAMPLES = int(os.environ.get("CTXLAB_FUZZ_EXAMPLES", "0") or 0)
# Reasons that concern the whole input, where no place inside it exists.
PLACELESS = ("UTF-8", "empty input", "nesting too deep", "surrogate", "neither an existing file")


def _corpus() -> dict[str, bytes]:
    """Every committed sample chat and real chat (the generated 10k chat is too big to mutate;
    the fleet corpus holds broken files on purpose)."""
    files = [
        p
        for p in sorted((ROOT / "sample_chats").rglob("*.json"))
        if "generated" not in p.parts and "fleet" not in p.parts
    ]
    if REAL_CHATS.is_dir():
        files += sorted(REAL_CHATS.glob("*.json"))
    return {f"{p.parent.name}/{p.name}": p.read_bytes() for p in files}


CORPUS = _corpus()
CORPUS_NAMES = sorted(CORPUS)
EXAMPLES_RUN: dict[str, int] = {}


def check(source: Any, *, limit_s: float = SLOW_S, **kwargs: Any) -> tuple[Message, ...] | None:
    """Load ``source``: messages (ids unique) or ChatFormatError with a place; nothing else.

    Returns the messages, or None when a ChatFormatError was raised.
    """
    start = time.perf_counter()
    try:
        messages = load_chat(source, **kwargs)
    except ChatFormatError as exc:
        if exc.where is None:
            assert any(p in exc.reason for p in PLACELESS), f"error without a place: {exc}"
        else:
            assert exc.where.strip(), f"empty place: {exc!r}"
        assert str(exc).strip()
        messages = None
    elapsed = time.perf_counter() - start
    assert elapsed < limit_s, f"load_chat took {elapsed:.2f} s (bound {limit_s} s)"
    if messages is not None:
        assert isinstance(messages, tuple)
        assert all(isinstance(m, Message) for m in messages)
        ids = [m.id for m in messages]
        assert len(set(ids)) == len(ids), "loaded message ids are unique"
    return messages


# -- strategies --------------------------------------------------------------------------------

KEYS = st.sampled_from(
    [
        "role",
        "content",
        "messages",
        "id",
        "name",
        "tool_calls",
        "tool_call_id",
        "function_call",
        "function",
        "arguments",
        "type",
        "text",
        "system",
        "conversations",
        "from",
        "value",
        "mapping",
        "message",
        "author",
        "parts",
        "children",
        "parent",
        "is_compaction",
        "compaction_meta",
        "tool_use_id",
        "input",
        "image_url",
    ]
)
ROLES = st.sampled_from(
    ["system", "developer", "user", "assistant", "tool", "function", "human", "gpt", "wizard", ""]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | ROLES
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(KEYS | st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=40,
)


def _to_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def mutated_files(draw: st.DrawFn) -> bytes:
    """A corpus file truncated, or with bytes flipped, deleted or inserted."""
    data = bytearray(CORPUS[draw(st.sampled_from(CORPUS_NAMES))])
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        kind = draw(st.sampled_from(["truncate", "flip", "delete", "insert"]))
        if kind == "truncate":
            del data[at:]
        elif kind == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        else:
            chunk = draw(
                st.binary(min_size=1, max_size=16)
                | st.sampled_from([b"null", b'"', b"{", b"]", b",", b"\x00", b"\\u0000", b"[["])
            )
            data[at:at] = chunk
    return bytes(data)


@st.composite
def reencoded_files(draw: st.DrawFn) -> bytes:
    """A corpus file in another encoding, with a BOM, or with NUL bytes inserted."""
    text = CORPUS[draw(st.sampled_from(CORPUS_NAMES))].decode("utf-8")
    kind = draw(st.sampled_from(["latin-1", "utf-16", "utf-16-le", "utf-32", "bom", "nul"]))
    if kind == "latin-1":
        return text.encode("latin-1", "replace")
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    if kind == "nul":
        data = bytearray(text.encode("utf-8"))
        for _ in range(draw(st.integers(1, 3))):
            data.insert(draw(st.integers(0, len(data))), 0)
        return bytes(data)
    return text.encode(kind)


@st.composite
def tool_chats(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Chat-shaped message lists with ids and tool_call_ids drawn from tiny pools.

    Duplicate message ids, duplicate, missing or dangling tool_call_ids and unknown roles all
    come up often.
    """
    ids = st.none() | st.sampled_from(["a", "b", "m0", "m1", "m2"])
    call_ids = st.none() | st.sampled_from(["call_1", "call_2", ""]) | st.integers(0, 2)
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 8))):
        role = draw(ROLES)
        m: dict[str, Any] = {"role": role, "content": draw(st.none() | st.text(max_size=12))}
        if draw(st.booleans()):
            m["id"] = draw(ids)
        if role == "assistant" and draw(st.booleans()):
            m["tool_calls"] = [
                {
                    "id": draw(call_ids),
                    "type": draw(st.sampled_from(["function", "custom", None])),
                    "function": {
                        "name": draw(st.none() | st.sampled_from(["f", "g"])),
                        "arguments": draw(st.none() | st.text(max_size=8) | st.just({"x": 1})),
                    },
                }
                for _ in range(draw(st.integers(0, 3)))
            ]
        wants_id = role in ("tool", "function") or draw(st.integers(0, 9)) == 0
        if wants_id and draw(st.integers(0, 4)) > 0:  # sometimes missing
            m["tool_call_id"] = draw(call_ids)
        messages.append(m)
    return messages


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key/index path inside a JSON value (not the root)."""
    items: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


def _message_lists(doc: Any) -> list[Any]:
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return list(doc["messages"])
    return list(doc) if isinstance(doc, list) else []


def null_everywhere_cases() -> list[tuple[str, bytes]]:
    """For each corpus chat and each distinct message shape, every field set to null in turn."""
    cases: list[tuple[str, bytes]] = []
    for name in CORPUS_NAMES:
        doc = json.loads(CORPUS[name])
        seen: set[str] = set()
        base: tuple[Any, ...] = ("messages",) if isinstance(doc, dict) and "messages" in doc else ()
        for i, message in enumerate(_message_lists(doc)):
            shape = json.dumps(_shape_of(message), sort_keys=True)
            if shape in seen:
                continue
            seen.add(shape)
            for path in [(), *_paths(message)]:
                full = (*base, i, *path)
                label = f"{name}:{'.'.join(map(str, full))}"
                cases.append((label, _to_bytes(_set(doc, full, None))))
    return cases


def _shape_of(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape_of(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape_of(v) for v in value[:2]]
    return type(value).__name__


# -- the properties, shared by both profiles -----------------------------------------------------


def _json_value(value: Any) -> None:
    if isinstance(value, list | dict):  # the parsed values load_chat accepts
        check(value)
    try:
        data = _to_bytes(value)
    except (ValueError, UnicodeEncodeError):
        return
    check(data)
    check(data, name="fuzz.json")
    check(data, name="fuzz.jsonl")


def _raw_bytes(data: bytes) -> None:
    check(data)
    check(data, name="fuzz.jsonl")


def _tool_chat(messages: list[dict[str, Any]]) -> None:
    check(messages)
    check({"messages": messages})
    check(b"\n".join(_to_bytes(m) for m in messages), name="chat.jsonl")


PROPERTIES: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], None]]] = {
    "json_values": (JSON_VALUES, _json_value),
    "mutated_files": (mutated_files(), _raw_bytes),
    "reencoded_files": (reencoded_files(), _raw_bytes),
    "random_bytes": (st.binary(max_size=512), _raw_bytes),
    "random_text": (st.text(max_size=200).map(lambda t: t.encode("utf-8", "replace")), _raw_bytes),
    "tool_chats": (tool_chats(), _tool_chat),
}
FAST_EXAMPLES = {
    "json_values": 120,
    "mutated_files": 120,
    "reencoded_files": 30,
    "random_bytes": 60,
    "random_text": 40,
    "tool_chats": 100,
}


def _run(name: str, examples: int) -> int:
    strategy, body = PROPERTIES[name]
    count = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def prop(value: Any) -> None:
        nonlocal count
        count += 1
        body(value)

    prop()
    EXAMPLES_RUN[name] = EXAMPLES_RUN.get(name, 0) + count
    return count


@pytest.mark.parametrize("name", list(PROPERTIES))
def test_load_chat_loads_or_names_the_place_fast_profile(name: str) -> None:
    assert _run(name, FAST_EXAMPLES[name]) > 0


@pytest.mark.slow
@pytest.mark.skipif(
    LONG_EXAMPLES <= 0, reason="long fuzz profile: set CTXLAB_FUZZ_EXAMPLES=20000 and use -m slow"
)
def test_load_chat_loads_or_names_the_place_long_profile() -> None:
    weight = sum(FAST_EXAMPLES.values())
    share = {name: -(-LONG_EXAMPLES * n // weight) for name, n in FAST_EXAMPLES.items()}
    total = 0
    for name, examples in share.items():
        start = time.perf_counter()
        done = _run(name, examples)
        total += done
        print(f"\n{name}: {done} examples in {time.perf_counter() - start:.1f} s")
    print(f"\nlong profile: {total} examples, 0 failures")
    assert total >= LONG_EXAMPLES * 0.9


# -- deterministic hostile inputs ----------------------------------------------------------------

NULL_CASES = null_everywhere_cases()


def test_every_field_of_every_message_shape_set_to_null_loads_or_names_the_place() -> None:
    assert len(NULL_CASES) > 100
    for label, data in NULL_CASES:
        try:
            check(data)
        except AssertionError as exc:  # names the case that failed
            raise AssertionError(f"{label}: {exc}") from exc


def _nested(depth: int, kind: str) -> bytes:
    if kind == "list":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("kind", ["list", "object"])
@pytest.mark.parametrize(
    "wrap",
    [
        "{}",
        '[{{"role": "user", "content": {}}}]',
        '[{{"role": "user", "content": "x", "meta": {}}}]',
        '{{"messages": {}}}',
        '[{{"role": "assistant", "content": null, "tool_calls": {}}}]',
    ],
)
def test_ten_thousand_levels_of_nesting_are_a_located_error(kind: str, wrap: str) -> None:
    deep = _nested(10_000, kind).decode()
    data = wrap.format(deep).encode()
    assert check(data) is None
    assert check(data[: len(data) // 2]) is None  # unclosed as well


@pytest.mark.parametrize("kind", ["list", "object"])
def test_ten_thousand_levels_of_nesting_in_a_parsed_value_are_an_error(kind: str) -> None:
    deep: Any = 1
    for _ in range(10_000):
        deep = [deep] if kind == "list" else {"a": deep}
    assert check(deep) is None
    assert check([{"role": "user", "content": "x", "meta": deep}]) is None
    assert check([{"role": "user", "content": deep}]) is None


def test_a_fifty_megabyte_single_message_loads_within_bounds() -> None:
    text = "lorem ipsum " * (50 * 1024 * 1024 // 12)
    data = b'[{"role": "user", "content": "' + text.encode() + b'"}]'
    assert len(data) >= 50 * 1024 * 1024
    messages = check(data, limit_s=HUGE_S)
    assert messages is not None and len(messages[0].content) == len(text)
    assert check(data[:-3], limit_s=HUGE_S) is None  # the same, truncated


@pytest.mark.parametrize(
    ("chat", "place"),
    [
        ('[{"id":"a","role":"user","content":"x"},{"id":"a","role":"user","content":"y"}]', "[1]"),
        ('[{"role":"wizard","content":"x"}]', "[0].role"),
        ('[{"role":"user","content":"x"},{"role":null,"content":"x"}]', "[1].role"),
        ('{"messages":[{"role":"user","content":{"a":1}}]}', "content"),
    ],
)
def test_duplicate_ids_and_unknown_roles_name_the_message(chat: str, place: str) -> None:
    with pytest.raises(ChatFormatError) as info:
        load_chat(chat.encode())
    assert info.value.where is not None and place in info.value.where


@pytest.mark.parametrize(
    "calls",
    [
        '[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},'
        '{"id":"c1","type":"function","function":{"name":"g","arguments":"{}"}}]',
        '[{"type":"function","function":{"name":"f","arguments":"{}"}}]',
    ],
)
@pytest.mark.parametrize("answer", ['"c1"', "null", '"elsewhere"'])
def test_duplicate_or_missing_tool_call_ids_load_or_name_the_place(calls: str, answer: str) -> None:
    chat = (
        f'[{{"role":"user","content":"q"}},{{"role":"assistant","content":null,"tool_calls":{calls}}},'
        f'{{"role":"tool","tool_call_id":{answer},"content":"r"}},'
        f'{{"role":"tool","tool_call_id":{answer},"content":"r2"}}]'
    )
    check(chat.encode())


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf",
        b"\xef\xbb\xbf[]",
        b"\x00" * 64,
        b"\xff\xfe",
        b"   \n\t ",
        '[{"role":"user","content":"caf\xe9"}]'.encode("latin-1"),
        '[{"role":"user","content":"x"}]'.encode("utf-16"),
        '[{"role":"user","content":"x"}]'.encode("utf-32"),
        b'[{"role":"user","content":"\\ud800"}]',
    ],
)
def test_bom_nul_and_foreign_encodings_load_or_say_what_is_wrong(data: bytes) -> None:
    check(data)
