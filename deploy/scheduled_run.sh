#!/usr/bin/env bash
# A scheduled crawl: schedule the crawl on Scrapyd, wait until it has finished,
# then build the review queue from that crawl alone. Meant for cron, e.g.
#   0 3 * * 1  cd /srv/linkspider && deploy/scheduled_run.sh https://example.com/ >> logs/cron.log 2>&1
#
# Usage: deploy/scheduled_run.sh START_URL [NAME=VALUE ...]
#   NAME=VALUE pairs go to schedule.json as they are: spider arguments
#   (max_pages=5000, scope=path) and per-job settings (setting=AUTOTHROTTLE_MAX_DELAY=10).
#   Crawls are incremental (incremental=1: conditional requests against the site's previous job,
#   unchanged pages carried over); pass incremental=0 for a full recrawl.
#
# Environment (all optional):
#   SCRAPYD_URL          Scrapyd to schedule on (default http://127.0.0.1:6800/)
#   SCRAPYD_USERNAME     basic-auth user and password, when scrapyd.conf sets them
#   SCRAPYD_PASSWORD
#   LINKSPIDER_DATA      data folder, shared with Scrapyd (default ./data): the crawl goes to
#                        $LINKSPIDER_DATA/crawl/<site>/, the queue to $LINKSPIDER_DATA/out/<site>/
#   WAIT_TIMEOUT         seconds to wait for the crawl (default 21600 = 6 h)
#   WAIT_POLL            seconds between listjobs.json polls (default 5)
#   POSTPROCESS_ARGS     extra options for `python3 -m postprocess run` (e.g. "--per-source 3")
#   PYTHON               interpreter (default python3)
#
# Exit status: 0 when the queue was rebuilt; non-zero (and one line on stderr) when scheduling,
# the crawl or postprocess failed. The previous queue is left as it was on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '%s scheduled_run: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }
die() { printf '%s scheduled_run: error: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: deploy/scheduled_run.sh START_URL [NAME=VALUE ...]"
start=$1
shift
case $start in http://*|https://*) ;; *) die "START_URL must be an http(s) URL, got '$start'" ;; esac
for pair in "$@"; do
  case $pair in *=*) ;; *) die "extra arguments must be NAME=VALUE, got '$pair'" ;; esac
done

python=${PYTHON:-python3}
scrapyd=${SCRAPYD_URL:-http://127.0.0.1:6800/}
scrapyd=${scrapyd%/}/
data=$(realpath -m "${LINKSPIDER_DATA:-data}")
# One folder per site: host, and port when there is one (example.com, 127.0.0.1_8000).
site=$("$python" -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print((p.hostname or "site") + (f"_{p.port}" if p.port else ""))' "$start")
crawl="$data/crawl/$site"
out="$data/out/$site"
mkdir -p "$crawl" "$out"

# Never two runs for one site at once (a crawl that outlasts the cron interval).
exec 9>"$out/.scheduled_run.lock"
flock -n 9 || die "another scheduled run for $site is still going ($out/.scheduled_run.lock)"

auth=()
if [ -n "${SCRAPYD_USERNAME:-}" ]; then
  auth=(--user "$SCRAPYD_USERNAME:${SCRAPYD_PASSWORD:-}")
fi
fields=(--data-urlencode project=linkspider --data-urlencode spider=site
        --data-urlencode "start=$start" --data-urlencode "out=$crawl")
case " $* " in *" incremental="*) ;; *) fields+=(--data-urlencode incremental=1) ;; esac
for pair in "$@"; do
  fields+=(--data-urlencode "$pair")
done

say "scheduling a crawl of $start on $scrapyd"
answer=$(curl -sS --fail-with-body --max-time 60 "${auth[@]}" "${fields[@]}" "${scrapyd}schedule.json") \
  || die "schedule.json failed: $(printf '%s' "$answer" | tr '\n' ' ')"
job=$("$python" -c '
import json, sys
try:
    answer = json.loads(sys.argv[1])
except ValueError:
    sys.exit("scrapyd did not answer JSON: " + " ".join(sys.argv[1].split())[:200])
if answer.get("status") != "ok":
    sys.exit("scrapyd refused the job: " + " ".join(str(answer.get("message", answer)).split())[:300])
print(answer["jobid"])' "$answer") || die "could not schedule the crawl"
say "job $job scheduled; crawl directory $crawl"

"$python" -m postprocess wait --scrapyd "$scrapyd" --job "$job" --crawl "$crawl" \
  --timeout "${WAIT_TIMEOUT:-21600}" --poll "${WAIT_POLL:-5}" || die "job $job did not produce a usable crawl"

# shellcheck disable=SC2086  # POSTPROCESS_ARGS is a list of options
"$python" -m postprocess run --crawl "$crawl" --job "$job" --out "$out" ${POSTPROCESS_ARGS:-} \
  || die "postprocess failed for job $job"
say "review queue for job $job: $out/suggestions.csv"
