"""Report trend benchmark: the report's figures over a crawl directory that holds several jobs.

A scheduled recrawl writes a whole crawl as a new job into the same directory, and the report
compares each crawl with the one before (``apps/report/trend.py``). The scale benchmark's
synthetic crawls hold one job, so they never exercise this. This script writes (once) a copy of
``--crawl`` in which every pages, links and skipped part is repeated as ``--jobs`` weekly jobs
(the same rows, a week apart), then runs ``crawl_trend`` over it in a child process: wall time,
CPU seconds, peak RSS and the tree's peak PSS, and the snapshots it made.

    python benchmarks/trend.py --crawl /work/runs/scale/crawl-100000 --work /tmp/trend --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/postprocess.py must not shadow the package

import timing  # noqa: E402

TABLES = ("pages", "links", "skipped")
TREND = ("import json, sys\nfrom postprocess.apps.report.trend import crawl_trend\n"
         "print(json.dumps([s.to_json() for s in crawl_trend(sys.argv[1])]))")


def weekly(table: pa.Table, week: int) -> pa.Table:
    """``table``'s rows as the crawl job of week ``week``: job ``week-N``, fetched N weeks later."""
    job = pa.array([f"week-{week}"] * table.num_rows, pa.string())
    table = table.drop_columns([c for c in ("job",) if c in table.column_names]).append_column("job", job)
    if "fetched_at" in table.column_names:
        at = table.schema.get_field_index("fetched_at")
        later = pc.add(table["fetched_at"], pa.scalar(timedelta(weeks=week)))
        table = table.set_column(at, "fetched_at", later)
    return table


def write_jobs(crawl: Path, out: Path, jobs: int) -> int:
    """Write ``crawl``'s parts ``jobs`` times into ``out`` (once: kept when it is there); the link rows."""
    marker = out / f"jobs-{jobs}.done"
    if not marker.exists():
        for name in TABLES:
            (out / name).mkdir(parents=True, exist_ok=True)
            for part in sorted((crawl / name).glob("part-*.parquet")):
                table = pq.read_table(part)
                for week in range(jobs):
                    target = out / name / f"part-week{week}-{part.name.removeprefix('part-')}"
                    pq.write_table(weekly(table, week), target, compression="zstd")
                del table
        marker.write_text("")
    return sum(pq.ParquetFile(p).metadata.num_rows for p in (out / "links").glob("part-*.parquet"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crawl", type=Path, required=True, help="a crawl directory (one job)")
    parser.add_argument("--work", type=Path, required=True, help="where the jobs' copy is written")
    parser.add_argument("--jobs", type=int, default=2, help="weekly jobs to write (default 2)")
    args = parser.parse_args(argv)
    if args.jobs < 1 or not (args.crawl / "pages").is_dir():
        parser.error(f"--jobs must be at least 1 and {args.crawl} a crawl directory (with pages/)")
    directory = args.work / f"{args.crawl.name}-{args.jobs}-jobs"
    links = write_jobs(args.crawl, directory, args.jobs)
    wall, rss_kb, done = timing.timed([sys.executable, "-c", TREND, str(directory)], "the trend")
    snapshots = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps({"crawl": str(args.crawl), "jobs": args.jobs, "link_rows": links,
                      "seconds": round(wall, 1), "cpu_seconds": round(timing.LAST_CPU_SECONDS, 1),
                      "peak_rss_gb": round(rss_kb / 1024 ** 2, 2),
                      "peak_tree_pss_gb": round(timing.LAST_TREE_PSS_KB / 1024 ** 2, 2),
                      "snapshots": [{k: s[k] for k in ("jobs", "pages", "content_links", "links_added",
                                                        "links_removed")} for s in snapshots]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
