#!/usr/bin/env bash
# The project's one test command (README Quickstart, .ci/run): installs what is needed (ctxlab
# and its test extra into the project venv .venv, or into the active venv; see scripts/_venv.sh),
# then runs the format check, the linter, the type checker, every test (browser tests included)
# and a quick benchmark smoke run. Exits non-zero when one of them fails.
#
# Speed (issue 26): the framework oracle environment is built in the background while ctxlab is
# installed and ruff runs; mypy runs beside pytest's start (collection) and reports after it;
# pytest runs on one pytest-xdist worker per core (at most 4: each may hold a Streamlit server,
# a chromium and a local Ray), a whole test file per worker (`--dist loadfile`) so
# module-scoped fixtures (built wheels, servers) are made once.
# CTXLAB_TEST_WORKERS=N overrides the worker count (0: no workers, one process).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_venv.sh
. scripts/_venv.sh

# Each phase line ends with the seconds since the start ([+N s]), so a CI log shows where the
# time goes; the last line gives the total.
phase() {
    echo "==> $* [+${SECONDS} s]"
}
SECONDS=0
temp_files=()
finish() {
    local status=$?
    rm -f "${temp_files[@]}"
    [ "$status" -eq 0 ] || echo "==> failed (exit status $status) [+${SECONDS} s]" >&2
}
trap finish EXIT

phase "system dependencies"
bash scripts/install_system_deps.sh

phase "python environment"
ctxlab_venv

# scripts/oracle_env.py needs only the standard library: start it before ctxlab's own install.
phase "framework oracle environment (the pinned frameworks extra, reused while unchanged; in the background)"
oracle_out="$(mktemp)"
oracle_log="$(mktemp)"
temp_files+=("$oracle_out" "$oracle_log")
"$PY" scripts/oracle_env.py >"$oracle_out" 2>"$oracle_log" &
oracle_pid=$!

phase "ctxlab[test] install"
ctxlab_install test
# the install tests (tests/test_install.py) install from the same wheels, with no index
CTXLAB_TEST_WHEELHOUSE="$(ctxlab_wheelhouse test)"
export CTXLAB_TEST_WHEELHOUSE

phase "ruff format --check"
"$PY" -m ruff format --check .

phase "ruff check"
"$PY" -m ruff check .

# mypy is one process on one core: it runs beside pytest's start (collection) and its report
# is printed, and failure reported, once pytest has finished
phase "mypy (in the background; its report follows pytest's)"
mypy_log="$(mktemp)"
temp_files+=("$mypy_log")
"$PY" -m mypy >"$mypy_log" 2>&1 &
mypy_pid=$!

phase "framework oracle environment (waiting for the background build)"
if ! wait "$oracle_pid"; then
    cat "$oracle_log" >&2
    echo "ctxlab: building the framework oracle environment failed (scripts/oracle_env.py)" >&2
    exit 1
fi
cat "$oracle_log" >&2
CTXLAB_ORACLE_PYTHON="$(cat "$oracle_out")"
export CTXLAB_ORACLE_PYTHON

workers="${CTXLAB_TEST_WORKERS:-$(nproc 2>/dev/null || echo 2)}"
[ "$workers" -gt 4 ] && workers=4
parallel=()
[ "$workers" -gt 0 ] && parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder)
phase "pytest (${workers} workers)"
pytest_status=0
"$PY" -m pytest -q --durations=25 "${parallel[@]}" || pytest_status=$?

phase "mypy"
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
cat "$mypy_log"
[ "$mypy_status" -eq 0 ] || { echo "ctxlab: mypy failed" >&2; exit "$mypy_status"; }
[ "$pytest_status" -eq 0 ] || exit "$pytest_status"

if [ -f bench/bench_engine.py ]; then
    phase "bench smoke (bench/bench_engine.py --quick)"
    "$PY" bench/bench_engine.py --quick
fi

phase "all checks passed"
