"""The coding-agent sample: a bug hunt in ``ledgerline`` (see _coding_repo.py).

The user reports a crash importing a Sparkasse statement; the agent reproduces it, finds the
no-break-space thousands separator, fixes parse_amount, then fixes duplicate detection, the
ledger round trip of bank references, mypy and ruff findings, and a trailing-minus format.
Every read, grep and diff is computed from the repository, so line numbers agree throughout.
"""

from __future__ import annotations

from typing import Any

from _chat_builder import Call, ChatBuilder
from _coding_repo import STATEMENT_MARCH, Repo

ROOT = "/home/dev/src/ledgerline"
VENV = "/home/dev/.venvs/ledgerline/lib/python3.11/site-packages"

SYSTEM = """\
You are a senior software engineer working as an autonomous coding agent in the user's \
repository at /home/dev/src/ledgerline (Python 3.11, virtualenv active). You can call these tools:

- read_file(path, start_line?, end_line?): show a file with line numbers
- grep(pattern, path): search files with a Python regular expression
- edit_file(path, old, new): replace the exact text `old` (which must occur once) with `new`; \
with an empty `old` the file is created or overwritten
- run_tests(paths, verbose?): run pytest on the given paths
- run_shell(command): run a shell command in the repository root (no network)

Work in small verified steps: reproduce first, read before you edit, run the tests after every \
change. Keep diffs minimal and in the style of the surrounding code. When you are done, explain \
what you changed and why, and mention anything you noticed but did not change."""


def _click_frames() -> str:
    frames = [
        ("click/core.py", 1157, "__call__", "return self.main(*args, **kwargs)"),
        ("click/core.py", 1078, "main", "rv = self.invoke(ctx)"),
        (
            "click/core.py",
            1688,
            "invoke",
            "return _process_result(sub_ctx.command.invoke(sub_ctx))",
        ),
        ("click/core.py", 1434, "invoke", "return ctx.invoke(self.callback, **ctx.params)"),
        ("click/core.py", 783, "invoke", "return __callback(*args, **kwargs)"),
    ]
    return "".join(
        f'  File "{VENV}/{f}", line {n}, in {fn}\n    {code}\n' for f, n, fn, code in frames
    )


def _traceback(repo: Repo, value_line: str) -> str:
    cli = repo.line("ledgerline/cli.py", "report = importer.run(statement)")
    run = repo.line("ledgerline/importers/csv_importer.py", "txn = self.to_transaction(row)")
    conv = repo.line("ledgerline/importers/csv_importer.py", "amount = parse_amount(")
    dec = repo.line("ledgerline/amounts.py", value_line)
    return (
        "Traceback (most recent call last):\n"
        '  File "/home/dev/.venvs/ledgerline/bin/ledgerline", line 8, in <module>\n'
        "    sys.exit(main())\n"
        f"{_click_frames()}"
        f'  File "{ROOT}/ledgerline/cli.py", line {cli}, in import_cmd\n'
        "    report = importer.run(statement)\n"
        f'  File "{ROOT}/ledgerline/importers/csv_importer.py", line {run}, in run\n'
        "    txn = self.to_transaction(row)\n"
        f'  File "{ROOT}/ledgerline/importers/csv_importer.py", line {conv}, in to_transaction\n'
        "    amount = parse_amount(row[p.amount_column], p.decimal_sep, p.thousands_sep)\n"
        f'  File "{ROOT}/ledgerline/amounts.py", line {dec}, in parse_amount\n'
        f"    {value_line}\n"
        "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"
    )


def _read(repo: Repo, path: str, start: int = 1, end: int | None = None) -> Call:
    args: dict[str, Any] = {"path": path}
    if start != 1 or end is not None:
        args.update(start_line=start, end_line=end)
    return Call("read_file", args, repo.read(path, start, end))


def _grep(repo: Repo, pattern: str, path: str = ".") -> Call:
    return Call("grep", {"pattern": pattern, "path": path}, repo.grep(pattern, path))


def _edit(repo: Repo, path: str, old: str, new: str) -> Call:
    return Call("edit_file", {"path": path, "old": old, "new": new}, repo.edit(path, old, new))


def _tests(repo: Repo, paths: list[str], failures: dict[str, str] | None = None, **kw: Any) -> Call:
    args: dict[str, Any] = {"paths": paths}
    if kw.get("verbose"):
        args["verbose"] = True
    return Call("run_tests", args, repo.pytest(paths, failures, **kw))


def _shell(command: str, output: str) -> Call:
    return Call("run_shell", {"command": command}, output)


ALL_TESTS = ["tests/test_amounts.py", "tests/test_csv_importer.py", "tests/test_dedupe.py"]


def build() -> dict[str, Any]:
    repo = Repo()
    b = ChatBuilder("cas")
    b.system(SYSTEM)
    original_tb = _traceback(repo, "value = Decimal(cleaned)")

    # Round 1: the crash ----------------------------------------------------------------------
    b.user(
        "ledgerline crashes on my March statement from Sparkasse. February imported fine with "
        "the same profile. This is what I get:\n\n"
        "```\n$ ledgerline import statements/2024-03-sparkasse.csv --profile sparkasse\n"
        f"{original_tb}\n```\n\n"
        "The file is in statements/ (not committed, it has my account data). Can you find out "
        "what is going on and fix it? Please don't print more of my statement than you need."
    )
    b.tools(
        "I'll reproduce it first with --dry-run so nothing is written to the ledger.",
        _shell(
            "ledgerline -v import statements/2024-03-sparkasse.csv --profile sparkasse --dry-run",
            "DEBUG:ledgerline.importers.csv_importer:reading statements/2024-03-sparkasse.csv "
            "(profile sparkasse, encoding utf-8-sig)\n" + original_tb,
        ),
    )
    b.tools(
        "Reproduced. The failure is in `Decimal(cleaned)`, so `parse_amount` receives something "
        "it cannot clean. Let me read it together with the importer and the profile.",
        _read(repo, "ledgerline/amounts.py"),
    )
    b.tools(
        "parse_amount removes only `thousands_sep` and swaps the decimal separator. Now the "
        "caller, to see which separators it passes.",
        _read(repo, "ledgerline/importers/csv_importer.py"),
    )
    b.tools(
        None,
        _read(repo, "ledgerline/profiles.py"),
    )
    b.tools(
        "The Sparkasse profile uses `,` as decimal and `.` as thousands separator, and February "
        "worked, so the March file must print amounts differently. I'll look at the raw bytes "
        "of the amount column only (column 8), for the first three data rows.",
        _shell(
            "python - <<'EOF'\nimport csv\nwith open('statements/2024-03-sparkasse.csv', "
            "encoding='utf-8-sig', newline='') as f:\n    rows = list(csv.reader(f, "
            "delimiter=';'))\nfor row in rows[1:4]:\n    print(repr(row[7]), row[7].encode())\nEOF",
            "'-1\\xa0250,00' b'-1\\xc2\\xa0250,00'\n'-3,50' b'-3,50'\n'-3,50' b'-3,50'",
        ),
    )
    b.tools(
        "Found it: the March export groups thousands with U+00A0 (NO-BREAK SPACE, `c2 a0` in "
        "UTF-8) instead of `.`. parse_amount only removes the profile's `thousands_sep`, so "
        "`1\\xa0250.00` reaches Decimal. Let me check how February's file looked and whether "
        "anything else calls parse_amount.",
        _shell(
            "grep -c $'\\xc2\\xa0' statements/2024-02-sparkasse.csv "
            "statements/2024-03-sparkasse.csv",
            "statements/2024-02-sparkasse.csv:0\nstatements/2024-03-sparkasse.csv:2",
        ),
        _grep(repo, r"parse_amount\("),
    )
    b.tools(
        "Only the importer calls it. Reading the existing tests before I change the function.",
        _read(repo, "tests/test_amounts.py"),
        _tests(repo, ["tests/test_amounts.py"]),
    )
    b.tools(
        "All green before the change. Sparkasse changed their export (the CSV-CAMT V2 format "
        "now localises the number with a no-break space). Since a bank may use any of the "
        "Unicode space characters for grouping, I'll drop every space-like grouping character "
        "in addition to the profile's separator.",
        _edit(
            repo,
            "ledgerline/amounts.py",
            '    if thousands_sep:\n        cleaned = cleaned.replace(thousands_sep, "")\n',
            '    if thousands_sep:\n        cleaned = cleaned.replace(thousands_sep, "")\n'
            "    # Some exports group thousands with a (no-break) space whatever the locale.\n"
            '    cleaned = cleaned.replace("\\u00a0", "").replace(" ", "")\n',
        ),
    )
    b.tools(
        "Now regression tests for the grouping characters I have seen in bank exports: U+00A0 "
        "and U+202F (NARROW NO-BREAK SPACE, which French and Swiss exports use).",
        _edit(
            repo,
            "tests/test_amounts.py",
            '        ("-1.234,56", Decimal("-1234.56")),\n    ],\n)\ndef test_parse_amount_eu(',
            '        ("-1.234,56", Decimal("-1234.56")),\n'
            '        ("-1\\u00a0250,00", Decimal("-1250.00")),\n'
            '        ("3\\u202f812,44", Decimal("3812.44")),\n'
            "    ],\n)\ndef test_parse_amount_eu(",
        ),
    )
    narrow = repo.line("ledgerline/amounts.py", "value = Decimal(cleaned)")
    assert_line = repo.line("tests/test_amounts.py", 'thousands_sep=".") ==')
    fail_narrow = (
        "\ntext = '3\\u202f812,44', expected = Decimal('3812.44')\n\n"
        "    @pytest.mark.parametrize(\n"
        "    ...\n"
        "    def test_parse_amount_eu(text: str, expected: Decimal) -> None:\n"
        '>       assert parse_amount(text, decimal_sep=",", thousands_sep=".") == expected\n\n'
        f"tests/test_amounts.py:{assert_line}"
        ": \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n\n"
        "text = '3\\u202f812,44', decimal_sep = ',', thousands_sep = '.'\n\n"
        '    def parse_amount(text: str, decimal_sep: str = ".", thousands_sep: str = ",") '
        "-> Decimal:\n    ...\n"
        '        cleaned = cleaned.replace("\\u00a0", "").replace(" ", "")\n'
        '        if decimal_sep != ".":\n'
        '            cleaned = cleaned.replace(decimal_sep, ".")\n'
        ">       value = Decimal(cleaned)\n"
        "E       decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]\n\n"
        f"ledgerline/amounts.py:{narrow}: InvalidOperation"
    )
    b.tools(
        None,
        _tests(
            repo,
            ["tests/test_amounts.py"],
            {"tests/test_amounts.py::test_parse_amount_eu[4]": fail_narrow},
            seconds=0.47,
        ),
    )
    b.tools(
        "My first version only handled U+00A0 and the ASCII space, so U+202F still fails. "
        "Rather than listing characters one by one I'll remove every character whose Unicode "
        "category is Zs (space separator); that covers U+00A0, U+2007, U+2009 and U+202F.",
        _edit(
            repo,
            "ledgerline/amounts.py",
            "    # Some exports group thousands with a (no-break) space whatever the locale.\n"
            '    cleaned = cleaned.replace("\\u00a0", "").replace(" ", "")\n',
            "    # Some exports group thousands with a (no-break, narrow, thin) space whatever\n"
            "    # the locale: drop every space separator (Unicode category Zs).\n"
            '    cleaned = "".join(ch for ch in cleaned if unicodedata.category(ch) != "Zs")\n',
        ),
        _edit(
            repo,
            "ledgerline/amounts.py",
            "from decimal import Decimal\n",
            "import unicodedata\nfrom decimal import Decimal\n",
        ),
    )
    b.tools(None, _tests(repo, ["tests/test_amounts.py"], seconds=0.44, verbose=True))
    b.tools(
        "Unit tests pass. Now the real file again, still as a dry run.",
        _shell(
            "ledgerline import statements/2024-03-sparkasse.csv --profile sparkasse --dry-run",
            "2024-03-01  Hausverwaltung Krause GmbH               -1250.00 EUR\n"
            "2024-03-04  Baeckerei Mauel                          -3.50 EUR\n"
            "2024-03-05  Nordlicht Software AG                    3812.44 EUR\n"
            "2024-03-07  Stadtwerke Bonn                          -86.00 EUR\n"
            "2024-03-11  REWE Markt GmbH                          -127.83 EUR\n"
            "5 new, 1 duplicates, 1 skipped (7 rows)",
        ),
    )
    b.tools(
        "The import works. One thing looks wrong though: 1 duplicate in a single fresh "
        "statement. Let me see which row that is (date, payee and amount only).",
        _shell(
            "python - <<'EOF'\nfrom pathlib import Path\nfrom ledgerline.importers import "
            "CsvImporter\nfrom ledgerline.profiles import get_profile\nr = CsvImporter("
            "get_profile('sparkasse')).run(Path('statements/2024-03-sparkasse.csv'))\n"
            "for t in r.duplicates:\n    print(t.booked, t.payee, t.amount, t.reference)\n"
            "print(r.skipped)\nEOF",
            "2024-03-04 Baeckerei Mauel -3.50 100377361\n[(6, 'empty row')]",
        ),
    )
    b.assistant(
        "Fixed. The crash came from the March export itself: Sparkasse now groups thousands "
        "with a no-break space (U+00A0), so `-1 250,00` reached `Decimal()` as "
        "`-1\\xa0250.00`. February's file used `.` and therefore worked.\n\n"
        "**Change** (`ledgerline/amounts.py`): after removing the profile's thousands "
        "separator, `parse_amount` now also drops every Unicode space separator (category "
        "Zs: U+00A0, U+202F, U+2009, ...). My first attempt only handled U+00A0 and the test "
        "for U+202F caught it.\n\n**Tests**: two new cases in `tests/test_amounts.py`; the "
        "file passes (14 tests). A dry run of your statement imports 5 transactions.\n\n"
        "**Something I did not change**: the dry run reports *1 duplicate*: two card payments "
        "of 3.50 EUR at Baeckerei Mauel on 2024-03-04. They have different bank references "
        "(100377125 and 100377361) and different times in the memo (09:14 and 16:41), so I "
        "think they are two real purchases that the deduplicator merges because its "
        "fingerprint is only date + amount + currency + payee. Do you want me to look at that? "
        "The empty row 6 (`;;;;;;;;`) is skipped as before."
    )

    # Round 2: duplicates ----------------------------------------------------------------------
    b.user(
        "Yes, those are two real purchases (bread in the morning, cake in the afternoon). "
        "Please fix the dedupe so it uses the bank reference when there is one. Careful: "
        "Chase has no reference column at all, and Sparkasse writes NOTPROVIDED for standing "
        "orders."
    )
    b.tools(
        "Reading the deduplicator, the model and their tests.",
        _read(repo, "ledgerline/dedupe.py"),
        _read(repo, "ledgerline/models.py"),
    )
    b.tools(
        "The fingerprint has no reference in it, which explains the merge. The tests:",
        _read(repo, "tests/test_dedupe.py"),
    )
    b.tools(
        "Where do references come from and who else reads them?",
        _grep(repo, "reference"),
    )
    b.tools(
        "`reference` is filled by the importer only. Existing transactions come from "
        "`load_ledger`, so I need to know whether the ledger keeps references; if it does "
        "not, adding the reference to the fingerprint would make every re-import of an "
        "overlapping statement look new.",
        _read(repo, "ledgerline/ledger.py"),
        _read(repo, "ledgerline/cli.py"),
    )
    b.tools(
        "As suspected: `append_transactions` writes payee, memo and amount but no reference, "
        "and `load_ledger` cannot read one back. So this needs three changes: (1) the ledger "
        "stores the reference as a `; ref:` comment and reads it back, (2) the fingerprint "
        "uses the reference when there is a real one, (3) `NOTPROVIDED` and empty values "
        "count as no reference. Let me check the sentinel values in the fixture first.",
        _read(repo, "tests/fixtures/sparkasse_2024-02.csv"),
        _grep(repo, "NOTPROVIDED|Kundenreferenz"),
    )
    b.tools(
        "Step 3 first, in the importer, so a Transaction never carries a sentinel.",
        _edit(
            repo,
            "ledgerline/importers/csv_importer.py",
            "        reference = row.get(p.reference_column) if p.reference_column else None\n",
            '        reference = (row.get(p.reference_column) or "").strip() '
            'if p.reference_column else ""\n'
            "        if reference.upper() in _NO_REFERENCE:\n"
            '            reference = ""\n',
        ),
        _edit(
            repo,
            "ledgerline/importers/csv_importer.py",
            "log = logging.getLogger(__name__)\n",
            "log = logging.getLogger(__name__)\n\n"
            "# Values banks write into the reference column when there is no reference.\n"
            '_NO_REFERENCE = frozenset({"", "NOTPROVIDED", "NONE", "-"})\n',
        ),
    )
    b.tools(
        "Step 2: the fingerprint. With a reference, two bookings are the same exactly when "
        "date, amount, currency and reference agree (the payee text can change between "
        "exports, the reference cannot). Without one, keep the old key so Chase behaves as "
        "before.",
        _edit(
            repo,
            "ledgerline/dedupe.py",
            '    payee = " ".join(txn.payee.lower().split())\n'
            '    raw = f"{txn.booked.isoformat()}|{txn.amount}|{txn.currency}|{payee}"\n',
            "    if txn.reference:\n"
            '        raw = f"{txn.booked.isoformat()}|{txn.amount}|{txn.currency}|ref:'
            '{txn.reference}"\n'
            "    else:\n"
            '        payee = " ".join(txn.payee.lower().split())\n'
            '        raw = f"{txn.booked.isoformat()}|{txn.amount}|{txn.currency}|{payee}"\n',
        ),
    )
    b.tools(
        "Step 1: persist the reference in the ledger and parse it back.",
        _edit(
            repo,
            "ledgerline/ledger.py",
            '            if t.memo:\n                handle.write(f"    ; memo: {t.memo}\\n")\n',
            '            if t.memo:\n                handle.write(f"    ; memo: {t.memo}\\n")\n'
            "            if t.reference:\n"
            '                handle.write(f"    ; ref: {t.reference}\\n")\n',
        ),
        _edit(
            repo,
            "ledgerline/ledger.py",
            '_MEMO = re.compile(r"^\\s+; memo: (.*)$")\n',
            '_MEMO = re.compile(r"^\\s+; memo: (.*)$")\n_REF = re.compile(r"^\\s+; ref: (.*)$")\n',
        ),
    )
    b.tools(
        None,
        _edit(
            repo,
            "ledgerline/ledger.py",
            '    payee = memo = ""\n',
            '    payee = memo = reference = ""\n',
        ),
        _edit(
            repo,
            "ledgerline/ledger.py",
            '            payee, memo = m[4], ""\n'
            "        elif (m := _MEMO.match(line)) and booked:\n            memo = m[1]\n"
            "        elif (m := _POSTING.match(line)) and booked:\n"
            "            out.append(Transaction(booked, Decimal(m[2]), m[3], payee, memo, "
            "account=m[1]))\n",
            '            payee, memo, reference = m[4], "", ""\n'
            "        elif (m := _MEMO.match(line)) and booked:\n            memo = m[1]\n"
            "        elif (m := _REF.match(line)) and booked:\n            reference = m[1]\n"
            "        elif (m := _POSTING.match(line)) and booked:\n"
            "            out.append(\n                Transaction(\n"
            "                    booked, Decimal(m[2]), m[3], payee, memo, reference or None, "
            "account=m[1]\n                )\n            )\n",
        ),
    )
    b.tools(
        "Tests: dedupe by reference, the NOTPROVIDED sentinel, and a ledger round trip. I'll "
        "also add the March statement shape as a fixture (synthetic values, not your data).",
        _edit(
            repo,
            "tests/test_dedupe.py",
            "def test_different_day_is_not_a_duplicate() -> None:",
            "def test_same_purchase_twice_with_different_references_is_kept() -> None:\n"
            "    d = Deduplicator()\n"
            '    first = Transaction(date(2024, 3, 4), Decimal("-3.50"), "EUR", "Baeckerei", '
            'reference="1001")\n'
            '    second = Transaction(date(2024, 3, 4), Decimal("-3.50"), "EUR", '
            '"Baeckerei", reference="1002")\n'
            "    assert not d.seen(first)\n    assert not d.seen(second)\n\n\n"
            "def test_reference_wins_over_payee_spelling() -> None:\n"
            '    a = Transaction(date(2024, 3, 4), Decimal("-3.50"), "EUR", '
            '"BAECKEREI MAUEL", '
            'reference="1001")\n'
            '    b = Transaction(date(2024, 3, 4), Decimal("-3.50"), "EUR", "Mauel GmbH", '
            'reference="1001")\n'
            "    assert fingerprint(a) == fingerprint(b)\n\n\n"
            "def test_different_day_is_not_a_duplicate() -> None:",
        ),
        _edit(
            repo,
            "tests/fixtures/sparkasse_2024-03.csv",
            "",
            STATEMENT_MARCH.replace("1\u00a0250,00", "1\u00a0100,00")
            .replace("3\u00a0812,44", "2\u00a0999,99")
            .replace("DE44500105175407324931", "DE02120300000000202051"),
        ),
    )
    b.tools(
        None,
        _edit(
            repo,
            "tests/test_csv_importer.py",
            "def test_overlapping_exports_are_deduplicated() -> None:",
            "def test_nbsp_amounts_and_two_equal_purchases() -> None:\n"
            '    report = CsvImporter(get_profile("sparkasse")).run(FIXTURES / '
            '"sparkasse_2024-03.csv")\n'
            "    assert report.rows_read == 6\n"
            "    assert [t.amount for t in report.imported][:3] == [\n"
            '        Decimal("-1100.00"), Decimal("-3.50"), Decimal("-3.50")\n    ]\n'
            "    assert report.duplicates == []\n"
            "    assert report.imported[0].reference is None  # NOTPROVIDED\n\n\n"
            "def test_reimport_after_ledger_round_trip_finds_duplicates(tmp_path: Path) -> None:\n"
            '    ledger = tmp_path / "main.ledger"\n'
            '    first = CsvImporter(get_profile("sparkasse")).run(FIXTURES / '
            '"sparkasse_2024-03.csv")\n'
            "    append_transactions(ledger, first.imported)\n"
            '    again = CsvImporter(get_profile("sparkasse"), known=load_ledger(ledger)).run(\n'
            '        FIXTURES / "sparkasse_2024-03.csv"\n    )\n'
            "    assert again.imported == []\n"
            "    assert len(again.duplicates) == len(first.imported)\n\n\n"
            "def test_overlapping_exports_are_deduplicated() -> None:",
        ),
        _edit(
            repo,
            "tests/test_csv_importer.py",
            "from ledgerline.importers import CsvImporter\n",
            "from ledgerline.importers import CsvImporter\n"
            "from ledgerline.ledger import append_transactions, load_ledger\n",
        ),
    )
    rows_line = repo.line("tests/test_csv_importer.py", "assert report.rows_read == 6")
    fail_rows = (
        "\n    def test_nbsp_amounts_and_two_equal_purchases() -> None:\n"
        '        report = CsvImporter(get_profile("sparkasse")).run(FIXTURES / '
        '"sparkasse_2024-03.csv")\n'
        ">       assert report.rows_read == 6\n"
        "E       AssertionError: assert 7 == 6\n"
        "E        +  where 7 = ImportReport(rows_read=7, imported=[Transaction(booked=datetime."
        "date(2024, 3, 1), amount=Decimal('-1100.00'), currency='EUR', payee='Hausverwaltung "
        "Krause GmbH', memo='Miete Maerz', reference=None, account='Assets:Checking', "
        "tags=()), ...], duplicates=[], skipped=[(6, 'empty row')]).rows_read\n\n"
        f"tests/test_csv_importer.py:{rows_line}: AssertionError"
    )
    b.tools(
        None,
        _tests(
            repo,
            ALL_TESTS,
            {"tests/test_csv_importer.py::test_nbsp_amounts_and_two_equal_purchases": fail_rows},
            seconds=0.61,
        ),
    )
    b.tools(
        "My test was wrong, not the code: `rows_read` counts the empty row too (7 rows, one "
        "skipped), which is what the CLI summary reported earlier. Fixing the expectation and "
        "asserting the skip explicitly.",
        _edit(
            repo,
            "tests/test_csv_importer.py",
            '"sparkasse_2024-03.csv")\n    assert report.rows_read == 6\n',
            '"sparkasse_2024-03.csv")\n    assert report.rows_read == 7\n'
            '    assert report.skipped == [(6, "empty row")]\n',
        ),
    )
    b.tools(None, _tests(repo, ALL_TESTS, seconds=0.58, verbose=True))
    b.tools(
        "All 23 pass. Dry run on your statement again:",
        _shell(
            "ledgerline import statements/2024-03-sparkasse.csv --profile sparkasse --dry-run "
            "| tail -1",
            "6 new, 0 duplicates, 1 skipped (7 rows)",
        ),
    )
    b.assistant(
        "Done: both bakery purchases are imported now (6 new, 0 duplicates).\n\n"
        "What changed:\n"
        "1. `dedupe.fingerprint` uses date + amount + currency + **bank reference** when the "
        "transaction has one, and falls back to the old date + amount + currency + payee key "
        "when it has none (Chase, Revolut).\n"
        "2. The importer maps `NOTPROVIDED`, `NONE`, `-` and empty references to no reference "
        "(`_NO_REFERENCE` in csv_importer.py), so standing orders dedupe as before.\n"
        "3. `ledger.py` now writes `; ref: <reference>` under an entry and reads it back. "
        "Without this, every re-import of an overlapping statement would have produced "
        "duplicates, because transactions loaded from the ledger had no reference. "
        "`test_reimport_after_ledger_round_trip_finds_duplicates` covers it.\n\n"
        "Note: entries already in your ledger have no `; ref:` line, so the *first* re-import "
        "of a statement that overlaps them can produce duplicates for Sparkasse rows. If that "
        "matters, I can add a one-off `ledgerline backfill-refs` command, or you can import "
        "March only from 2024-03-01 on (which is what you do anyway)."
    )

    # Round 3: the whole CI suite ------------------------------------------------------------
    b.user("Good. CI runs pytest, mypy and ruff. Please run all three and make them pass.")
    ref_line = repo.line("ledgerline/importers/csv_importer.py", "reference = (row.get")
    b.tools(
        "Running the three CI checks.",
        _tests(repo, ALL_TESTS, seconds=0.55),
        _shell(
            "mypy",
            'ledgerline/cli.py:11: error: Module "ledgerline.ledger" has no attribute '
            '"load_ledger"; maybe "_load_ledger"?  [attr-defined]\n'
            "Found 1 error in 1 file (checked 9 source files)",
        ),
        _shell(
            "ruff check .",
            "ledgerline/cli.py:3:1: I001 [*] Import block is un-sorted or un-formatted\n"
            f"ledgerline/importers/csv_importer.py:{ref_line}:101: E501 Line too long "
            "(104 > 100)\nFound 2 errors.\n[*] 1 fixable with the `--fix` option.",
        ),
    )
    b.tools(
        "The attr-defined error looks wrong: `load_ledger` exists in the source tree. Let me "
        "check whether an installed copy shadows it.",
        _shell(
            "python -c 'import ledgerline.ledger as m; print(m.__file__)'; pip show -f "
            "ledgerline | grep -E 'Version|Location|Editable'",
            f"{VENV}/ledgerline/ledger.py\nVersion: 0.8.2\nLocation: {VENV}\n",
        ),
    )
    b.tools(
        "That explains it: the virtualenv has a stale non-editable install of ledgerline "
        "0.8.2 (where the function was still private), and mypy resolved the import there. "
        "Reinstalling in editable mode, then re-running mypy.",
        _shell(
            "pip install -q -e '.[dev]' && python -c 'import ledgerline.ledger as m; "
            "print(m.__file__)'",
            f"{ROOT}/ledgerline/ledger.py",
        ),
        _shell("mypy", "Success: no issues found in 9 source files"),
        _shell("ruff check --fix ledgerline/cli.py", "Found 1 error (1 fixed, 0 remaining)."),
    )
    # what `ruff check --fix` did to the file
    repo.edit(
        "ledgerline/cli.py",
        "from ledgerline.ledger import load_ledger, append_transactions\n",
        "from ledgerline.ledger import append_transactions, load_ledger\n",
    )
    b.tools(
        "mypy is clean against the source tree. The E501 is in my own change; reading the "
        "lines around it.",
        _read(repo, "ledgerline/importers/csv_importer.py", ref_line - 6, ref_line + 12),
    )
    b.tools(
        "Splitting the conditional expression into a plain `if` keeps the line under 100 "
        "characters and reads better.",
        _edit(
            repo,
            "ledgerline/importers/csv_importer.py",
            '        reference = (row.get(p.reference_column) or "").strip() '
            'if p.reference_column else ""\n',
            '        reference = ""\n'
            "        if p.reference_column:\n"
            '            reference = (row.get(p.reference_column) or "").strip()\n',
        ),
    )
    b.tools(
        None,
        _shell(
            "ruff check . && ruff format --check .",
            "All checks passed!\n14 files already formatted",
        ),
        _tests(repo, ALL_TESTS, seconds=0.57),
    )
    b.assistant(
        "All three CI checks pass: pytest (23 passed), mypy (no issues in 9 files), ruff "
        "(lint and format).\n\nWhat I found:\n"
        "- Your virtualenv had a stale **non-editable** ledgerline 0.8 in site-packages, which "
        "made mypy report a bogus `attr-defined` error; I reinstalled with `pip install -e "
        "'.[dev]'`. CI creates a fresh env, so it was never affected.\n"
        "- ruff flagged a too-long line in my own change (split into a plain `if`) and an "
        "unsorted import block in cli.py (fixed with `ruff check --fix`)."
    )

    # Round 4: trailing minus -----------------------------------------------------------------
    b.user(
        "One more format: my wife's account (also Sparkasse, but exported through "
        "StarMoney) writes debits with the minus at the END, like `1.250,00-`. Is that "
        "handled now?"
    )
    b.tools(
        "Checking directly.",
        _shell(
            'python -c "from ledgerline.amounts import parse_amount as p; '
            "print(p('1.250,00-', ',', '.'))\"",
            'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
            f'  File "{ROOT}/ledgerline/amounts.py", line '
            f"{repo.line('ledgerline/amounts.py', 'value = Decimal(cleaned)')}, in "
            "parse_amount\n    value = Decimal(cleaned)\n"
            "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]",
        ),
    )
    b.tools(
        "Not handled. A trailing minus is the SAP/StarMoney convention; I'll accept it next to "
        "the leading minus and the accounting parentheses, and reject a sign on both ends.",
        _edit(
            repo,
            "ledgerline/amounts.py",
            '    if cleaned.startswith("-"):\n        negative = True\n'
            "        cleaned = cleaned[1:]\n",
            '    if cleaned.startswith("-"):\n        negative = True\n'
            "        cleaned = cleaned[1:]\n"
            '    if cleaned.endswith("-"):\n'
            "        if negative:\n"
            '            raise ValueError(f"amount has two signs: {text!r}")\n'
            "        negative = True\n"
            "        cleaned = cleaned[:-1].rstrip()\n",
        ),
        _edit(
            repo,
            "tests/test_amounts.py",
            '        ("3\\u202f812,44", Decimal("3812.44")),\n',
            '        ("3\\u202f812,44", Decimal("3812.44")),\n'
            '        ("1.250,00-", Decimal("-1250.00")),\n'
            '        ("86,00 -", Decimal("-86.00")),\n',
        ),
        _edit(
            repo,
            "tests/test_amounts.py",
            "def test_format_amount_two_decimals() -> None:",
            "def test_parse_amount_rejects_two_signs() -> None:\n"
            '    with pytest.raises(ValueError, match="two signs"):\n'
            '        parse_amount("-1.250,00-", decimal_sep=",", thousands_sep=".")\n\n\n'
            "def test_format_amount_two_decimals() -> None:",
        ),
    )
    b.tools(
        None,
        _tests(repo, ALL_TESTS, seconds=0.6, verbose=True),
        _shell(
            "mypy && ruff check . && ruff format --check .",
            "Success: no issues found in 9 source files\nAll checks passed!\n"
            "14 files already formatted",
        ),
    )
    b.tools(
        "Everything passes. Final look at the complete change.",
        Call("run_shell", {"command": "git status --short"}, repo.git_status()),
        Call("run_shell", {"command": "git diff"}, repo.git_diff()),
    )
    b.assistant(
        "Handled now. `parse_amount` accepts a trailing minus (`1.250,00-` and `86,00 -`) "
        "besides a leading one and accounting parentheses, and raises `ValueError` when an "
        "amount carries a sign on both ends instead of guessing. Three new tests; the whole "
        "suite passes (26 tests), mypy and ruff are clean.\n\n"
        "For StarMoney exports you will probably also want a separate profile, since their "
        "column names differ from Sparkasse's own export (`Buchungsdatum`, `Empfaenger`). "
        "Send me a header line and I'll add it."
    )

    # Round 4b: a question without tools ------------------------------------------------------
    b.user(
        "Out of curiosity: why would a bank suddenly put a no-break space in a CSV? Is that a "
        "bug on their side?"
    )
    b.assistant(
        "Probably not a bug, more a side effect. A no-break space is the correct digit "
        "grouping character in many locales' typography (it keeps `1 250` from wrapping "
        "across lines), and libraries such as ICU or Java's NumberFormat use U+00A0 or "
        "U+202F when they format a number *for display*. If the bank's new export reuses the "
        "formatting code of their web banking, the display format leaks into the CSV. A CSV "
        "meant for machines should use no grouping at all, so you could report it, but since "
        "other banks do the same, ledgerline should be tolerant either way."
    )

    # Round 5: changelog + commit message -----------------------------------------------------
    b.user("Add a changelog entry for all of this and give me a commit message.")
    b.tools(
        None,
        _read(repo, "CHANGELOG.md"),
    )
    b.tools(
        None,
        _edit(
            repo,
            "CHANGELOG.md",
            "## Unreleased\n",
            "## Unreleased\n"
            "- Amounts grouped with Unicode spaces (U+00A0, U+202F, ...) parse again; "
            "Sparkasse's March 2024 export uses them.\n"
            "- Amounts with a trailing minus (`1.250,00-`, StarMoney/SAP) are read as "
            "debits; a sign on both ends is an error.\n"
            "- Duplicate detection uses the bank reference when there is one, so two equal "
            "purchases on one day are both imported. `NOTPROVIDED` counts as no reference.\n"
            "- The ledger stores references as `; ref:` comments and reads them back.\n",
        ),
    )
    b.assistant(
        "Changelog updated under *Unreleased*. Suggested commit message:\n\n```\n"
        "Fix Sparkasse import: Unicode digit grouping, trailing minus, dedupe by reference\n\n"
        "- parse_amount drops every Unicode space separator (Zs) used for digit grouping;\n"
        "  Sparkasse's CSV-CAMT export groups with U+00A0 since March 2024.\n"
        "- parse_amount accepts a trailing minus and rejects a sign on both ends.\n"
        "- fingerprint() keys on the bank reference when present; NOTPROVIDED and\n"
        "  empty references count as none, so Chase/Revolut dedupe as before.\n"
        "- The ledger writes and reads `; ref:` so re-imports still deduplicate.\n"
        "- Tests for all of the above plus a synthetic March fixture.\n```"
    )
    # Round 6: a StarMoney profile -----------------------------------------------------------
    b.user(
        "You offered a StarMoney profile. Here is the header line of their export:\n"
        "`Buchungsdatum;Valuta;Empfaenger/Auftraggeber;Verwendungszweck;Betrag;Waehrung`\n"
        "I think the files are Windows-1252, umlauts look broken in my editor."
    )
    b.tools(
        "Checking the encoding of the real file first (header only).",
        _shell(
            "file -bi statements/2024-03-starmoney.csv; head -1 statements/2024-03-starmoney.csv "
            '| python -c "import sys; b = sys.stdin.buffer.read(); print(b[:90]); '
            "print(b.decode('cp1252')[:90])\"",
            "text/plain; charset=iso-8859-1\n"
            "b'Buchungsdatum;Valuta;Empf\\xe4nger/Auftraggeber;Verwendungszweck;Betrag;"
            "W\\xe4hrung\\r\\n'\n"
            "Buchungsdatum;Valuta;Empfänger/Auftraggeber;Verwendungszweck;Betrag;Währung",
        ),
    )
    b.tools(
        "Windows-1252 indeed, with CRLF line ends, and the real header has umlauts "
        "(`Empfänger`, `Währung`), unlike the transliterated line you pasted. The profile "
        "must use the exact column names as decoded.",
        _edit(
            repo,
            "ledgerline/profiles.py",
            '    "revolut": Profile(\n',
            '    "starmoney": Profile(\n'
            '        name="starmoney",\n'
            '        delimiter=";",\n'
            '        encoding="cp1252",\n'
            '        date_column="Buchungsdatum",\n'
            '        date_format="%d.%m.%Y",\n'
            '        amount_column="Betrag",\n'
            '        payee_column="Empfänger/Auftraggeber",\n'
            '        memo_column="Verwendungszweck",\n'
            '        currency="EUR",\n'
            '        decimal_sep=",",\n'
            '        thousands_sep=".",\n'
            "    ),\n"
            '    "revolut": Profile(\n',
        ),
    )
    b.tools(
        "A synthetic fixture in the same shape (made-up values) and a test.",
        _edit(
            repo,
            "tests/fixtures/starmoney_2024-03.csv",
            "",
            "Buchungsdatum;Valuta;Empfänger/Auftraggeber;Verwendungszweck;Betrag;Währung\n"
            "01.03.2024;01.03.2024;Hausverwaltung Krause GmbH;Miete März;1.100,00-;EUR\n"
            "04.03.2024;04.03.2024;Bäckerei Mauel;Kartenzahlung;3,50-;EUR\n"
            "05.03.2024;05.03.2024;Nordlicht Software AG;Gehalt 03/2024;2.999,99;EUR\n",
        ),
        _edit(
            repo,
            "tests/test_csv_importer.py",
            "def test_overlapping_exports_are_deduplicated() -> None:",
            "def test_starmoney_statement_cp1252_and_trailing_minus() -> None:\n"
            '    report = CsvImporter(get_profile("starmoney")).run(FIXTURES / '
            '"starmoney_2024-03.csv")\n'
            "    assert [t.amount for t in report.imported] == [\n"
            '        Decimal("-1100.00"), Decimal("-3.50"), Decimal("2999.99")\n    ]\n'
            '    assert report.imported[1].payee == "Bäckerei Mauel"\n\n\n'
            "def test_overlapping_exports_are_deduplicated() -> None:",
        ),
    )
    payee_line = repo.line("tests/test_csv_importer.py", 'payee == "Bäckerei Mauel"')
    starmoney_test = "test_starmoney_statement_cp1252_and_trailing_minus"
    fail_payee = (
        "\n    def test_starmoney_statement_cp1252_and_trailing_minus() -> None:\n"
        '        report = CsvImporter(get_profile("starmoney")).run(FIXTURES / '
        '"starmoney_2024-03.csv")\n'
        "        assert [t.amount for t in report.imported] == [\n"
        '            Decimal("-1100.00"), Decimal("-3.50"), Decimal("2999.99")\n        ]\n'
        '>       assert report.imported[1].payee == "Bäckerei Mauel"\n'
        "E       AssertionError: assert 'BÃ¤ckerei Mauel' == 'Bäckerei Mauel'\n"
        "E         \n"
        "E         - Bäckerei Mauel\n"
        "E         ?  ^\n"
        "E         + BÃ¤ckerei Mauel\n"
        "E         ?  ^^\n\n"
        f"tests/test_csv_importer.py:{payee_line}: AssertionError"
    )
    b.tools(
        None,
        _tests(
            repo,
            ALL_TESTS,
            {f"tests/test_csv_importer.py::{starmoney_test}": fail_payee},
            seconds=0.63,
        ),
    )
    b.tools(
        "Classic mojibake: the amounts are right, but `BÃ¤ckerei` means UTF-8 bytes decoded "
        "as cp1252. The profile is correct; my fixture is not, because edit_file writes "
        "UTF-8. Converting the fixture to Windows-1252 with CRLF, like the real export.",
        _shell(
            "iconv -f utf-8 -t cp1252 tests/fixtures/starmoney_2024-03.csv | sed 's/$/\\r/' > "
            "/tmp/sm.csv && mv /tmp/sm.csv tests/fixtures/starmoney_2024-03.csv && file -bi "
            "tests/fixtures/starmoney_2024-03.csv",
            "text/plain; charset=iso-8859-1",
        ),
        _tests(repo, ALL_TESTS, seconds=0.61),
    )
    b.tools(
        "Green. The real file, dry run:",
        _shell(
            "ledgerline import statements/2024-03-starmoney.csv --profile starmoney --dry-run "
            "| tail -3",
            "2024-03-26  Bäckerei Mauel                           -4.20 EUR\n"
            "2024-03-28  Stadtwerke Bonn                          -64.00 EUR\n"
            "41 new, 0 duplicates, 0 skipped (41 rows)",
        ),
        _shell(
            "mypy && ruff check . && ruff format --check .",
            "Success: no issues found in 9 source files\nAll checks passed!\n"
            "14 files already formatted",
        ),
    )
    b.assistant(
        "Added the `starmoney` profile (`ledgerline/profiles.py`): `;`-separated, "
        "**Windows-1252**, `dd.mm.yyyy`, EU amounts (the trailing minus is handled by the "
        "earlier change). Note that the real header says `Empfänger/Auftraggeber` with an "
        "umlaut, so that is the column name in the profile. Your March file imports 41 rows. "
        "New test with a cp1252 fixture; everything passes."
    )

    # Round 7: backfill references ------------------------------------------------------------
    b.user(
        "And yes to the backfill command. My ledger has three years of Sparkasse entries "
        "without `; ref:` lines and I have all the statements in statements/."
    )
    b.tools(
        "Reading the current ledger module and the CLI again, since both changed today.",
        _read(repo, "ledgerline/ledger.py"),
        _read(repo, "ledgerline/cli.py"),
    )
    b.tools(
        "Plan: for each statement row with a reference, find the ledger entry with the same "
        "date, amount and normalised payee that has no `; ref:` yet, and insert the line. "
        "When two entries match one row (like the two bakery purchases), skip and report "
        "them instead of guessing. The ledger is rewritten atomically. First the ledger "
        "function:",
        _edit(
            repo,
            "ledgerline/ledger.py",
            "def append_transactions(",
            "def add_references(path: Path, txns: Iterable[Transaction]) -> tuple[int, list["
            "Transaction]]:\n"
            '    """Insert `; ref:` lines for entries matching ``txns``.\n\n'
            "    Returns the number of references added and the transactions that matched "
            'more\n    than one entry (left unchanged).\n    """\n'
            '    lines = path.read_text(encoding="utf-8").splitlines()\n'
            "    headers: dict[tuple[str, str, str], list[int]] = {}\n"
            "    for n, line in enumerate(lines):\n"
            "        if (m := _HEADER.match(line)) and n + 2 < len(lines):\n"
            "            has_ref = any(_REF.match(x) for x in lines[n + 2 : n + 4])\n"
            "            posting = next((_POSTING.match(x) for x in lines[n + 1 : n + 4] if "
            "_POSTING.match(x)), None)\n"
            "            if posting and not has_ref:\n"
            '                key = (line[:10], posting[2], " ".join(m[4].lower().split()))\n'
            "                headers.setdefault(key, []).append(n)\n"
            "    inserts: dict[int, str] = {}\n    ambiguous: list[Transaction] = []\n"
            "    for t in txns:\n"
            "        if not t.reference:\n            continue\n"
            '        key = (t.booked.isoformat(), f"{t.amount:.2f}", " ".join('
            "t.payee.lower().split()))\n"
            "        found = headers.get(key, [])\n"
            "        if len(found) == 1:\n            inserts[found[0]] = t.reference\n"
            "        elif len(found) > 1:\n            ambiguous.append(t)\n"
            "    out: list[str] = []\n"
            "    for n, line in enumerate(lines):\n        out.append(line)\n"
            '        if n in inserts:\n            out.append(f"    ; ref: {inserts[n]}")\n'
            '    tmp = path.with_suffix(".tmp")\n'
            '    tmp.write_text("\\n".join(out) + "\\n", encoding="utf-8")\n'
            "    tmp.replace(path)\n"
            "    return len(inserts), ambiguous\n\n\n"
            "def append_transactions(",
        ),
    )
    b.tools(
        "Now the command. It reads every statement given, with one profile, and supports "
        "--dry-run by working on a copy.",
        _edit(
            repo,
            "ledgerline/cli.py",
            "    if not dry_run:\n        append_transactions(ledger, report.imported)\n"
            "    sys.exit(0)\n",
            "    if not dry_run:\n        append_transactions(ledger, report.imported)\n"
            "    sys.exit(0)\n\n\n"
            '@main.command("backfill-refs")\n'
            '@click.argument("statements", nargs=-1, type=click.Path(exists=True, '
            "path_type=Path))\n"
            '@click.option("--profile", "profile_name", required=True)\n'
            '@click.option("--ledger", type=click.Path(exists=True, path_type=Path), '
            'default=Path("main.ledger"))\n'
            '@click.option("--dry-run", is_flag=True)\n'
            "def backfill_cmd(statements: tuple[Path, ...], profile_name: str, ledger: Path, "
            "dry_run: bool) -> None:\n"
            "    importer = CsvImporter(get_profile(profile_name))\n"
            "    txns = [t for s in statements for t in importer.run(s).imported]\n"
            "    target = ledger\n"
            "    if dry_run:\n"
            "        target = Path(tempfile.mkdtemp()) / ledger.name\n"
            "        shutil.copy(ledger, target)\n"
            "    added, ambiguous = add_references(target, txns)\n"
            "    for t in ambiguous:\n"
            '        click.echo(f"ambiguous: {t.booked} {t.payee} {t.amount} ref {t.reference}'
            '")\n'
            '    verb = "would add" if dry_run else "added"\n'
            '    click.echo(f"{verb} {added} references, {len(ambiguous)} ambiguous")\n',
        ),
        _edit(
            repo,
            "ledgerline/cli.py",
            "import logging\nimport sys\n",
            "import logging\nimport shutil\nimport sys\nimport tempfile\n",
        ),
        _edit(
            repo,
            "ledgerline/cli.py",
            "from ledgerline.ledger import append_transactions, load_ledger\n",
            "from ledgerline.ledger import add_references, append_transactions, load_ledger\n",
        ),
    )
    b.tools(
        "Tests: a reference is added once, a second run adds nothing, the two equal bakery "
        "entries are reported as ambiguous.",
        _edit(
            repo,
            "tests/test_ledger.py",
            "",
            "from datetime import date\nfrom decimal import Decimal\nfrom pathlib import Path\n\n"
            "from ledgerline.ledger import add_references, append_transactions, load_ledger\n"
            "from ledgerline.models import Transaction\n\n\n"
            "def t(payee: str, amount: str, ref: str | None = None) -> Transaction:\n"
            '    return Transaction(date(2024, 3, 4), Decimal(amount), "EUR", payee, '
            "reference=ref)\n\n\n"
            "def test_backfill_adds_each_reference_once(tmp_path: Path) -> None:\n"
            '    ledger = tmp_path / "main.ledger"\n'
            '    append_transactions(ledger, [t("Stadtwerke Bonn", "-86.00")])\n'
            '    assert add_references(ledger, [t("Stadtwerke Bonn", "-86.00", '
            '"SEPA-1")]) == (1, [])\n'
            '    assert add_references(ledger, [t("Stadtwerke Bonn", "-86.00", '
            '"SEPA-1")]) == (0, [])\n'
            '    assert load_ledger(ledger)[0].reference == "SEPA-1"\n\n\n'
            "def test_backfill_reports_ambiguous_matches(tmp_path: Path) -> None:\n"
            '    ledger = tmp_path / "main.ledger"\n'
            '    append_transactions(ledger, [t("Baeckerei Mauel", "-3.50")] * 2)\n'
            '    added, ambiguous = add_references(ledger, [t("Baeckerei Mauel", "-3.50", '
            '"1001")])\n'
            "    assert (added, len(ambiguous)) == (0, 1)\n",
        ),
    )
    ledger_tests = [*ALL_TESTS, "tests/test_ledger.py"]
    once_line = repo.line("tests/test_ledger.py", '"SEPA-1")]) == (0, [])')
    fail_once = (
        "\ntmp_path = PosixPath('/tmp/pytest-of-dev/pytest-41/"
        "test_backfill_adds_each_reference0')\n\n"
        "    def test_backfill_adds_each_reference_once(tmp_path: Path) -> None:\n"
        '        ledger = tmp_path / "main.ledger"\n'
        '        append_transactions(ledger, [t("Stadtwerke Bonn", "-86.00")])\n'
        '        assert add_references(ledger, [t("Stadtwerke Bonn", "-86.00", "SEPA-1")]) == '
        "(1, [])\n"
        '>       assert add_references(ledger, [t("Stadtwerke Bonn", "-86.00", "SEPA-1")]) == '
        "(0, [])\n"
        "E       AssertionError: assert (1, []) == (0, [])\n"
        "E         \n"
        "E         At index 0 diff: 1 != 0\n\n"
        f"tests/test_ledger.py:{once_line}: AssertionError"
    )
    b.tools(
        None,
        _tests(
            repo,
            ledger_tests,
            {"tests/test_ledger.py::test_backfill_adds_each_reference_once": fail_once},
            seconds=0.71,
        ),
    )
    b.tools(
        "The second run adds the reference again. Reading the check I wrote: the window "
        "`lines[n + 2 : n + 4]` starts one line too late. It skips the line directly under "
        "the header, which is exactly where the reference is inserted.",
        _read(repo, "ledgerline/ledger.py", 38, 60),
    )
    b.tools(
        None,
        _edit(
            repo,
            "ledgerline/ledger.py",
            "            has_ref = any(_REF.match(x) for x in lines[n + 2 : n + 4])\n",
            "            entry = lines[n + 1 : next((k for k in range(n + 1, len(lines)) if not "
            "lines[k].strip()), len(lines))]\n"
            "            has_ref = any(_REF.match(x) for x in entry)\n",
        ),
    )
    b.tools(
        "Instead of fixing the offset, the check now scans the whole entry (up to the next "
        "blank line), so a `; ref:` written by hand below the memo also counts. Re-running.",
        _tests(repo, ledger_tests, seconds=0.69, verbose=True),
        _shell(
            "ruff format ledgerline && ruff check . && mypy",
            "2 files reformatted, 12 files left unchanged\nAll checks passed!\n"
            "Success: no issues found in 9 source files",
        ),
    )
    b.tools(
        "All green. Dry run on your real ledger with every Sparkasse statement:",
        _shell(
            "ls statements/*-sparkasse.csv | wc -l && ledgerline backfill-refs "
            "statements/*-sparkasse.csv --profile sparkasse --ledger main.ledger --dry-run",
            "36\nambiguous: 2022-07-15 Baeckerei Mauel -2.80 ref 100102284\n"
            "ambiguous: 2023-11-03 DB Vertrieb GmbH -29.90 ref 100288103\n"
            "ambiguous: 2024-03-04 Baeckerei Mauel -3.50 ref 100377125\n"
            "would add 1114 references, 3 ambiguous",
        ),
    )
    b.assistant(
        "`ledgerline backfill-refs` is ready (`ledger.add_references` + the command in "
        "cli.py, tests in the new `tests/test_ledger.py`; all tests pass, mypy and ruff "
        "clean). My first version re-added references on a second run: it looked at the wrong "
        "two "
        "lines below each header for an existing `; ref:`, off by one; it now checks the whole "
        "entry.\n\n"
        "Dry run over your 36 Sparkasse statements: it **would add 1,114 references**; 3 "
        "rows match two identical entries and are left alone (two bakery days and one DB "
        "ticket). To apply it, run the same command without `--dry-run` (back up main.ledger "
        "first); for the 3 ambiguous ones, add `; ref:` by hand if you care about them."
    )
    return b.document(
        "Coding agent: Sparkasse import bug hunt",
        "A coding agent reproduces and fixes a crash in a Python bank-statement importer: "
        "reads files, greps, edits and runs tests (with real-looking failures, tracebacks "
        "and diffs) over eight user requests. Tool outputs dominate the tokens.",
    )
