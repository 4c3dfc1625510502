"""How long report.html takes to open in headless Chromium with a large queue (synthetic rows).

    python3 benchmarks/report_load.py --crawl /work/runs/after/django-crawl --rows 100000 [--out DIR]

Builds a queue of ``--rows`` rows between the crawl's pages (sentences of ~150 characters with the
anchor in them), writes report.html with it, opens it from its file in Debian's chromium and prints
the file size, the time to write it and the time until the queue's first page is on screen
(navigation start to the table rendered: the JSON parsed, filtered, sorted, 50 rows drawn).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from linkspider.settings import LINKSPIDER_CHROMIUM_PATH  # noqa: E402
from postprocess.apps.report import analyse, summary, write_html  # noqa: E402
from postprocess.stages.candidates import Suggestion  # noqa: E402
from postprocess.stages.load import load_crawl  # noqa: E402

WORDS = ("model field query form view template cache signal migration admin middleware session "
         "request response settings test database index manager serializer validator").split()


def synthetic_queue(urls: list[str], n: int, seed: int = 0) -> list[Suggestion]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        source, target = rng.sample(urls, 2)
        anchor = " ".join(rng.sample(WORDS, 2))
        before = " ".join(rng.choices(WORDS, k=10))
        after = " ".join(rng.choices(WORDS, k=10))
        rows.append(Suggestion(source, target, round(rng.uniform(0.5, 3), 4), {}, 1 + i % 5, anchor, "text",
                               f"The {before} {anchor} {after}.", "link", "", round(rng.uniform(0.5, 1), 4)))
    return sorted(rows, key=lambda r: (-r.confidence, -r.score))


def open_time(path: Path) -> float:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=LINKSPIDER_CHROMIUM_PATH, args=[
            "--no-sandbox", "--disable-background-networking", "--disable-component-update"])
        page = browser.new_page()
        page.goto(path.as_uri(), wait_until="commit")
        page.wait_for_selector("html[data-queue-ready]", timeout=120_000)
        ready = page.evaluate("performance.now()")
        browser.close()
    return ready / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--out", default=None, help="where report.html goes (default: a temporary folder)")
    args = parser.parse_args()
    crawl = load_crawl(args.crawl)
    rows = synthetic_queue([p.url for p in crawl.pages], args.rows)
    out = Path(args.out or tempfile.mkdtemp(prefix="report-load-"))
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    analysis = analyse(crawl, rows, out)
    write_html(out, crawl, rows, summary(crawl, rows, 0, {}, out, analysis=analysis), analysis)
    written = time.perf_counter() - started
    path = out / "report.html"
    loads = [open_time(path) for _ in range(3)]
    print(json.dumps({"rows": args.rows, "pages": len(crawl.pages), "bytes": path.stat().st_size,
                      "write_seconds": round(written, 2), "open_seconds": [round(s, 2) for s in loads]}))


if __name__ == "__main__":
    main()
