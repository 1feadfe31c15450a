#!/usr/bin/env bash
# Start NormScope on http://127.0.0.1:8501 (creates .venv and installs what is missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup_env.sh requirements.txt
exec .venv/bin/python scripts/serve.py "$@"
