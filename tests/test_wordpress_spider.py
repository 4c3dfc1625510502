"""The ``wordpress`` spider against a real WordPress (tests/wordpress_site.py): the REST API read into
the crawl dataset, ``since`` and incremental reads, discovery from the site URL, and bad input."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urljoin

import pytest
from conftest import REPO, TEST_CRAWL_SETTINGS
from wordpress_site import WordPressSite, free_port

from linkspider.arguments import ArgumentError
from linkspider.items import SCHEMA_VERSION
from linkspider.parquet import read_table
from linkspider.urls import canonical_url
from linkspider.wordpress import api_root_from_links, parse_since, route_url


def crawl_wordpress(out: Path, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """``scrapy crawl wordpress -a out=OUT ARGS`` with the test settings; checks its exit status."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "wordpress", "-a", f"out={out}", *args]
    for name, value in TEST_CRAWL_SETTINGS.items():
        cmd += ["-s", f"{name}={value}"]
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == expect, f"exit {done.returncode}:\n{done.stderr[-4000:]}"
    return done


def rest(site: WordPressSite, route: str) -> list[dict]:
    """Every item of a REST collection (all pages)."""
    items: list[dict] = []
    page = 1
    while True:
        with urllib.request.urlopen(route_url(site.api, route, {"per_page": 100, "page": page}),
                                    timeout=30) as response:
            items += json.load(response)
            if page >= int(response.headers["X-WP-TotalPages"]):
                return items
        page += 1


def by_url(out: Path, table: str = "pages", key: str = "url") -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    for row in read_table(out / table).to_pylist():
        rows.setdefault(row[key], []).append(row)
    return rows


@pytest.fixture(scope="module")
def api_crawl(wordpress: WordPressSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wp-api-crawl")
    crawl_wordpress(out, "-a", f"api={wordpress.api}")
    return out


# --- pure parts ---------------------------------------------------------------------------


@pytest.mark.parametrize(("headers", "root"), [
    ([b'<http://a.test/wp-json/>; rel="https://api.w.org/"'], "http://a.test/wp-json/"),
    ([b'<http://a.test/?p=5>; rel=shortlink', b'<http://a.test/wp-json/>; rel="https://api.w.org/"'],
     "http://a.test/wp-json/"),
    ([b'<http://a.test/wp-json/wp/v2/pages/2>; rel="alternate"; type="application/json", '
      b'<http://a.test/?rest_route=/>; rel="https://api.w.org/"'], "http://a.test/?rest_route=/"),
    ([b'<http://a.test/feed/>; rel="alternate"'], None),
    ([], None),
])
def test_api_root_from_link_headers(headers: list[bytes], root: str | None) -> None:
    assert api_root_from_links(headers) == root


def test_route_urls_pretty_and_plain() -> None:
    assert route_url("http://a.test/wp-json/", "wp/v2/posts", {"page": 2, "x": None}) == \
        "http://a.test/wp-json/wp/v2/posts?page=2"
    assert route_url("http://a.test/?rest_route=/", "wp/v2/posts", {"page": 2}) == \
        "http://a.test/?rest_route=/wp/v2/posts&page=2"


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-11-30", "2026-11-30T00:00:00Z"),
    ("2026-11-30T08:15:00Z", "2026-11-30T08:15:00Z"),
    ("2026-11-30T10:15:00+02:00", "2026-11-30T08:15:00Z"),
    ("2026-11-30 08:15", "2026-11-30T08:15:00Z"),
])
def test_since_is_read_as_utc(value: str, expected: str) -> None:
    assert parse_since(value) == expected


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01", "", "30/11/2026"])
def test_a_bad_since_is_refused(value: str) -> None:
    with pytest.raises(ArgumentError, match="since must be an ISO 8601"):
        parse_since(value)


# --- against WordPress ------------------------------------------------------------------------


def test_rows_match_the_posts_and_pages(wordpress: WordPressSite, api_crawl: Path) -> None:
    posts, pages = rest(wordpress, "wp/v2/posts"), rest(wordpress, "wp/v2/pages")
    rows = by_url(api_crawl)
    assert len(posts) > 100  # more than one request of 100
    assert sorted(rows) == sorted(canonical_url(p["link"]) for p in posts + pages)
    assert all(len(found) == 1 for found in rows.values())
    links = by_url(api_crawl, "links", "source_url")
    for post in posts + pages:
        row = rows[canonical_url(post["link"])][0]
        assert row["title"] == html.unescape(post["title"]["rendered"])
        assert (row["kind"], row["found_by"], row["lang"], row["status"]) == ("content", "api", "en", 200)
        assert row["published"] == post["date_gmt"] + "+00:00"
        assert row["modified"] == post["modified_gmt"] + "+00:00"
        hrefs = [urljoin(post["link"], html.unescape(h))
                 for h in re.findall(r'<a [^>]*href="([^"#]+)"', post["content"]["rendered"])]
        targets = [link["target_url"] for link in links.get(row["url"], [])]
        assert targets == [canonical_url(h) for h in hrefs if h.startswith("http")]
        assert {link["position"] for link in links.get(row["url"], [])} <= {"content"}
    assert sum(len(found) for found in links.values()) > 300
    texts = " ".join(r[0]["text"] for r in rows.values())
    assert "sourdough" in texts.lower()
    table = read_table(api_crawl / "pages")
    assert table.schema.metadata[b"linkspider_schema_version"] == SCHEMA_VERSION.encode()


def test_categories_and_tags(wordpress: WordPressSite, api_crawl: Path) -> None:
    names = {c["id"]: html.unescape(c["name"]) for c in rest(wordpress, "wp/v2/categories")}
    tags = {t["id"]: html.unescape(t["name"]) for t in rest(wordpress, "wp/v2/tags")}
    rows = by_url(api_crawl)
    for post in rest(wordpress, "wp/v2/posts"):
        row = rows[canonical_url(post["link"])][0]
        assert row["categories"] == [names[i] for i in post["categories"]]
        assert sorted(row["tags"]) == sorted(tags[i] for i in post["tags"])
    about = rows[wordpress.url + "about/"][0]
    assert (about["categories"], about["tags"]) == ([], [])
    leaf = rows[wordpress.url + "2025/03/french-press-guide/"][0]
    assert leaf["categories"] == ["Coffee & tea"] and "french press" in leaf["tags"]


def test_discovery_from_the_site_url(wordpress: WordPressSite, api_crawl: Path, tmp_path: Path) -> None:
    crawl_wordpress(tmp_path, "-a", f"site={wordpress.url}")
    assert sorted(by_url(tmp_path)) == sorted(by_url(api_crawl))


def edit(wordpress: WordPressSite, url: str, sentence: str) -> int:
    """Append a paragraph to the post at ``url`` (its modified date becomes now); its id."""
    post_id = int(wordpress.php(f"echo url_to_postid('{url}');"))
    block = f"\n\n<!-- wp:paragraph -->\n<p>{sentence}</p>\n<!-- /wp:paragraph -->"
    wordpress.php(f"wp_set_current_user(1); $p = get_post({post_id}); "
                  f"wp_update_post(wp_slash(['ID' => {post_id}, 'post_content' => $p->post_content . "
                  f"{json.dumps(block)}]));")
    return post_id


def test_since_reads_only_the_posts_changed_after_it(wordpress: WordPressSite, tmp_path: Path) -> None:
    since = (datetime.now(UTC) - timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    url = wordpress.url + "2025/03/french-press-guide/"
    edit(wordpress, url, "A new note on the plunger.")
    done = crawl_wordpress(tmp_path, "-a", f"api={wordpress.api}", "-a", f"since={since}")
    rows = by_url(tmp_path)
    assert list(rows) == [url], done.stderr[-2000:]
    assert "A new note on the plunger." in rows[url][0]["text"]


def test_incremental_reads_what_changed_since_the_previous_job(wordpress: WordPressSite,
                                                                tmp_path: Path) -> None:
    crawl_wordpress(tmp_path, "-a", f"api={wordpress.api}", "-a", "job=first")
    first = by_url(tmp_path)
    url = next(u for u in first if u.endswith("/moka-pot-technique/"))
    edit(wordpress, url, "Take it off the heat when it gurgles.")
    crawl_wordpress(tmp_path, "-a", f"api={wordpress.api}", "-a", "job=second", "-a", "incremental=1")
    second = [r for r in read_table(tmp_path / "pages").to_pylist() if r["job"] == "second"]
    assert [r["url"] for r in second] == [url]
    assert "Take it off the heat when it gurgles." in second[0]["text"]


def test_a_site_without_rest_api_link(sample_site: str, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    done = crawl_wordpress(out, "-a", f"site={sample_site}", expect=1)
    assert done.stderr.strip().splitlines()[-1] == (
        f'scrapy crawl wordpress: error: no WordPress REST API at {sample_site}: its home page has no '
        'Link: <…>; rel="https://api.w.org/" header')
    assert not out.exists()


@pytest.mark.parametrize(("argument", "message"), [
    ("api={url}nothing-here/", "no WordPress REST API at {url}nothing-here/ (HTTP 404)"),
    ("site=http://127.0.0.1:{free}/", "the site (http://127.0.0.1:{free}/) could not be fetched: connection "
                                      "refused (nothing listens on that port)"),
    ("site=http://no-such-host.invalid/", "the site (http://no-such-host.invalid/) could not be fetched: DNS "
                                          "lookup failed (no such host)"),
])
def test_unreachable_or_not_an_api(wordpress: WordPressSite, tmp_path: Path, argument: str,
                                   message: str) -> None:
    free = free_port()
    out = tmp_path / "crawl"
    done = crawl_wordpress(out, "-a", argument.format(url=wordpress.url, free=free), expect=1)
    assert done.stderr.strip().splitlines()[-1] == "scrapy crawl wordpress: error: " + message.format(
        url=wordpress.url, free=free)
    assert not out.exists()


def test_a_switched_off_rest_api(wordpress: WordPressSite, tmp_path: Path) -> None:
    off = ("add_filter('rest_authentication_errors', fn () =>\n"
           "  new WP_Error('rest_disabled', 'The REST API is disabled.', ['status' => 401]));\n")
    with wordpress.mu_plugin("rest-off", off):
        done = crawl_wordpress(tmp_path / "crawl", "-a", f"site={wordpress.url}", expect=1)
    assert done.stderr.strip().splitlines()[-1] == (
        f"scrapy crawl wordpress: error: the REST API at {wordpress.api} is switched off "
        "(rest_disabled: The REST API is disabled.)")
    assert not (tmp_path / "crawl").exists()


def test_a_listing_page_that_fails_after_the_first_is_an_incomplete_crawl(wordpress: WordPressSite,
                                                                         tmp_path: Path) -> None:
    """Page 2 of the posts answers 500: the posts of page 1 are kept, and the crawl says it is
    incomplete (exit 1), so a scheduler does not take it for the whole site."""
    broken = ("add_filter('rest_pre_dispatch', function ($result, $server, $request) {\n"
              "  if ($request->get_route() === '/wp/v2/posts' && (int) $request->get_param('page') === 2)\n"
              "    return new WP_Error('boom', 'Database gone away', ['status' => 500]);\n"
              "  return $result;\n"
              "}, 10, 3);\n")
    with wordpress.mu_plugin("page-two-fails", broken):
        done = crawl_wordpress(tmp_path / "crawl", "-a", f"api={wordpress.api}", expect=1)
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("scrapy crawl wordpress: error: incomplete crawl: ") and "page 2" in last, last
    assert "500" in last
    stored = read_table(tmp_path / "crawl" / "pages").num_rows
    assert 100 <= stored < len(rest(wordpress, "wp/v2/posts")) + len(rest(wordpress, "wp/v2/pages"))


@pytest.mark.parametrize(("args", "message"), [
    (["-a", "since=last week"], "since must be an ISO 8601 date or date-time"),
    ([], "pass the REST API root"),
    (["-a", "api=ftp://x/"], "api must be an absolute http(s) URL"),
    (["-a", "start=http://x/"], "unknown argument 'start'"),
])
def test_bad_arguments_one_line_exit_2(wordpress: WordPressSite, tmp_path: Path, args: list[str],
                                       message: str) -> None:
    if args and args[1].startswith("since"):
        args = [*args, "-a", f"api={wordpress.api}"]
    done = crawl_wordpress(tmp_path / "crawl", *args, expect=2)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scrapy crawl wordpress: error: " + message)
    assert not (tmp_path / "crawl").exists()


@pytest.mark.slow
def test_postprocess_runs_on_the_crawl(api_crawl: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "postprocess", "run", "--crawl", str(api_crawl),
                           "--out", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["pages"] == len(by_url(api_crawl))
    assert (tmp_path / "out" / "suggestions.csv").is_file()
