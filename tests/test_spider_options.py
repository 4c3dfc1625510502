"""The ``site`` spider's options and edge cases end to end: page cap, Scrapyd's _job, scope=path,
size limit, sitemaps (off, gzip), redirects between spellings of one canonical URL."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from linkspider.parquet import read_table

pytestmark = pytest.mark.slow


def tables(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    pages = read_table(out / "pages").to_pylist()
    skipped = read_table(out / "skipped").to_pylist() if list((out / "skipped").glob("part-*")) else []
    return pages, skipped


Crawler = Callable[..., Any]


def test_page_cap_and_scrapyd_job_id(sample_site: str, scrapy_crawl: Crawler, tmp_path: Path) -> None:
    scrapy_crawl(sample_site, tmp_path, "-a", "max_pages=5", "-a", "_job=0a1b2c3d4e")
    pages, _ = tables(tmp_path)
    assert len(pages) == 5
    assert {p["job"] for p in pages} == {"0a1b2c3d4e"}
    parts = list((tmp_path / "pages").glob("part-*.parquet"))
    assert parts and all(p.name.startswith("part-0a1b2c3d4e-") for p in parts)


def test_scope_path_keeps_the_crawl_under_the_start_path(
    sample_site: str, scrapy_crawl: Crawler, tmp_path: Path
) -> None:
    scrapy_crawl(sample_site + "guides/", tmp_path, "-a", "scope=path")
    pages, skipped = tables(tmp_path)
    paths = {p["url"].removeprefix(sample_site.rstrip("/")) for p in pages}
    assert "/guides/" in paths and "/guides/origins/brazil/" in paths
    assert "/guides/orphan-sitemap-only/" in paths  # sitemap URLs in scope still count
    assert all(path.startswith("/guides/") for path in paths)
    site = sample_site.rstrip("/")
    out_of_scope = {s["url"].removeprefix(site) for s in skipped if s["reason"] == "out_of_scope"}
    assert {"/", "/blog/", "/about/"} <= out_of_scope
    assert [p for p in pages if p["url"] == sample_site + "guides/"][0]["depth"] == 0


def test_size_limit_skips_large_pages(sample_site: str, scrapy_crawl: Crawler, tmp_path: Path) -> None:
    # the espresso guide is the largest page (~5.2 kB); most pages are under 4.6 kB
    scrapy_crawl(sample_site, tmp_path, settings={"DOWNLOAD_MAXSIZE": 4800, "LINKSPIDER_SITEMAPS": False})
    pages, skipped = tables(tmp_path)
    too_large = [s for s in skipped if s["reason"] == "too_large"]
    assert sample_site + "guides/espresso/" in {s["url"] for s in too_large}
    assert all("max size" in s["detail"] for s in too_large)
    assert not {s["url"] for s in too_large} & {p["url"] for p in pages}
    assert pages  # smaller pages are still recorded


def test_sitemaps_off_misses_the_orphan(sample_site: str, scrapy_crawl: Crawler, tmp_path: Path) -> None:
    scrapy_crawl(sample_site, tmp_path, settings={"LINKSPIDER_SITEMAPS": False})
    pages, _ = tables(tmp_path)
    urls = {p["url"] for p in pages}
    assert sample_site + "guides/espresso/" in urls
    assert sample_site + "guides/orphan-sitemap-only/" not in urls
    assert all(p["found_by"] != "sitemap" for p in pages)


class SlashlessSite(BaseHTTPRequestHandler):
    """A site that strips trailing slashes (/about/ answers 301 to /about; /loop/ and /loop bounce),
    sends /big.html without Content-Length and lists /gz-only.html in a gzip sitemap."""

    PAGES = {
        "/": '<html lang="en"><title>Home</title><body><main><p>Home page with <a href="/about/">about</a>'
        ' and <a href="/loop/">loop</a> and <a href="/big.html">big</a>'
        ' and <a href="/refresh.html">old</a>.</p></main></body></html>',
        "/about": '<html lang="en"><title>About</title><body><main><p>About us.</p></main></body></html>',
    }
    BIG = "<html><title>Big</title><body>" + "<p>many words here</p>" * 2000 + "</body></html>"
    REDIRECTS = {"/about/": "/about", "/loop/": "/loop", "/loop": "/loop/"}
    FILES = {
        "/robots.txt": ("text/plain", b"User-agent: *\nAllow: /\nSitemap: /maps/sitemap.xml.gz\n"),
        "/maps/sitemap.xml.gz": (
            "application/gzip",
            gzip.compress(
                b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                b"<url><loc>/gz-only.html</loc></url><url><loc>/about</loc></url></urlset>"
            ),
        ),
        "/gz-only.html": ("text/html", b"<html><title>Only in a gzip sitemap</title><p>Hello.</p></html>"),
        "/refresh.html": ("text/html", b'<html><head><meta http-equiv="Refresh" content="0; url=/about">'
                                       b"</head><body>Moved.</body></html>"),
    }

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        if self.path == "/big.html":  # no Content-Length: the size limit can only hit while reading
            self.protocol_version = "HTTP/1.0"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(self.BIG.encode())
            return
        if self.path in self.FILES:
            ctype, data = self.FILES[self.path]
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if self.path in self.REDIRECTS:
            self.send_response(301)
            self.send_header("Location", self.REDIRECTS[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.PAGES.get(self.path)
        self.send_response(200 if body else 404)
        data = (body or "not found").encode()
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def slashless_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlashlessSite)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_redirect_to_another_spelling_of_the_same_url(
    slashless_site: str, scrapy_crawl: Crawler, tmp_path: Path
) -> None:
    """With trailing_slash=add, /about is canonically /about/: the page is recorded, not lost."""
    scrapy_crawl(slashless_site, tmp_path, settings={"LINKSPIDER_SITEMAPS": False, "ROBOTSTXT_OBEY": False})
    pages, skipped = tables(tmp_path)
    about = [p for p in pages if p["url"] == slashless_site + "about/"]
    assert len(about) == 1 and about[0]["fetched_url"] == slashless_site + "about"
    assert about[0]["title"] == "About"
    [loop] = [s for s in skipped if s["url"] == slashless_site + "loop/"]
    assert loop["reason"] == "error" and "redirect loop" in loop["detail"]
    assert not [s for s in skipped if s["url"] == slashless_site + "about/"]


def test_size_limit_without_content_length(
    slashless_site: str, scrapy_crawl: Crawler, tmp_path: Path
) -> None:
    settings = {"LINKSPIDER_SITEMAPS": False, "ROBOTSTXT_OBEY": False, "DOWNLOAD_MAXSIZE": 20000}
    scrapy_crawl(slashless_site, tmp_path, settings=settings)
    pages, skipped = tables(tmp_path)
    [big] = [s for s in skipped if s["url"] == slashless_site + "big.html"]
    assert big["reason"] == "too_large" and "max size" in big["detail"], big
    assert slashless_site + "big.html" not in {p["url"] for p in pages}


def test_gzip_sitemap_from_robots_txt(slashless_site: str, scrapy_crawl: Crawler, tmp_path: Path) -> None:
    scrapy_crawl(slashless_site, tmp_path)
    pages, _ = tables(tmp_path)
    by_url = {p["url"]: p for p in pages}
    gz_only = by_url[slashless_site + "gz-only.html"]
    assert (gz_only["found_by"], gz_only["depth"]) == ("sitemap", None)
    assert by_url[slashless_site + "about/"]["found_by"] == "link"  # linked first, listed too


def test_meta_refresh_is_a_redirect(slashless_site: str, scrapy_crawl: Crawler, tmp_path: Path) -> None:
    scrapy_crawl(slashless_site, tmp_path, settings={"LINKSPIDER_SITEMAPS": False, "ROBOTSTXT_OBEY": False})
    pages, skipped = tables(tmp_path)
    [refresh] = [s for s in skipped if s["url"] == slashless_site + "refresh.html"]
    assert (refresh["reason"], refresh["alias_of"]) == ("redirect", slashless_site + "about/")
    assert refresh["detail"].startswith("meta refresh")
    assert [p["url"] for p in pages].count(slashless_site + "about/") == 1


@pytest.fixture
def moved_site(sample_site: str) -> Iterator[str]:
    """An origin whose every URL answers 301 to the same path on the sample site."""

    class Moved(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

        def do_GET(self) -> None:
            self.send_response(301)
            self.send_header("Location", sample_site.rstrip("/") + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Moved)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_start_url_that_moves_to_another_origin(
    moved_site: str, sample_site: str, scrapy_crawl: Crawler, tmp_path: Path
) -> None:
    """http -> https or a new host name: the crawl follows the start page to its new origin."""
    scrapy_crawl(moved_site, tmp_path, settings={"LINKSPIDER_SITEMAPS": False, "DEPTH_LIMIT": 1})
    pages, skipped = tables(tmp_path)
    [start] = [s for s in skipped if s["url"] == moved_site]
    assert (start["reason"], start["alias_of"]) == ("redirect", sample_site)
    home = [p for p in pages if p["url"] == sample_site]
    assert home and (home[0]["found_by"], home[0]["depth"]) == ("start", 0)
    assert sample_site + "guides/" in {p["url"] for p in pages}
    assert all(p["url"].startswith(sample_site) for p in pages)
