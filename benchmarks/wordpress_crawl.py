"""The same WordPress site read two ways: the REST API (``scrapy crawl wordpress``) and HTML
(``scrapy crawl site``): wall time, requests, bytes, rows, links, and what only one of them sees.

Starts a WordPress with The Kitchen Ledger (tests/wordpress_site.py) unless ``--url`` names a
running one, crawls it both ways with the project's settings (polite: AutoThrottle on, robots.txt
obeyed; ``--fast`` turns AutoThrottle off as the tests do), and prints a Markdown table and JSON.

    python benchmarks/wordpress_crawl.py --work /tmp/wp-bench [--url http://127.0.0.1:8200/] [--fast]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from timing import postprocess_run, timed  # noqa: E402

from linkspider.parquet import read_table  # noqa: E402

FAST = ["-s", "AUTOTHROTTLE_ENABLED=False", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16"]


def crawl(spider: str, argument: str, out: Path, extra: list[str]) -> dict[str, Any]:
    """One crawl: wall time, peak RSS, Scrapy's request/byte counts, and its tables."""
    if out.exists():
        shutil.rmtree(out)
    command = [sys.executable, "-m", "scrapy", "crawl", spider, "-a", argument, "-a", f"out={out}",
               "-s", "LOG_LEVEL=INFO", *extra]
    wall, rss_kb, done = timed(command, f"scrapy crawl {spider}")
    match = re.search(r"Dumping Scrapy stats:\n(\{.*?\})\n", done.stderr, flags=re.DOTALL)
    stats = ast.literal_eval(re.sub(r"datetime\.datetime\([^)]*\)", "None", match.group(1))) if match else {}
    pages = read_table(out / "pages").to_pylist()
    links = read_table(out / "links").to_pylist() if (out / "links").is_dir() else []
    return {"wall_s": round(wall, 2), "rss_mb": round(rss_kb / 1024), "requests":
            stats.get("downloader/request_count"), "response_mb":
            round(stats.get("downloader/response_bytes", 0) / 2**20, 2), "pages": pages, "links": links}


def compare(api: dict[str, Any], html: dict[str, Any]) -> dict[str, Any]:
    """Side-by-side figures and the differences between the two crawls."""
    api_pages = {p["url"]: p for p in api["pages"]}
    html_pages = {p["url"]: p for p in html["pages"]}
    both = sorted(set(api_pages) & set(html_pages))

    def content_links(crawl: dict[str, Any], urls: set[str]) -> Counter[str]:
        return Counter(link["source_url"] for link in crawl["links"]
                       if link["position"] == "content" and link["internal"] and link["source_url"] in urls)

    api_content, html_content = content_links(api, set(both)), content_links(html, set(both))
    api_targets = {(lk["source_url"], lk["target_url"]) for lk in api["links"] if lk["source_url"] in both}
    html_targets = {(lk["source_url"], lk["target_url"]) for lk in html["links"]
                    if lk["source_url"] in both and lk["position"] == "content"}
    row = {}
    for name, crawl_ in (("api", api), ("html", html)):
        pages = crawl_["pages"]
        row[name] = {
            "wall_s": crawl_["wall_s"], "rss_mb": crawl_["rss_mb"], "requests": crawl_["requests"],
            "response_mb": crawl_["response_mb"], "pages": len(pages),
            "kinds": dict(Counter(p["kind"] for p in pages)), "links": len(crawl_["links"]),
            "content_links": sum(1 for lk in crawl_["links"] if lk["position"] == "content"),
            "with_categories": sum(1 for p in pages if p.get("categories")),
            "with_dates": sum(1 for p in pages if p.get("published")),
        }
    only_html = sorted(set(html_pages) - set(api_pages))
    return {
        **row,
        "urls_in_both": len(both),
        "only_in_html": len(only_html),
        "only_in_html_by_kind": dict(Counter(html_pages[u]["kind"] for u in only_html)),
        "only_in_html_examples": only_html[:8],
        "only_in_api": sorted(set(api_pages) - set(html_pages)),
        "same_content_link_count": sum(api_content[u] == html_content[u] for u in both),
        "content_link_pairs_api_not_html": len(api_targets - html_targets),
        "content_link_pairs_html_not_api": len(html_targets - api_targets),
        "same_word_count": sum(api_pages[u]["word_count"] == html_pages[u]["word_count"] for u in both),
        "mean_words": {name: round(sum(p[u]["word_count"] for u in both) / max(1, len(both)), 1)
                       for name, p in (("api", api_pages), ("html", html_pages))},
        "same_title": sum(api_pages[u]["title"] == html_pages[u]["title"] for u in both),
    }


def queues(work: Path) -> dict[str, Any]:
    """``python -m postprocess run`` on both crawls: time, the queue's size and how the pairs overlap."""
    import csv

    found: dict[str, Any] = {}
    pairs: dict[str, set[tuple[str, str]]] = {}
    for name in ("api", "html"):
        out = work / f"{name}-out"
        if out.exists():
            shutil.rmtree(out)
        wall, rss_kb, summary = postprocess_run(work / f"{name}-crawl", out, [])
        with open(out / "suggestions.csv", newline="", encoding="utf-8") as rows:
            pairs[name] = {(r["source_url"], r["target_url"]) for r in csv.DictReader(rows)}
        found[name] = {"wall_s": round(wall, 1), "rss_mb": round(rss_kb / 1024), "pages": summary["pages"],
                       "suggestions": summary["suggestions"]}
    found["pairs_in_both"] = len(pairs["api"] & pairs["html"])
    found["pairs_only_api"] = len(pairs["api"] - pairs["html"])
    found["pairs_only_html"] = len(pairs["html"] - pairs["api"])
    return found


def table(result: dict[str, Any]) -> str:
    """The figures as a Markdown table, the REST API crawl beside the HTML crawl."""
    lines = ["| | REST API (`wordpress`) | HTML (`site`) |", "| --- | ---: | ---: |"]
    for key in ("wall_s", "requests", "response_mb", "rss_mb", "pages", "links", "content_links",
                "with_categories", "with_dates"):
        lines.append(f"| {key} | {result['api'][key]} | {result['html'][key]} |")
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(result["html"]["kinds"].items()))
    lines.append(f"| kinds | {', '.join(f'{k} {v}' for k, v in result['api']['kinds'].items())} | {kinds} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for the site and the crawls")
    parser.add_argument("--url", help="a running WordPress (default: start one with The Kitchen Ledger)")
    parser.add_argument("--fast", action="store_true", help="AutoThrottle off (as the tests crawl)")
    parser.add_argument("--postprocess", action="store_true", help="also run postprocess on both crawls")
    args = parser.parse_args(argv)
    extra = FAST if args.fast else []
    with ExitStack() as stack:
        url = args.url
        if url is None:
            from tests.wordpress_site import wordpress_site

            url = stack.enter_context(wordpress_site(args.work / "site")).url
        api = crawl("wordpress", f"site={url}", args.work / "api-crawl", extra)
        html = crawl("site", f"start={url}", args.work / "html-crawl", extra)
    result = compare(api, html)
    if args.postprocess:
        result["postprocess"] = queues(args.work)
    print(table(result))
    print(json.dumps({k: v for k, v in result.items() if k not in ("api", "html")}, indent=2))
    (args.work / "wordpress_crawl.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
