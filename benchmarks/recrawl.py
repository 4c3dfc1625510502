"""Incremental recrawl: a synthetic site crawled whole, then again after ``--changed`` of it changed.

Serves ``benchmarks/synthetic_site.py`` on 127.0.0.1 (ETag on every page, 304 for a
matching ``If-None-Match``, sitemap with lastmod), crawls it into one folder as job
``first``, re-draws ``--changed`` of the pages (new text, a newer lastmod), and crawls
again with ``-a incremental=1`` as job ``second``. Prints, per crawl: wall time, peak RSS
of the crawler, requests answered in full and with 304, bytes of page bodies sent, and the
pages each job holds.

    python benchmarks/recrawl.py --pages 20000 --work /tmp/recrawl
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.dataset as ds

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_site import SyntheticSite, serve  # noqa: E402
from timing import timed  # noqa: E402

SETTINGS = {"AUTOTHROTTLE_ENABLED": "False", "CONCURRENT_REQUESTS": "16",
            "CONCURRENT_REQUESTS_PER_DOMAIN": "16", "LOG_LEVEL": "INFO", "DEPTH_LIMIT": "0",
            "ROBOTSTXT_OBEY": "False"}


def crawl(port: int, out: Path, job: str, incremental: bool, changed: float, pages: int) -> dict:
    site = SyntheticSite(pages, changed=changed, base=f"http://127.0.0.1:{port}")
    server = serve(site, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    command = [sys.executable, "-m", "scrapy", "crawl", "site",
               "-a", f"start=http://127.0.0.1:{port}/", "-a", f"out={out}", "-a", f"job={job}",
               "-a", f"incremental={int(incremental)}"]
    for name, value in SETTINGS.items():
        command += ["-s", f"{name}={value}"]
    try:
        wall, rss_kb, _ = timed(command, f"crawl {job}")
    finally:
        server.shutdown()
        server.server_close()
    table = ds.dataset(out / "pages", format="parquet").to_table(columns=["job"])
    return {"job": job, "seconds": round(wall, 1), "crawler_peak_rss_mb": round(rss_kb / 1024),
            "full_responses": server.full, "not_modified": server.not_modified,
            "body_mb_sent": round(server.bytes_sent / 1e6, 1),
            "pages_in_job": int(pc.sum(pc.equal(table["job"], job)).as_py() or 0),
            "changed_pages": int(sum(site.is_changed(n) for n in range(pages))),
            "parts": len(list((out / "pages").glob("part-*.parquet")))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--port", type=int, default=8741)
    args = parser.parse_args()
    if args.work.exists():
        shutil.rmtree(args.work)
    out = args.work / "crawl"
    first = crawl(args.port, out, "first", False, 0.0, args.pages)
    print(json.dumps(first), file=sys.stderr)
    second = crawl(args.port, out, "second", True, args.changed, args.pages)
    result = {"pages": args.pages, "changed": args.changed, "first": first, "second": second,
              "time_ratio": round(second["seconds"] / first["seconds"], 3),
              "bytes_ratio": round(second["body_mb_sent"] / max(first["body_mb_sent"], 0.1), 3)}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
