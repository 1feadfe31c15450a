#!/usr/bin/env bash
# Create .venv with Python 3.11 and install a requirements file into it, once per change of
# that file (a stamp holds its hash).  Sourced by scripts/run.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
requirements="${1:-requirements.txt}"
python_bin="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv with $python_bin"
  "$python_bin" -m venv .venv
fi
stamp=".venv/.installed-$(basename "$requirements")"
wanted="$(cat requirements*.txt | sha256sum | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "Installing $requirements into .venv"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r "$requirements"
  echo "$wanted" > "$stamp"
fi
