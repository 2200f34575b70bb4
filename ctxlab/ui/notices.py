"""Errors, warnings, notes and captions whose text is shown exactly as written.

Streamlit renders the body of ``st.error``, ``st.warning``, ``st.info``, ``st.success`` and
``st.caption`` as Markdown, so an error that quotes a chat file's keys, message ids, a file name,
a URL value or a summarizer's reply could show a link, load an image from any host, or change
colour. Every such message goes through these functions, which pass it through
:func:`ctxlab.ui.text.markdown_literal`: the reader sees the text, nothing else happens.
(``tests/test_ui_notices.py`` checks that the app's pages and ``ctxlab/ui`` call Streamlit's
functions only with text written in the code.)
"""

from __future__ import annotations

from typing import Literal

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ctxlab.ui.text import markdown_literal

__all__ = ["caption", "error", "info", "success", "warning"]

Kind = Literal["error", "warning", "info", "success"]


def _show(kind: Kind, text: str, where: DeltaGenerator | None, icon: str | None) -> None:
    target = where if where is not None else st
    getattr(target, kind)(markdown_literal(text), icon=icon)


def error(text: str, *, where: DeltaGenerator | None = None, icon: str | None = None) -> None:
    """``st.error`` showing ``text`` literally (``where``: e.g. ``st.sidebar``)."""
    _show("error", text, where, icon)


def warning(text: str, *, where: DeltaGenerator | None = None, icon: str | None = None) -> None:
    """``st.warning`` showing ``text`` literally."""
    _show("warning", text, where, icon)


def info(text: str, *, where: DeltaGenerator | None = None, icon: str | None = None) -> None:
    """``st.info`` showing ``text`` literally."""
    _show("info", text, where, icon)


def success(text: str, *, where: DeltaGenerator | None = None, icon: str | None = None) -> None:
    """``st.success`` showing ``text`` literally."""
    _show("success", text, where, icon)


def caption(text: str, *, where: DeltaGenerator | None = None) -> None:
    """``st.caption`` showing ``text`` literally."""
    (where if where is not None else st).caption(markdown_literal(text))
