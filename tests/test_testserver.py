"""The static test server: real HTTP requests with urllib against a folder it serves."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from crawlkit import module_from_file

from linkspider.testserver import SiteServer, content_type, parse_delay, read_redirects, running, serve

SAMPLE_SITE = Path(__file__).resolve().parent.parent / "sample_site"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Lets a test see the 3xx response itself instead of following it."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def fetch(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one request, redirects not followed."""
    request = urllib.request.Request(url, method=method)
    try:
        with OPENER.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / "index.html").write_text('<html><a href="{{BASE}}/blog/">Blog</a></html>', encoding="utf-8")
    (root / "blog").mkdir()
    (root / "blog" / "index.html").write_text("<html>blog index</html>", encoding="utf-8")
    (root / "blog" / "post.html").write_text("<html>a post</html>", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "guide.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    (root / "robots.txt").write_text("User-agent: *\nSitemap: {{BASE}}/sitemap.xml\n", encoding="utf-8")
    sitemap = "<urlset><url><loc>{{BASE}}/blog/</loc></url></urlset>"
    (root / "sitemap.xml").write_text(sitemap, encoding="utf-8")
    (root / "_redirects").write_text(
        "# old paths\n/old/ /blog/\n/moved-for-now /blog/post.html 302\n", encoding="utf-8"
    )
    (root / ".secret").write_text("hidden", encoding="utf-8")
    (root / "_build.py").write_text("print('hidden')", encoding="utf-8")
    (root / "_static").mkdir()
    (root / "_static" / "site.css").write_text("body {}", encoding="utf-8")
    (root / "_static" / "_extra.css").write_text("p {}", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def base(site: Path) -> Iterator[str]:
    with serve(site) as url:
        yield url


def test_base_url_is_loopback_with_a_free_port(base: str) -> None:
    assert base.startswith("http://127.0.0.1:") and base.endswith("/")
    assert int(base.rsplit(":", 1)[1].rstrip("/")) > 0


def test_directory_serves_its_index_html(base: str) -> None:
    status, headers, body = fetch(base + "blog/")
    assert (status, body) == (200, b"<html>blog index</html>")
    assert headers["Content-Type"] == "text/html; charset=utf-8"


def test_directory_without_slash_redirects_to_slash_form_keeping_query(base: str) -> None:
    status, headers, _ = fetch(base + "blog?page=2")
    assert status == 301
    assert headers["Location"] == "/blog/?page=2"


def test_query_string_is_ignored_for_file_lookup(base: str) -> None:
    status, _, body = fetch(base + "blog/?page=2&utm_source=newsletter")
    assert (status, body) == (200, b"<html>blog index</html>")


@pytest.mark.parametrize("path", ["blog/;jsessionid=ABC", "blog;jsessionid=ABC/", "blog/index.html;v=2"])
def test_path_parameters_are_ignored_for_file_lookup(base: str, path: str) -> None:
    status, _, body = fetch(base + path)
    assert (status, body) == (200, b"<html>blog index</html>")


def test_directory_with_path_parameter_and_no_slash_redirects_without_it(base: str) -> None:
    status, headers, _ = fetch(base + "blog;jsessionid=ABC")
    assert (status, headers["Location"]) == (301, "/blog/")


@pytest.mark.parametrize(
    ("path", "status", "location"),
    [
        ("old/", 301, "/blog/"),
        ("old", 301, "/blog/"),  # the source matches with or without its trailing slash
        ("old/?x=1", 301, "/blog/"),
        ("moved-for-now", 302, "/blog/post.html"),
    ],
)
def test_redirects_map(base: str, path: str, status: int, location: str) -> None:
    got_status, headers, _ = fetch(base + path)
    assert (got_status, headers["Location"]) == (status, location)


def test_followed_redirect_lands_on_the_target(base: str) -> None:
    with urllib.request.urlopen(base + "old/", timeout=10) as response:
        assert response.url == base + "blog/"
        assert response.read() == b"<html>blog index</html>"


@pytest.mark.parametrize(
    ("path", "ctype"),
    [
        ("blog/post.html", "text/html; charset=utf-8"),
        ("docs/guide.pdf", "application/pdf"),
        ("sitemap.xml", "application/xml"),
        ("robots.txt", "text/plain; charset=utf-8"),
    ],
)
def test_content_type_header(base: str, path: str, ctype: str) -> None:
    status, headers, _ = fetch(base + path)
    assert (status, headers["Content-Type"]) == (200, ctype)


@pytest.mark.parametrize("path", ["robots.txt", "sitemap.xml", ""])
def test_base_placeholder_is_replaced_by_the_real_base_url(base: str, path: str) -> None:
    _, _, body = fetch(base + path)
    assert b"{{BASE}}" not in body
    assert base.rstrip("/").encode() + b"/" in body


def test_binary_files_are_served_unchanged(base: str, site: Path) -> None:
    _, _, body = fetch(base + "docs/guide.pdf")
    assert body == (site / "docs" / "guide.pdf").read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "missing/",
        "blog/missing.html",
        "_redirects",
        "_build.py",
        ".secret",
        "_static/.hidden",
        "blog/../../etc/passwd",
        "%2e%2e/%2e%2e/etc/passwd",
    ],
)
def test_unknown_hidden_and_escaping_paths_are_404(base: str, path: str) -> None:
    status, headers, _ = fetch(base + path)
    assert status == 404
    assert headers["Content-Type"] == "text/html; charset=utf-8"


@pytest.mark.parametrize(
    ("path", "body"), [("_static/site.css", b"body {}"), ("_static/_extra.css", b"p {}")]
)
def test_underscore_folders_are_served_like_sphinx_static(base: str, path: str, body: bytes) -> None:
    status, headers, got = fetch(base + path)
    assert (status, headers["Content-Type"], got) == (200, "text/css; charset=utf-8", body)


def test_custom_404_page_is_used(tmp_path: Path) -> None:
    (tmp_path / "404.html").write_text("<html>nothing at {{BASE}}</html>", encoding="utf-8")
    with serve(tmp_path) as url:
        status, _, body = fetch(url + "nope/")
    assert status == 404
    assert body == f"<html>nothing at {url.rstrip('/')}</html>".encode()


def test_head_sends_headers_without_body(base: str) -> None:
    status, headers, body = fetch(base + "blog/", method="HEAD")
    assert (status, body) == (200, b"")
    assert headers["Content-Length"] == str(len(b"<html>blog index</html>"))


def test_requests_are_recorded_in_order(site: Path) -> None:
    with running(site) as server:
        fetch(server.url + "blog/?page=2")
        fetch(server.url + "robots.txt")
    assert server.requests == ["/blog/?page=2", "/robots.txt"]


def test_delay_argument_slows_every_request(site: Path) -> None:
    with serve(site, delay=0.3) as url:
        started = time.monotonic()
        fetch(url + "blog/")
        assert time.monotonic() - started >= 0.3


def test_delay_from_environment(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINKSPIDER_TESTSERVER_DELAY", "0.25")
    with running(site) as server:
        assert server.delay == 0.25
    monkeypatch.setenv("LINKSPIDER_TESTSERVER_DELAY", "")
    with running(site) as server:
        assert server.delay == 0.0


def test_server_is_shut_down_after_the_block(site: Path) -> None:
    with serve(site) as url:
        pass
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url, timeout=2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("# only a comment\n\n", {}),
        ("/a/ /b/\n", {"/a/": ("/b/", 301)}),
        ("/a/ /b/ 302  # temporary\n", {"/a/": ("/b/", 302)}),
        ("/a/ http://other.example/ 308\n", {"/a/": ("http://other.example/", 308)}),
    ],
)
def test_read_redirects(tmp_path: Path, text: str, expected: dict[str, tuple[str, int]]) -> None:
    (tmp_path / "_redirects").write_text(text, encoding="utf-8")
    assert read_redirects(tmp_path) == expected


@pytest.mark.parametrize("text", ["/a/\n", "a/ /b/\n", "/a/ /b/ 200\n", "/a/ /b/ x\n", "/a/ /b/ 301 extra\n"])
def test_bad_redirects_line_is_an_error_naming_the_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "_redirects").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"_redirects:1:"):
        read_redirects(tmp_path)


def test_missing_redirects_file_means_no_redirects(tmp_path: Path) -> None:
    assert read_redirects(tmp_path) == {}


@pytest.mark.parametrize(
    ("name", "ctype"),
    [
        ("a.html", "text/html; charset=utf-8"),
        ("A.HTM", "text/html; charset=utf-8"),
        ("a.pdf", "application/pdf"),
        ("a.xml", "application/xml"),
        ("robots.txt", "text/plain; charset=utf-8"),
        ("a.png", "image/png"),
        ("a.unknownext", "application/octet-stream"),
    ],
)
def test_content_type(name: str, ctype: str) -> None:
    assert content_type(Path(name)) == ctype


@pytest.mark.parametrize(("value", "expected"), [(None, 0.0), ("", 0.0), ("0.5", 0.5), ("2", 2.0)])
def test_parse_delay(value: str | None, expected: float) -> None:
    assert parse_delay(value) == expected


@pytest.mark.parametrize("value", ["soon", "-1"])
def test_parse_delay_rejects_bad_values(value: str) -> None:
    with pytest.raises(ValueError, match="LINKSPIDER_TESTSERVER_DELAY"):
        parse_delay(value)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="site folder not found"):
        SiteServer(tmp_path / "nope")


def test_cli_prints_base_url_and_serves(site: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "linkspider.testserver", str(site), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        status, _, body = fetch(url + "blog/")
        assert (status, body) == (200, b"<html>blog index</html>")
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_cli_bad_folder_is_a_one_line_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "linkspider.testserver", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "site folder not found" in result.stderr


# --- the shipped sample site: its traps must stay as sample_site/README.md lists them ---------

SITEMAP_NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def _page_path(file: Path) -> str:
    """URL path of a generated ``.../index.html`` file: ``/`` or ``/a/b/``."""
    folder = file.parent.relative_to(SAMPLE_SITE).as_posix()
    return "/" if folder == "." else f"/{folder}/"


def _html_pages() -> dict[str, Path]:
    """URL path -> file of every generated page in sample_site/."""
    return {_page_path(file): file for file in SAMPLE_SITE.rglob("index.html")}


@functools.cache
def _static_hrefs() -> dict[str, frozenset[str]]:
    """Page path -> every href in its HTML as written (scripts are not run)."""
    from lxml import html as lxml_html

    return {
        path: frozenset(lxml_html.parse(str(file)).xpath("//a/@href")) for path, file in _html_pages().items()
    }


def _resolved_paths(hrefs: frozenset[str], page: str) -> set[str]:
    """Paths (query and fragment dropped) that a page's hrefs point to on the site."""
    from urllib.parse import urljoin

    out = set()
    for href in hrefs:
        url = urljoin("http://site.test" + page, href.replace("{{BASE}}", "http://site.test"))
        parts = urllib.parse.urlsplit(url)
        if parts.netloc == "site.test":
            out.add(parts.path)
    return out


@pytest.fixture(scope="module")
def sample() -> Iterator[str]:
    with serve(SAMPLE_SITE) as url:
        yield url


def _sitemap_paths(xml: bytes, base: str) -> list[str]:
    from lxml import etree

    locs = etree.fromstring(xml).xpath("//sm:loc/text()", namespaces=SITEMAP_NS)
    assert all(loc.startswith(base) for loc in locs)
    return ["/" + loc[len(base) :] for loc in locs]


def test_sample_site_html_is_up_to_date_with_its_sources() -> None:
    build = module_from_file("sample_site_build", SAMPLE_SITE / "_build.py")
    stale = [
        page["path"]
        for page in build.PAGES
        if (SAMPLE_SITE / page["path"].lstrip("/") / "index.html").read_text(encoding="utf-8")
        != build.render(page)
    ]
    assert stale == [], "run python3 sample_site/_build.py"


def test_sample_robots_and_sitemap_index_lead_to_every_listed_page(sample: str) -> None:
    _, _, robots = fetch(sample + "robots.txt")
    assert b"Disallow: /private/" in robots
    assert f"Sitemap: {sample}sitemap_index.xml".encode() in robots
    _, headers, index = fetch(sample + "sitemap_index.xml")
    assert headers["Content-Type"] == "application/xml"
    assert _sitemap_paths(index, sample) == ["/sitemap-pages.xml"]
    _, _, pages_xml = fetch(sample + "sitemap-pages.xml")
    _, _, plain_xml = fetch(sample + "sitemap.xml")
    listed = _sitemap_paths(pages_xml, sample)
    assert listed == _sitemap_paths(plain_xml, sample)
    assert len(listed) == 30
    for path in listed:
        status, headers, _ = fetch(sample.rstrip("/") + path)
        assert (path, status, headers["Content-Type"]) == (path, 200, "text/html; charset=utf-8")
    assert "/guides/orphan-sitemap-only/" in listed
    for unlisted in ("/js-only-target/", "/private/secret/", "/guides/espresso-print/", "/blog/page/2/"):
        assert unlisted not in listed


def test_sample_orphan_and_js_only_pages_have_no_static_inbound_link() -> None:
    hrefs = _static_hrefs()
    linked = set().union(
        *(_resolved_paths(h, page) for page, h in hrefs.items() if page != "/guides/orphan-sitemap-only/")
    )
    assert "/guides/orphan-sitemap-only/" not in linked
    assert "/js-only-target/" not in linked
    js_page = (SAMPLE_SITE / "js" / "index.html").read_text(encoding="utf-8")
    assert '"/js-only-target/"' in js_page and "document.createElement" in js_page
    assert "/js/" in hrefs["/"]


@pytest.mark.parametrize(
    ("page", "href"),
    [
        ("/", "/guides/grinders/?sort=price"),
        ("/glossary/", "/search?q=espresso"),
        ("/blog/", "/blog/page/2/"),
        ("/blog/", "/blog/?page=3"),
        ("/blog/", "?p=2"),
        ("/blog/page/2/", "/blog/2025/11/holiday-gift-guide-grinders/"),
        ("/guides/aeropress/", "/old-espresso-guide/"),
        ("/", "/shop/"),
        ("/guides/espresso/", "/guides/espresso-print/"),
        ("/", "/downloads/brew-ratios.pdf"),
        ("/about/", "/private/secret/"),
        ("/guides/pour-over/", "/guides/missing/"),
        ("/", "/guides/cold-brew/?utm_source=newsletter&utm_medium=email"),
        ("/blog/2025/11/holiday-gift-guide-grinders/", "/guides/aeropress/;jsessionid=ABC"),
        ("/guides/grinders/", "/guides/index.html"),
        ("/guides/espresso/", "/glossary/#channeling"),
        ("/guides/water/", "https://sca.coffee/research/coffee-standards"),
    ],
)
def test_sample_trap_links_are_in_place(page: str, href: str) -> None:
    assert href in _static_hrefs()[page]


def test_sample_post_behind_pagination_is_linked_only_from_page_two() -> None:
    target = "/blog/2025/11/holiday-gift-guide-grinders/"
    sources = {page for page, h in _static_hrefs().items() if target in _resolved_paths(h, page)}
    assert sources == {"/blog/page/2/"}


@pytest.mark.parametrize(
    ("path", "status", "location"),
    [
        ("old-espresso-guide/", 301, "/guides/espresso/"),
        ("shop/", 302, "https://shop.example.com/brew-guide"),
        ("search?q=espresso", 301, "/search/?q=espresso"),
        ("guides/missing/", 404, None),
    ],
)
def test_sample_redirects_and_404(sample: str, path: str, status: int, location: str | None) -> None:
    got, headers, _ = fetch(sample + path)
    assert (got, headers.get("Location")) == (status, location)


def test_sample_pdf_is_served_as_pdf(sample: str) -> None:
    status, headers, body = fetch(sample + "downloads/brew-ratios.pdf")
    assert (status, headers["Content-Type"]) == (200, "application/pdf")
    assert body.startswith(b"%PDF-1.") and body.rstrip().endswith(b"%%EOF")


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("guides/espresso-print/", '<link rel="canonical" href="{base}/guides/espresso/">'),
        ("guides/espresso/", '<link rel="canonical" href="{base}/guides/espresso/">'),
        ("fr/guide-espresso/", '<html lang="fr">'),
        ("guides/storage/", "<!doctype html>\n<html>\n"),
        ("blog/tag/espresso/", '<meta name="robots" content="noindex, follow">'),
        ("blog/2026/03/dialing-in-a-new-bag/", 'content="2026-03-09T08:00:00+00:00"'),
        ("blog/2026/05/summer-cold-brew-experiments/", '"datePublished": "2026-05-21T09:00:00+00:00"'),
        ("blog/2026/08/why-my-pour-over-tasted-sour/", '<time datetime="2026-08-14T07:30:00+02:00">'),
        ("about/", '<div class="cookie-banner"'),
    ],
)
def test_sample_page_markers(sample: str, path: str, needle: str) -> None:
    _, _, body = fetch(sample + path)
    assert needle.format(base=sample.rstrip("/")) in body.decode("utf-8")


def test_sample_pages_have_title_description_one_h1_and_boilerplate() -> None:
    from lxml import html as lxml_html

    for path, file in _html_pages().items():
        doc = lxml_html.parse(str(file))
        assert doc.xpath("//title/text()"), path
        assert doc.xpath("//meta[@name='description']/@content"), path
        assert len(doc.xpath("//h1")) == 1, path
        for xpath in ("//header", "//nav", "//footer", "//aside", "//div[@class='cookie-banner']"):
            assert doc.xpath(xpath), (path, xpath)


SHORT_PAGES = {
    "/about/contact/",
    "/blog/page/2/",
    "/blog/tag/espresso/",
    "/js/",
    "/private/secret/",
    "/search/",
}


def test_sample_content_pages_are_250_to_700_words_and_contact_is_thin() -> None:
    from lxml import html as lxml_html

    counts = {}
    for path, file in _html_pages().items():
        article = lxml_html.parse(str(file)).xpath("//article")[0]
        for script in article.xpath(".//script"):
            script.getparent().remove(script)
        counts[path] = len(article.text_content().split())
    assert counts["/about/contact/"] < 50
    long_enough = {path for path, n in counts.items() if 200 <= n <= 700}
    assert long_enough == set(counts) - SHORT_PAGES
    assert len(counts) == 36


def test_sample_sh_is_valid_bash() -> None:
    script = SAMPLE_SITE.parent / "scripts" / "sample.sh"
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_sample_sh_serves_crawls_postprocesses_and_stops_its_server(tmp_path: Path) -> None:
    repo = SAMPLE_SITE.parent
    env = {**os.environ, "LINKSPIDER_SAMPLE_DIR": str(tmp_path / "sample")}
    result = subprocess.run(
        ["bash", "scripts/sample.sh"], cwd=repo, env=env, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    served = re.search(r"serving sample_site/ at (http://127\.0\.0\.1:\d+/)", result.stdout)
    assert served is not None, result.stdout
    assert f"{tmp_path / 'sample' / 'out'}/suggestions.csv" in result.stdout
    pages = list((tmp_path / "sample" / "crawl" / "pages").glob("part-*.parquet"))
    assert pages
    with (tmp_path / "sample" / "out" / "suggestions.csv").open(encoding="utf-8") as csv_file:
        assert len(csv_file.readlines()) > 1  # a header and rows (a 31-page site gives a short queue)
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(served.group(1), timeout=2)
