"""A fleet run: every source of a corpus against a grid, streamed through an executor into DuckDB.

Executors (all run :func:`~ctxlab.corpus.work.evaluate_source` and yield its outcomes):

* ``"inline"``: a plain loop in this process (tests, the Fleet page's small uploads);
* ``"pool"``: a process pool of ``workers`` processes, at most ``2 * workers`` tasks in flight,
  so memory stays flat however large the corpus. A worker that dies breaks the pool: every task
  it had in flight is retried once, alone in a fresh pool, so the one that kills its worker
  again is known and recorded as an error row (stage ``worker``) while the others finish;
* ``"ray"``: the same function as Ray tasks (``max_retries=1`` retries a task whose worker
  died), on the cluster at ``ray_address`` or a local instance started for the run.

Only this (parent) process writes. Outcomes are buffered and written as whole sources in one
transaction (see :mod:`ctxlab.corpus.store`). Sources already finished for a configuration are
skipped, as are repeats of the same content. Ctrl-C (KeyboardInterrupt) stops the executor and
commits every outcome received; the summary says the run was interrupted.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from ctxlab.corpus.grid import Configuration, unique
from ctxlab.corpus.inputs import Corpus, is_table, open_corpus
from ctxlab.corpus.ray_inputs import RayTable
from ctxlab.corpus.store import DoneSet, Store, interrupt_deferred
from ctxlab.corpus.work import SourceOutcome, Task, evaluate_source
from ctxlab.errors import ParameterError
from ctxlab.pricing import PriceTable
from ctxlab.tokens import get_counter, new_counter

__all__ = ["BACKENDS", "Progress", "RunSummary", "run_corpus"]

BACKENDS = ("pool", "inline", "ray")

Evaluate = Callable[[Task], SourceOutcome]
Outcomes = Generator[SourceOutcome, None, None]

_RAY_LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray's switch for loopback only
_FLUSH_SECONDS = 2.0
_FLUSH_CALLS = 50_000
_FLUSH_SOURCES = 500


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a run stands: sources handled of ``total`` (skipped ones included)."""

    done: int
    total: int
    skipped: int
    conversations: int
    failed: int
    elapsed: float

    @property
    def rate(self) -> float:
        """Sources evaluated per second (skipped ones excluded)."""
        evaluated = self.done - self.skipped
        return evaluated / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the current rate, None before the first evaluated source."""
        rate = self.rate
        return (self.total - self.done) / rate if rate > 0 else None


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The end of a run: counts, whether Ctrl-C stopped it, how long it took."""

    db: str
    backend: str
    workers: int
    configurations: int
    sources: int
    skipped: int
    evaluated: int
    conversations: int
    failed: int  # sources or conversations with at least one error row this run
    interrupted: bool
    seconds: float


def _died(task: Task) -> SourceOutcome:
    keys = tuple(c.key for c in task.configurations)
    reason = "the worker process died twice while evaluating this source"
    return SourceOutcome(task.source.label, task.source.key, keys, error=reason, stage="worker")


def _crashed(task: Task, exc: BaseException) -> SourceOutcome:
    keys = tuple(c.key for c in task.configurations)
    reason = f"internal error: {type(exc).__name__}: {exc}"
    return SourceOutcome(task.source.label, task.source.key, keys, error=reason, stage="worker")


def _run_inline(tasks: Iterable[Task], evaluate: Evaluate) -> Outcomes:
    for task in tasks:
        try:
            outcome = evaluate(task)
        except Exception as exc:  # a bug, not bad input: as in the pool, record it and go on
            outcome = _crashed(task, exc)
        yield outcome


def _start_worker(models: tuple[str, ...]) -> None:
    """Pool workers leave Ctrl-C to the parent (which stops them and commits), and load the
    tokenizers of the grid's models before their first task."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for model in models:
        new_counter(model).count_text("warm")


def _new_pool(workers: int, models: tuple[str, ...]) -> ProcessPoolExecutor:
    """A pool whose workers fork from a server that has already imported the evaluation code.

    ``forkserver`` (not ``fork``: the parent holds DuckDB's threads) with the evaluation
    modules and the default tokenizer preloaded (:mod:`ctxlab.corpus.warm`), so a worker, or a
    pool rebuilt after a worker died, starts in milliseconds instead of re-importing ctxlab
    and reloading the encoding.
    """
    context: multiprocessing.context.BaseContext
    if "forkserver" in multiprocessing.get_all_start_methods():
        server = multiprocessing.get_context("forkserver")
        server.set_forkserver_preload(["ctxlab.corpus.work", "ctxlab.corpus.warm"])
        context = server
    else:
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(models,)
    )


def _run_pool(
    tasks: Iterable[Task], workers: int, evaluate: Evaluate, models: tuple[str, ...] = ()
) -> Outcomes:
    pending = iter(tasks)
    retry: deque[Task] = deque()  # in flight when a worker died: rerun alone (attempt 2)
    unsent: deque[tuple[Task, int]] = deque()  # refused by a pool that had just broken
    inflight: dict[Future[SourceOutcome], tuple[Task, int]] = {}
    limit = 2 * workers
    broken = False
    pool = _new_pool(workers, models)

    def submit(task: Task, attempt: int) -> bool:
        try:
            inflight[pool.submit(evaluate, task)] = (task, attempt)
        except BrokenProcessPool:
            return False
        return True

    try:
        while True:
            if broken and not inflight:
                pool.shutdown(wait=True, cancel_futures=True)
                pool = _new_pool(workers, models)
                broken = False
            if not broken:
                if retry and not inflight:
                    task = retry.popleft()
                    if not submit(task, 2):
                        retry.appendleft(task)
                        broken = True
                elif not retry and all(a == 1 for _, a in inflight.values()):
                    while len(inflight) < limit:
                        if unsent:
                            task, attempt = unsent.popleft()
                        else:
                            fresh = next(pending, None)
                            if fresh is None:
                                break
                            task, attempt = fresh, 1
                        if not submit(task, attempt):
                            unsent.appendleft((task, attempt))
                            broken = True
                            break
            if not inflight:
                if broken:
                    continue
                return  # nothing left to submit and nothing running
            finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
            for future in finished:
                task, attempt = inflight.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:  # this task's pool lost a worker: it is a suspect
                    broken = True
                    if attempt == 1:
                        retry.append(task)
                    else:
                        yield _died(task)
                    continue
                except Exception as exc:  # a bug, not bad input: record it and go on
                    outcome = _crashed(task, exc)
                yield outcome
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _ray_session(workers: int, address: str | None) -> bool:
    """Join the cluster at ``address``, or start a local instance; True when one was started."""
    if not address:
        # A local instance stays on this machine: without this Ray resolves 127.0.0.1 to the
        # host's routable address and listens there (read when ray is first imported).
        os.environ.setdefault(_RAY_LOCAL_ONLY, "0")
    try:
        import ray
    except ImportError:
        raise ParameterError("--ray needs Ray: pip install 'ctxlab[ray]'") from None
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            _node_ip_address="127.0.0.1",
        )
    return True


def _run_ray(tasks: Iterable[Task], workers: int, evaluate: Evaluate) -> Outcomes:
    import ray

    remote: Any = ray.remote(max_retries=1)(evaluate)
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    cpus = int(resources.get("CPU", workers)) or workers
    limit = 2 * cpus
    pending = iter(tasks)
    inflight: dict[Any, Task] = {}
    exhausted = False
    try:
        while True:
            while not exhausted and len(inflight) < limit:
                fresh = next(pending, None)
                if fresh is None:
                    exhausted = True
                    break
                inflight[remote.remote(fresh)] = fresh
            if not inflight:
                return
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                task = inflight.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.WorkerCrashedError:
                    outcome = _died(task)
                except ray.exceptions.RayError as exc:
                    outcome = _crashed(task, exc)
                yield outcome
    finally:
        for ref in inflight:
            ray.cancel(ref, force=True)


def _calls_in(outcome: SourceOutcome) -> int:
    return sum(len(o.calls) for c in outcome.conversations for o in c.outcomes)


def _failed_in(outcome: SourceOutcome) -> int:
    bad = sum(any(o.error is not None for o in c.outcomes) for c in outcome.conversations)
    return bad + (outcome.error is not None)


class _Ledger:
    """The run's counts, reported to the progress callback after every source."""

    def __init__(self, total: int, progress: Callable[[Progress], None] | None) -> None:
        self.total = total
        self.progress = progress
        self.start = time.perf_counter()
        self.done = self.skipped = self.conversations = self.failed = 0

    def skip(self) -> None:
        self.done += 1
        self.skipped += 1
        self.report()

    def count(self, outcome: SourceOutcome) -> None:
        self.done += 1
        self.conversations += len(outcome.conversations)
        self.failed += _failed_in(outcome)
        self.report()

    def report(self) -> None:
        if self.progress is not None:
            elapsed = time.perf_counter() - self.start
            self.progress(
                Progress(
                    self.done, self.total, self.skipped, self.conversations, self.failed, elapsed
                )
            )


class _Committer:
    """Buffers outcomes and writes them, whole sources per transaction, every few seconds.

    It keeps nothing once a write committed: repeats later in the run are caught by the task
    generator's ``seen`` set, so the parent's memory does not grow with the results.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.buffer: list[SourceOutcome] = []
        self.calls = 0
        self.last = time.perf_counter()

    def add(self, outcome: SourceOutcome) -> None:
        self.buffer.append(outcome)
        self.calls += _calls_in(outcome)
        if (
            self.calls >= _FLUSH_CALLS
            or len(self.buffer) >= _FLUSH_SOURCES
            or time.perf_counter() - self.last >= _FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        # Taken before writing: a Ctrl-C held during the write (Store) is raised once it has
        # committed, and the run's last flush must not write the same sources again.
        pending, self.buffer = self.buffer, []
        self.calls = 0
        self.last = time.perf_counter()
        self.store.write(pending)


def _tasks(
    corpus: Corpus | RayTable,
    grid: Sequence[Configuration],
    done: DoneSet,
    ledger: _Ledger,
    *,
    carry_bytes: bool,
    prices: PriceTable | None,
) -> Iterator[Task]:
    """Each source with the configurations it still needs; finished sources and repeats skipped."""
    seen: set[str] = set()
    for source in corpus.sources(carry_bytes=carry_bytes):
        missing = done.missing(source.key)
        if not missing or source.key in seen:
            ledger.skip()
            continue
        seen.add(source.key)
        yield Task(source, tuple(c for c in grid if c.key in missing), prices)


def run_corpus(
    corpus: str | os.PathLike[str],
    configurations: Sequence[Configuration],
    db: str | os.PathLike[str],
    *,
    workers: int | None = None,
    backend: str = "pool",
    ray_address: str | None = None,
    column: str = "messages",
    prices: PriceTable | None = None,
    progress: Callable[[Progress], None] | None = None,
    evaluate: Evaluate = evaluate_source,
) -> RunSummary:
    """Evaluate every source of ``corpus`` not yet in ``db`` under ``configurations``.

    Args:
        corpus: a folder, glob, chat file or table (see :func:`~ctxlab.corpus.open_corpus`).
        configurations: the grid; repeats are evaluated once.
        db: the DuckDB results file (created when missing).
        workers: processes (pool) or local CPUs (Ray); default: the machine's cores.
        backend: one of :data:`BACKENDS`.
        ray_address: join this Ray cluster instead of starting a local one.
        column: the conversation column of a table corpus.
        prices: price table (default: ctxlab's).
        progress: called after every source with a :class:`Progress`.
        evaluate: the per-source function (tests substitute one that kills its worker).

    Returns:
        A :class:`RunSummary`; ``interrupted`` when Ctrl-C stopped it (finished work committed).

    Raises:
        CtxlabError: the corpus matches nothing or the results file cannot be opened.
        ParameterError: an unknown backend or a worker count below 1.
        UnknownNameError: a configuration's model has no tokenizer.
    """
    if backend not in BACKENDS:
        raise ParameterError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if n_workers < 1:
        raise ParameterError(f"--workers must be at least 1, got {n_workers}")
    grid = unique(configurations)
    for model in dict.fromkeys(c.model for c in grid):
        get_counter(model)  # an unknown model stops the run here, not in every conversation
    started_ray = backend == "ray" and _ray_session(n_workers, ray_address)
    try:
        return _run(corpus, grid, db, n_workers, backend, column, prices, progress, evaluate)
    finally:
        if started_ray:
            import ray

            ray.shutdown()


def _run(
    corpus: str | os.PathLike[str],
    grid: Sequence[Configuration],
    db: str | os.PathLike[str],
    n_workers: int,
    backend: str,
    column: str,
    prices: PriceTable | None,
    progress: Callable[[Progress], None] | None,
    evaluate: Evaluate,
) -> RunSummary:
    """The run itself, with Ray (if any) already joined."""
    source_set: Corpus | RayTable
    if backend == "ray" and is_table(corpus, column=column):
        source_set = RayTable(os.fspath(corpus), column)
    else:
        source_set = open_corpus(corpus, column=column)
    ledger = _Ledger(len(source_set), progress)
    interrupted = False
    with Store(db) as store:
        store.add_configurations(grid)
        done = store.done(grid)
        tasks = _tasks(source_set, grid, done, ledger, carry_bytes=backend == "ray", prices=prices)
        if backend == "inline":
            outcomes = _run_inline(tasks, evaluate)
        elif backend == "pool":
            models = tuple(dict.fromkeys(c.model for c in grid))
            outcomes = _run_pool(tasks, n_workers, evaluate, models)
        else:
            outcomes = _run_ray(tasks, n_workers, evaluate)
        committer = _Committer(store)
        try:
            for outcome in outcomes:
                # Added and counted together: a Ctrl-C between the two had the outcome committed
                # but missing from the summary's count (seen in CI: 2 sources written, 1 counted).
                with interrupt_deferred():
                    committer.add(outcome)
                    ledger.count(outcome)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            outcomes.close()  # stops the executor (its in-flight work is dropped)
            committer.flush()
        ledger.report()
    return RunSummary(
        db=os.fspath(db),
        backend=backend,
        workers=n_workers if backend != "inline" else 1,
        configurations=len(grid),
        sources=ledger.total,
        skipped=ledger.skipped,
        evaluated=ledger.done - ledger.skipped,
        conversations=ledger.conversations,
        failed=ledger.failed,
        interrupted=interrupted,
        seconds=time.perf_counter() - ledger.start,
    )
