"""End to end: crawl the sample site with the real spider, then ``python3 -m postprocess``."""

from __future__ import annotations

import json

import pyarrow.dataset as ds
import pytest
from test_postprocess_cli import check_queue, postprocess, read_csv

pytestmark = pytest.mark.slow


def test_sample_site_queue_meets_the_invariants(sample_site, scrapy_crawl, tmp_path):
    crawl, out = tmp_path / "crawl", tmp_path / "out"
    scrapy_crawl(sample_site, crawl)
    result = postprocess("--crawl", str(crawl), "--out", str(out))
    assert result.returncode == 0, result.stderr
    pages = {r["url"]: r["text"] or "" for r in ds.dataset(crawl / "pages").to_table().to_pylist()}
    links = ds.dataset(crawl / "links").to_table(columns=["source_url", "target_url"]).to_pylist()
    rows = read_csv(out / "suggestions.csv")
    assert rows, result.stdout
    check_queue(rows, pages, {(r["source_url"], r["target_url"]) for r in links}, per_source=5)
    assert all(r["source_url"] in pages and r["target_url"] in pages for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pages"] == len(pages)
    text_share = sum(r["anchor_type"] == "text" for r in rows) / len(rows)
    assert text_share >= 0.8, text_share
