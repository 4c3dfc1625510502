#!/usr/bin/env bash
# Installs everything linkspider needs on a fresh Debian machine: idempotent, quiet when done.
set -euo pipefail
cd "$(dirname "$0")/.."
# System packages (need root: apt-get). Without root, install redis-server, chromium and curl
# yourself (or skip: only the Redis, rendering and Scrapyd tests need them).
need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)  # deploy/scheduled_run.sh talks to Scrapyd with curl
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: not root, so not installing ${need_apt[*]} (apt-get); the tests that need them are skipped or fail" >&2
  else
    echo "setup: apt-get install ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
fi
# Python packages: installed into the environment in use (python3 on PATH: a virtualenv, a
# user install, the system), whenever that environment lacks one of requirements.txt's
# pinned versions — checked in the environment itself, not with a stamp file in the checkout.
if ! python3 scripts/check_requirements.py requirements.txt; then
  echo "setup: pip install -r requirements.txt (into $(python3 -c 'import sys; print(sys.prefix)'))"
  python3 -m pip install -q --disable-pip-version-check torch==2.13.0
  python3 -m pip install -q --disable-pip-version-check -r requirements.txt
fi
