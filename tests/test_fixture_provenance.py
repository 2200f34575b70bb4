"""Every vendored fixture folder says where its files come from and under which licence."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
FOLDERS = sorted(
    p for p in [*(FIXTURES / "formats").iterdir(), FIXTURES / "token_counts"] if p.is_dir()
)
PERMISSIVE = ("MIT", "Apache-2.0", "BSD", "CC0", "CC-BY")


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_each_fixture_folder_names_source_and_licence(folder: Path) -> None:
    provenance = (folder / "PROVENANCE.md").read_text()
    assert any(licence in provenance for licence in PERMISSIVE)
    for path in folder.rglob("*"):
        if path.is_file() and path.name != "PROVENANCE.md" and path.parent == folder:
            assert path.name in provenance or "*.jsonl" in provenance, path.name
