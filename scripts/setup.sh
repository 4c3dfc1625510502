#!/usr/bin/env bash
# Installs everything linkspider needs on a fresh Debian machine: idempotent, quiet when done.
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)  # deploy/scheduled_run.sh talks to Scrapyd with curl
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
stamp=".setup-done"
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ]; then
  echo "setup: pip install -r requirements.txt"
  python3 -m pip install -q --disable-pip-version-check torch==2.13.0
  python3 -m pip install -q --disable-pip-version-check -r requirements.txt
  touch "$stamp"
fi
