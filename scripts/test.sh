#!/usr/bin/env bash
# The project's one test command (README Quickstart, .ci/run): installs what is needed, then
# runs, in order, the format check, the linter, the type checker, every test (browser tests
# included) and a quick benchmark smoke run. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "==> system dependencies"
bash scripts/install_system_deps.sh

echo "==> pip install -e '.[test]'"
python -m pip install --quiet --disable-pip-version-check -e '.[test]'

echo "==> ruff format --check"
ruff format --check .

echo "==> ruff check"
ruff check .

echo "==> mypy"
mypy

echo "==> pytest"
python -m pytest -q

if [ -f bench/bench_engine.py ]; then
    echo "==> bench smoke (bench/bench_engine.py --quick)"
    python bench/bench_engine.py --quick
fi

echo "==> all checks passed"
