"""Incremental recrawls: conditional requests, changed pages first, unchanged pages carried over.

The sample site is crawled once, one page is edited and a new one added, then the same
command with ``-a incremental=1`` crawls it again into the same folder: the server answers
304 for every unchanged page, only the edited and the new page are transferred and parsed,
and the new job still holds every page with its links.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.compute as pc
import pytest
from conftest import SAMPLE_SITE, run_scrapy_crawl

from linkspider.parquet import read_table
from linkspider.testserver import running
from postprocess.stages.load import load_crawl

pytestmark = pytest.mark.slow

SETTINGS = {"CONCURRENT_REQUESTS": 4, "LOG_LEVEL": "INFO"}
EDITED = "guides/water/index.html"


def job_rows(out: Path, table: str, job: str) -> list[dict]:
    rows = read_table(out / table)
    return rows.filter(pc.equal(rows["job"], job)).to_pylist()


def page_responses(server, since: int) -> list[tuple[str, int, int]]:
    return [r for r in server.responses[since:]
            if not r[0].endswith((".xml", ".txt", ".css", ".js")) and "/img/" not in r[0]]


def test_a_recrawl_transfers_only_what_changed_and_carries_the_rest(tmp_path: Path) -> None:
    site, out = tmp_path / "site", tmp_path / "crawl"
    shutil.copytree(SAMPLE_SITE, site)
    with running(site) as server:
        run_scrapy_crawl(server.url, out, "-a", "job=first", settings=SETTINGS)
        first = {r["url"]: r for r in job_rows(out, "pages", "first")}
        assert first and all(r["etag"] for r in first.values())

        page = site / EDITED
        page.write_text(page.read_text().replace(
            "</main>", '<p>Revised: see the <a href="/guides/water-hardness/">water hardness chart</a> '
                       "for the minerals that matter.</p></main>", 1))
        (site / "guides" / "water-hardness").mkdir()
        (site / "guides" / "water-hardness" / "index.html").write_text(
            "<!doctype html><html lang=en><head><title>Water hardness chart</title></head><body><main>"
            "<h1>Water hardness chart</h1><p>" + "Calcium and magnesium in brewing water. " * 40
            + "</p></main></body></html>")
        mark = len(server.responses)
        proc = run_scrapy_crawl(server.url, out, "-a", "job=second", "-a", "incremental=1",
                                settings=SETTINGS)

    second = {r["url"]: r for r in job_rows(out, "pages", "second")}
    base = server.url.rstrip("/")
    edited, new = f"{base}/guides/water/", f"{base}/guides/water-hardness/"
    assert set(second) == set(first) | {new}  # the new job is the whole site on its own
    assert "Revised: see the" in second[edited]["text"]
    unchanged = [u for u in first if u != edited]
    for url in unchanged:  # carried over as they were, under the new job
        before, after = first[url], second[url]
        assert (after["text"], after["content_hash"]) == (before["text"], before["content_hash"])
    answered = page_responses(server, mark)
    # URLs the first job skipped (a PDF, a page declaring another canonical) have no validators
    skipped = {r["url"].removeprefix(base) for r in job_rows(out, "skipped", "first")}
    full = [path for path, status, size in answered if status == 200 and path not in skipped]
    assert sorted(full) == ["/guides/water-hardness/", "/guides/water/"]
    assert sum(1 for _, status, _ in answered if status == 304) == len(unchanged)
    assert "linkspider/not_modified" in proc.stderr and "carried over from job first" in proc.stderr

    links_first = {(r["source_url"], r["target_url"]) for r in job_rows(out, "links", "first")}
    links_second = {(r["source_url"], r["target_url"]) for r in job_rows(out, "links", "second")}
    assert {p for p in links_first if p[0] != edited} <= links_second
    assert (edited, new) in links_second
    crawl = load_crawl(out, job="second")
    assert len(crawl.pages) == len(second)


def test_the_sitemap_sends_changed_pages_first(tmp_path: Path) -> None:
    site, out = tmp_path / "site", tmp_path / "crawl"
    shutil.copytree(SAMPLE_SITE, site)
    with running(site) as server:
        run_scrapy_crawl(server.url, out, "-a", "job=first", settings={"CONCURRENT_REQUESTS": 1})
        sitemap = site / "sitemap.xml"
        sitemap.write_text(sitemap.read_text().replace(
            "<loc>{{BASE}}/guides/descaling/</loc><lastmod>2026-09-01</lastmod>",
            "<loc>{{BASE}}/guides/descaling/</loc><lastmod>2099-01-01</lastmod>"))
        mark = len(server.responses)
        proc = run_scrapy_crawl(server.url, out, "-a", "job=second", "-a", "incremental=1",
                                settings={"CONCURRENT_REQUESTS": 1, "LOG_LEVEL": "INFO"})
    order = [path for path, _, _ in page_responses(server, mark)]
    assert order[0] == "/guides/descaling/"  # before the start page: the sitemap said it changed
    assert "'linkspider/sitemap_changed_first': 1" in proc.stderr


def test_without_an_earlier_job_an_incremental_crawl_is_a_full_one(tmp_path: Path) -> None:
    with running(SAMPLE_SITE) as server:
        proc = run_scrapy_crawl(server.url, tmp_path / "crawl", "-a", "incremental=1", settings=SETTINGS)
    assert "no earlier job" in proc.stderr
    assert all(status != 304 for _, status, _ in server.responses)
