"""Scrapyd and shared (Redis) crawls: deploy-to-finished time, and 1 vs 2 workers on one frontier.

    python3 benchmarks/distributed.py [--site /usr/share/doc/python-django-doc/html]

Serves the folder with Python's ``http.server`` on 127.0.0.1 (its own process)
and starts a private redis-server and scrapyd (the tests' helpers), then:

1. ``scrapyd-deploy`` time, and schedule.json -> listed finished time of a
   ``site`` crawl of the folder (poll 0.2 s);
2. ``scrapy crawl site`` alone, without Redis;
3. the same with ``LINKSPIDER_REDIS_URL`` (one worker on the Redis frontier);
4. two workers started together on one Redis frontier.

Wall time is from process start to the last worker's exit (interpreter start-up
and the shared idle close included: that is what a user waits for). Every crawl
uses AutoThrottle off and the project's concurrency (16 requests, 8 per host).
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from local_servers import deployed_scrapyd, free_port, post_form, redis_server  # noqa: E402

from deploy.scrapyd import Scrapyd, wait_for_job  # noqa: E402

DEFAULT_SITE = "/usr/share/doc/python-django-doc/html"


def pages_by_job(crawl: Path) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    urls: list[str] = []
    for part in sorted((crawl / "pages").glob("part-*.parquet")):
        table = pq.read_table(part, columns=["url", "job"])
        counts.update(table["job"].to_pylist())
        urls += table["url"].to_pylist()
    return {"pages": len(urls), "distinct": len(set(urls)), **{f"job {k[-6:]}": v for k, v in counts.items()}}


def crawl(base: str, out: Path, workers: int, redis_url: str | None) -> tuple[float, float, dict[str, int]]:
    """(wall s, longest Scrapy elapsed_time_seconds, page counts) of ``workers`` crawls started together."""
    command = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start={base}", "-a", f"out={out}",
               "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=INFO"]
    if redis_url:
        command += ["-s", f"LINKSPIDER_REDIS_URL={redis_url}"]
    logs = [out.with_name(f"{out.name}-{n}.log") for n in range(workers)]
    began = time.perf_counter()
    processes = [subprocess.Popen([*command, "-s", f"LOG_FILE={log}"], cwd=REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for log in logs]
    codes = [p.wait() for p in processes]
    wall = time.perf_counter() - began
    if any(codes):
        raise SystemExit(f"a crawl failed: exit codes {codes}")
    elapsed = [re.search(r"'elapsed_time_seconds': ([0-9.]+)", log.read_text()) for log in logs]
    return wall, max(float(m.group(1)) for m in elapsed if m), pages_by_job(out)


def redis_memory(redis_url: str, count: int = 200_000) -> float:
    """Bytes of Redis memory per SHA1 fingerprint in one set (the shared seen-set)."""
    import hashlib

    import redis

    client = redis.Redis.from_url(redis_url)
    before = client.info("memory")["used_memory"]
    for start in range(0, count, 10_000):
        client.sadd("bench:fingerprints",
                    *(hashlib.sha1(str(n).encode()).hexdigest() for n in range(start, start + 10_000)))
    used = client.info("memory")["used_memory"] - before
    client.delete("bench:fingerprints")
    return used / count


def queued_request_bytes() -> int:
    """Pickled size of one ``site`` page request as the Redis queue stores it."""
    import pickle

    from scrapy.settings import Settings

    from linkspider.arguments import parse_arguments
    from linkspider.spiders.site import SiteSpider, url_policy

    settings = Settings()
    settings.setmodule("linkspider.settings")
    spider = SiteSpider(parse_arguments({"start": "https://example.com/"}), url_policy(settings))
    request = spider.page_request("https://example.com/guides/a-long-page-name/", found_by="link", depth=3,
                                  from_url="https://example.com/guides/")
    return len(pickle.dumps(request.to_dict(spider=spider), protocol=-1))  # as scrapy_redis.picklecompat


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=DEFAULT_SITE, help="folder of HTML to serve (default %(default)s)")
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    port = free_port()
    serve = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", args.site]
    server = subprocess.Popen(serve, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/index.html"
    try:
        time.sleep(1)
        with tempfile.TemporaryDirectory(prefix="linkspider-bench-") as tmp:
            folder = Path(tmp)
            began = time.perf_counter()
            with deployed_scrapyd(folder / "scrapyd") as url:
                deployed = time.perf_counter() - began
                began = time.perf_counter()
                answer = post_form(url + "schedule.json", [
                    ("project", "linkspider"), ("spider", "site"), ("start", base),
                    ("out", str(folder / "scrapyd-crawl")), ("setting", "AUTOTHROTTLE_ENABLED=False")])
                wait_for_job(Scrapyd(url), answer["jobid"], timeout=1800, poll=0.2)
                finished = time.perf_counter() - began
            print(f"scrapyd-deploy: {deployed:.1f} s; schedule.json -> finished: {finished:.1f} s, "
                  f"{pages_by_job(folder / 'scrapyd-crawl')['pages']} pages")
            with redis_server(folder / "redis") as redis_url:
                rows = []
                for label, workers, use_redis in (("1 worker, no Redis", 1, False),
                                                  ("1 worker, Redis frontier", 1, True),
                                                  ("2 workers, one Redis frontier", 2, True)):
                    out = folder / label.replace(" ", "_").replace(",", "")
                    wall, elapsed, counts = crawl(base, out, workers, redis_url if use_redis else None)
                    rows.append((label, wall, elapsed, counts))
                    print(f"{label:32} {wall:6.1f} s  crawl {elapsed:6.1f} s  {counts}", flush=True)
                print(f"Redis: {redis_memory(redis_url):.0f} bytes per fingerprint; "
                      f"a queued request pickles to {queued_request_bytes()} bytes")
            alone = rows[0][2]
            print(f"load after: {os.getloadavg()[0]:.1f}")
            print("| run | wall s | crawl s (Scrapy elapsed) | pages | distinct | crawl time vs alone |")
            print("| --- | --- | --- | --- | --- | --- |")
            for label, wall, elapsed, counts in rows:
                pages, distinct = counts["pages"], counts["distinct"]
                ratio = alone / elapsed
                print(f"| {label} | {wall:.1f} | {elapsed:.1f} | {pages} | {distinct} | {ratio:.2f}x |")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
