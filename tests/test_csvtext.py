"""ctxlab.csvtext: CSV cells a spreadsheet would run as formulas are neutralised (OWASP)."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.csvtext import FORMULA_TRIGGERS, csv_text, spreadsheet_cell

PROBES = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "=1"]
CELLS = st.one_of(st.text(), st.integers(), st.floats(allow_nan=False), st.none())


def _parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_each_formula_probe_gets_a_leading_quote_and_nothing_else_changes() -> None:
    text = csv_text(["cell", "n"], [[probe, -2] for probe in PROBES] + [["plain", 1.5]])
    rows = _parse(text)
    assert rows[0] == ["cell", "n"]
    assert [row[0] for row in rows[1:-1]] == ["'" + probe for probe in PROBES]
    assert all(row[1] == "-2" for row in rows[1:-1])  # a negative number stays a number
    assert rows[-1] == ["plain", "1.5"]


def test_a_string_that_is_only_a_number_is_left_as_it_is() -> None:
    for number in ("-2", "+3", "-0.5", "-1e5", "+.5"):
        assert spreadsheet_cell(number) == number
    for not_a_number in ("-2+3", "- 2", "-1_000", "-inf", "-", "+"):
        assert spreadsheet_cell(not_a_number) == "'" + not_a_number


@given(st.lists(st.lists(CELLS, min_size=1, max_size=4), max_size=6))
def test_no_parsed_cell_starts_a_formula_unless_it_was_a_number(
    rows: list[list[object]],
) -> None:
    width = max((len(r) for r in rows), default=1)
    padded = [r + [""] * (width - len(r)) for r in rows]
    parsed = _parse(csv_text([f"c{i}" for i in range(width)], padded))[1:]
    for original, cells in zip(padded, parsed, strict=True):
        for value, cell in zip(original, cells, strict=True):
            if isinstance(value, str):
                if cell.startswith(FORMULA_TRIGGERS):
                    assert cell == value and spreadsheet_cell(value) == value  # a plain number
                assert cell in (value, "'" + value)
            elif isinstance(value, int | float):
                assert cell == str(value)
