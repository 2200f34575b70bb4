#!/usr/bin/env bash
# Installs ctxlab and starts the Streamlit playground on http://127.0.0.1:8501 with the
# coding-agent sample chat loaded (the app reads ?chat=<sample name> from the URL).
# Extra arguments are passed to `streamlit run` (e.g. --server.port=8600).
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install --quiet --disable-pip-version-check -e .

port=8501
for arg in "$@"; do
    case "$arg" in
        --server.port=*) port="${arg#--server.port=}" ;;
    esac
done
echo "ctxlab playground: http://127.0.0.1:${port}/?chat=coding_agent_session"

exec python -m streamlit run app.py \
    --server.address=127.0.0.1 \
    --browser.gatherUsageStats=false \
    "$@"
