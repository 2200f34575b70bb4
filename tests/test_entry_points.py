"""``may_declare`` (issue 15, CLI start): skipping importlib.metadata never hides a plug-in.

``ctxlab show`` used to import ``importlib.metadata`` and read every installed package's metadata
to find format plug-ins that no installed package declares. ``may_declare`` says False only when
``importlib.metadata.entry_points`` would find nothing; these tests compare the two on this
machine's packages and on a package made up in a temporary folder, and load a format plug-in end
to end through the registry.
"""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxlab._entry_points import may_declare
from ctxlab.formats import _registry

INSTALLED_GROUPS = sorted(
    {entry.group for dist in importlib.metadata.distributions() for entry in dist.entry_points}
    | {"ctxlab.formats", "no.such"}
)


@pytest.mark.parametrize("group", INSTALLED_GROUPS)
def test_false_only_when_importlib_metadata_finds_nothing(group: str) -> None:
    found = importlib.metadata.entry_points(group=group)
    assert may_declare(group) or not found, group
    if found:
        assert may_declare(group)


PLUGIN_MODULE = """
from ctxlab.formats._registry import ChatFormat, register
from ctxlab.formats._values import LoadedChat


def _read(document, options):
    raise AssertionError("not read in this test")


register(ChatFormat("made-up-format", "a format a test plug-in adds", _read, order=1, shown=1))
"""


@pytest.fixture
def plugin_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path holding an installed-looking package that declares a format
    plug-in, and a registry that has not yet looked for plug-ins."""
    (tmp_path / "made_up_plugin.py").write_text(PLUGIN_MODULE)
    info = tmp_path / "made_up_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: made-up-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [console_scripts]
            made-up = made_up_plugin:main

            [ctxlab.formats]
            made-up-format = made_up_plugin
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    _registry.discover_builtins()
    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))
    monkeypatch.setattr(_registry, "_PLUGINS_LOADED", False)
    monkeypatch.delitem(sys.modules, "made_up_plugin", raising=False)
    yield tmp_path
    sys.modules.pop("made_up_plugin", None)


def test_a_declared_format_plugin_is_seen_and_loaded(plugin_folder: Path) -> None:
    assert may_declare("ctxlab.formats")
    assert [e.name for e in importlib.metadata.entry_points(group="ctxlab.formats")] == [
        "made-up-format"
    ]
    assert "made-up-format" in _registry.format_names()
    assert _registry.get_format("made-up-format").title == "a format a test plug-in adds"


def test_a_group_named_only_inside_another_line_is_not_a_reason_to_skip(
    plugin_folder: Path,
) -> None:
    # The substring test is deliberately loose: a mention anywhere means "ask importlib".
    entry_points = plugin_folder / "made_up_plugin-1.0.dist-info" / "entry_points.txt"
    entry_points.write_text("[console_scripts]\nx = made_up_plugin:ctxlab.formats\n")
    assert may_declare("ctxlab.formats")
    assert not importlib.metadata.entry_points(group="ctxlab.formats")


def test_without_a_declaring_package_the_registry_skips_importlib_metadata(
    plugin_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (plugin_folder / "made_up_plugin-1.0.dist-info" / "entry_points.txt").unlink()
    if may_declare("ctxlab.formats"):
        pytest.skip("a package installed here declares ctxlab.formats entry points")

    def refuse(**kwargs: object) -> None:
        raise AssertionError("importlib.metadata.entry_points was asked")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    assert "made-up-format" not in _registry.format_names()
    assert "openai" in _registry.format_names()


def test_a_zip_on_sys_path_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("zipped-1.0.dist-info/METADATA", "Name: zipped\nVersion: 1.0\n")
        bundle.writestr("zipped-1.0.dist-info/entry_points.txt", "[no.such.group]\nx = y\n")
    monkeypatch.syspath_prepend(str(archive))
    assert may_declare("no.such.group")
    assert [e.name for e in importlib.metadata.entry_points(group="no.such.group")] == ["x"]


def test_another_distribution_finder_is_left_to_importlib_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Finder:
        @staticmethod
        def find_distributions(context: object = None) -> Iterator[object]:
            return iter(())

    assert not may_declare("no.such.group")
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert may_declare("no.such.group")
