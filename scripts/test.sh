#!/usr/bin/env bash
# Run the whole test suite (creates .venv, installs test dependencies and, as root,
# Debian's chromium for the browser tests and postgresql for the class-mode tests).  Extra
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup_env.sh requirements-test.txt
# Debian's chromium drives the browser tests; Noto CJK renders the 简体中文 pages in screenshots.
if { [ ! -x /usr/bin/chromium ] || [ ! -d /usr/share/fonts/opentype/noto ]; } \
   && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's chromium and CJK fonts for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk >/dev/null
fi
# Debian's PostgreSQL: the class-mode tests start their own server (initdb, pg_ctl) with it.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null \
   && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's postgresql for the class-mode tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/python -m pytest "$@"
