#!/usr/bin/env bash
# The README's main command: serve sample_site/ on 127.0.0.1, crawl it, run postprocess,
# and print where the outputs are: data/sample/crawl (replaced on every run) and data/sample/out
# (LINKSPIDER_SAMPLE_DIR=DIR writes them under DIR instead).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

sample_dir=${LINKSPIDER_SAMPLE_DIR:-data/sample}  # where the crawl and the outputs go
crawl_dir=$sample_dir/crawl
out_dir=$sample_dir/out
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

python3 -m linkspider.testserver sample_site --port 0 >"$work/url" 2>"$work/server.log" &
server_pid=$!
base_url=""
for _ in $(seq 1 100); do
  base_url=$(head -n 1 "$work/url" 2>/dev/null || true)
  [ -n "$base_url" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "sample: the sample site server did not start: $(tail -n 1 "$work/server.log")" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$base_url" ]; then
  echo "sample: the sample site server printed no URL within 10 s" >&2
  exit 1
fi
echo "sample: serving sample_site/ at $base_url"

# A fresh crawl every run (the port, and so every URL, changes), into a new folder: the previous
# crawl is replaced only once the new one has succeeded. The output folder is kept so that
# postprocess reuses its embedding cache (keyed by content hash, not URL).
mkdir -p "$sample_dir"
new_crawl=$(mktemp -d "$sample_dir/.crawl-new.XXXXXX")
echo "sample: crawling into $crawl_dir"
if ! python3 -m scrapy crawl site -a start="$base_url" -a out="$new_crawl" \
    -s AUTOTHROTTLE_ENABLED=False -s LOG_LEVEL=WARNING; then
  rm -rf "$new_crawl"
  echo "sample: the crawl failed; the previous crawl in $crawl_dir is kept" >&2
  exit 1
fi
rm -rf "$crawl_dir.old"
if [ -e "$crawl_dir" ]; then mv "$crawl_dir" "$crawl_dir.old"; fi
mv "$new_crawl" "$crawl_dir"
rm -rf "$crawl_dir.old"

echo "sample: postprocess into $out_dir"
python3 -m postprocess --crawl "$crawl_dir" --out "$out_dir"

echo
echo "sample: done."
echo "  crawl (Parquet):   $crawl_dir/{pages,links,skipped}/"
echo "  review queue:      $out_dir/suggestions.csv"
echo "  report:            $out_dir/report.html"
echo "  review it:         python3 -m postprocess serve --out $out_dir   (then open http://127.0.0.1:8000/review)"
ls -1 "$out_dir" | sed 's/^/    /'
