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

echo "==> system dependencies"
bash scripts/install_system_deps.sh

echo "==> python environment"
ctxlab_venv

# scripts/oracle_env.py needs only the standard library: start it before ctxlab's own install.
echo "==> framework oracle environment (the pinned frameworks extra, reused while unchanged; in the background)"
oracle_out="$(mktemp)"
oracle_log="$(mktemp)"
trap 'rm -f "$oracle_out" "$oracle_log"' EXIT
"$PY" scripts/oracle_env.py >"$oracle_out" 2>"$oracle_log" &
oracle_pid=$!

ctxlab_install test
# the install tests (tests/test_install.py) install from the same wheels, with no index
CTXLAB_TEST_WHEELHOUSE="$(ctxlab_wheelhouse test)"
export CTXLAB_TEST_WHEELHOUSE

echo "==> ruff format --check"
"$PY" -m ruff format --check .

echo "==> ruff check"
"$PY" -m ruff check .

# mypy is one process on one core: it runs beside pytest's start (collection) and its report
# is printed, and failure reported, once pytest has finished
echo "==> mypy (in the background; its report follows pytest's)"
mypy_log="$(mktemp)"
trap 'rm -f "$oracle_out" "$oracle_log" "$mypy_log"' EXIT
"$PY" -m mypy >"$mypy_log" 2>&1 &
mypy_pid=$!

echo "==> framework oracle environment (waiting for the background build)"
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
echo "==> pytest (${workers} workers)"
pytest_status=0
"$PY" -m pytest -q --durations=25 "${parallel[@]}" || pytest_status=$?

echo "==> mypy"
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
cat "$mypy_log"
[ "$mypy_status" -eq 0 ] || { echo "ctxlab: mypy failed" >&2; exit "$mypy_status"; }
[ "$pytest_status" -eq 0 ] || exit "$pytest_status"

if [ -f bench/bench_engine.py ]; then
    echo "==> bench smoke (bench/bench_engine.py --quick)"
    "$PY" bench/bench_engine.py --quick
fi

echo "==> all checks passed"
