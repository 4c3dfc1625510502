"""The WordPress fixture itself: The Kitchen Ledger in block markup, permalinks, REST API access."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest
from wordpress_site import CONFIG_DIR, WordPressSite, _blogsite, missing, wordpress_site

pytestmark = pytest.mark.skipif(missing() is not None, reason=f"WordPress cannot run here: {missing()}")


def get(site: WordPressSite, path: str, auth: bool = False) -> tuple[dict[str, str], object]:
    request = urllib.request.Request(site.api + path)
    if auth:
        request.add_header("Authorization", site.authorization())
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(response.headers), json.load(response)


def every(site: WordPressSite, path: str, auth: bool = False) -> list[dict]:
    """Every row of a REST collection, all pages (other tests add posts of their own to the site)."""
    rows: list[dict] = []
    page = 1
    while True:
        headers, got = get(site, f"{path}&page={page}", auth)
        rows += got
        if page >= int(headers["X-WP-TotalPages"]):
            return rows
        page += 1


def test_the_kitchen_ledger_is_there_with_its_terms_authors_and_dates(wordpress: WordPressSite) -> None:
    build = _blogsite()
    posts = build.load_posts(build.POSTS_DIR)
    rows = every(wordpress, "wp/v2/posts?per_page=100&_embed=author,wp:term")
    slugs = {p.slug for p in posts}
    assert len([row for row in rows if row["slug"] in slugs]) == len(posts)
    by_slug = {row["slug"]: row for row in rows}
    post = next(p for p in posts if p.slug in by_slug)
    row = by_slug[post.slug]
    assert row["link"] == f"{wordpress.url}{post.published:%Y/%m}/{post.slug}/"
    assert row["date_gmt"] == f"{post.published:%Y-%m-%d}T08:00:00" == row["modified_gmt"]
    assert row["_embedded"]["author"][0]["name"] == post.author.name
    terms = {t["taxonomy"]: [] for group in row["_embedded"]["wp:term"] for t in group}
    for group in row["_embedded"]["wp:term"]:
        for term in group:
            terms[term["taxonomy"]].append(term)
    assert [t["slug"] for t in terms["category"]] == [post.category.slug]
    assert sorted(t["name"] for t in terms.get("post_tag", [])) == sorted(post.tags)
    pages = every(wordpress, "wp/v2/pages?per_page=100")
    assert {"about", "contact", "privacy", "start-here"} <= {p["slug"] for p in pages}


def test_the_site_is_public_to_crawlers(wordpress: WordPressSite) -> None:
    with urllib.request.urlopen(wordpress.url + "robots.txt", timeout=30) as response:
        robots = response.read().decode()
    assert "Disallow: /\n" not in robots and "wp-sitemap.xml" in robots
    with urllib.request.urlopen(wordpress.url, timeout=30) as response:
        assert "noindex" not in response.read().decode()


def test_bodies_are_block_markup_with_links_to_permalinks(wordpress: WordPressSite) -> None:
    rows = every(wordpress, "wp/v2/posts?per_page=100&context=edit", auth=True)
    raw = "\n".join(row["content"]["raw"] for row in rows)
    assert "<!-- wp:paragraph -->\n<p>" in raw and "<!-- wp:heading" in raw and "<!-- wp:list -->" in raw
    links = set(re.findall(r'href="(http://127\.0\.0\.1:\d+/\d{4}/\d\d/[a-z0-9-]+/)"', raw))
    assert len(links) > 50
    permalinks = {row["link"] for row in rows}
    assert links <= permalinks  # every internal link points at a post's permalink
    assert rows[0]["content"]["raw"] == wordpress.raw_content(rows[0]["id"])


def test_create_post_raw_content_and_permalink(wordpress: WordPressSite) -> None:
    content = "<!-- wp:paragraph -->\n<p>A fixture's own post.</p>\n<!-- /wp:paragraph -->"
    post_id = wordpress.create_post("Fixture post", content, slug="fixture-post", tags=["fixture tag"],
                                    categories=["baking"])
    try:
        assert wordpress.raw_content(post_id) == content
        link = wordpress.permalink(post_id)
        assert re.fullmatch(re.escape(wordpress.url) + r"\d{4}/\d\d/fixture-post/", link)
        with urllib.request.urlopen(link, timeout=30) as response:
            assert "A fixture&#8217;s own post." in response.read().decode()  # wptexturize
    finally:
        wordpress.php(f"wp_delete_post({post_id}, true);")


def test_an_empty_site_stops_its_servers_and_removes_its_config(tmp_path: Path) -> None:
    folder = tmp_path / "wp"
    with wordpress_site(folder, posts="none") as site:
        _, rows = get(site, "wp/v2/posts")
        assert rows == []
        assert any(str(folder) in stub.read_text() for stub in CONFIG_DIR.glob("config-linkspider-*.php"))
        pid = (folder / "mysql" / "mariadbd.pid").read_text().strip()
    assert not any(str(folder) in stub.read_text() for stub in CONFIG_DIR.glob("config-linkspider-*.php"))
    assert subprocess.run(["kill", "-0", pid], capture_output=True, check=False).returncode != 0
    with pytest.raises(OSError):
        urllib.request.urlopen(site.url, timeout=5)
