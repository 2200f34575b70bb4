"""Tool definitions in every provider's spelling, read into :class:`ToolDefinition` values.

Accepted shapes of one item of a ``tools`` list:

* OpenAI Chat Completions: ``{"type": "function", "function": {name, description, parameters}}``
  (``custom`` tools: ``{"type": "custom", "custom": {name, description, format}}``);
* OpenAI Responses: ``{"type": "function", name, description, parameters}``;
* Anthropic: ``{name, description, input_schema}``, and server tools ``{type, name, ...}``
  (their other keys become the parameters, so they are counted);
* Gemini: ``{"functionDeclarations": [{name, description, parameters}]}`` (or
  ``function_declarations``), each declaration one tool;
* ShareGPT / LLaMA-Factory: the whole list as a JSON *string*.

Invariant: every definition in the file becomes one value (nothing is dropped); anything that is
not one of these shapes is a ChatFormatError naming its path.
"""

from __future__ import annotations

from typing import Any

import orjson

from ctxlab.formats._common import _MISSING, _compact_json, _fail, _got, _kind
from ctxlab.formats._values import ToolDefinition

_SCHEMA_KEYS = ("parameters", "input_schema", "parametersJsonSchema", "format")


def read_tools(value: object, where: str) -> tuple[ToolDefinition, ...]:
    """The tool definitions of a ``tools`` value (None or missing: none)."""
    if value is None or value is _MISSING:
        return ()
    if isinstance(value, str):  # ShareGPT keeps the list as JSON text
        if not value.strip():
            return ()
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            _fail(where, f"expected a JSON list of tool definitions, got text ({exc.msg})")
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        _fail(where, f"expected a list of tool definitions, got {_kind(value)}")
    out: list[ToolDefinition] = []
    for i, item in enumerate(value):
        here = f"{where}[{i}]"
        if not isinstance(item, dict):
            _fail(here, f"expected a tool definition object, got {_kind(item)}")
        declarations = item.get("functionDeclarations", item.get("function_declarations"))
        if declarations is not None:
            if not isinstance(declarations, list):
                _fail(f"{here}.functionDeclarations", f"expected a list, got {_kind(declarations)}")
            for j, decl in enumerate(declarations):
                out.append(_one(decl, f"{here}.functionDeclarations[{j}]", "function"))
            continue
        if set(item) <= {"googleSearch", "google_search", "codeExecution", "code_execution"}:
            for key, spec in item.items():  # Gemini built-in tools: no schema to count
                out.append(ToolDefinition(key, "", _compact_json(spec, here), key))
            continue
        kind = item.get("type", "function")
        if not isinstance(kind, str):
            _fail(f"{here}.type", f"expected a tool type string, got {_kind(kind)}")
        inner = item.get(kind) if kind in ("function", "custom") else None
        if isinstance(inner, dict):
            out.append(_one(inner, f"{here}.{kind}", kind))
        else:
            out.append(_one(item, here, kind))
    return tuple(out)


def _one(decl: object, where: str, kind: str) -> ToolDefinition:
    """One ``{name, description, parameters | input_schema}`` declaration."""
    if not isinstance(decl, dict):
        _fail(where, f"expected a function declaration object, got {_kind(decl)}")
    name = decl.get("name", _MISSING)
    if not isinstance(name, str):
        _fail(f"{where}.name", f"expected a tool name string, got {_got(name)}")
    description = decl.get("description")
    if description is not None and not isinstance(description, str):
        _fail(f"{where}.description", f"expected a string, got {_kind(description)}")
    schema: Any = None
    for key in _SCHEMA_KEYS:
        if key in decl:
            schema = decl[key]
            break
    if schema is None:
        # A server tool (web search, code execution...): its settings are what is sent.
        rest = {k: v for k, v in decl.items() if k not in ("name", "description", "type")}
        schema = rest
    return ToolDefinition(name, description or "", _compact_json(schema, where), kind)
