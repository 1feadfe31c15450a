#!/usr/bin/env bash
# Serve a class: N NormScope processes behind HAProxy on http://127.0.0.1:8501 (creates .venv,
# installs what is missing and, as root, Debian's haproxy).  N defaults to the number of
# cores; other arguments go to scripts/serve_class.py (--address 0.0.0.0, --port, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup_env.sh requirements.txt
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ] \
   && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's haproxy"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null
fi
exec .venv/bin/python scripts/serve_class.py "$@"
