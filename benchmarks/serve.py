"""Benchmark ``python -m postprocess serve``: start-up, memory, /recommend and review-page latency.

    python3 benchmarks/serve.py --out data/out [--scale 30] [--requests 2000] [--threads 8] [--decisions 200]

Starts the real command (``--port 0``, a fresh ``--db``) on a copy of the queue, then asks
/recommend for random source pages over loopback: first one request at a time, then from
``--threads`` client threads. Then the review app: ``--decisions`` approvals posted one at a
time (with the page's CSRF token, as the page's fetch() does), and the review page itself
(first page of pending rows, a page deep into every row, a source filter) with those
decisions in the database. ``--scale K`` serves K copies of the queue (each copy's source
pages moved under ``/copyN/``) to see how start-up and memory grow with the queue.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit
from urllib.request import Request, urlopen

import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]


def scaled_copy(out: Path, scale: int, target: Path) -> list[str]:
    """Write ``scale`` copies of out's suggestions.parquet into ``target``; the source URLs."""
    table = pq.read_table(out / "suggestions.parquet")
    copies = []
    for n in range(scale):
        sources = table["source_url"].to_pylist()
        if n:
            sources = [urlunsplit(urlsplit(u)._replace(path=f"/copy{n}{urlsplit(u).path}")) for u in sources]
        copies.append(table.set_column(0, "source_url", pa.array(sources, pa.string())))
    big = pa.concat_tables(copies)
    pq.write_table(big, target / "suggestions.parquet")
    return sorted(set(big["source_url"].to_pylist()))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def timed_get(url: str) -> float:
    started = time.perf_counter()
    with urlopen(url, timeout=30) as response:
        response.read()
        assert response.status == 200
    return time.perf_counter() - started


def report(label: str, seconds: list[float], wall: float) -> None:
    ms = sorted(s * 1000 for s in seconds)
    print(f"{label:<24} {len(ms) / wall:8.0f} req/s   p50 {statistics.median(ms):6.2f} ms   "
          f"p95 {ms[int(len(ms) * 0.95)]:6.2f} ms   max {ms[-1]:6.2f} ms")


def review_timings(base: str, pairs: list[tuple[str, str]], decisions: int, rng: random.Random) -> None:
    """Post ``decisions`` approvals like the page's script, then time the review page."""
    with urlopen(base + "/review", timeout=60) as response:
        cookie = response.headers["set-cookie"].split(";")[0]
        token = re.search(r'name="csrf-token" content="([^"]+)"', response.read().decode()).group(1)
    headers = {"Cookie": cookie, "X-CSRF-Token": token, "Origin": base, "Accept": "application/json"}
    posts = []
    for source, target in rng.sample(pairs, min(decisions, len(pairs))):
        body = urlencode({"source_url": source, "target_url": target, "action": "approve"}).encode()
        started = time.perf_counter()
        with urlopen(Request(base + "/review/decide", body, headers), timeout=60) as response:
            response.read()
        posts.append(time.perf_counter() - started)
    if posts:
        report("POST /review/decide", posts, sum(posts))
    pages = max(1, len(pairs) // 50)
    source = urlsplit(pairs[0][0]).path.strip("/").split("/")[-1] or "/"
    screens = (("GET /review", ""), (f"GET /review page {pages // 2}", f"?state=all&page={pages // 2}"),
               ("GET /review source filter", "?" + urlencode({"state": "all", "source": source})))
    for label, query in screens:
        timed_get(base + "/review" + query)
        seconds = [timed_get(base + "/review" + query) for _ in range(10)]
        report(label, seconds, sum(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="a finished postprocess output directory")
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--decisions", type=int, default=200, help="approvals posted to the review app")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp)
        sources = scaled_copy(Path(args.out), args.scale, target)
        rows = pq.read_metadata(target / "suggestions.parquet").num_rows
        started = time.perf_counter()
        env = dict(os.environ, PYTHONPATH=str(REPO))
        server = subprocess.Popen([sys.executable, "-m", "postprocess", "serve", "--out", tmp, "--port", "0",
                                   "--db", str(target / "decisions.sqlite")],
                                  cwd=REPO, env=env, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        try:
            line = server.stdout.readline()
            ready = time.perf_counter() - started
            base = re.search(r"on (http://\S+)/ ", line).group(1)
            print(f"queue                    {rows} suggestions, {len(sources)} source pages")
            print(f"start-up                 {ready:.2f} s to listening (process start, imports, load)")
            rng = random.Random(0)
            picks = [rng.choice(sources) for _ in range(args.requests)]
            urls = [f"{base}/recommend?{urlencode({'url': page})}" for page in picks]
            timed_get(urls[0])
            wall = time.perf_counter()
            one = [timed_get(u) for u in urls]
            report("1 client", one, time.perf_counter() - wall)
            wall = time.perf_counter()
            with ThreadPoolExecutor(args.threads) as pool:
                many = list(pool.map(timed_get, urls))
            report(f"{args.threads} client threads", many, time.perf_counter() - wall)
            table = pq.read_table(target / "suggestions.parquet", columns=["source_url", "target_url"])
            pairs = list(zip(table["source_url"].to_pylist(), table["target_url"].to_pylist(), strict=True))
            review_timings(base, pairs, args.decisions, rng)
            print(f"server memory            {rss_mb(server.pid):.0f} MB RSS after the requests")
        finally:
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    main()
