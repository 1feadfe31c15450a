#!/usr/bin/env bash
# Run the whole test suite (creates .venv, installs test dependencies and, as root, Debian's
# chromium and haproxy for the browser tests and postgresql for the class-mode tests).  Extra
# arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup_env.sh requirements-test.txt
# Debian's chromium drives the browser tests; Noto CJK renders the 简体中文 pages in screenshots;
# haproxy balances the two processes of the class test (tests/e2e/test_class_browser.py);
# PostgreSQL: the class-mode tests start their own server (initdb, pg_ctl) with it.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -d /usr/share/fonts/opentype/noto ] || missing+=(fonts-noto-cjk)
[ -x /usr/sbin/haproxy ] || missing+=(haproxy)
{ ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; } \
  || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's ${missing[*]} for the browser and class-mode tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Let Python keep its bytecode and pytest its rewritten test modules in __pycache__ (ignored by
# git) where the environment says not to (PYTHONDONTWRITEBYTECODE): a later run in the same
# checkout then compiles nothing again (collection 19 -> 12 s a worker; benchmarks/RESULTS.md).
unset PYTHONDONTWRITEBYTECODE
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# One worker per core and one more (at most 4: each browser-test worker runs its own server
# and Chromium): a browser test leaves its core idle while it waits for a page.  Tests go out
# one at a time to whichever worker is free (--maxschedchunk 1): by default --dist load tops a
# worker up by two tests for each it finishes, so a worker running quick tests gathers
# hundreds, browser tests among them, and runs them alone after the other has finished.
# Measured in benchmarks/RESULTS.md, "The test suite".
# Without the browser tests (-m "not e2e ..."), one worker per core: nothing waits, and each
# extra worker only collects the whole suite again (~19 s of CPU here).
extra=1
case " $* " in *"not e2e"*) extra=0 ;; esac
workers=$(($(nproc) + extra))
exec .venv/bin/python -m pytest -n "$((workers < 4 ? workers : 4))" --dist load \
  --maxschedchunk 1 --durations=25 "$@"
