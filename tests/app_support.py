"""Helpers shared by the AppTest files: sample names, page runs, and a walk over every text."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any

import streamlit.testing.v1.app_test as _app_test
import streamlit.testing.v1.local_script_runner as _local_script_runner
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
REAL_CHATS = ROOT / "tests" / "fixtures" / "real_chats"
PLAYGROUND = "pages/0_Playground.py"
"""The Playground page. AppTest runs page files on their own (the router's ``st.navigation``
is not followed on reruns), so every page test targets its page file."""


# AppTest makes a new ScriptCache for every run, so each run read the page again, added
# Streamlit's "magic" to its syntax tree and compiled it (10-15 ms a run for Tune and Learn).
# A server keeps one cache for its life; the tests share one for the process the same way (page
# files do not change while the tests run).
_SCRIPTS = ScriptCache()
_app_test.ScriptCache = lambda: _SCRIPTS  # type: ignore[assignment,misc]
_local_script_runner.ScriptCache = lambda: _SCRIPTS  # type: ignore[assignment,misc]


def sample_names() -> list[str]:
    """Committed sample names; the real chats stand in while sample_chats/ is empty."""
    from ctxlab.samples import list_samples

    names = [s.name for s in list_samples() if not s.generated]
    if not names and REAL_CHATS.is_dir():
        os.environ["CTXLAB_SAMPLES_DIR"] = str(REAL_CHATS)
        names = [s.name for s in list_samples() if not s.generated]
    return names


def page(path: str, **query: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    return at


def texts(at: AppTest) -> Iterator[str]:
    """Every string an element of the page shows (values, labels, bodies, table cells)."""
    for root in (at.main, at.sidebar):
        for node in _walk(root):
            for attr in ("value", "body", "label", "caption", "help", "placeholder"):
                try:
                    value = getattr(node, attr, None)
                except Exception:  # some elements compute value lazily and may not have one
                    continue
                if isinstance(value, str):
                    yield value
                elif hasattr(value, "to_csv"):
                    yield value.to_csv()
            proto = getattr(node, "proto", None)
            if proto is not None:
                yield str(proto)


def _walk(node: object) -> Iterator[object]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def param_widget(at: AppTest, name: str, root: object = None) -> Any:
    """The widget that holds parameter ``name``: a token parameter's number box, or a slider.

    Keys are ``{namespace}p.{strategy}.{name}@{token}``; a token parameter's log slider and
    presets add suffixes (``.scale``, ``.preset.N``) and are not returned.
    """
    import re

    where: Any = root if root is not None else at.sidebar
    pattern = re.compile(rf"\.{re.escape(name)}@\d+$")
    for widget in [*where.number_input, *where.slider]:
        if widget.key and pattern.search(widget.key):
            return widget
    raise LookupError(f"no widget for parameter {name!r}")


def load_script(path: Path, name: str) -> ModuleType:
    """The script at ``path`` (a bench or scripts/ file, not a package module) imported as
    module ``name``, registered in ``sys.modules`` so its dataclasses resolve their module."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _StripReader(HTMLParser):
    """Reads a strip drawn by ``ctxlab.ui.strip``: tokens per legend entry (the ``data-tokens``
    of the blocks inside each ``data-name`` element), the blocks' tooltips, the lines'
    ``data-marker`` labels and the figure caption."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: Counter[str] = Counter()
        self.tooltips: list[str] = []
        self.markers: list[str] = []
        self.caption = ""
        self._open: list[str | None] = []  # the data-name of each open element, if any
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        layer = next((name for name in reversed(self._open) if name is not None), None)
        if "data-tokens" in values and layer is not None:
            self.tokens[layer] += float(values["data-tokens"] or 0)
            self.tooltips.append(values.get("title") or "")
        if "data-marker" in values:
            self.markers.append(values["data-marker"] or "")
        self._open.append(values.get("data-name"))
        self._in_caption = tag == "figcaption"

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()
        self._in_caption = False

    def handle_data(self, data: str) -> None:
        if self._in_caption:
            self.caption += data


def strip_of(at: AppTest, caption_prefix: str) -> tuple[str, dict[str, float]]:
    """The caption and tokens per legend entry of the HTML strip whose caption starts with
    ``caption_prefix`` (e.g. the Replay's ``"Round map at turn"``)."""
    for element in at.get("html"):
        reader = _StripReader()
        reader.feed(element.proto.body)
        if reader.caption.startswith(caption_prefix):
            return reader.caption, dict(reader.tokens)
    raise LookupError(f"no strip captioned {caption_prefix!r}")


def pick_strategy(at: AppTest, name: str, slot: int | None = None) -> AppTest:
    """Pick strategy ``name`` as a user does: its group first (ctxlab strategies or framework
    policies, when the group control is drawn), then the strategy; runs the app. ``slot``:
    Compare's configuration (0-based) instead of the sidebar's picker."""
    from ctxlab.ui.frameworks import group_of

    def root() -> Any:  # the element tree of the latest run (each run builds a new one)
        return at.sidebar if slot is None else at.main

    key = "ctx.strategy" if slot is None else f"cmp{slot}.strategy"
    group_key = "ctx.strategy_group" if slot is None else f"cmp{slot}.group"
    groups = [r for r in root().radio if r.key == group_key]
    if groups and groups[0].value != group_of(name):
        groups[0].set_value(group_of(name)).run()
    root().selectbox(key=key).set_value(name).run()
    return at
