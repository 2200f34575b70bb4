"""The fictional repository the coding-agent sample chat works in: ``ledgerline``.

ledgerline imports bank statements (CSV) into a ledger and flags duplicate transactions. The
files below are the repository as the agent finds it; :class:`Repo` serves read_file, grep and
edit_file from them, so file contents, line numbers, grep hits and diffs in the chat agree.
"""

from __future__ import annotations

import difflib
import hashlib
import re

FILES: dict[str, str] = {}

FILES["pyproject.toml"] = """\
[project]
name = "ledgerline"
version = "0.9.1"
description = "Import bank statements into a plain-text ledger"
requires-python = ">=3.9"
dependencies = ["click>=8.1", "python-dateutil>=2.8"]

[project.optional-dependencies]
dev = ["pytest>=7.4", "mypy>=1.5", "ruff>=0.1"]

[project.scripts]
ledgerline = "ledgerline.cli:main"

[tool.mypy]
strict = true
files = ["ledgerline"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

FILES["ledgerline/__init__.py"] = """\
\"\"\"ledgerline: import bank statements into a plain-text ledger.\"\"\"

__version__ = "0.9.1"
"""

FILES["ledgerline/models.py"] = """\
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal


@dataclass(frozen=True)
class Transaction:
    \"\"\"One booked line of a bank statement.\"\"\"

    booked: date
    amount: Decimal
    currency: str
    payee: str
    memo: str = ""
    reference: str | None = None
    account: str = "Assets:Checking"
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_debit(self) -> bool:
        return self.amount < 0


@dataclass
class ImportReport:
    \"\"\"What an import did: rows read, transactions created, rows skipped and why.\"\"\"

    rows_read: int = 0
    imported: list[Transaction] = field(default_factory=list)
    duplicates: list[Transaction] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
"""

FILES["ledgerline/amounts.py"] = """\
\"\"\"Parsing of money amounts as banks print them.\"\"\"

from __future__ import annotations

from decimal import Decimal

# Characters some banks put between thousands groups.
_GROUP_SEPARATORS = (".", ",", "'", " ")


def parse_amount(text: str, decimal_sep: str = ".", thousands_sep: str = ",") -> Decimal:
    \"\"\"Parse an amount such as ``1,234.56`` or ``-1.234,56`` into a Decimal.

    Args:
        text: the amount as printed in the statement.
        decimal_sep: the decimal separator of the bank's locale.
        thousands_sep: the grouping separator of the bank's locale.

    Returns:
        The amount; negative for debits.
    \"\"\"
    cleaned = text.strip()
    negative = False
    if cleaned.startswith("(") and cleaned.endswith(")"):
        negative = True
        cleaned = cleaned[1:-1]
    if cleaned.startswith("-"):
        negative = True
        cleaned = cleaned[1:]
    if thousands_sep:
        cleaned = cleaned.replace(thousands_sep, "")
    if decimal_sep != ".":
        cleaned = cleaned.replace(decimal_sep, ".")
    value = Decimal(cleaned)
    return -value if negative else value


def format_amount(value: Decimal, currency: str) -> str:
    \"\"\"Ledger notation: two decimals, currency code after the number.\"\"\"
    return f"{value:.2f} {currency}"
"""

FILES["ledgerline/profiles.py"] = """\
\"\"\"Bank profiles: how each bank lays out its CSV export.\"\"\"

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    delimiter: str
    encoding: str
    date_column: str
    date_format: str
    amount_column: str
    payee_column: str
    memo_column: str
    currency: str
    decimal_sep: str = "."
    thousands_sep: str = ","
    reference_column: str | None = None
    skip_lines: int = 0


PROFILES = {
    "chase": Profile(
        name="chase",
        delimiter=",",
        encoding="utf-8",
        date_column="Posting Date",
        date_format="%m/%d/%Y",
        amount_column="Amount",
        payee_column="Description",
        memo_column="Type",
        currency="USD",
    ),
    "sparkasse": Profile(
        name="sparkasse",
        delimiter=";",
        encoding="utf-8-sig",
        date_column="Buchungstag",
        date_format="%d.%m.%Y",
        amount_column="Betrag",
        payee_column="Beguenstigter/Zahlungspflichtiger",
        memo_column="Verwendungszweck",
        currency="EUR",
        decimal_sep=",",
        thousands_sep=".",
        reference_column="Kundenreferenz (End-to-End)",
    ),
    "revolut": Profile(
        name="revolut",
        delimiter=",",
        encoding="utf-8",
        date_column="Completed Date",
        date_format="%Y-%m-%d %H:%M:%S",
        amount_column="Amount",
        payee_column="Description",
        memo_column="Type",
        currency="EUR",
    ),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise KeyError(f"unknown bank profile {name!r} (known: {known})") from None
"""

FILES["ledgerline/importers/__init__.py"] = """\
from ledgerline.importers.csv_importer import CsvImporter

__all__ = ["CsvImporter"]
"""

FILES["ledgerline/importers/csv_importer.py"] = """\
\"\"\"Import a bank's CSV export according to its profile.\"\"\"

from __future__ import annotations

import csv
import logging
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

from ledgerline.amounts import parse_amount
from ledgerline.dedupe import Deduplicator
from ledgerline.models import ImportReport, Transaction
from ledgerline.profiles import Profile

log = logging.getLogger(__name__)


class CsvImporter:
    \"\"\"Reads one CSV statement and turns its rows into transactions.\"\"\"

    def __init__(self, profile: Profile, known: Iterable[Transaction] = ()) -> None:
        self.profile = profile
        self.dedupe = Deduplicator(known)

    def rows(self, path: Path) -> Iterator[dict[str, str]]:
        with path.open(encoding=self.profile.encoding, newline="") as handle:
            for _ in range(self.profile.skip_lines):
                next(handle)
            yield from csv.DictReader(handle, delimiter=self.profile.delimiter)

    def to_transaction(self, row: dict[str, str]) -> Transaction:
        p = self.profile
        booked = datetime.strptime(row[p.date_column].strip(), p.date_format).date()
        amount = parse_amount(row[p.amount_column], p.decimal_sep, p.thousands_sep)
        reference = row.get(p.reference_column) if p.reference_column else None
        return Transaction(
            booked=booked,
            amount=amount,
            currency=p.currency,
            payee=row[p.payee_column].strip(),
            memo=row.get(p.memo_column, "").strip(),
            reference=reference or None,
        )

    def run(self, path: Path) -> ImportReport:
        report = ImportReport()
        for report.rows_read, row in enumerate(self.rows(path), start=1):
            if not any(value.strip() for value in row.values() if value):
                report.skipped.append((report.rows_read, "empty row"))
                continue
            txn = self.to_transaction(row)
            if self.dedupe.seen(txn):
                report.duplicates.append(txn)
                continue
            report.imported.append(txn)
        log.info(
            "imported %d of %d rows from %s (%d duplicates)",
            len(report.imported),
            report.rows_read,
            path.name,
            len(report.duplicates),
        )
        return report
"""

FILES["ledgerline/dedupe.py"] = """\
\"\"\"Duplicate detection across overlapping statement exports.\"\"\"

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from ledgerline.models import Transaction


def fingerprint(txn: Transaction) -> str:
    \"\"\"A key that is equal for the same booking exported twice.\"\"\"
    payee = " ".join(txn.payee.lower().split())
    raw = f"{txn.booked.isoformat()}|{txn.amount}|{txn.currency}|{payee}"
    return hashlib.sha1(raw.encode()).hexdigest()


class Deduplicator:
    def __init__(self, known: Iterable[Transaction] = ()) -> None:
        self._seen = {fingerprint(t) for t in known}

    def seen(self, txn: Transaction) -> bool:
        \"\"\"True if ``txn`` was already imported; remembers it otherwise.\"\"\"
        key = fingerprint(txn)
        if key in self._seen:
            return True
        self._seen.add(key)
        return False
"""

FILES["ledgerline/cli.py"] = """\
from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from ledgerline.amounts import format_amount
from ledgerline.importers import CsvImporter
from ledgerline.ledger import load_ledger, append_transactions
from ledgerline.profiles import get_profile


@click.group()
@click.option("-v", "--verbose", is_flag=True)
def main(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING)


@main.command("import")
@click.argument("statement", type=click.Path(exists=True, path_type=Path))
@click.option("--profile", "profile_name", required=True)
@click.option("--ledger", type=click.Path(path_type=Path), default=Path("main.ledger"))
@click.option("--dry-run", is_flag=True)
def import_cmd(statement: Path, profile_name: str, ledger: Path, dry_run: bool) -> None:
    profile = get_profile(profile_name)
    importer = CsvImporter(profile, known=load_ledger(ledger))
    report = importer.run(statement)
    for txn in report.imported:
        click.echo(f"{txn.booked}  {txn.payee:<40} {format_amount(txn.amount, txn.currency)}")
    click.echo(
        f"{len(report.imported)} new, {len(report.duplicates)} duplicates, "
        f"{len(report.skipped)} skipped ({report.rows_read} rows)"
    )
    if not dry_run:
        append_transactions(ledger, report.imported)
    sys.exit(0)
"""

FILES["ledgerline/ledger.py"] = """\
\"\"\"Read and append to the plain-text ledger (hledger/ledger-cli syntax).\"\"\"

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from decimal import Decimal
from pathlib import Path

from ledgerline.amounts import format_amount
from ledgerline.models import Transaction

_HEADER = re.compile(r"^(\\d{4})-(\\d{2})-(\\d{2}) (.+)$")
_POSTING = re.compile(r"^\\s+(\\S+)\\s{2,}(-?\\d+\\.\\d{2}) ([A-Z]{3})$")
_MEMO = re.compile(r"^\\s+; memo: (.*)$")


def load_ledger(path: Path) -> list[Transaction]:
    \"\"\"Transactions already in the ledger (first posting of each entry).\"\"\"
    if not path.exists():
        return []
    out: list[Transaction] = []
    booked: date | None = None
    payee = memo = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if m := _HEADER.match(line):
            booked = date(int(m[1]), int(m[2]), int(m[3]))
            payee, memo = m[4], ""
        elif (m := _MEMO.match(line)) and booked:
            memo = m[1]
        elif (m := _POSTING.match(line)) and booked:
            out.append(Transaction(booked, Decimal(m[2]), m[3], payee, memo, account=m[1]))
            booked = None
    return out


def append_transactions(path: Path, txns: Iterable[Transaction]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for t in txns:
            handle.write(f"\\n{t.booked.isoformat()} {t.payee}\\n")
            if t.memo:
                handle.write(f"    ; memo: {t.memo}\\n")
            handle.write(f"    {t.account}  {format_amount(t.amount, t.currency)}\\n")
            handle.write("    Expenses:Unsorted\\n")
"""

FILES["tests/test_amounts.py"] = """\
from decimal import Decimal

import pytest

from ledgerline.amounts import format_amount, parse_amount


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12.50", Decimal("12.50")),
        ("1,234.56", Decimal("1234.56")),
        ("-0.99", Decimal("-0.99")),
        ("(45.00)", Decimal("-45.00")),
        ("  7.10 ", Decimal("7.10")),
    ],
)
def test_parse_amount_us(text: str, expected: Decimal) -> None:
    assert parse_amount(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12,50", Decimal("12.50")),
        ("1.234,56", Decimal("1234.56")),
        ("-1.234,56", Decimal("-1234.56")),
    ],
)
def test_parse_amount_eu(text: str, expected: Decimal) -> None:
    assert parse_amount(text, decimal_sep=",", thousands_sep=".") == expected


def test_parse_amount_rejects_garbage() -> None:
    with pytest.raises(ArithmeticError):
        parse_amount("twelve")


def test_format_amount_two_decimals() -> None:
    assert format_amount(Decimal("3.5"), "EUR") == "3.50 EUR"
"""

FILES["tests/test_dedupe.py"] = """\
from datetime import date
from decimal import Decimal

from ledgerline.dedupe import Deduplicator, fingerprint
from ledgerline.models import Transaction


def txn(amount: str, payee: str = "REWE Markt", day: int = 4) -> Transaction:
    return Transaction(date(2024, 3, day), Decimal(amount), "EUR", payee)


def test_same_booking_twice_is_a_duplicate() -> None:
    d = Deduplicator()
    assert not d.seen(txn("-23.40"))
    assert d.seen(txn("-23.40"))


def test_payee_whitespace_and_case_do_not_matter() -> None:
    assert fingerprint(txn("-5.00", "REWE  Markt")) == fingerprint(txn("-5.00", "rewe markt"))


def test_known_transactions_are_duplicates() -> None:
    d = Deduplicator([txn("-9.99", "Spotify")])
    assert d.seen(txn("-9.99", "Spotify"))


def test_different_day_is_not_a_duplicate() -> None:
    d = Deduplicator([txn("-9.99", "Spotify", day=4)])
    assert not d.seen(txn("-9.99", "Spotify", day=5))
"""

FILES["tests/test_csv_importer.py"] = """\
from datetime import date
from decimal import Decimal
from pathlib import Path

from ledgerline.importers import CsvImporter
from ledgerline.profiles import get_profile

FIXTURES = Path(__file__).parent / "fixtures"


def test_chase_statement_imports_every_row() -> None:
    report = CsvImporter(get_profile("chase")).run(FIXTURES / "chase_2024-02.csv")
    assert report.rows_read == 6
    assert len(report.imported) == 6
    assert report.imported[0].amount == Decimal("-4.75")


def test_sparkasse_statement_uses_eu_amounts() -> None:
    report = CsvImporter(get_profile("sparkasse")).run(FIXTURES / "sparkasse_2024-02.csv")
    assert report.imported[0].booked == date(2024, 2, 1)
    assert report.imported[0].amount == Decimal("-1250.00")


def test_overlapping_exports_are_deduplicated() -> None:
    first = CsvImporter(get_profile("chase")).run(FIXTURES / "chase_2024-02.csv")
    second = CsvImporter(get_profile("chase"), known=first.imported).run(
        FIXTURES / "chase_2024-02.csv"
    )
    assert second.imported == []
    assert len(second.duplicates) == 6
"""

FILES["tests/fixtures/sparkasse_2024-02.csv"] = (
    "\ufeffAuftragskonto;Buchungstag;Valutadatum;Buchungstext;Verwendungszweck;"
    "Kundenreferenz (End-to-End);Beguenstigter/Zahlungspflichtiger;Betrag;Waehrung\n"
    "DE44500105175407324931;01.02.2024;01.02.2024;DAUERAUFTRAG;Miete Februar;"
    "NOTPROVIDED;Hausverwaltung Krause GmbH;-1.250,00;EUR\n"
    "DE44500105175407324931;02.02.2024;02.02.2024;KARTENZAHLUNG;2024-02-01T18:22 Debitk.7;"
    "100345211;REWE Markt GmbH;-43,17;EUR\n"
    "DE44500105175407324931;05.02.2024;05.02.2024;GUTSCHRIFT;Gehalt 02/2024;"
    "LOHN-2024-02;Nordlicht Software AG;3.812,44;EUR\n"
    "DE44500105175407324931;06.02.2024;06.02.2024;LASTSCHRIFT;Vertragsnr. 88120;"
    "SEPA-8812002;Stadtwerke Bonn;-86,00;EUR\n"
)

FILES["tests/fixtures/chase_2024-02.csv"] = """\
Details,Posting Date,Description,Amount,Type,Balance,Check or Slip #
DEBIT,02/01/2024,BLUE BOTTLE COFFEE,-4.75,DEBIT_CARD,2310.25,
DEBIT,02/01/2024,MTA*NYCT PAYGO,-2.90,DEBIT_CARD,2307.35,
CREDIT,02/02/2024,ACME CORP PAYROLL,"2,950.00",ACH_CREDIT,5257.35,
DEBIT,02/03/2024,CON ED OF NY,-112.48,ACH_DEBIT,5144.87,
DEBIT,02/05/2024,TRADER JOE S #540,-63.12,DEBIT_CARD,5081.75,
DEBIT,02/05/2024,BLUE BOTTLE COFFEE,-4.75,DEBIT_CARD,5077.00,
"""

FILES["CHANGELOG.md"] = """\
# Changelog

## Unreleased

## 0.9.1 (2024-02-18)
- Revolut profile: read the `Completed Date` column instead of `Started Date`.
- `ledgerline import --dry-run` no longer creates an empty ledger file.

## 0.9.0 (2024-01-27)
- New Sparkasse profile (CSV-CAMT V2 export).
- Duplicate detection across overlapping exports.
"""

STATEMENT_MARCH = (
    "\ufeffAuftragskonto;Buchungstag;Valutadatum;Buchungstext;Verwendungszweck;"
    "Kundenreferenz (End-to-End);Beguenstigter/Zahlungspflichtiger;Betrag;Waehrung\n"
    "DE44500105175407324931;01.03.2024;01.03.2024;DAUERAUFTRAG;Miete Maerz;NOTPROVIDED;"
    "Hausverwaltung Krause GmbH;-1\u00a0250,00;EUR\n"
    "DE44500105175407324931;04.03.2024;04.03.2024;KARTENZAHLUNG;2024-03-02T09:14 Debitk.7;"
    "100377125;Baeckerei Mauel;-3,50;EUR\n"
    "DE44500105175407324931;04.03.2024;04.03.2024;KARTENZAHLUNG;2024-03-02T16:41 Debitk.7;"
    "100377361;Baeckerei Mauel;-3,50;EUR\n"
    "DE44500105175407324931;05.03.2024;05.03.2024;GUTSCHRIFT;Gehalt 03/2024;LOHN-2024-03;"
    "Nordlicht Software AG;3\u00a0812,44;EUR\n"
    "DE44500105175407324931;07.03.2024;07.03.2024;LASTSCHRIFT;Vertragsnr. 88120;SEPA-8812003;"
    "Stadtwerke Bonn;-86,00;EUR\n"
    ";;;;;;;;\n"
    "DE44500105175407324931;11.03.2024;11.03.2024;KARTENZAHLUNG;2024-03-09T11:03 Debitk.7;"
    "100381544;REWE Markt GmbH;-127,83;EUR\n"
)


class Repo:
    """The files of the fictional repo as the session edits them."""

    def __init__(self) -> None:
        self.files = dict(FILES)

    def read(self, path: str, start: int = 1, end: int | None = None) -> str:
        if path not in self.files:
            return f"Error: file not found: {path}"
        lines = self.files[path].splitlines()
        end = len(lines) if end is None else min(end, len(lines))
        body = "\n".join(f"{n:>4}  {lines[n - 1]}" for n in range(start, end + 1))
        return f"{path} (lines {start}-{end} of {len(lines)})\n{body}"

    def line(self, path: str, needle: str) -> int:
        """1-based number of the first line of ``path`` containing ``needle``."""
        for n, text in enumerate(self.files[path].splitlines(), start=1):
            if needle in text:
                return n
        raise KeyError(f"{needle!r} not in {path}")

    def grep(self, pattern: str, path: str = ".") -> str:
        regex = re.compile(pattern)
        hits = []
        for name in sorted(self.files):
            if path not in (".", "") and not name.startswith(path.rstrip("/")):
                continue
            for n, text in enumerate(self.files[name].splitlines(), start=1):
                if regex.search(text):
                    hits.append(f"{name}:{n}:{text}")
        return "\n".join(hits) if hits else f"no matches for /{pattern}/ in {path}"

    def edit(self, path: str, old: str, new: str) -> str:
        before = self.files.get(path, "")
        if path in self.files and old:
            count = before.count(old)
            if count != 1:
                return f"Error: old text occurs {count} times in {path}; make it unique"
            after = before.replace(old, new)
        else:
            after = new
        self.files[path] = after
        diff = difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", lineterm="", n=2
        )
        return f"Applied edit to {path}.\n" + "\n".join(diff)

    def git_status(self) -> str:
        """``git status --short`` against the original repository."""
        lines = [f" M {p}" for p in sorted(self.files) if p in FILES and FILES[p] != self.files[p]]
        lines += [f"?? {p}" for p in sorted(self.files) if p not in FILES]
        return "\n".join(lines)

    def git_diff(self) -> str:
        """``git diff`` of the tracked files against the original repository."""
        out: list[str] = []
        for path in sorted(self.files):
            if path not in FILES or FILES[path] == self.files[path]:
                continue
            out.append(f"diff --git a/{path} b/{path}")
            digest = hashlib.sha1(FILES[path].encode()).hexdigest()[:7]
            new_digest = hashlib.sha1(self.files[path].encode()).hexdigest()[:7]
            out.append(f"index {digest}..{new_digest} 100644")
            out.extend(
                difflib.unified_diff(
                    FILES[path].splitlines(),
                    self.files[path].splitlines(),
                    f"a/{path}",
                    f"b/{path}",
                    lineterm="",
                )
            )
        return "\n".join(out)

    def tests(self, path: str) -> list[str]:
        """Test ids in ``path`` as pytest lists them (parametrized cases expanded)."""
        ids: list[str] = []
        lines = self.files[path].splitlines()
        for n, text in enumerate(lines):
            match = re.match(r"def (test_\w+)", text)
            if not match:
                continue
            cases = 1
            if n >= 2 and lines[n - 1].startswith(")"):
                k = n - 1
                while not lines[k].startswith("@pytest.mark.parametrize"):
                    k -= 1
                # every line opening a tuple, minus the argnames tuple on the first line
                cases = sum(1 for t in lines[k:n] if t.strip().startswith('("')) - 1
            if cases > 1:
                ids.extend(f"{match.group(1)}[{i}]" for i in range(cases))
            else:
                ids.append(match.group(1))
        return ids

    def pytest(
        self,
        paths: list[str],
        failures: dict[str, str] | None = None,
        seconds: float = 0.42,
        verbose: bool = False,
    ) -> str:
        """A pytest run over ``paths``; ``failures`` maps ``path::test`` to its failure text."""
        failures = failures or {}
        out = [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.8, pytest-8.1.1, pluggy-1.4.0",
            "rootdir: /home/dev/src/ledgerline",
            "configfile: pyproject.toml",
        ]
        all_ids = [(p, t) for p in paths for t in self.tests(p)]
        out.append(f"collected {len(all_ids)} items\n")
        done = 0
        for p in paths:
            ids = self.tests(p)
            marks = []
            for t in ids:
                done += 1
                failed = f"{p}::{t}" in failures
                if verbose:
                    pct = f"[{100 * done // len(all_ids):>3}%]"
                    out.append(f"{p}::{t} {'FAILED' if failed else 'PASSED'} {pct}")
                marks.append("F" if failed else ".")
            if not verbose:
                pct = f"[{100 * done // len(all_ids):>3}%]"
                out.append(f"{p} {''.join(marks)}".ljust(73) + pct)
        if failures:
            out += [
                "",
                "=================================== FAILURES ===================================",
            ]
            for test_id, text in failures.items():
                name = test_id.split("::")[-1]
                out.append(f"{name:_^80}".replace(name, f" {name} "))
                out.append(text.rstrip())
            out.append(
                "=========================== short test summary info ============================"
            )
            for test_id, text in failures.items():
                last = [t for t in text.splitlines() if t.startswith("E ")]
                reason = last[-1][1:].strip() if last else "failed"
                out.append(f"FAILED {test_id} - {reason}"[:120])
        passed = len(all_ids) - len(failures)
        summary = f"{len(failures)} failed, {passed} passed" if failures else f"{passed} passed"
        out.append(f" {summary} in {seconds:.2f}s ".center(80, "="))
        return "\n".join(out)
