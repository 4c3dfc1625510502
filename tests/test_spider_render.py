"""JavaScript rendering: with -a render=1 the crawl sees links that only a script adds.

/js/ on the sample site adds links to /js-only-target/ and /guides/cold-brew/ on
DOMContentLoaded. DEPTH_LIMIT=1 keeps both crawls to /js/ and the pages it links.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from linkspider.parquet import read_table
from linkspider.settings import LINKSPIDER_CHROMIUM_PATH

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path(LINKSPIDER_CHROMIUM_PATH).is_file(), reason="chromium missing: run scripts/setup.sh"
    ),
]

SHORT = {"DEPTH_LIMIT": 1, "LINKSPIDER_SITEMAPS": False}


def crawl_js_page(
    sample_site: str, scrapy_crawl: Callable[..., Any], out: Path, render: str
) -> tuple[set[str], set[str]]:
    scrapy_crawl(sample_site + "js/", out, "-a", f"render={render}", settings=SHORT)
    pages = read_table(out / "pages").to_pylist()
    links = read_table(out / "links").to_pylist()
    assert max(p["depth"] for p in pages) == 1  # DEPTH_LIMIT counts clicks, also with render=1
    targets = {link["target_url"] for link in links if link["source_url"] == sample_site + "js/"}
    return {p["url"] for p in pages}, targets


def test_render_finds_links_added_by_javascript(
    sample_site: str, scrapy_crawl: Callable[..., Any], tmp_path: Path
) -> None:
    target = sample_site + "js-only-target/"
    pages, links = crawl_js_page(sample_site, scrapy_crawl, tmp_path / "rendered", "1")
    assert target in links and target in pages
    plain_pages, plain_links = crawl_js_page(sample_site, scrapy_crawl, tmp_path / "plain", "0")
    assert target not in plain_links and target not in plain_pages
    assert sample_site + "guides/espresso/" in plain_pages  # a static link, found either way


def test_the_browser_loads_nothing_from_other_hosts(scrapy_crawl: Callable[..., Any], tmp_path: Path) -> None:
    """A rendered page that pulls a script, an image and a beacon from another host: the other
    host never sees a request, and the page's own script still adds its link."""
    from linkspider.testserver import running

    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "tracker.js").write_text("window.tracked = true;")
    site = tmp_path / "site"
    (site / "added").mkdir(parents=True)
    (site / "added" / "index.html").write_text(
        "<!doctype html><html lang=en><title>Added</title><main><h1>Added by script</h1><p>"
        + "A page only a script links to. " * 20 + "</p></main></html>")
    with running(tmp_path / "other") as other:
        (site / "index.html").write_text(
            "<!doctype html><html lang=en><title>Home</title><main><h1>Home</h1><p>"
            + "Static words of the home page. " * 20 + "</p><div id=more></div></main>"
            f'<script src="{other.url}tracker.js"></script><img src="{other.url}pixel.png">'
            f'<script>fetch("{other.url}beacon"); document.getElementById("more").innerHTML = '
            "'<a href=\"/added/\">added</a>';</script></html>")
        with running(site) as server:
            scrapy_crawl(server.url, tmp_path / "crawl", "-a", "render=1",
                         settings={"LINKSPIDER_SITEMAPS": False, "ROBOTSTXT_OBEY": False})
        assert other.requests == []
    pages = {p["url"] for p in read_table(tmp_path / "crawl" / "pages").to_pylist()}
    assert server.url + "added/" in pages
