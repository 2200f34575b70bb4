#!/usr/bin/env bash
# The project's one test command (README Quickstart, .ci/run): installs what is needed (ctxlab
# and its test extra into the project venv .venv, or into the active venv; see scripts/_venv.sh),
# then runs, in order, the format check, the linter, the type checker, every test (browser tests
# included) and a quick benchmark smoke run. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_venv.sh
. scripts/_venv.sh

echo "==> system dependencies"
bash scripts/install_system_deps.sh

echo "==> python environment"
ctxlab_venv
ctxlab_install test

echo "==> framework oracle environment (the pinned frameworks extra, reused while unchanged)"
CTXLAB_ORACLE_PYTHON="$("$PY" scripts/oracle_env.py)"
export CTXLAB_ORACLE_PYTHON

echo "==> ruff format --check"
"$PY" -m ruff format --check .

echo "==> ruff check"
"$PY" -m ruff check .

echo "==> mypy"
"$PY" -m mypy

echo "==> pytest"
"$PY" -m pytest -q

if [ -f bench/bench_engine.py ]; then
    echo "==> bench smoke (bench/bench_engine.py --quick)"
    "$PY" bench/bench_engine.py --quick
fi

echo "==> all checks passed"
