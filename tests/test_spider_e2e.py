"""End to end: the real ``scrapy crawl site`` against the sample site on 127.0.0.1.

One crawl per module (a fixture); each test reads the Parquet it wrote with pyarrow.
The sample site and its traps are described in sample_site/README.md.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from linkspider.items import LINK_SCHEMA, PAGE_SCHEMA, POSITIONS, SKIP_SCHEMA
from linkspider.parquet import read_table
from linkspider.testserver import SiteServer

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]

#: The pages a crawl from / records (sitemaps on, no JavaScript): README "Pages" + the noindex tag page.
EXPECTED_PAGES = {
    "/", "/guides/", "/guides/grinders/", "/guides/burr-vs-blade/", "/guides/grind-size/",
    "/guides/espresso/", "/guides/pour-over/", "/guides/french-press/", "/guides/aeropress/",
    "/guides/cold-brew/", "/guides/water/", "/guides/roast-levels/", "/guides/origins/",
    "/guides/origins/ethiopia/", "/guides/origins/colombia/", "/guides/origins/brazil/",
    "/guides/milk-steaming/", "/guides/descaling/", "/guides/storage/", "/glossary/",
    "/guides/orphan-sitemap-only/", "/blog/", "/blog/2026/08/why-my-pour-over-tasted-sour/",
    "/blog/2026/05/summer-cold-brew-experiments/", "/blog/2026/03/dialing-in-a-new-bag/",
    "/blog/2025/11/holiday-gift-guide-grinders/", "/about/", "/about/contact/",
    "/fr/guide-espresso/", "/js/", "/blog/tag/espresso/",
}  # fmt: skip

BOILERPLATE = [
    "All rights reserved",  # footer
    "Popular posts",  # sidebar
    "We use cookies",  # cookie banner
    "one cup at a time",  # header tagline
]


@dataclass
class Crawl:
    base: str
    out: Path
    pages: list[dict[str, Any]]
    links: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    requests: list[str]  # paths the server saw during the crawl
    stderr: str

    def page(self, path: str) -> dict[str, Any]:
        [row] = [p for p in self.pages if p["url"] == self.base + path.lstrip("/")]
        return row

    def skip(self, path: str) -> dict[str, Any]:
        [row] = [s for s in self.skipped if s["url"] == self.base + path.lstrip("/")]
        return row

    def links_from(self, path: str) -> list[dict[str, Any]]:
        return [link for link in self.links if link["source_url"] == self.base + path.lstrip("/")]


@pytest.fixture(scope="module")
def crawl(
    sample_site_server: SiteServer, scrapy_crawl: Any, tmp_path_factory: pytest.TempPathFactory
) -> Crawl:
    out = tmp_path_factory.mktemp("crawl")
    before = len(sample_site_server.requests)
    proc = scrapy_crawl(sample_site_server.url, out)
    return Crawl(
        base=sample_site_server.url,
        out=out,
        pages=read_table(out / "pages").to_pylist(),
        links=read_table(out / "links").to_pylist(),
        skipped=read_table(out / "skipped").to_pylist(),
        requests=sample_site_server.requests[before:],
        stderr=proc.stderr,
    )


def test_every_html_page_recorded_exactly_once(crawl: Crawl) -> None:
    urls = [p["url"] for p in crawl.pages]
    assert len(urls) == len(set(urls))
    assert {u.removeprefix(crawl.base.rstrip("/")) for u in urls} == EXPECTED_PAGES


def test_each_page_fetched_once(crawl: Crawl) -> None:
    """The redirect target and the canonical target are fetched once, through the dupefilter."""
    # robots.txt is read twice: by Scrapy's RobotsTxtMiddleware and for its Sitemap lines.
    fetched = Counter(path for path in crawl.requests if "?" not in path and path != "/robots.txt")
    assert fetched["/guides/espresso/"] == 1
    assert max(fetched.values()) == 1


def test_part_files_have_the_contract_schemas(crawl: Crawl) -> None:
    for table, schema in (("pages", PAGE_SCHEMA), ("links", LINK_SCHEMA), ("skipped", SKIP_SCHEMA)):
        parts = sorted((crawl.out / table).glob("part-*.parquet"))
        assert parts, table
        for part in parts:
            assert pq.read_schema(part).equals(schema, check_metadata=False)
        assert not list((crawl.out / table).glob(".tmp-*"))


@pytest.mark.parametrize(
    ("path", "reason", "alias_of"),
    [
        ("/guides/grinders/?sort=price", "parameter", None),
        ("/search/?q=espresso", "parameter", None),
        ("/blog/page/2/", "pagination", None),
        ("/blog/?page=3", "pagination", None),
        ("/blog/?p=2", "pagination", None),
        ("/old-espresso-guide/", "redirect", "/guides/espresso/"),
        ("/shop/", "offsite", "https://shop.example.com/brew-guide/"),
        ("/guides/espresso-print/", "canonicalised", "/guides/espresso/"),
        ("/downloads/brew-ratios.pdf", "not_html", None),
        ("/private/secret/", "robots", None),
        ("/guides/missing/", "http_error", None),
    ],
)
def test_skipped_urls_with_reasons(crawl: Crawl, path: str, reason: str, alias_of: str | None) -> None:
    row = crawl.skip(path)
    assert row["reason"] == reason
    if alias_of is None:
        assert row["alias_of"] is None
    elif alias_of.startswith("https://"):
        assert row["alias_of"] == alias_of
    else:
        assert row["alias_of"] == crawl.base + alias_of.lstrip("/")
    assert row["job"] and row["fetched_at"] is not None


def test_each_skipped_url_recorded_once(crawl: Crawl) -> None:
    urls = [s["url"] for s in crawl.skipped]
    assert len(urls) == len(set(urls))
    assert not {s["url"] for s in crawl.skipped} & {p["url"] for p in crawl.pages}


def test_skip_details(crawl: Crawl) -> None:
    assert crawl.skip("/guides/missing/")["detail"] == "404"
    assert crawl.skip("/downloads/brew-ratios.pdf")["detail"] == "application/pdf"
    assert crawl.skip("/guides/grinders/?sort=price")["from_url"] in {crawl.base, crawl.base + "guides/"}


def test_never_requested(crawl: Crawl) -> None:
    """Parameter, pagination and robots-disallowed URLs are dropped before they are fetched."""
    requested = set(crawl.requests)
    for path in ("/private/secret/", "/blog/page/2/", "/guides/grinders/?sort=price", "/blog/?page=3"):
        assert path not in requested
    assert not any("utm_" in path or "jsessionid" in path for path in requested)


def test_found_by_and_depth(crawl: Crawl) -> None:
    assert (crawl.page("/")["found_by"], crawl.page("/")["depth"]) == ("start", 0)
    assert (crawl.page("/guides/")["found_by"], crawl.page("/guides/")["depth"]) == ("link", 1)
    assert crawl.page("/guides/burr-vs-blade/")["depth"] == 2  # / -> /guides/grinders/ -> here
    assert crawl.page("/guides/origins/ethiopia/")["depth"] == 3
    for path in ("/guides/orphan-sitemap-only/", "/blog/2025/11/holiday-gift-guide-grinders/"):
        assert (crawl.page(path)["found_by"], crawl.page(path)["depth"]) == ("sitemap", None)


def test_page_flags(crawl: Crawl) -> None:
    assert crawl.page("/blog/tag/espresso/")["noindex"] is True
    assert crawl.page("/guides/espresso/")["noindex"] is False
    assert crawl.page("/about/contact/")["thin"] is True
    assert crawl.page("/guides/espresso/")["thin"] is False
    assert crawl.page("/fr/guide-espresso/")["lang"] == "fr"
    assert crawl.page("/guides/storage/")["lang"] == "en"


def test_page_columns(crawl: Crawl) -> None:
    page = crawl.page("/blog/2026/03/dialing-in-a-new-bag/")
    assert page["title"].endswith("| Brew Guide")
    assert page["h1"] and page["meta_description"]
    assert page["published"].startswith("2026-03-09")
    assert page["modified"].startswith("2026-03-11")
    assert page["status"] == 200 and page["fetched_url"] == page["url"]
    assert len(page["content_hash"]) == 40
    assert len({p["job"] for p in crawl.pages + crawl.links + crawl.skipped}) == 1


def test_text_has_no_boilerplate(crawl: Crawl) -> None:
    for page in crawl.pages:
        for phrase in BOILERPLATE:
            assert phrase not in page["text"], (page["url"], phrase)
    assert "espresso" in crawl.page("/guides/espresso/")["text"].lower()


def test_link_positions(crawl: Crawl) -> None:
    links = crawl.links_from("/")
    site = crawl.base.rstrip("/")
    by_target = {(link["target_url"].removeprefix(site), link["position"]) for link in links}
    assert ("/guides/", "nav") in by_target
    assert ("/about/contact/", "footer") in by_target
    assert ("/guides/grinders/", "aside") in by_target  # "Popular posts" sidebar
    assert ("/guides/pour-over/", "content") in by_target
    assert {link["position"] for link in crawl.links} <= set(POSITIONS)


def test_links_are_canonical(crawl: Crawl) -> None:
    targets = {link["target_url"] for link in crawl.links}
    assert not any("utm_" in t or "jsessionid" in t or "#" in t or t.endswith("index.html") for t in targets)
    from_home = crawl.links_from("/")
    assert any(link["target_url"] == crawl.base + "guides/cold-brew/" for link in from_home)
    image_link = [
        link for link in from_home
        if link["target_url"] == crawl.base + "guides/espresso/" and link["anchor_text"] == "Espresso guide"
    ]  # fmt: skip
    assert image_link, "anchor text of an image link comes from its alt"


def test_external_links_recorded_not_fetched(crawl: Crawl) -> None:
    links = crawl.links_from("/guides/grinders/")
    [shop] = [link for link in links if "example-shop.com" in link["target_url"]]
    assert shop["internal"] is False and shop["nofollow"] is True
    assert all(link["internal"] for link in crawl.links if link["target_url"].startswith(crawl.base))


def test_noindex_page_links_followed(crawl: Crawl) -> None:
    assert crawl.links_from("/blog/tag/espresso/")


def test_canonicalised_page_has_no_rows_of_its_own(crawl: Crawl) -> None:
    assert not crawl.links_from("/guides/espresso-print/")


def test_crawl_logs_no_errors(crawl: Crawl) -> None:
    assert "Traceback" not in crawl.stderr
    assert "ERROR" not in crawl.stderr
    assert "Deprecat" not in crawl.stderr  # no deprecated Scrapy APIs (spider arguments, start_requests)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "missing start URL"),
        (["-a", "start=ftp://example.com/"], "must be http or https"),
        (["-a", "start=http://127.0.0.1:9/", "-a", "max_pages=lots"], "max_pages must be a whole number"),
        (["-a", "start=http://127.0.0.1:9/", "-a", "scope=everything"], "scope must be one of"),
        (["-a", "start=http://127.0.0.1:9/", "-s", "LINKSPIDER_TRAILING_SLASH=sideways"], "trailing_slash"),
    ],
)
def test_bad_arguments_one_line_error(args: list[str], message: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "site", *args],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("scrapy crawl site: error: ") and message in lines[0]
