"""Builds the sample site's HTML pages from _pages.py and the shared boilerplate below.

Run ``python3 sample_site/_build.py`` after editing _pages.py; the generated
``index.html`` files are committed, so serving the site needs no build. Files whose
names start with ``_`` (in this folder) are never served by ``linkspider.testserver``.
``{{BASE}}`` is replaced by the server's base URL (``http://127.0.0.1:PORT``) at
serving time.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))

from _pages import PAGES, POPULAR, SITEMAP_EXCLUDE  # noqa: E402

COOKIE_BANNER = """<div class="cookie-banner" role="dialog">
  <p>We use cookies to remember your brew settings and to count visits.
  <a href="/about/#privacy">Read our privacy notice</a>.</p>
  <button type="button">Accept</button> <button type="button">Decline</button>
</div>"""

HEADER = """<header class="site-header">
  <a class="logo" href="/">Brew Guide</a>
  <p class="tagline">Better coffee at home, one cup at a time</p>
  <form class="search" action="/search" method="get"><input type="search" name="q"
    placeholder="Search guides"><button>Search</button></form>
</header>
<nav class="main-nav" aria-label="Main">
  <ul>
    <li><a href="/">Home</a></li>
    <li><a href="/guides/">Guides</a></li>
    <li><a href="/blog/">Blog</a></li>
    <li><a href="/about/">About</a></li>
  </ul>
</nav>"""

FOOTER = """<footer class="site-footer">
  <p>&copy; 2026 Brew Guide. All rights reserved. Written by home baristas, for home baristas.</p>
  <ul>
    <li><a href="{{BASE}}/about/">About us</a></li>
    <li><a href="{{BASE}}/about/contact/">Contact</a></li>
    <li><a href="{{BASE}}/about/#privacy">Privacy</a></li>
    <li><a href="{{BASE}}/glossary/">Glossary</a></li>
  </ul>
</footer>"""


def sidebar() -> str:
    """The "Popular posts" aside shared by every page."""
    items = "\n".join(f'    <li><a href="{href}">{html.escape(text)}</a></li>' for href, text in POPULAR)
    return f"""<aside class="sidebar">
  <h2>Popular posts</h2>
  <ul>
{items}
  </ul>
  <h2>Newsletter</h2>
  <p>One email a month with a new recipe. No spam, ever.</p>
</aside>"""


def render(page: dict) -> str:
    """One full HTML document."""
    path = page["path"]
    lang = page.get("lang", "en")
    html_open = "<html>" if lang is None else f'<html lang="{lang}">'
    canonical = page.get("canonical", path)
    head = [
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(page['title'])} | Brew Guide</title>",
        f'<meta name="description" content="{html.escape(page["description"])}">',
    ]
    if canonical:
        head.append(f'<link rel="canonical" href="{{{{BASE}}}}{canonical}">')
    head.extend(page.get("head", []))
    head.append('<link rel="stylesheet" href="/style.css">')
    breadcrumb = page.get("breadcrumb", "")
    body = page["body"].strip("\n")
    return f"""<!doctype html>
{html_open}
<head>
{chr(10).join(head)}
</head>
<body>
{COOKIE_BANNER}
{HEADER}
<main>
{breadcrumb}<article>
<h1>{html.escape(page["h1"])}</h1>
{body}
</article>
</main>
{sidebar()}
{FOOTER}
{page.get("tail", "")}</body>
</html>
"""


def words(page: dict) -> int:
    """Words in the article body (tags stripped): what a main-text extractor should see."""
    text = re.sub(r"<script.*?</script>", " ", page["body"], flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return len(text.split()) + len(page["h1"].split())


def sitemap(paths: list[tuple[str, str]]) -> str:
    """A <urlset> of (path, lastmod)."""
    rows = "\n".join(
        f"  <url><loc>{{{{BASE}}}}{path}</loc><lastmod>{lastmod}</lastmod></url>" for path, lastmod in paths
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{rows}\n</urlset>\n"
    )


def main() -> int:
    listed: list[tuple[str, str]] = []
    for page in PAGES:
        target = HERE / page["path"].lstrip("/") / "index.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(page), encoding="utf-8")
        if page["path"] not in SITEMAP_EXCLUDE:
            listed.append((page["path"], page.get("lastmod", "2026-09-01")))
        print(f"{words(page):5d} words  {page['path']}")
    (HERE / "sitemap-pages.xml").write_text(sitemap(listed), encoding="utf-8")
    (HERE / "sitemap.xml").write_text(sitemap(listed), encoding="utf-8")
    print(f"{len(PAGES)} pages, {len(listed)} in the sitemaps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
