#!/usr/bin/env bash
# Run the whole test suite (creates .venv, installs test dependencies and, as root,
# Debian's chromium and haproxy for the browser tests).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup_env.sh requirements-test.txt
# Debian's chromium drives the browser tests; Noto CJK renders the 简体中文 pages in screenshots;
# haproxy balances the two processes of the class test (tests/e2e/test_class_browser.py).
if { [ ! -x /usr/bin/chromium ] || [ ! -d /usr/share/fonts/opentype/noto ] \
     || [ ! -x /usr/sbin/haproxy ]; } \
   && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium, CJK fonts and haproxy for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk haproxy >/dev/null
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/python -m pytest "$@"
