"""Small helpers every format reader shares: errors that name the place, JSON checks, titles.

Invariant: every failure goes through :func:`_fail`, which raises :class:`ChatFormatError`
with the place (a JSON path such as ``$.messages[3].content`` or a JSONL ``line 12``) and
what was expected; a *missing* key is reported as ``missing``, never as ``null``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Final, NoReturn

import orjson

from ctxlab.errors import ChatFormatError
from ctxlab.model import Message, Role

_ROLES: Final[dict[str, Role]] = {r.value: r for r in Role}
_ROLE_NAMES: Final = ", ".join(_ROLES)
_MAX_DEPTH: Final = 512  # nesting accepted in `extra` values of already-parsed sources
_TITLE_WIDTH: Final = 60
_MISSING: Final = object()
"""Returned by ``dict.get(key, _MISSING)`` so that a missing key and a null are told apart."""


def _fail(where: str | None, reason: str) -> NoReturn:
    raise ChatFormatError(reason, where)


def _kind(value: object) -> str:
    """The JSON name of a value's type, for messages such as ``expected a string, got number``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _at(where: str, suffix: str) -> str:
    """``where`` extended by a JSON path ``suffix``; a bare ``line N`` becomes ``line N, $...``."""
    if not suffix:
        return where
    return where + suffix if "$" in where else f"{where}, ${suffix}"


def _key_path(key: str) -> str:
    return f"[{json.dumps(key, ensure_ascii=False)}]"


def _opt_str(value: object, where: str) -> str | None:
    """``value`` if it is a string or None, else a ChatFormatError at ``where``."""
    if value is None or isinstance(value, str):
        return value
    _fail(where, f"expected a string or null, got {_kind(value)}")


def _opt_bool(value: object, where: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    _fail(where, f"expected true or false, got {_kind(value)}")


def _compact_json(value: object, where: str) -> str:
    """``value`` as compact JSON text (tool-call arguments given as an object)."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        pass
    try:  # integers beyond 64 bits, nesting beyond orjson's limit
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        _fail(where, f"expected a JSON value, got one that cannot be written as JSON ({exc})")


def _check_json(value: object, where: str) -> None:
    """Check that an already-parsed value is a JSON value (values parsed by orjson always are).

    Iterative, with a depth limit, so cyclic or absurdly deep Python values fail cleanly.
    """
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if item is None or isinstance(item, str | bool | int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                _fail(where, f"expected a JSON value, got the number {item!r}")
            continue
        if depth >= _MAX_DEPTH:
            _fail(where, f"nesting deeper than {_MAX_DEPTH} levels")
        if isinstance(item, list):
            stack.extend((x, depth + 1) for x in item)
        elif isinstance(item, dict):
            for key, x in item.items():
                if not isinstance(key, str):
                    _fail(where, f"expected string object keys, got {_kind(key)} key {key!r}")
                stack.append((x, depth + 1))
        else:
            _fail(where, f"expected a JSON value, got {_kind(item)}")


def _title(text: str) -> str:
    """One short line for a conversation picker."""
    line = " ".join(text.split())
    return line if len(line) <= _TITLE_WIDTH else line[: _TITLE_WIDTH - 1] + "…"


def _got(value: object) -> str:
    """The kind of a looked-up value for an error, ``missing`` for :data:`_MISSING`."""
    return "missing" if value is _MISSING else _kind(value)


def _bad(where: str, suffix: str, expected: str, value: object) -> NoReturn:
    """Fail with ``expected <expected>, got <kind of value>`` at ``where`` + ``suffix``.

    Paths are only built here, on failure: the readers pass the pieces.
    """
    _fail(_at(where, suffix), f"expected {expected}, got {_kind(value)}")


def _read_id(value: object) -> str | None:
    """A message's own id: a string, or an integer written as text; anything else is no id."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _index_path(base: str) -> Callable[[int], str]:
    return lambda i: f"{base}[{i}]"


def _pick_conversation(
    conversation: int | str | None, count: int, labels: Sequence[Sequence[str | None]] = ()
) -> int:
    """The index of the chosen conversation among ``count``.

    ``None`` is the first; an int is an index; a string matches, in this order, a
    conversation's id, its title (``labels[i]`` holds them), then a decimal index.
    """
    if count == 0:
        _fail("$", "the file holds no conversations")
    if conversation is None:
        return 0
    if isinstance(conversation, bool) or not isinstance(conversation, int | str):
        _fail(None, f"conversation must be an index or an id, got {_kind(conversation)}")
    if isinstance(conversation, str):
        for position in range(max((len(names) for names in labels), default=0)):
            for i, names in enumerate(labels):  # ids first, then titles
                if position < len(names) and names[position] == conversation:
                    return i
        if not conversation.strip().isdecimal():
            _fail(None, f"no conversation with id or title {conversation!r} ({count} in the file)")
        index = int(conversation)
    else:
        index = conversation
    if not 0 <= index < count:
        _fail(None, f"conversation {index} is out of range: the file holds {count}")
    return index


def _duplicate_id(own: str, first: int, second: int, path_of: Callable[[int], str]) -> NoReturn:
    _fail(
        _at(path_of(second), ".id"),
        f"duplicate message id {own!r}: {path_of(first)} has the same id",
    )


def _avoid_given_ids(out: list[Message], owners: dict[str, int]) -> None:
    """Rename, in place, assigned ids equal to an own id of the chat: ``m3`` -> ``m3_1``.

    ``owners`` maps each own id to the position of its message in ``out``. A message whose id
    is an own id but that sits elsewhere got its id assigned, so it is the one renamed.
    """
    taken = set(owners)
    for k, msg in enumerate(out):
        owner = owners.get(msg.id)
        if owner is not None and owner != k:
            n = 1
            while f"{msg.id}_{n}" in taken:
                n += 1
            out[k] = msg.replace(id=f"{msg.id}_{n}")
            taken.add(out[k].id)
