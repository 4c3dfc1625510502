"""Incremental runs: after 1% of the pages change, how long does a rerun into the same output take?

Copies the crawl, adds one newer part in which ``--share`` of its content pages (seeded)
have a rewritten paragraph (new text, new content hash, a later ``fetched_at``: what a
recrawl writes), then runs ``python -m postprocess run`` twice into one output folder:
first on the original crawl from an empty output (cold: every page embedded), then on the
changed crawl (warm: only the changed pages are embedded). Prints both wall times, peak
RSS, the pages embedded and the ratio.

    python benchmarks/incremental.py --crawl /work/runs/after/django-crawl --work /tmp/incr
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

sys.path.append(str(Path(__file__).resolve().parent))

from timing import postprocess_run  # noqa: E402


def changed_crawl(crawl: Path, out: Path, share: float, seed: int) -> int:
    """A copy of ``crawl`` plus one part rewriting a paragraph of ``share`` of its content pages."""
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(crawl, out)
    pages = ds.dataset(crawl / "pages", format="parquet").to_table()
    rows = [r for r in pages.to_pylist() if r["kind"] == "content" and r["text"]]
    rows = list({r["url"]: r for r in rows}.values())
    picked = random.Random(seed).sample(rows, max(1, round(share * len(rows))))
    for row in picked:
        sentence = (" This section was revised to cover the newest release, its upgrade steps and "
                    "the settings that changed.")
        for block in row["blocks"]:
            if block["kind"] == "paragraph":
                block["text"] += sentence
                break
        row["text"] = row["text"] + sentence
        row["word_count"] = len(row["text"].split())
        row["content_hash"] = hashlib.sha1(row["text"].encode()).hexdigest()
        row["fetched_at"] = row["fetched_at"] + timedelta(days=1)
        row["job"] = "recrawl"
    table = pa.Table.from_pylist(picked, schema=pages.schema)
    pq.write_table(table, out / "pages" / "part-recrawl-00001.parquet")
    return len(picked)


def timed_run(crawl: Path, out: Path, extra: list[str]) -> dict[str, float]:
    wall, rss_kb, summary = postprocess_run(crawl, out, extra)
    return {"seconds": round(wall, 1), "peak_rss_mb": round(rss_kb / 1024),
            "embedded_pages": summary.get("embedding", {}).get("embedded_pages"),
            "suggestions": summary.get("suggestions")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (emptied)")
    parser.add_argument("--share", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    args, extra = parser.parse_known_args()
    if args.work.exists():
        shutil.rmtree(args.work)
    args.work.mkdir(parents=True)
    changed = changed_crawl(args.crawl, args.work / "crawl-changed", args.share, args.seed)
    out = args.work / "out"
    first = timed_run(args.crawl, out, extra)
    rerun = timed_run(args.work / "crawl-changed", out, extra)
    result = {"crawl": str(args.crawl), "changed_pages": changed, "first": first, "rerun": rerun,
              "ratio": round(rerun["seconds"] / first["seconds"], 3)}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
