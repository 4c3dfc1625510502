"""Stopping a crawl: Ctrl-C with JOBDIR then the same command resumes; SIGKILL leaves whole parts.

The sample site is served slowly (a delay per request) and crawled one request at
a time, so that the signal lands mid-crawl.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import REPO, SAMPLE_SITE, scrapy_crawl_command

from linkspider.parquet import read_table
from linkspider.testserver import SiteServer, running

pytestmark = pytest.mark.slow

SLOW = {"CONCURRENT_REQUESTS": 1, "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "LOG_LEVEL": "INFO"}
SITE_PAGES = 31  # see EXPECTED_PAGES in test_spider_e2e.py


def wait_until(check: Callable[[], bool], proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert proc.poll() is None, "the crawl ended before the signal"
        assert time.monotonic() < deadline, "timed out waiting for the crawl"
        time.sleep(0.02)


def kill_9_when(cmd: list[str], check: Callable[[], bool]) -> None:
    """Start the crawl ``cmd`` and SIGKILL it once ``check()`` holds (or when waiting fails)."""
    proc = subprocess.Popen(cmd, cwd=REPO, stderr=subprocess.DEVNULL, text=True)
    try:
        wait_until(check, proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


def page_parts(out: Path) -> int:
    """How many pages/ part files the crawl into ``out`` has written."""
    return len(list((out / "pages").glob("part-*.parquet")))


def page_requests(server: SiteServer) -> int:
    return sum(1 for path in server.requests if path.endswith("/") and "?" not in path)


def test_ctrl_c_then_same_command_resumes(tmp_path: Path, scrapy_crawl: Callable[..., object]) -> None:
    out, jobdir = tmp_path / "out", tmp_path / "job"
    with running(SAMPLE_SITE, delay=0.1) as server:
        cmd = scrapy_crawl_command(server.url, out, settings={**SLOW, "JOBDIR": jobdir})
        first = subprocess.Popen(cmd, cwd=REPO, stderr=subprocess.PIPE, text=True)
        wait_until(lambda: page_requests(server) >= 8, first)
        first.send_signal(signal.SIGINT)  # what Ctrl-C sends
        _, stderr = first.communicate(timeout=60)
        assert first.returncode == 0, stderr[-3000:]
        assert "'finish_reason': 'shutdown'" in stderr
        before = read_table(out / "pages").to_pylist()
        assert 0 < len(before) < SITE_PAGES

        second = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
        assert second.returncode == 0, second.stderr[-3000:]
        assert "'finish_reason': 'finished'" in second.stderr

    pages = read_table(out / "pages").to_pylist()
    urls = [p["url"] for p in pages]
    assert len(set(urls)) == SITE_PAGES  # the union is the whole site
    assert len(urls) == SITE_PAGES  # and nothing was fetched twice: JOBDIR kept the seen set
    assert {p["url"] for p in before} <= set(urls)
    assert len({p["job"] for p in pages}) == 1  # the job id survives the resume (spider.state)
    skipped = [s["url"] for s in read_table(out / "skipped").to_pylist()]
    assert len(skipped) == len(set(skipped))  # skip-once is kept across the resume too


def test_sigkill_mid_crawl_leaves_only_complete_parts(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with running(SAMPLE_SITE, delay=0.05) as server:
        cmd = scrapy_crawl_command(server.url, out, settings={**SLOW, "LINKSPIDER_FLUSH_ROWS": 3})
        kill_9_when(cmd, lambda: page_parts(out) >= 3)
    parts = sorted(out.glob("*/part-*.parquet"))
    assert parts
    for part in parts:
        pq.read_table(part)  # every part left behind is readable
    pages = read_table(out / "pages").num_rows
    assert pages % 3 == 0 and pages < SITE_PAGES  # whole batches only; the unflushed rows are lost


def test_the_flush_timer_writes_parts_of_a_running_crawl(tmp_path: Path) -> None:
    """Row and byte limits far away: the timer alone writes parts while the crawl runs, so a
    kill -9 loses at most one interval of rows."""
    out = tmp_path / "out"
    settings = {**SLOW, "LINKSPIDER_FLUSH_ROWS": 100_000, "LINKSPIDER_FLUSH_SECONDS": 1}
    with running(SAMPLE_SITE, delay=0.2) as server:
        kill_9_when(scrapy_crawl_command(server.url, out, settings=settings), lambda: page_parts(out) >= 2)
    pages = read_table(out / "pages").num_rows
    assert 0 < pages < SITE_PAGES


def test_kill_9_then_the_same_command_leaves_every_page_once(tmp_path: Path) -> None:
    """kill -9 mid-crawl (no clean shutdown: nothing flushed, no state saved), then the same
    command with the same JOBDIR: every part readable, every page of the site, none twice."""
    out, jobdir = tmp_path / "out", tmp_path / "job"
    settings = {**SLOW, "JOBDIR": jobdir, "LINKSPIDER_FLUSH_ROWS": 3}
    with running(SAMPLE_SITE, delay=0.05) as server:
        cmd = scrapy_crawl_command(server.url, out, settings=settings)
        kill_9_when(cmd, lambda: page_parts(out) >= 3)
        second = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert second.returncode == 0, second.stderr[-2000:]
    for part in out.glob("*/part-*.parquet"):
        pq.read_table(part)
    urls = [p["url"] for p in read_table(out / "pages").to_pylist()]
    assert len(set(urls)) == SITE_PAGES, "\n".join(sorted(urls))
    assert len(urls) == SITE_PAGES


def write_tree_site(root: Path, pages: int) -> None:
    """``pages`` pages in a binary tree: page i links to pages 2i+1 and 2i+2 (and home); each
    page's words differ (a numbered tree of pages that all read the same is a crawl trap)."""
    vocabulary = ("kettle scale grinder filter carafe dripper burr roast bean crema bloom pour steep "
                  "press siphon brew cup mug tamper portafilter").split()
    for i in range(pages):
        words = " ".join(vocabulary[(i * k) % len(vocabulary)] for k in range(1, 80))
        folder = root if i == 0 else root / f"p{i}"
        folder.mkdir(parents=True, exist_ok=True)
        links = "".join(f'<a href="/p{j}/">page {j}</a> ' for j in (2 * i + 1, 2 * i + 2) if j < pages)
        (folder / "index.html").write_text(
            f"<!doctype html><html lang=en><title>Page {i}</title><main><h1>Page {i}</h1>"
            f"<p>{words}</p><p>{links}<a href='/'>home</a></p></main></html>")


def test_kill_9_after_the_dupefilter_wrote_fingerprints_loses_no_page(tmp_path: Path) -> None:
    """A kill -9 late enough that Scrapy's dupefilter has written fingerprints of pages whose
    rows were still in memory (and its disk queue's positions were never saved): the same
    command finds the frontier again from the stored pages' links, and every page is stored
    exactly once."""
    pages = 600
    write_tree_site(tmp_path / "site", pages)
    out, jobdir = tmp_path / "out", tmp_path / "job"
    settings = {"CONCURRENT_REQUESTS": 4, "CONCURRENT_REQUESTS_PER_DOMAIN": 4, "JOBDIR": jobdir,
                "LINKSPIDER_FLUSH_ROWS": 40, "LINKSPIDER_FLUSH_SECONDS": 0, "LINKSPIDER_SITEMAPS": False}
    with running(tmp_path / "site", delay=0.01) as server:
        cmd = scrapy_crawl_command(server.url, out, settings=settings)
        kill_9_when(cmd, lambda: page_requests(server) >= 350)
        assert (jobdir / "requests.seen").stat().st_size > 0  # fingerprints reached the disk
        stored_before = len(read_table(out / "pages").to_pylist())
        assert 0 < stored_before < pages
        second = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert second.returncode == 0, second.stderr[-2000:]
    urls = [p["url"] for p in read_table(out / "pages").to_pylist()]
    assert len(set(urls)) == pages, f"{pages - len(set(urls))} pages lost"
    assert len(urls) == pages
