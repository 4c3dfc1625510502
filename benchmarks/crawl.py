"""Crawl speed: the full ``site`` crawl against a bare CrawlSpider, side by side, same server.

    python3 benchmarks/crawl.py [--site /usr/share/doc/python-django-doc/html] [--rounds 2]

Serves the folder with Python's ``http.server`` on 127.0.0.1 (in its own
process), then runs, alternately, ``scrapy crawl site`` (extraction, Parquet)
and ``scrapy runspider benchmarks/bare_spider.py`` (follows links, nothing
else), both with the project's settings, AutoThrottle off and the same
concurrency. Pages/s = pages recorded (full) or HTML responses (bare) divided by
Scrapy's ``elapsed_time_seconds`` (engine start to close; interpreter start-up
is left out of both). Then it checks the last full crawl against the folder:
every HTML file stored exactly once, or explained by a skipped row.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.compute as pc
from scrapy.utils.project import get_project_settings

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from linkspider.parquet import read_table  # noqa: E402
from linkspider.spiders.site import url_policy  # noqa: E402
from linkspider.urls import canonical_url  # noqa: E402

DEFAULT_SITE = "/usr/share/doc/python-django-doc/html"
#: Navigation and footer text of the Django docs' template (Sphinx): never in the main text.
BOILERPLATE = ["« previous", "next »", "Previous topic", "Next topic", "Quick search", "Last update:",
               "Django 3.2.25 documentation", "Show Source"]
#: Template links of every Django docs page and where they stand.
SITE_LINKS = {
    "Django 3.2.25 documentation": ("header",),
    "Home": ("nav",),
    "Table of contents": ("nav",),
    "Index": ("nav",),
    "Modules": ("nav",),
    "previous": ("nav", "footer"),
    "next": ("nav", "footer"),
}


def stat(log: str, name: str) -> float:
    """One value of Scrapy's stats dump in a crawl log (0 when absent)."""
    match = re.search(rf"'{re.escape(name)}': ([0-9.]+)", log)
    return float(match.group(1)) if match else 0.0


def common_settings(concurrency: int) -> list[str]:
    settings = {
        "AUTOTHROTTLE_ENABLED": "False",
        "CONCURRENT_REQUESTS": str(concurrency),
        "CONCURRENT_REQUESTS_PER_DOMAIN": str(concurrency),
        "LOG_LEVEL": "INFO",
        "DEPTH_LIMIT": "0",
    }
    return [arg for k, v in settings.items() for arg in ("-s", f"{k}={v}")]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd: list[str]) -> tuple[str, float, float]:
    """(log, wall seconds, CPU seconds of the crawl process) of one crawl."""
    began, cpu = time.perf_counter(), children_cpu()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - began
    if proc.returncode != 0:
        sys.exit(f"crawl failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return proc.stderr, wall, children_cpu() - cpu


def full_crawl(base: str, out: Path, concurrency: int) -> dict[str, float]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "site", "-a", f"start={base}", "-a", f"out={out}"]
    log, wall, cpu = run(cmd + common_settings(concurrency))
    elapsed = stat(log, "elapsed_time_seconds")
    pages = stat(log, "linkspider/pages")
    return {"pages": pages, "elapsed": elapsed, "wall": wall, "pages_s": pages / elapsed, "cpu": cpu,
            "responses": stat(log, "response_received_count")}


def bare_crawl(base: str, concurrency: int) -> dict[str, float]:
    cmd = [sys.executable, "-m", "scrapy", "runspider", "benchmarks/bare_spider.py", "-a", f"start={base}"]
    log, wall, cpu = run(cmd + common_settings(concurrency))
    elapsed = stat(log, "elapsed_time_seconds")
    pages = stat(log, "downloader/response_status_count/200")
    return {"pages": pages, "elapsed": elapsed, "wall": wall, "pages_s": pages / elapsed, "cpu": cpu,
            "responses": stat(log, "response_received_count")}


def check(site: Path, base: str, out: Path) -> None:
    """Every HTML file of the folder stored once, or accounted for in skipped."""
    pages = read_table(out / "pages")
    skipped = read_table(out / "skipped")
    urls = pages.column("url").to_pylist()
    dupes = len(urls) - len(set(urls))
    policy = url_policy(get_project_settings())
    files = {canonical_url(base + str(p.relative_to(site)), policy) for p in site.rglob("*.html")}
    stored = set(urls) & files
    reasons = dict(zip(skipped.column("url").to_pylist(), skipped.column("reason").to_pylist(), strict=True))
    missing = sorted(files - set(urls))
    print(f"\nHTML files: {len(files)} (canonical URLs); pages stored: {len(urls)}, duplicates: {dupes}")
    print(f"files stored as pages: {len(stored)}; not stored: {len(missing)}")
    by_reason: dict[str, int] = {}
    for url in missing:
        by_reason[reasons.get(url, "not reached by any link or sitemap")] = (
            by_reason.get(reasons.get(url, "not reached by any link or sitemap"), 0) + 1
        )
    for reason, count in sorted(by_reason.items(), key=lambda kv: -kv[1]):
        print(f"  {count:4d}  {reason}")
    for url in missing[:15]:
        print(f"        {url}  ({reasons.get(url, 'unreached')})")
    extra = sorted(set(urls) - files)
    print(f"pages that are not HTML files of the folder: {len(extra)} {extra[:5]}")
    texts = pages.column("text").to_pylist()
    for phrase in BOILERPLATE:
        print(f"pages whose text holds the site's boilerplate {phrase!r}: {sum(phrase in t for t in texts)}")
    links = read_table(out / "links")
    counts = pc.value_counts(links.column("position")).to_pylist()
    print("link positions:", {c["values"]: c["counts"] for c in counts})
    anchors = links.column("anchor_text").to_pylist()
    positions = links.column("position").to_pylist()
    for anchor, allowed in SITE_LINKS.items():
        found = [pos for a, pos in zip(anchors, positions, strict=True) if a == anchor]
        right = sum(pos in allowed for pos in found)
        print(f"links {anchor!r}: {right}/{len(found)} in {'/'.join(allowed)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--site", default=DEFAULT_SITE, help="folder of a static site to serve")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each crawl, alternating")
    parser.add_argument("--concurrency", type=int, default=16, help="CONCURRENT_REQUESTS(_PER_DOMAIN)")
    parser.add_argument("--check-only", metavar="CRAWL_DIR", help="only check an existing crawl of --site")
    parser.add_argument("--base", help="with --check-only: the base URL that crawl used")
    args = parser.parse_args()
    site = Path(args.site)
    if not site.is_dir():
        sys.exit(f"site folder not found: {site} (apt-get install python-django-doc)")
    if args.check_only:
        check(site, args.base, Path(args.check_only))
        return 0
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", str(site)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = server.stdout.readline()  # type: ignore[union-attr]
        port = re.search(r"port (\d+)", line)
        if port is None:
            sys.exit(f"http.server did not start: {line!r}")
        base = f"http://127.0.0.1:{port.group(1)}/"
        print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}; site {site} served at {base}")
        full: list[dict[str, float]] = []
        bare: list[dict[str, float]] = []
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            for i in range(args.rounds):
                run_out = out / f"run{i}"
                full.append(full_crawl(base, run_out, args.concurrency))
                bare.append(bare_crawl(base, args.concurrency))
                for name, r in (("full", full[-1]), ("bare", bare[-1])):
                    print(f"round {i + 1} {name}: {r['pages']:.0f} pages, {r['responses']:.0f} responses, "
                          f"{r['elapsed']:.1f} s = {r['pages_s']:.1f} pages/s; "
                          f"CPU {r['cpu']:.1f} s = {1000 * r['cpu'] / r['pages']:.0f} ms/page")
            f = statistics.median(r["pages_s"] for r in full)
            b = statistics.median(r["pages_s"] for r in bare)
            fc = statistics.median(r["cpu"] / r["pages"] for r in full)
            bc = statistics.median(r["cpu"] / r["pages"] for r in bare)
            print(f"\nmedian pages/s: full site crawl {f:.1f}, bare CrawlSpider {b:.1f}, ratio {f / b:.2f}")
            print(f"median CPU ms/page: full {1000 * fc:.0f}, bare {1000 * bc:.0f}; "
                  f"pages per CPU-second ratio (full/bare) {bc / fc:.2f}")
            check(site, base, out / f"run{args.rounds - 1}")
    finally:
        server.terminate()
        server.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
