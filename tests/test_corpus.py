"""Fleet evaluation: configurations, rows, the DuckDB store, re-runs, faults, executors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import corpus_helpers
import duckdb
import pytest

from ctxlab.corpus import (
    ConfigOutcome,
    configuration,
    evaluate_conversation,
    open_corpus,
    parse_grid,
    run_corpus,
)
from ctxlab.corpus.report import configuration_report, open_results, worst_conversations
from ctxlab.corpus.work import ConfigRows
from ctxlab.errors import CtxlabError, ParameterError
from ctxlab.model import Message, Role, ToolCall
from ctxlab.replay import replay
from ctxlab.tokens import get_counter

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_chats"
SMALL = ("support_function_calls", "compaction_chain", "hostile_content", "secrets_in_tool_outputs")
GRID = [
    *parse_grid("window-drop:budget=2000,6000"),
    *parse_grid("clear-tool-results:trigger_tokens=3000;keep_tool_results=1"),
    *parse_grid("sliding-window:window=6"),
]


def _raw_messages(name: str) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads((SAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    return list(data["messages"])


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    """Four small samples, a two-conversation JSONL file and a broken file."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for name in SMALL:
        shutil.copy(SAMPLES / f"{name}.json", folder / f"{name}.json")
    lines = [json.dumps({"messages": _raw_messages(n)[:12]}) for n in SMALL[:2]]
    (folder / "two_conversations.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "broken.json").write_text('{"messages": [', encoding="utf-8")
    return folder


def _dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted, so two runs can be compared."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            table: sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
            for table in (
                "configurations",
                "conversations",
                "results",
                "calls",
                "errors",
                "sources",
            )
        }
    finally:
        con.close()


# -- configurations ---------------------------------------------------------------------------


def test_grid_is_the_cartesian_product_with_coerced_values() -> None:
    grid = parse_grid("clear-tool-results:trigger_tokens=1000,2000;keep_tool_results=1,2,3")
    assert len(grid) == 6
    pairs = [(dict(c.params)["trigger_tokens"], dict(c.params)["keep_tool_results"]) for c in grid]
    assert pairs == [(t, k) for t in (1000, 2000) for k in (1, 2, 3)]
    assert all(isinstance(t, int) for t, _ in pairs)


def test_configuration_key_ignores_spelling_and_order_but_not_values() -> None:
    a = configuration("window-drop", {"budget": "4000"})
    b = configuration("window-drop", {"budget": 4000})
    c = configuration("window-drop", {"budget": 4001})
    d = configuration("window-drop", {"budget": 4000}, model="gpt-4o-mini")
    assert a.key == b.key
    assert len({a.key, c.key, d.key}) == 3
    assert a.budget == 4000  # the strategy's own token budget


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("window-drop:budget=lots", "budget"),
        ("window-drop:nope=1", "nope"),
        ("window-drop:budget", "param=v1,v2"),
        ("no-such-strategy:x=1", "no-such-strategy"),
    ],
)
def test_bad_grid_names_the_problem(spec: str, needle: str) -> None:
    with pytest.raises(CtxlabError, match=needle):
        parse_grid(spec)


# -- one conversation -------------------------------------------------------------------------


def _tool_chat() -> tuple[Message, ...]:
    out: list[Message] = [Message(Role.SYSTEM, "You help with orders.", "s")]
    for i in range(6):
        out.append(Message(Role.USER, f"Where is order {1000 + i}? " + "detail " * 80, f"u{i}"))
        call = ToolCall(f"c{i}", "lookup_order", json.dumps({"order": 1000 + i}))
        out.append(Message(Role.ASSISTANT, "", f"a{i}", tool_calls=(call,)))
        out.append(Message(Role.TOOL, "status shipped " * 120, f"t{i}", tool_call_id=f"c{i}"))
        out.append(Message(Role.ASSISTANT, f"Order {1000 + i} has shipped.", f"r{i}"))
    return tuple(out)


def test_call_rows_carry_the_replay_numbers_and_check_the_budget(counter: Any) -> None:
    chat = _tool_chat()
    config = configuration("window-drop", {"budget": 300})
    (outcome,) = evaluate_conversation(chat, [config])
    assert outcome.error is None and outcome.totals is not None
    expected = replay(chat, config.build(), get_counter("gpt-4o"), model="gpt-4o")
    assert [r.tokens_sent for r in outcome.calls] == [r.tokens_sent for r in expected.rows]
    assert [r.tokens_untrimmed for r in outcome.calls] == [
        r.tokens_untrimmed for r in expected.rows
    ]
    assert [r.over_budget for r in outcome.calls] == [r.tokens_sent > 300 for r in expected.rows]
    assert any(r.over_budget for r in outcome.calls) and not all(
        r.over_budget for r in outcome.calls
    )
    for row in outcome.calls:  # every message the strategy saw got exactly one decision
        seen = row.kept + row.dropped + row.summarized + row.cleared + row.pinned
        assert seen == row.message_index
        assert row.messages_sent == row.kept + row.pinned + row.cleared + row.inserted
    totals = outcome.totals
    assert totals.calls == 12
    assert totals.tokens_sent == sum(r.tokens_sent for r in outcome.calls)
    assert totals.calls_over_budget == sum(r.over_budget for r in outcome.calls)
    assert totals.cost is not None and totals.cost_untrimmed is not None
    assert totals.cost < totals.cost_untrimmed


def test_provider_problems_are_counted_by_code() -> None:
    # A window of one message sends a tool result without the call it answers.
    chat = _tool_chat()
    (outcome,) = evaluate_conversation(chat, [configuration("sliding-window", {"window": 1})])
    by_turn = {row.message_index: row for row in outcome.calls}
    after_tool = by_turn[4]  # the reply after the first tool result: [system, tool result]
    assert "orphan-tool-result" in after_tool.problem_codes
    assert after_tool.problems >= 1
    assert by_turn[2].problem_codes == ()  # the first call: system + user, valid
    assert outcome.totals is not None
    assert outcome.totals.invalid_calls == sum(r.problems > 0 for r in outcome.calls) > 0


def test_fact_retention_drops_when_the_window_forgets_early_facts() -> None:
    chat = _tool_chat()
    wide, narrow = evaluate_conversation(
        chat,
        [
            configuration("window-drop", {"budget": 100_000}),
            configuration("window-drop", {"budget": 400}),
        ],
    )
    assert wide.totals is not None and narrow.totals is not None
    assert wide.totals.retention == 100.0
    assert narrow.totals.retention is not None and narrow.totals.retention < 100.0


# -- inputs -----------------------------------------------------------------------------------


def test_folder_corpus_lists_chat_files_and_expands_multi_conversation_files(
    corpus: Path,
) -> None:
    found = open_corpus(corpus)
    assert len(found) == len(SMALL) + 2
    assert {Path(f).name for f in found.files} >= {"broken.json", "two_conversations.jsonl"}
    assert len({s.key for s in found.sources()}) == len(found)


def test_missing_corpus_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CtxlabError, match="no chat files"):
        open_corpus(tmp_path / "nothing-here")


# -- runs -------------------------------------------------------------------------------------


def test_unreadable_file_becomes_error_rows_and_the_run_goes_on(
    corpus: Path, tmp_path: Path
) -> None:
    db = tmp_path / "r.duckdb"
    summary = run_corpus(corpus, GRID, db, backend="inline")
    assert summary.failed == 1
    assert summary.conversations == len(SMALL) + 2
    tables = _dump(db)
    errors = [e for e in tables["errors"] if e[1] == "broken.json"]
    assert len(errors) == len(GRID)  # one per configuration
    assert all(e[5] == "read" and "broken.json" in e[6] for e in errors)
    assert len(tables["results"]) == (len(SMALL) + 2) * len(GRID)


def test_rerun_evaluates_only_what_is_new(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    run_corpus(corpus, GRID[:2], db, backend="inline")
    before = _dump(db)
    again = run_corpus(corpus, GRID[:2], db, backend="inline")
    assert again.evaluated == 0 and again.skipped == len(open_corpus(corpus))
    assert _dump(db) == before
    # a new configuration: only it is evaluated, the old rows stay as they were
    more = run_corpus(corpus, GRID[:3], db, backend="inline")
    assert more.evaluated == len(open_corpus(corpus))
    after = _dump(db)
    new_key = GRID[2].key
    assert [r for r in after["results"] if r[1] != new_key] == before["results"]
    assert len([r for r in after["results"] if r[1] == new_key]) == len(SMALL) + 2
    # an edited file is a new conversation
    (corpus / "hostile_content.json").write_text(
        json.dumps({"messages": _raw_messages("hostile_content")[:5]}), encoding="utf-8"
    )
    edited = run_corpus(corpus, GRID[:3], db, backend="inline")
    assert edited.evaluated == 1


def test_interrupted_then_killed_run_restarted_has_no_duplicates(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tmp_path / "ref.duckdb"
    run_corpus(corpus, GRID, reference, backend="inline")
    db = tmp_path / "r.duckdb"
    # Ctrl-C after two sources: what finished is committed, the summary says so
    monkeypatch.setenv(corpus_helpers.STOP_AFTER, "2:interrupt")
    monkeypatch.setattr(corpus_helpers, "_seen", 0)
    first = run_corpus(corpus, GRID, db, backend="inline", evaluate=corpus_helpers.stop_after)
    assert first.interrupted and first.evaluated == 2
    assert len({r[0] for r in _dump(db)["sources"]}) == 2
    # SIGKILL of the whole run in the middle (another process, no chance to clean up)
    code = (
        "import sys, corpus_helpers; from ctxlab.corpus import run_corpus, parse_grid; "
        "from test_corpus import GRID; "
        f"run_corpus({str(corpus)!r}, GRID, {str(db)!r}, backend='inline', "
        "evaluate=corpus_helpers.stop_after)"
    )
    env = {**os.environ, corpus_helpers.STOP_AFTER: "2:kill"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    killed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, cwd=ROOT)
    assert killed.returncode == -9, killed.stderr.decode()
    # restarted: finishes, and every table equals the uninterrupted run's
    last = run_corpus(corpus, GRID, db, backend="inline")
    assert not last.interrupted and last.evaluated >= 1
    assert _dump(db) == _dump(reference)


def test_pool_run_equals_inline_run_and_survives_a_killed_worker(
    corpus: Path, tmp_path: Path
) -> None:
    inline = tmp_path / "inline.duckdb"
    run_corpus(corpus, GRID, inline, backend="inline")
    # same content under a new name: the same conversation, whose first worker dies
    (corpus / "support_function_calls.json").rename(corpus / "kill_once.json")
    pooled = tmp_path / "pool.duckdb"
    summary = run_corpus(
        corpus,
        GRID,
        pooled,
        backend="pool",
        workers=2,
        evaluate=corpus_helpers.kill_once_per_source,
    )
    assert (corpus / "kill_once.json.killed").exists(), "the worker was never killed"
    assert summary.failed == 1  # only broken.json
    got, want = _dump(pooled), _dump(inline)
    for table in ("results", "calls", "configurations", "sources", "errors"):
        assert got[table] == want[table], table
    renamed = {r[2] for r in want["conversations"]} - {"support_function_calls.json"}
    assert {r[2] for r in got["conversations"]} == renamed | {"kill_once.json"}


def test_worker_that_dies_twice_becomes_an_error_row(corpus: Path, tmp_path: Path) -> None:
    (corpus / "hostile_content.json").rename(corpus / "kill_always.json")
    db = tmp_path / "r.duckdb"
    summary = run_corpus(
        corpus, GRID, db, backend="pool", workers=2, evaluate=corpus_helpers.kill_always
    )
    tables = _dump(db)
    died = [e for e in tables["errors"] if e[1] == "kill_always.json"]
    assert len(died) == len(GRID) and all(e[5] == "worker" for e in died)
    assert "died twice" in died[0][6]
    assert summary.failed == 2  # kill_always.json and broken.json
    # every other conversation finished
    assert len(tables["results"]) == (len(SMALL) + 1) * len(GRID)


def test_table_corpus_gives_the_rows_of_the_same_chats_as_files(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "files"
    folder.mkdir()
    rows = []
    for name in SMALL[:3]:
        messages = _raw_messages(name)
        (folder / f"{name}.json").write_text(json.dumps(messages), encoding="utf-8")
        rows.append({"id": name, "chat": json.dumps(messages)})
    jsonl = tmp_path / "table.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    parquet = tmp_path / "table.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    totals = {}
    for label, source in (("files", folder), ("jsonl", jsonl), ("parquet", parquet)):
        db = tmp_path / f"{label}.duckdb"
        summary = run_corpus(source, GRID[:2], db, backend="inline", column="chat")
        assert summary.conversations == 3 and summary.failed == 0, label
        totals[label] = sorted(r[2:] for r in _dump(db)["results"])
    assert totals["files"] == totals["jsonl"] == totals["parquet"]


def test_table_row_without_the_column_is_an_error_row(tmp_path: Path) -> None:
    table = tmp_path / "t.jsonl"
    good = json.dumps({"messages": _raw_messages("hostile_content")})
    table.write_text(good + "\n" + json.dumps({"other": 1}) + "\n", encoding="utf-8")
    db = tmp_path / "r.duckdb"
    summary = run_corpus(table, GRID[:1], db, backend="inline")
    assert summary.conversations == 1 and summary.failed == 1
    (error,) = _dump(db)["errors"]
    assert error[1] == "t.jsonl:2" and "messages" in error[6]


# -- report -----------------------------------------------------------------------------------


def test_report_totals_are_the_sums_of_the_call_rows(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    run_corpus(corpus, GRID, db, backend="inline")
    con = open_results(db)
    report = {r["config_key"]: r for r in configuration_report(con)}
    raw = duckdb.connect(str(db), read_only=True)
    for config in GRID:
        r = report[config.key]
        calls, sent, untrimmed, over = raw.execute(
            "SELECT count(*), sum(tokens_sent), sum(tokens_untrimmed), "
            "sum(over_budget::INT) FROM calls WHERE config_key = ?",
            [config.key],
        ).fetchone() or (0, 0, 0, 0)
        assert (r["calls"], r["input_tokens"], r["input_tokens_untrimmed"]) == (
            calls,
            sent,
            untrimmed,
        )
        assert r["calls_over_budget"] == over
        assert r["conversations"] == len(SMALL) + 2 and r["errors"] == 1
        assert r["strategy"] == config.strategy and r["params"] == json.loads(config.params_json)
    worst = worst_conversations(con, GRID[0].key, limit=3)
    assert len(worst) == 3
    assert list(worst["calls_over_budget"]) == sorted(worst["calls_over_budget"], reverse=True)
    raw.close()
    con.close()


def test_unknown_backend_is_a_parameter_error(tmp_path: Path) -> None:
    with pytest.raises(ParameterError):
        run_corpus(tmp_path, GRID, tmp_path / "x.duckdb", backend="threads")


# -- Ray ----------------------------------------------------------------------------------------


@pytest.fixture()
def local_ray(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A Ray instance on this machine only (127.0.0.1, 2 CPUs, no dashboard), shut down after.

    Its workers import this checkout's ctxlab through PYTHONPATH, inherited from this process
    as a local instance's workers inherit the environment of the ``ray.init`` that started it
    (as in ``ctxlab eval --ray``). Not a ``runtime_env``: a job with one runs in a worker pool of
    its own, so the workers Ray starts with the node go unused and as many again are started.
    """
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # Ray's loopback-only switch
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    ray = pytest.importorskip("ray")
    from ray._private import ray_constants

    # read at import time: set it too, in case ray was imported before this fixture
    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", False)
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
        yield ray
    finally:
        ray.shutdown()


def test_ray_run_writes_the_rows_of_the_process_pool_run(
    corpus: Path, tmp_path: Path, local_ray: Any
) -> None:
    pooled = tmp_path / "pool.duckdb"
    run_corpus(corpus, GRID, pooled, backend="pool", workers=2)
    on_ray = tmp_path / "ray.duckdb"
    summary = run_corpus(corpus, GRID, on_ray, backend="ray", workers=2)
    assert summary.backend == "ray" and summary.failed == 1
    assert local_ray.is_initialized()  # a cluster the run joined is left running
    assert _dump(on_ray) == _dump(pooled)
    # a Parquet table is read by Ray Data on the cluster: same sources and rows
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"chat": json.dumps(_raw_messages(n))} for n in SMALL[:2]] + [{"other": "x"}]
    table = tmp_path / "chats.parquet"
    pq.write_table(pa.Table.from_pylist(rows), table)
    inline, ray_table = tmp_path / "t_inline.duckdb", tmp_path / "t_ray.duckdb"
    run_corpus(table, GRID[:2], inline, backend="inline", column="chat")
    summary = run_corpus(table, GRID[:2], ray_table, backend="ray", column="chat")
    assert summary.conversations == 2 and summary.failed == 1
    assert _dump(ray_table) == _dump(inline)


def test_corpus_engine_imports_neither_streamlit_nor_ray() -> None:
    code = (
        "import sys, ctxlab.corpus, ctxlab.corpus.store, ctxlab.corpus.report; "
        "bad = [m for m in ('streamlit', 'ray') if m in sys.modules]; "
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_pool_workers_import_neither_duckdb_nor_arrow() -> None:
    # What the fork server preloads: the per-source function and the tokenizer warm-up.
    code = (
        "import sys, ctxlab.corpus.work, ctxlab.corpus.warm; "
        "bad = [m for m in ('duckdb', 'pyarrow', 'streamlit', 'ray') if m in sys.modules]; "
        "assert not bad, bad; "
        "from ctxlab.corpus import run_corpus, parse_grid; assert 'duckdb' in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_rows_a_worker_sends_hold_every_field_of_the_call_rows_in_column_order() -> None:
    from dataclasses import fields

    from ctxlab.corpus.evaluate import CALL_COLUMNS, TOTAL_COLUMNS
    from ctxlab.corpus.work import config_rows

    chat = _tool_chat()
    configs = [configuration("window-drop", {"budget": 300}), *GRID[:1]]
    for outcome in evaluate_conversation(chat, configs):
        assert outcome.totals is not None and outcome.calls
        rows = config_rows(outcome)
        assert rows.config_key == outcome.config_key and rows.error is None
        assert len(rows.calls) == len(outcome.calls)
        for sent, call in zip(rows.calls, outcome.calls, strict=True):
            assert sent == tuple(getattr(call, f.name) for f in fields(call))
            assert dict(zip(CALL_COLUMNS, sent, strict=True))["tokens_sent"] == call.tokens_sent
        totals = outcome.totals
        assert rows.totals == tuple(getattr(totals, f.name) for f in fields(totals))
        assert dict(zip(TOTAL_COLUMNS, rows.totals, strict=True))["calls"] == totals.calls
    failed = config_rows(ConfigOutcome("k", error="SummarizerError: down"))
    assert failed == ConfigRows("k", error="SummarizerError: down")


def test_a_bug_in_one_source_is_an_error_row_not_a_crash(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    summary = run_corpus(corpus, GRID[:1], db, backend="inline", evaluate=corpus_helpers.buggy)
    assert summary.evaluated == len(open_corpus(corpus)) and not summary.interrupted
    internal = [e for e in _dump(db)["errors"] if e[5] == "worker"]
    assert [e[1] for e in internal] == ["hostile_content.json"]
    assert "internal error: ZeroDivisionError" in internal[0][6]


def test_ctrl_c_stops_a_pool_run_and_commits_what_finished(corpus: Path, tmp_path: Path) -> None:
    import signal
    import time

    for i in range(12):  # distinct content, so each is a source of its own
        chat = _raw_messages("hostile_content")[: 4 + i]
        (corpus / f"extra_{i:02d}.json").write_text(json.dumps({"messages": chat}), "utf-8")
    db = tmp_path / "r.duckdb"
    code = (
        "import json, corpus_helpers; from ctxlab.corpus import run_corpus; "
        "from test_corpus import GRID; "
        f"s = run_corpus({str(corpus)!r}, GRID, {str(db)!r}, workers=1, "
        "evaluate=corpus_helpers.slow); "
        "print(json.dumps([s.interrupted, s.evaluated]))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    run = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 90
    while len(list(corpus.glob("*.done"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C does: the whole process group
    out, err = run.communicate(timeout=90)
    assert run.returncode == 0, err.decode()
    interrupted, evaluated = json.loads(out)
    total = len(open_corpus(corpus))
    assert interrupted and 1 <= evaluated < total
    tables = _dump(db)
    finished = {r[0] for r in tables["sources"]}
    assert len(finished) == evaluated  # everything received was committed, whole
    assert len(tables["sources"]) == evaluated * len(GRID)
    # and a restart completes the corpus without duplicates
    rest = run_corpus(corpus, GRID, db, backend="inline")
    assert rest.evaluated == total - evaluated
    assert len(_dump(db)["sources"]) == total * len(GRID)


def test_multi_conversation_json_gives_each_conversation_as_the_loader_reads_it() -> None:
    import hashlib

    from ctxlab.corpus.inputs import Source, load_source
    from ctxlab.formats import list_conversations, load_chat

    turns = [
        {"id": f"c{i}", "conversations": [{"from": "human", "value": f"order {1000 + i}?"}]}
        for i in range(5)
    ]
    for t in turns:
        t["conversations"].append({"from": "gpt", "value": "shipped " * (1 + len(t["id"]))})
    data = json.dumps(turns).encode()
    got = list(load_source(Source("share.json", hashlib.sha256(data).hexdigest(), payload=data)))
    listed = [cid for cid, _ in list_conversations(data)]
    assert [g.conversation for g in got] == listed and len(listed) == 5
    assert [g.messages for g in got] == [load_chat(data, conversation=c) for c in listed]
    assert len({g.key for g in got}) == 5


def _configurations_table(store_module: Any, grid: Sequence[Any]) -> Any:
    batch = store_module._Batch()
    for c in grid:
        row = (c.key, c.strategy, c.params_json, c.model, c.budget, c.retention, c.label)
        batch.add("configurations", row)
    return batch.arrow("configurations")


class _InterruptingConnection:
    """A results connection that receives Ctrl-C (SIGINT) while a write's first INSERT runs."""

    def __init__(self, con: Any) -> None:
        self._con = con
        self.sent = False

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("INSERT") and not self.sent:
            import signal

            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
        return self._con.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def test_ctrl_c_during_a_write_commits_it_then_stops(tmp_path: Path) -> None:
    """The signal lands inside the transaction on purpose: the write is committed whole, and
    the KeyboardInterrupt comes after it (DuckDB used to abort the statement, "Query
    interrupted", and the finished results were rolled back)."""
    from ctxlab.corpus.store import Store

    db = tmp_path / "r.duckdb"
    with Store(db) as store:
        wire = _InterruptingConnection(store.con)
        store.con = wire
        with pytest.raises(KeyboardInterrupt):
            store.add_configurations(GRID)
        assert wire.sent
        store.con = wire._con
    assert len(_dump(db)["configurations"]) == len(GRID)


def test_without_the_deferral_the_same_signal_loses_the_write(tmp_path: Path) -> None:
    """The race the deferral closes, shown on the raw write."""
    from ctxlab.corpus import store as store_module

    db = tmp_path / "r.duckdb"
    with store_module.Store(db) as store:
        wire = _InterruptingConnection(store.con)
        store.con = wire
        with pytest.raises(KeyboardInterrupt):
            store._insert_now(
                {"configurations": _configurations_table(store_module, GRID)}, ("configurations",)
            )
        store.con = wire._con
    assert _dump(db)["configurations"] == []


def test_a_ctrl_c_raised_after_a_committed_write_does_not_write_it_twice() -> None:
    """The store raises a held Ctrl-C once its write has committed; the run's last flush
    (``finally``) must then find nothing left of that write."""
    from ctxlab.corpus.run import _Committer

    class CommitsThenInterrupted:
        def __init__(self) -> None:
            self.written: list[object] = []
            self.calls = 0

        def write(self, outcomes: Sequence[object]) -> None:
            self.written.extend(outcomes)  # committed
            self.calls += 1
            if self.calls == 1:
                raise KeyboardInterrupt  # the Ctrl-C held during that write

    store = CommitsThenInterrupted()
    committer = _Committer(store)  # type: ignore[arg-type]
    committer.buffer.extend(["source-a", "source-b"])
    with pytest.raises(KeyboardInterrupt):
        committer.flush()
    committer.flush()  # what run_corpus's finally does
    assert store.written == ["source-a", "source-b"]


def test_a_ctrl_c_between_receiving_and_counting_an_outcome_leaves_the_count_whole(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The signal lands, on purpose, after the first outcome went to the committer and before
    the ledger counted it: the summary must count every source the run committed (it said 1
    for 2 written when a Ctrl-C hit there, seen in CI under load)."""
    import signal

    from ctxlab.corpus import run as run_module

    count = run_module._Ledger.count
    sent: list[bool] = []

    def interrupted_count(self: Any, outcome: Any) -> None:
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)
        count(self, outcome)

    monkeypatch.setattr(run_module._Ledger, "count", interrupted_count)
    db = tmp_path / "r.duckdb"
    summary = run_corpus(corpus, GRID, db, backend="inline")
    assert sent and summary.interrupted
    assert summary.evaluated == len({r[0] for r in _dump(db)["sources"]}) == 1
