#!/usr/bin/env bash
# Installs ctxlab with its playground extra (ctxlab[app]) into the project venv (.venv, created
# with python3 -m venv; an active venv is used instead) and starts the Streamlit playground on
# http://127.0.0.1:8501 with the coding-agent sample chat loaded (the app reads
# ?chat=<sample name> from the URL).
# Extra arguments are passed to `streamlit run` (e.g. --server.port=8600).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_venv.sh
. scripts/_venv.sh

ctxlab_venv
ctxlab_install app  # the playground extra: Streamlit, Plotly, pandas

port=8501
for arg in "$@"; do
    case "$arg" in
        --server.port=*) port="${arg#--server.port=}" ;;
    esac
done
echo "ctxlab playground: http://127.0.0.1:${port}/?chat=coding_agent_session"

# The C library's allocator lets the server give back the memory of visitors who left
# (ctxlab.launch.SERVER_ENVIRONMENT says why); `ctxlab app` starts with the same setting.
export PYTHONMALLOC="${PYTHONMALLOC:-malloc}"

exec "$PY" -m streamlit run app.py \
    --server.address=127.0.0.1 \
    --browser.gatherUsageStats=false \
    "$@"
