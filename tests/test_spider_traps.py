"""A site with crawl traps — an endless path, an endless calendar, session ids in links — is
crawled without a page cap: the crawl ends by itself with every ordinary page."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import run_scrapy_crawl

from linkspider.parquet import read_table

pytestmark = pytest.mark.slow

CALENDAR = re.compile(r"/calendar/(\d{4})/(\d{2})/")
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
TEXT = "<p>" + "Brewing notes on water, grind and time for a better cup of coffee. " * 30 + "</p>"


class TrapSite(BaseHTTPRequestHandler):
    """/ and three articles; every path under /loop/ answers a page with relative links that
    nest for ever (``a/b/`` and ``loop/``), as a misconfigured CMS does; /calendar/YYYY/MM/ links
    the month before and after, for ever, each saying there are no events; and links carry
    session ids (``;jsessionid=``, ``?PHPSESSID=``)."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        calendar = CALENDAR.fullmatch(self.path)
        if self.path == "/":
            links = ('<a href="/loop/">loop</a> <a href="/one/;jsessionid=0F3A9C21">one</a> '
                     '<a href="/two/">two</a> <a href="/calendar/2026/11/">events</a>')
        elif self.path.split(";")[0] in ("/one/", "/two/", "/three/"):
            links = '<a href="/three/?PHPSESSID=9d8e7f">three</a> <a href="/">home</a>'
        elif calendar:
            year, month = int(calendar[1]), int(calendar[2])
            before = f"/calendar/{year - (month == 1)}/{12 if month == 1 else month - 1:02d}/"
            after = f"/calendar/{year + (month == 12)}/{1 if month == 12 else month + 1:02d}/"
            links = (f"<p>No events in {MONTHS[month - 1]} {year}.</p>"
                     f'<a href="{before}">earlier</a> <a href="{after}">later</a>')
        elif self.path.startswith("/loop/"):
            links = '<a href="a/b/">deeper</a> <a href="loop/">again</a> <a href="c/">c</a>'
        else:
            self.send_error(404)
            return
        heading = ("Loop" if self.path.startswith("/loop/") else "Events" if calendar
                   else self.path.split(";")[0])  # a trap repeats its page
        body = (f"<!doctype html><html lang=en><title>{heading}</title>"
                f"<main><h1>{heading}</h1>{TEXT}{links}</main>")
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def trap_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), TrapSite)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_path_trap_ends_by_itself_with_every_ordinary_page(tmp_path: Path) -> None:
    with trap_site() as base:
        run_scrapy_crawl(base, tmp_path / "crawl", settings={"LINKSPIDER_SITEMAPS": False, "DEPTH_LIMIT": 0},
                         timeout=300)
    rows = read_table(tmp_path / "crawl" / "pages").to_pylist()
    pages = {r["url"].removeprefix(base.rstrip("/")) for r in rows}
    assert {"/", "/one/", "/two/", "/three/"} <= pages
    assert len(rows) == len(pages)  # one row per page: session ids never made a second URL
    loop = sorted(p for p in pages if p.startswith("/loop/"))
    assert loop
    assert len(loop) <= 4  # /loop/ and the three copies it links; theirs are not followed
    assert not any("/a/b/a/b/" in p or "/loop/loop/loop/" in p for p in pages)
    months = [p for p in pages if p.startswith("/calendar/")]
    assert 20 <= len(months) <= 30, months  # LINKSPIDER_TRAP_PATTERN_PAGES, then a few in flight
    skipped = read_table(tmp_path / "crawl" / "skipped").to_pylist()
    assert any(r["reason"] == "trap" and "calendar/N/N/" in (r["detail"] or "") for r in skipped)
    assert not any("sessionid" in p.lower() or "PHPSESSID" in p for p in pages)
