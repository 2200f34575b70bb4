"""Audit: Streamlit's Markdown-rendering calls get only text written in ctxlab's own code.

Every call of ``st.error`` / ``warning`` / ``info`` / ``success`` / ``caption`` / ``markdown`` /
``toast`` / ``exception`` / ``write`` / ``spinner`` (on ``st``, ``st.sidebar`` or a container) in
``ctxlab/ui``, ``app.py`` and ``pages/`` must pass a literal string, an f-string whose values are
numbers (a format spec) or :func:`~ctxlab.ui.text.markdown_literal` calls, or an expression listed
below with the reason it holds no text from a file, a URL or a reply. Anything else goes through
:mod:`ctxlab.ui.notices`. A new call that quotes an exception or a chat fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import streamlit as st

from ctxlab.ui import notices

ROOT = Path(__file__).resolve().parent.parent
MARKDOWN_CALLS = {
    "error", "warning", "info", "success", "caption", "markdown", "toast", "exception", "write",
    "spinner",
}  # fmt: skip
TRUSTED = {
    # strategy and model metadata: written in code (built-ins and plug-ins), never from a file
    "cls.summary": "a strategy class's docstring summary",
    "strategy.summary": "a strategy class's docstring summary",
    "ws.strategy_cls.title": "a strategy class's title",
    "ws.strategy_cls.summary": "a strategy class's docstring summary",
    "model_caption(CATALOG.get(model))": "the model catalog's data file, shipped with ctxlab",
    "render.zoom_title(first, stop, share)": "numbers only",
    "zoom_title(first, stop, share)": "numbers only",
    "usage_explanation(comparison)": "numbers and fixed text",
    "upload_link_notice(str(link))": "the URL's name goes through markdown_literal inside",
    "summary": "disagreement_summary: token counts and message kinds (fixed words)",
    "text": "insights_view: a re-summarization suggestion (parameter names and numbers)",
    "note": "export notes: fixed text per export target",
    "CACHE_EXPLANATION": "a constant",
    "STAND_IN_NOTE": "a constant",
    "dropping.explanation": "Learn page's built-in example",
    "summarizing.explanation": "Learn page's built-in example",
    "' '.join(badges)": "provider names and counts (the badge row's own Markdown)",
    "label": "Compare: the configuration's number and strategy title",
    "strategy.system_prompt_hint or ''": "a strategy class's fixed hint",
    "where": "message positions (#n)",
    "noun": "fixed words and a count",
    "', '.join((f'`{name}`' for name in FORMATS))": "Learn page: the registered format names",
    "summary.conversations": "a count",
    "summary.failed": "a count",
    "pick": "a number input's value",
    "CONTEXT_VIEW_MESSAGES": "a constant",
    "counter.label": "the token counter's fixed label (model family, encoding)",
    "counted.reply_priming": "a count",
    "ws.model": "a model from the catalog (the selectbox offers only those)",
    "result.decisions['sys'].value": "a Decision enum value",
}


def _sources() -> list[Path]:
    return [
        *sorted((ROOT / "ctxlab" / "ui").glob("*.py")),
        ROOT / "app.py",
        *sorted((ROOT / "pages").glob("*.py")),
    ]


def _is_markdown_literal(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "markdown_literal"
    )


def _untrusted_parts(node: ast.expr) -> list[str]:
    """The parts of a call's text argument that are neither code-written nor made literal."""
    if isinstance(node, ast.Constant):
        return []
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue) and not (
                value.format_spec is not None or _is_markdown_literal(value.value)
            ):
                parts.extend(_untrusted_parts(value.value))
        return parts
    if isinstance(node, ast.BinOp):
        return _untrusted_parts(node.left) + _untrusted_parts(node.right)
    if isinstance(node, ast.IfExp):
        return _untrusted_parts(node.body) + _untrusted_parts(node.orelse)
    if _is_markdown_literal(node) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
    ):
        return []  # a literal, or a count
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "plural"
        and all(isinstance(arg, ast.Constant) for arg in node.args[1:])
    ):
        return []  # ctxlab.plural.plural: a number (formatted with ",") and fixed nouns
    text = ast.unparse(node)
    if text in TRUSTED:
        USED.add(text)
        return []
    return [text]


USED: set[str] = set()


def test_markdown_rendering_calls_get_no_text_from_outside() -> None:
    found = []
    for path in _sources():
        if path.name == "notices.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MARKDOWN_CALLS
                and node.args
            ):
                continue
            owner = ast.unparse(node.func.value)
            if owner in ("notices", "re", "logging", "logger", "warnings"):
                continue
            for part in _untrusted_parts(node.args[0]):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {owner}.{node.func.attr}"
                             f"(... {part} ...)")  # fmt: skip
    assert found == [], "route these through ctxlab.ui.notices:\n" + "\n".join(found)
    assert set(TRUSTED) - USED == set(), "entries no call needs any more"


def test_the_audit_catches_a_raw_exception_in_an_error() -> None:
    call = ast.parse('st.error(f"failed: {exc}")').body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    assert _untrusted_parts(call.value.args[0]) == ["exc"]
    assert _untrusted_parts(ast.parse("str(exc)", mode="eval").body) == ["str(exc)"]


def test_notices_exist_for_each_kind_the_app_uses() -> None:
    for kind in ("error", "warning", "info", "success", "caption"):
        assert callable(getattr(notices, kind)) and callable(getattr(st, kind))
