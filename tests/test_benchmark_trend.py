"""benchmarks/trend.py: a crawl written again as weekly jobs, and the report's trend run over them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from crawlkit import SITE_LINKS, module_from_file, write_site

ROOT = Path(__file__).resolve().parents[1]


def test_the_trend_benchmark_writes_weekly_jobs_and_runs_the_trend_over_them(tmp_path, capsys):
    trend = module_from_file("trend_benchmark", ROOT / "benchmarks" / "trend.py")
    crawl = write_site(tmp_path / "site")
    assert trend.main(["--crawl", str(crawl), "--work", str(tmp_path / "work"), "--jobs", "3"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["link_rows"] == 3 * len(SITE_LINKS)
    assert [s["jobs"] for s in result["snapshots"]] == [["week-0"], ["week-1"], ["week-2"]]
    assert [s["links_added"] for s in result["snapshots"]] == [None, 0, 0]
    pages = pq.read_table(next((tmp_path / "work").glob("*/pages/part-week2-*.parquet")))
    original = pq.read_table(next((crawl / "pages").glob("part-*.parquet")))
    assert set(pages["job"].to_pylist()) == {"week-2"}
    assert (pages["fetched_at"][0].as_py() - original["fetched_at"][0].as_py()).days == 14
