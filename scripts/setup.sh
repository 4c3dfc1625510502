#!/usr/bin/env bash
# Installs everything linkspider needs on a fresh Debian machine: idempotent, quiet when done.
set -euo pipefail
cd "$(dirname "$0")/.."
# System packages (need root: apt-get). Without root, install redis-server, chromium, curl and time
# yourself (or skip: only the Redis, rendering and Scrapyd tests need them).
need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)  # deploy/scheduled_run.sh talks to Scrapyd with curl
[ -x /usr/bin/time ] || need_apt+=(time)  # GNU time: the benchmarks' wall, CPU and peak memory (benchmarks/timing.py)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: not root, so not installing ${need_apt[*]} (apt-get); the tests that need them are skipped or fail" >&2
  else
    echo "setup: apt-get install ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
fi
# A real WordPress for the tests and benchmarks of the `wordpress` spider (tests/wordpress_site.py
# runs it on 127.0.0.1 with a private MariaDB and PHP's built-in server). No service is started:
# a policy-rc.d that exits 101 keeps apt from starting apache2 and mariadb during the install.
wp_packages=(wordpress wordpress-theme-twentytwentythree mariadb-server mariadb-client php-cli php-mysql
             php-xml php-mbstring php-gd php-curl)
need_wp=()
for pkg in "${wp_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need_wp+=("$pkg")
done
if [ ${#need_wp[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: not root, so not installing ${need_wp[*]} (apt-get); the WordPress tests are skipped" >&2
  else
    echo "setup: apt-get install ${need_wp[*]} (no service started)"
    policy=/usr/sbin/policy-rc.d
    saved=""
    if [ -e "$policy" ]; then saved=$(mktemp); cp -p "$policy" "$saved"; fi
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
    restore_policy() { if [ -n "$saved" ]; then mv -f "$saved" "$policy"; else rm -f "$policy"; fi; }
    trap restore_policy EXIT
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_wp[@]}" >/dev/null
    restore_policy
    trap - EXIT
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
