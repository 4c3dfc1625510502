"""One crawl shared by two spider processes through a real redis-server (linkspider.distributed)."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import redis
from local_servers import REPO, redis_server

from linkspider.distributed import crawl_keys, crawl_name, redis_problem
from linkspider.testserver import running, serve

SAMPLE_SITE = REPO / "sample_site"
WORKER_TIMEOUT = 120  # seconds; a worker that does not stop by itself fails the test


@pytest.mark.parametrize(
    ("spider", "start", "expected"),
    [
        ("site", "https://Example.com/blog/", "site:example.com"),
        ("site", "http://127.0.0.1:8123/", "site:127.0.0.1:8123"),
        ("site", "https://example.com:443/", "site:example.com:443"),
        ("site", "https://shop.example.com/", "site:shop.example.com"),
        ("site", None, "site"),
        ("site", "", "site"),
    ],
)
def test_crawl_name(spider: str, start: str | None, expected: str) -> None:
    assert crawl_name(spider, start) == expected


def test_crawl_keys_are_per_crawl() -> None:
    a, b = crawl_keys("site:a.example"), crawl_keys("site:b.example")
    assert a["requests"] == "linkspider:site:a.example:requests"
    assert a["dupefilter"] == "linkspider:site:a.example:dupefilter"
    assert set(a.values()).isdisjoint(b.values())


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://127.0.0.1:6379/0", "expected redis://host:port/db"),
        ("127.0.0.1:6379", "expected redis://host:port/db"),
        ("redis://127.0.0.1:1/0", "cannot reach Redis at redis://127.0.0.1:1/0"),
    ],
)
def test_redis_problem(url: str, problem: str) -> None:
    found = redis_problem(url, timeout=2)
    assert found is not None and problem in found and "\n" not in found


def crawl_command(start: str, out: Path, log: Path, *settings: str) -> list[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start={start}", "-a", f"out={out}"]
    for setting in ("AUTOTHROTTLE_ENABLED=False", f"LOG_FILE={log}", "LOG_LEVEL=INFO", *settings):
        command += ["-s", setting]
    return command


def run_workers(commands: list[list[str]]) -> list[tuple[int, float]]:
    """Start every command at once; (exit status, seconds) of each. Fails if one does not stop."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    processes = [subprocess.Popen(c, cwd=REPO, env=env, stdout=subprocess.DEVNULL) for c in commands]
    results = []
    for process in processes:
        try:
            rc = process.wait(timeout=max(1.0, WORKER_TIMEOUT - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            for p in processes:
                p.kill()
            pytest.fail(f"a worker did not stop by itself within {WORKER_TIMEOUT} s")
        results.append((rc, time.monotonic() - started))
    return results


def pages_by_job(crawl: Path) -> dict[str, list[str]]:
    """job id -> page URLs written by that job."""
    found: dict[str, list[str]] = collections.defaultdict(list)
    for part in sorted((crawl / "pages").glob("part-*.parquet")):
        table = pq.read_table(part, columns=["url", "job"])
        for url, job in zip(table["url"].to_pylist(), table["job"].to_pylist(), strict=True):
            found[job].append(url)
    return found


def found_by(crawl: Path) -> dict[str, str]:
    """page URL -> how it was found (start, link or sitemap)."""
    table = pq.read_table(crawl / "pages", columns=["url", "found_by"])
    return dict(zip(table["url"].to_pylist(), table["found_by"].to_pylist(), strict=True))


@pytest.mark.slow
def test_two_workers_share_one_crawl(tmp_path: Path) -> None:
    with redis_server(tmp_path / "redis") as redis_url, running(SAMPLE_SITE) as site:
        base = site.url
        # The reference: one ordinary process, no Redis.
        alone = tmp_path / "alone"
        [(rc, _)] = run_workers([crawl_command(base, alone, tmp_path / "alone.log")])
        assert rc == 0
        expected = {url for urls in pages_by_job(alone).values() for url in urls}
        assert len(expected) >= 20
        requested_alone = collections.Counter(site.requests)

        # Two workers started together; a slow site (0.3 s a request, 2 at a time per worker)
        # keeps the crawl going long enough for the second one to join the first.
        site.delay = 0.3
        site.requests.clear()
        shared = tmp_path / "shared"
        settings = (f"LINKSPIDER_REDIS_URL={redis_url}", "LINKSPIDER_REDIS_IDLE_CLOSE=2",
                    "CONCURRENT_REQUESTS=2")
        logs = [tmp_path / "worker1.log", tmp_path / "worker2.log"]
        results = run_workers([crawl_command(base, shared, log, *settings) for log in logs])
        assert [rc for rc, _ in results] == [0, 0]

        by_job = pages_by_job(shared)
        rows = [url for urls in by_job.values() for url in urls]
        assert len(by_job) == 2, "each worker writes parts under its own job id"
        counts = {job: len(urls) for job, urls in by_job.items()}
        assert all(counts.values()), f"both workers should fetch pages: {counts}"
        assert set(rows) == expected  # the union is the whole site
        assert len(rows) == len(set(rows))  # and no page was written twice
        # Sitemap seeding waits until every worker has drained the link crawl, so a page a
        # link reaches is never recorded as found through the sitemap.
        assert found_by(shared) == found_by(alone)
        # HTTP requests: the same as one process made (robots.txt aside: each worker reads it itself).
        requested_shared = collections.Counter(site.requests)
        del requested_shared["/robots.txt"], requested_alone["/robots.txt"]
        assert requested_shared == requested_alone
        texts = [log.read_text() for log in logs]
        assert all("'finish_reason': 'finished'" in text for text in texts)
        assert sorted("new crawl" in text for text in texts) == [False, True]
        assert sorted("joining running workers" in text for text in texts) == [False, True]

        # The last worker out deleted the crawl's keys: Redis holds nothing of it.
        client = redis.Redis.from_url(redis_url)
        assert client.keys("linkspider:*") == []


@pytest.mark.slow
def test_new_crawl_clears_a_finished_crawls_seen_set(tmp_path: Path) -> None:
    """A seen-set left by an earlier crawl (no worker alive, queue empty) does not block the next one;
    a worker alone on the frontier stops when the crawl drains."""
    with redis_server(tmp_path / "redis") as redis_url, serve(SAMPLE_SITE) as base:
        client = redis.Redis.from_url(redis_url)
        keys = crawl_keys(crawl_name("site", base))
        client.sadd(keys["dupefilter"], *[f"{n:040x}" for n in range(50)])  # stale fingerprints
        client.sadd("linkspider:site:other.example:dupefilter", "f" * 40)  # another site's crawl
        out = tmp_path / "crawl"
        log = tmp_path / "worker.log"
        # A lone worker stops as soon as the crawl drains: it does not wait out the shared grace period.
        grace = WORKER_TIMEOUT * 10
        redis_settings = (f"LINKSPIDER_REDIS_URL={redis_url}", f"LINKSPIDER_REDIS_IDLE_CLOSE={grace}")
        [(rc, _)] = run_workers([crawl_command(base, out, log, *redis_settings)])
        assert rc == 0
        assert "new crawl (50 old fingerprints cleared)" in log.read_text()
        assert sum(len(urls) for urls in pages_by_job(out).values()) >= 20
        assert client.keys("linkspider:*") == [b"linkspider:site:other.example:dupefilter"]


def test_unreachable_redis_is_one_line_and_exit_2(tmp_path: Path) -> None:
    command = crawl_command("http://127.0.0.1:9/", tmp_path / "crawl", tmp_path / "log",
                            "LINKSPIDER_REDIS_URL=redis://127.0.0.1:1/0")
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines == [lines[0]] and "cannot reach Redis at redis://127.0.0.1:1/0" in lines[0]


@pytest.mark.slow
def test_a_stopped_shared_crawl_resumes_and_a_capped_one_is_over(tmp_path: Path) -> None:
    """Ctrl-C keeps the queue and seen-set, the next worker resumes; a page cap ends the crawl."""
    with redis_server(tmp_path / "redis") as redis_url, running(SAMPLE_SITE, delay=0.3) as site:
        base = site.url
        client = redis.Redis.from_url(redis_url)
        keys = crawl_keys(crawl_name("site", base))
        out = tmp_path / "crawl"
        settings = (f"LINKSPIDER_REDIS_URL={redis_url}", "CONCURRENT_REQUESTS=2", "LINKSPIDER_FLUSH_ROWS=1")
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        command = crawl_command(base, out, tmp_path / "first.log", *settings)
        first = subprocess.Popen(command, cwd=REPO, env=env)
        deadline = time.monotonic() + 60
        while len(list((out / "pages").glob("part-*.parquet"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        first.send_signal(signal.SIGINT)  # one Ctrl-C: finish what is in flight, then stop
        assert first.wait(timeout=60) == 0
        assert client.exists(keys["requests"]) and client.exists(keys["dupefilter"])

        [(rc, _)] = run_workers([crawl_command(base, out, tmp_path / "second.log", *settings)])
        assert rc == 0
        assert "resuming" in (tmp_path / "second.log").read_text()
        rows = [url for urls in pages_by_job(out).values() for url in urls]
        assert len(rows) == len(set(rows)) >= 20  # nothing fetched twice across the stop
        assert client.keys("linkspider:*") == []

        capped = tmp_path / "capped"
        [(rc, _)] = run_workers([crawl_command(base, capped, tmp_path / "capped.log", *settings[:2])
                                 + ["-a", "max_pages=3"]])
        assert rc == 0
        assert sum(len(urls) for urls in pages_by_job(capped).values()) == 3
        assert client.keys("linkspider:*") == []  # requests were left, but the crawl is over
