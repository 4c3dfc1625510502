"""Builds "The Kitchen Ledger", a static copy of a WordPress 6 blog (Twenty Twenty-Three theme).

``python3 benchmarks/blogsite/build.py --out DIR`` reads ``posts/*.md`` and ``pages/*.md``
(front matter plus a small Markdown subset, see PLAN.md) and writes the site to DIR:

- one page per post at ``/YYYY/MM/SLUG/``, with the theme's header, navigation, post meta,
  tags, previous/next links, a "More posts" block and footer;
- the home page and the category, tag, author and month archives, ten posts a page
  (``.../page/2/`` and so on);
- the site pages (``/about/``, ``/contact/``, ``/privacy/``, and ``/start-here/``, a hub page
  that lists every post by category), ``robots.txt``, ``sitemap.xml``, ``404.html``, the
  theme stylesheet and placeholder images for the figures.

Internal links are root-relative; absolute URLs (canonical, og:url, JSON-LD, sitemap) use
the literal placeholder ``{{BASE}}``, which ``linkspider.testserver`` replaces with its base URL.
Only the standard library is used.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import struct
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
POSTS_DIR = HERE / "posts"
PAGES_DIR = HERE / "pages"
PLAN_FILE = HERE / "PLAN.md"
BUILD_MARKER = ".kitchen-ledger-build"  # dot files are never served by the test server

BASE = "{{BASE}}"
SITE_NAME = "The Kitchen Ledger"
TAGLINE = "Home cooking, written down"
SITE_DESCRIPTION = (
    "A home-cooking blog about bread, coffee and tea, fermentation, kitchen tools, "
    "everyday techniques and cooking from the garden."
)
WP_VERSION = "6.4.3"
STYLESHEET = "/wp-content/themes/twentytwentythree/style.css"
PER_PAGE = 10
MORE_POSTS = 3
EXCERPT_WORDS = 55
IMAGE_SIZE = (1200, 800)
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


class BuildError(Exception):
    """A problem in a source file; the message names the file."""


@dataclass(frozen=True)
class Category:
    """A post category: slug, display name, navigation label and a one-line intro."""

    slug: str
    name: str
    nav_label: str
    intro: str


@dataclass(frozen=True)
class Author:
    """A post author: login slug, display name and a short bio for the author archive."""

    slug: str
    name: str
    bio: str


CATEGORIES: dict[str, Category] = {
    c.slug: c
    for c in (
        Category(
            "baking",
            "Baking",
            "Baking",
            "Sourdough from the first jar of starter to a crackling loaf, "
            "plus the yeasted breads we bake every week.",
        ),
        Category(
            "coffee-and-tea",
            "Coffee & tea",
            "Coffee & tea",
            "Brewing guides for the cafetière, the cone and the moka pot, and how to treat good tea gently.",
        ),
        Category(
            "fermentation",
            "Fermentation",
            "Fermentation",
            "Sauerkraut, kimchi, pickles, kombucha, yogurt and jam: "
            "preserving with salt, microbes and a safe method.",
        ),
        Category(
            "kitchen-tools",
            "Kitchen tools",
            "Kitchen tools",
            "Knives, pans, boards, scales and thermometers: "
            "what to buy, what to skip and how to look after it.",
        ),
        Category(
            "techniques",
            "Techniques",
            "Techniques",
            "The core methods behind good everyday cooking: searing, braising, sauces, stock, rice and salt.",
        ),
        Category(
            "garden",
            "Garden to table",
            "Garden",
            "Growing herbs, tomatoes, garlic and greens in a small space, "
            "and cooking what the garden gives you.",
        ),
    )
}

AUTHORS: dict[str, Author] = {
    a.slug: a
    for a in (
        Author(
            "maya",
            "Maya Fielding",
            "Maya started The Kitchen Ledger. She ran a café for six years and writes about coffee, tea and "
            "weeknight cooking.",
        ),
        Author(
            "tom",
            "Tom Okafor",
            "Tom is an engineer by day who ferments anything that stays still long enough, and tends an "
            "allotment in Sheffield.",
        ),
        Author(
            "priya",
            "Priya Raman",
            "Priya trained as a pastry cook and bakes bread most days. "
            "She writes the baking posts and the odd family recipe.",
        ),
    )
}

NAV_LINKS: tuple[tuple[str, str], ...] = (
    ("Home", "/"),
    ("Start here", "/start-here/"),
    *((c.nav_label, f"/category/{c.slug}/") for c in CATEGORIES.values()),
    ("About", "/about/"),
)
FOOTER_LINKS: tuple[tuple[str, str], ...] = (
    ("About", "/about/"),
    ("Contact", "/contact/"),
    ("Privacy", "/privacy/"),
)


# --------------------------------------------------------------------------- source files


@dataclass
class Post:
    """One blog post read from ``posts/SLUG.md``."""

    source: Path
    title: str
    slug: str
    published: date
    author: Author
    category: Category
    tags: list[str]
    excerpt: str
    body: str
    post_id: int = 0

    @property
    def url(self) -> str:
        """The root-relative URL of the post, ``/YYYY/MM/SLUG/``."""
        return f"/{self.published:%Y}/{self.published:%m}/{self.slug}/"


@dataclass
class Page:
    """One site page read from ``pages/SLUG.md``; layout ``hub`` appends the list of all posts."""

    source: Path
    title: str
    slug: str
    excerpt: str
    body: str
    layout: str = "default"
    page_id: int = 0

    @property
    def url(self) -> str:
        """The root-relative URL of the page, ``/SLUG/``."""
        return f"/{self.slug}/"


def parse_front_matter(text: str, source: Path) -> tuple[dict[str, str], str]:
    """Split a file into its ``key: value`` front matter (between ``---`` lines) and its body."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise BuildError(f"{source}: the file must start with a '---' front matter line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise BuildError(f"{source}: the front matter has no closing '---' line") from None
    meta: dict[str, str] = {}
    last_key = ""
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.lstrip().startswith("- ") and last_key:  # YAML block list item
            meta[last_key] = (meta[last_key] + ", " if meta[last_key] else "") + line.lstrip()[2:].strip()
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise BuildError(f"{source}:{number}: expected 'key: value' in the front matter, got {line!r}")
        last_key = key.strip().lower()
        meta[last_key] = unquote(value.strip())
    return meta, "\n".join(lines[end + 1 :]).strip() + "\n"


def unquote(value: str) -> str:
    """Strip one pair of matching YAML quotes from a scalar."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def parse_list(value: str) -> list[str]:
    """``[a, b c]`` (or ``a, b c``) -> ``['a', 'b c']``."""
    inner = value.strip().removeprefix("[").removesuffix("]")
    return [unquote(item.strip()) for item in inner.split(",") if item.strip()]


def require(meta: dict[str, str], key: str, source: Path) -> str:
    """A required front matter value, or a BuildError naming the file."""
    value = meta.get(key, "").strip()
    if not value:
        raise BuildError(f"{source}: missing front matter field {key!r}")
    return value


def load_post(path: Path) -> Post:
    """Read and validate one post file."""
    meta, body = parse_front_matter(path.read_text(encoding="utf-8"), path)
    slug = require(meta, "slug", path)
    if slug != path.stem:
        raise BuildError(f"{path}: slug {slug!r} does not match the file name")
    try:
        published = date.fromisoformat(require(meta, "date", path))
    except ValueError:
        raise BuildError(f"{path}: date must be YYYY-MM-DD, got {meta['date']!r}") from None
    author_slug, category_slug = require(meta, "author", path), require(meta, "category", path)
    if author_slug not in AUTHORS:
        raise BuildError(f"{path}: unknown author {author_slug!r} (known: {', '.join(AUTHORS)})")
    if category_slug not in CATEGORIES:
        raise BuildError(f"{path}: unknown category {category_slug!r} (known: {', '.join(CATEGORIES)})")
    return Post(
        source=path,
        title=require(meta, "title", path),
        slug=slug,
        published=published,
        author=AUTHORS[author_slug],
        category=CATEGORIES[category_slug],
        tags=parse_list(meta.get("tags", "")),
        excerpt=meta.get("excerpt", "").strip() or auto_excerpt(body),
        body=body,
    )


def load_page(path: Path) -> Page:
    """Read and validate one page file."""
    meta, body = parse_front_matter(path.read_text(encoding="utf-8"), path)
    slug = require(meta, "slug", path)
    if slug != path.stem:
        raise BuildError(f"{path}: slug {slug!r} does not match the file name")
    layout = meta.get("layout", "default")
    if layout not in ("default", "hub"):
        raise BuildError(f"{path}: layout must be 'default' or 'hub', got {layout!r}")
    return Page(
        path, require(meta, "title", path), slug, meta.get("excerpt", "") or auto_excerpt(body), body, layout
    )


def load_posts(folder: Path) -> list[Post]:
    """All posts, oldest first, with WordPress-like ids (gaps for revisions and attachments)."""
    posts = sorted((load_post(p) for p in sorted(folder.glob("*.md"))), key=lambda p: (p.published, p.slug))
    for index, post in enumerate(posts):
        post.post_id = 12 + 7 * index
    return posts


def load_pages(folder: Path) -> list[Page]:
    """All site pages, with low ids as in a fresh WordPress install."""
    pages = [load_page(p) for p in sorted(folder.glob("*.md"))]
    for index, page in enumerate(pages):
        page.page_id = 2 + index
    return pages


def planned_slugs(plan: Path) -> frozenset[str]:
    """The post slugs listed in PLAN.md (``slug: Title`` lines before the file format section)."""
    if not plan.is_file():
        return frozenset()
    text = plan.read_text(encoding="utf-8").split("## Post file format", 1)[0]
    return frozenset(re.findall(r"^([a-z0-9]+(?:-[a-z0-9]+)*): \S", text, flags=re.MULTILINE))


def auto_excerpt(body: str) -> str:
    """WordPress's automatic excerpt: the first 55 words of the text, then ``[…]``."""
    words = plain_text(body).split()
    return " ".join(words[:EXCERPT_WORDS]) + (" […]" if len(words) > EXCERPT_WORDS else "")


def plain_text(markdown: str) -> str:
    """The running text of a Markdown body, without markup, headings, tables or figures."""
    kept = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "|", "![", "```")):
            kept.append(re.sub(r"^(?:[-*+]|\d+[.)]|>)\s*", "", stripped))
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", " ".join(kept))
    return re.sub(r"[*`]", "", text)


# --------------------------------------------------------------------------- Markdown subset

INLINE_RE = re.compile(
    r"`(?P<code>[^`]+)`"
    r"|\[(?P<anchor>[^\]]+)\]\((?P<href>[^)\s]+)\)"
    r"|\*\*(?P<strong>.+?)\*\*"
    r"|\*(?P<em>[^*\s](?:[^*]*[^*\s])?)\*"
)
IMAGE_RE = re.compile(r'^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)(?:\s+"(?P<caption>[^"]*)")?\)$')
HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*$")
UL_RE = re.compile(r"^[-*+]\s+")
OL_RE = re.compile(r"^\d+[.)]\s+")
TABLE_SEPARATOR_RE = re.compile(r"^:?-{2,}:?$")
OPENING_CONTEXT = set(" \t\n([{‘“—–-/")


def texturize(text: str, before: str = " ") -> str:
    """Curly quotes as WordPress's wptexturize makes them; ``before`` is the character preceding ``text``."""
    out: list[str] = []
    previous = before or " "
    for char in text:
        if char == "'":
            out.append("‘" if previous in OPENING_CONTEXT else "’")
        elif char == '"':
            out.append("“" if previous in OPENING_CONTEXT else "”")
        else:
            out.append(char)
        previous = char
    return "".join(out)


def esc(text: str) -> str:
    """Escape text for an HTML text node or a double-quoted attribute."""
    return html.escape(text, quote=True)


@dataclass
class Renderer:
    """Turns a post or page body into WordPress block markup, resolving ``post:SLUG`` links."""

    source: Path
    post_urls: dict[str, str]
    planned: frozenset[str]  # slugs in PLAN.md: a link to one whose file is missing is dropped with a warning
    upload_folder: str  # "/wp-content/uploads/YYYY/MM/"
    images: list[str] = field(default_factory=list)  # upload paths of the figures, for placeholders
    attachment_id: int = 0

    def render(self, markdown: str) -> str:
        """The HTML for a whole body."""
        return "\n\n".join(self.block(kind, lines) for kind, lines in split_blocks(markdown))

    def block(self, kind: str, lines: list[str]) -> str:
        """The HTML for one block of lines of the same kind."""
        if kind == "heading":
            return self.heading(lines[0])
        if kind == "image":
            return self.figure(lines[0])
        if kind in ("ul", "ol"):
            pattern = UL_RE if kind == "ul" else OL_RE
            items = "".join(f"<li>{self.inline(pattern.sub('', line, count=1))}</li>" for line in lines)
            return f"<{kind}>{items}</{kind}>"
        if kind == "quote":
            text = " ".join(re.sub(r"^>\s?", "", line) for line in lines).strip()
            return f'<blockquote class="wp-block-quote"><p>{self.inline(text)}</p></blockquote>'
        if kind == "table":
            return self.table(lines)
        if kind == "code":
            code = "\n".join(lines[1:-1] if lines[-1].startswith("```") else lines[1:])
            return f'<pre class="wp-block-code"><code>{esc(code)}</code></pre>'
        return f"<p>{self.inline(' '.join(line.strip() for line in lines))}</p>"

    def heading(self, line: str) -> str:
        """``## Text`` -> ``<h2 class="wp-block-heading">``; the post title is the only h1."""
        match = HEADING_RE.match(line)
        assert match is not None
        level = max(2, len(match.group(1)))
        return f'<h{level} class="wp-block-heading">{self.inline(match.group(2))}</h{level}>'

    def figure(self, line: str) -> str:
        """An image line -> a ``wp-block-image`` figure with its caption."""
        match = IMAGE_RE.match(line.strip())
        assert match is not None
        src = match.group("src")
        if not src.startswith(("/", "http://", "https://")):
            src = self.upload_folder + src
            self.images.append(src)
        self.attachment_id += 1
        width, height = IMAGE_SIZE
        caption = match.group("caption")
        figcaption = (
            f'<figcaption class="wp-element-caption">{self.inline(caption)}</figcaption>' if caption else ""
        )
        return (
            f'<figure class="wp-block-image size-large"><img decoding="async" loading="lazy" width="{width}" '
            f'height="{height}" src="{esc(src)}" alt="{esc(match.group("alt"))}" '
            f'class="wp-image-{self.attachment_id}"/>{figcaption}</figure>'
        )

    def table(self, lines: list[str]) -> str:
        """Pipe-table lines -> a ``wp-block-table`` figure; the first row is the header."""
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
        rows = [row for row in rows if not all(TABLE_SEPARATOR_RE.match(cell) for cell in row)]
        head, body = rows[0], rows[1:]
        head_html = "".join(f"<th>{self.inline(cell)}</th>" for cell in head)
        body_html = "".join(
            "<tr>" + "".join(f"<td>{self.inline(c)}</td>" for c in row) + "</tr>" for row in body
        )
        return (
            f'<figure class="wp-block-table"><table><thead><tr>{head_html}</tr></thead>'
            f"<tbody>{body_html}</tbody></table></figure>"
        )

    def inline(self, text: str) -> str:
        """Inline markup: code, links, bold and italic; the rest is escaped and texturized."""
        out: list[str] = []
        position = 0
        for match in INLINE_RE.finditer(text):
            out.append(esc(texturize(text[position : match.start()], text[position - 1 : position])))
            out.append(self.inline_token(match))
            position = match.end()
        out.append(esc(texturize(text[position:], text[position - 1 : position])))
        return "".join(out)

    def inline_token(self, match: re.Match[str]) -> str:
        """The HTML for one inline token found by INLINE_RE."""
        if match.group("code") is not None:
            return f"<code>{esc(match.group('code'))}</code>"
        if match.group("anchor") is not None:
            href = self.resolve(match.group("href"), match.group(0))
            anchor = self.inline(match.group("anchor"))
            return anchor if href is None else f'<a href="{esc(href)}">{anchor}</a>'
        if match.group("strong") is not None:
            return f"<strong>{self.inline(match.group('strong'))}</strong>"
        return f"<em>{self.inline(match.group('em'))}</em>"

    def resolve(self, href: str, link: str) -> str | None:
        """``post:SLUG`` -> the post's URL; root-relative, #fragment, http(s) and mailto links are kept."""
        if href.startswith("post:"):
            slug = href.removeprefix("post:")
            if slug not in self.post_urls and slug in self.planned:
                print(
                    f"build.py: warning: {self.source.name}: {slug!r} is not written yet; link text kept",
                    file=sys.stderr,
                )
                return None
            if slug not in self.post_urls:
                raise BuildError(f"{self.source}: link {link!r} points to unknown post slug {slug!r}")
            return self.post_urls[slug]
        if href.startswith(("/", "#", "http://", "https://", "mailto:")):
            return href
        raise BuildError(f"{self.source}: link {link!r} must use post:SLUG, /path/, http(s):// or mailto:")


def line_kind(line: str) -> str:
    """The block kind a single source line belongs to."""
    stripped = line.strip()
    if not stripped:
        return "blank"
    if stripped.startswith("```"):
        return "code"
    if HEADING_RE.match(stripped):
        return "heading"
    if IMAGE_RE.match(stripped):
        return "image"
    if UL_RE.match(stripped):
        return "ul"
    if OL_RE.match(stripped):
        return "ol"
    if stripped.startswith(">"):
        return "quote"
    if stripped.startswith("|"):
        return "table"
    return "p"


def split_blocks(markdown: str) -> list[tuple[str, list[str]]]:
    """Group source lines into blocks: runs of lines of one kind; headings, images and fences stand alone."""
    blocks: list[tuple[str, list[str]]] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        kind = line_kind(lines[index])
        if kind == "code":
            end = next(
                (j for j in range(index + 1, len(lines)) if lines[j].strip().startswith("```")), len(lines)
            )
            blocks.append(("code", lines[index : end + 1]))
            index = end + 1
            continue
        if kind == "blank":
            index += 1
            continue
        run = [lines[index]]
        index += 1
        while kind not in ("heading", "image") and index < len(lines) and line_kind(lines[index]) == kind:
            run.append(lines[index])
            index += 1
        blocks.append((kind, run))
    return blocks


# --------------------------------------------------------------------------- shared markup


def long_date(day: date) -> str:
    """``14 March 2025``, as an en-GB WordPress shows it."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def iso_datetime(day: date) -> str:
    """The publication time of a post on ``day`` (all posts go out at 08:00 UTC)."""
    return f"{day.isoformat()}T08:00:00+00:00"


def date_block(day: date) -> str:
    """The post-date block."""
    return (
        f'<div class="wp-block-post-date"><time datetime="{iso_datetime(day)}">{long_date(day)}</time></div>'
    )


def tag_slug(tag: str) -> str:
    """WordPress's sanitize_title, simplified: lower case, spaces to hyphens, other punctuation dropped."""
    slug = re.sub(r"\s+", "-", tag.strip().lower())
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "", slug)).strip("-")


def json_ld(data: dict[str, object]) -> str:
    """A JSON-LD script element (``</`` escaped so the JSON cannot close the element)."""
    text = json.dumps({"@context": "https://schema.org", **data}, ensure_ascii=False).replace("</", "<\\/")
    return f'<script type="application/ld+json">{text}</script>'


@dataclass
class Head:
    """What goes into a page's ``<head>``."""

    title: str
    description: str
    canonical: str | None  # root-relative; None for the 404 page
    og_type: str
    schema: dict[str, object]
    extra_meta: list[tuple[str, str]] = field(default_factory=list)  # (property, content)
    links: list[tuple[str, str]] = field(default_factory=list)  # (rel, root-relative href)


def render_head(head: Head) -> str:
    """The ``<head>`` element."""
    parts = [
        '<meta charset="UTF-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(texturize(head.title))}</title>",
        f'<meta name="description" content="{esc(head.description)}">',
    ]
    if head.canonical is None:
        parts.append('<meta name="robots" content="noindex, follow">')
    else:
        parts.append('<meta name="robots" content="index, follow, max-image-preview:large, max-snippet:-1">')
        parts.append(f'<link rel="canonical" href="{BASE}{head.canonical}">')
    parts += [f'<link rel="{rel}" href="{BASE}{href}">' for rel, href in head.links]
    parts += [
        '<meta property="og:locale" content="en_GB">',
        f'<meta property="og:type" content="{head.og_type}">',
        f'<meta property="og:title" content="{esc(head.title)}">',
        f'<meta property="og:description" content="{esc(head.description)}">',
    ]
    if head.canonical is not None:
        parts.append(f'<meta property="og:url" content="{BASE}{head.canonical}">')
    parts.append(f'<meta property="og:site_name" content="{SITE_NAME}">')
    parts += [f'<meta property="{prop}" content="{esc(content)}">' for prop, content in head.extra_meta]
    parts += [
        '<meta name="twitter:card" content="summary_large_image">',
        json_ld(head.schema),
        f'<meta name="generator" content="WordPress {WP_VERSION}">',
        f'<link rel="stylesheet" id="twentytwentythree-style-css" href="{STYLESHEET}?ver=1.3" media="all">',
    ]
    return "<head>\n" + "\n".join(parts) + "\n</head>"


def nav_item(label: str, href: str, extra: str = "") -> str:
    """One link of a navigation block."""
    return (
        '<li class="wp-block-navigation-item wp-block-navigation-link">'
        f'<a class="wp-block-navigation-item__content" href="{href}"{extra}>'
        f'<span class="wp-block-navigation-item__label">{esc(label)}</span></a></li>'
    )


def site_header(current: str) -> str:
    """The header template part: site title and the primary navigation."""
    items = []
    for label, href in NAV_LINKS:
        current_attr = ' aria-current="page"' if href == current else ""
        items.append(nav_item(label, href, current_attr))
    return f"""<header class="wp-block-template-part">
<div class="wp-block-group is-layout-flex is-content-justification-space-between">
<p class="wp-block-site-title"><a href="/" target="_self" rel="home">{SITE_NAME}</a></p>
<nav class="is-responsive items-justified-right wp-block-navigation is-layout-flex" aria-label="Primary">
<ul class="wp-block-navigation__container">
{chr(10).join(items)}
</ul>
</nav>
</div>
</header>"""


def site_footer(years: str) -> str:
    """The footer template part: page links, copyright and the theme credit."""
    links = "".join(nav_item(label, href) for label, href in FOOTER_LINKS)
    return f"""<footer class="wp-block-template-part">
<div class="wp-block-group has-global-padding is-layout-constrained">
<div class="wp-block-group is-layout-flex is-content-justification-space-between">
<nav class="wp-block-navigation is-layout-flex" aria-label="Footer">
<ul class="wp-block-navigation__container">{links}</ul>
</nav>
<p class="has-text-align-right">© {years} {SITE_NAME}. Proudly powered by
<a href="https://wordpress.org" rel="nofollow">WordPress</a></p>
</div>
</div>
</footer>"""


@dataclass(frozen=True)
class Chrome:
    """The parts shared by every page of the site."""

    years: str

    def document(self, head: Head, body_class: str, main: str, current: str = "") -> str:
        """A whole HTML document: head, header, ``main`` and footer."""
        return f"""<!DOCTYPE html>
<html lang="en-GB">
{render_head(head)}
<body class="{body_class}">
<div class="wp-site-blocks">
<a class="skip-link screen-reader-text" href="#wp--skip-link--target">Skip to content</a>
{site_header(current)}
<main class="wp-block-group is-layout-flow" id="wp--skip-link--target">
{main}
</main>
{site_footer(self.years)}
</div>
</body>
</html>
"""


# --------------------------------------------------------------------------- posts


@dataclass
class Site:
    """Everything loaded from the sources, with the look-ups the page builders need."""

    posts: list[Post]  # oldest first
    pages: list[Page]
    chrome: Chrome
    planned: frozenset[str] = frozenset()

    @property
    def post_urls(self) -> dict[str, str]:
        """Slug -> URL for every post."""
        return {post.slug: post.url for post in self.posts}

    def newest_first(self, posts: Iterable[Post] | None = None) -> list[Post]:
        """Posts (all by default), newest first."""
        return sorted(
            self.posts if posts is None else posts, key=lambda p: (p.published, p.slug), reverse=True
        )

    def in_category(self, category: Category) -> list[Post]:
        """The posts of one category, newest first."""
        return self.newest_first(p for p in self.posts if p.category == category)


def post_meta(post: Post) -> str:
    """The date, author and category line under a post title."""
    return (
        '<div class="wp-block-group post-meta is-layout-flex">'
        f"{date_block(post.published)}"
        '<p class="wp-block-paragraph">by</p>'
        f'<div class="wp-block-post-author-name"><a href="/author/{post.author.slug}/" target="_self" '
        f'class="wp-block-post-author-name__link">{esc(post.author.name)}</a></div>'
        '<p class="wp-block-paragraph">in</p>'
        '<div class="taxonomy-category wp-block-post-terms">'
        f'<a href="/category/{post.category.slug}/" rel="tag">{esc(post.category.name)}</a></div></div>'
    )


def post_tags(post: Post) -> str:
    """The tag links under a post."""
    if not post.tags:
        return ""
    separator = '<span class="wp-block-post-terms__separator">, </span>'
    links = separator.join(f'<a href="/tag/{tag_slug(t)}/" rel="tag">{esc(t)}</a>' for t in post.tags)
    prefix = '<span class="wp-block-post-terms__prefix">Tags: </span>'
    return f'<div class="taxonomy-post_tag wp-block-post-terms">{prefix}{links}</div>'


def post_navigation(older: Post | None, newer: Post | None) -> str:
    """Links to the previous (older) and next (newer) posts."""
    parts = []
    if older is not None:
        parts.append(
            '<div class="post-navigation-link-previous wp-block-post-navigation-link">'
            '<span class="wp-block-post-navigation-link__arrow-previous is-arrow-arrow" aria-hidden="true">'
            "←</span>"
            f'<a href="{older.url}" rel="prev">{esc(texturize(older.title))}</a></div>'
        )
    if newer is not None:
        parts.append(
            '<div class="post-navigation-link-next wp-block-post-navigation-link">'
            f'<a href="{newer.url}" rel="next">{esc(texturize(newer.title))}</a>'
            '<span class="wp-block-post-navigation-link__arrow-next is-arrow-arrow" aria-hidden="true">'
            "→</span></div>"
        )
    return (
        '<nav class="wp-block-group is-layout-flex is-content-justification-space-between" '
        'aria-label="Posts">' + "".join(parts) + "</nav>"
    )


def post_classes(post: Post) -> str:
    """The classes WordPress puts on a post in a query loop."""
    tags = " ".join(f"tag-{tag_slug(t)}" for t in post.tags)
    return (
        f"wp-block-post post-{post.post_id} post type-post status-publish format-standard hentry "
        f"category-{post.category.slug} {tags}"
    ).strip()


def more_posts(site: Site, post: Post) -> str:
    """The "More posts" query block: the newest other posts of the same category."""
    others = [p for p in site.in_category(post.category) if p is not post][:MORE_POSTS]
    if not others:
        return ""
    items = "\n".join(
        f'<li class="{post_classes(p)}"><h3 class="wp-block-post-title"><a href="{p.url}" target="_self">'
        f"{esc(texturize(p.title))}</a></h3>{date_block(p.published)}</li>"
        for p in others
    )
    return f"""<div class="wp-block-group has-global-padding is-layout-constrained">
<h2 class="wp-block-heading">More posts</h2>
<div class="wp-block-query">
<ul class="wp-block-post-template is-layout-flow">
{items}
</ul>
</div>
</div>"""


def post_schema(post: Post, word_count: int) -> dict[str, object]:
    """The BlogPosting JSON-LD of a post."""
    url = f"{BASE}{post.url}"
    return {
        "@type": "BlogPosting",
        "headline": post.title,
        "description": post.excerpt,
        "datePublished": iso_datetime(post.published),
        "dateModified": iso_datetime(post.published),
        "author": {"@type": "Person", "name": post.author.name, "url": f"{BASE}/author/{post.author.slug}/"},
        "publisher": {"@type": "Organization", "name": SITE_NAME, "url": f"{BASE}/"},
        "mainEntityOfPage": {"@type": "WebPage", "@id": url},
        "url": url,
        "articleSection": post.category.name,
        "keywords": post.tags,
        "wordCount": word_count,
        "inLanguage": "en-GB",
    }


def render_post(site: Site, index: int, images: list[str]) -> str:
    """The single-post page of ``site.posts[index]``; figure paths are appended to ``images``."""
    post = site.posts[index]
    renderer = Renderer(
        post.source,
        site.post_urls,
        site.planned,
        f"/wp-content/uploads/{post.published:%Y}/{post.published:%m}/",
    )
    renderer.attachment_id = post.post_id
    content = renderer.render(post.body)
    images.extend(renderer.images)
    older = site.posts[index - 1] if index > 0 else None
    newer = site.posts[index + 1] if index + 1 < len(site.posts) else None
    head = Head(
        title=f"{post.title} – {SITE_NAME}",
        description=post.excerpt,
        canonical=post.url,
        og_type="article",
        schema=post_schema(post, len(plain_text(post.body).split())),
        extra_meta=[
            ("article:published_time", iso_datetime(post.published)),
            ("article:modified_time", iso_datetime(post.published)),
            ("article:author", f"{BASE}/author/{post.author.slug}/"),
            ("article:section", post.category.name),
            *(("article:tag", tag) for tag in post.tags),
        ],
    )
    main = f"""<div class="wp-block-group has-global-padding is-layout-constrained">
<h1 class="wp-block-post-title">{esc(texturize(post.title))}</h1>
{post_meta(post)}
</div>
<div class="entry-content wp-block-post-content has-global-padding is-layout-constrained">
{content}
</div>
<div class="wp-block-group has-global-padding is-layout-constrained">
{post_tags(post)}
<hr class="wp-block-separator has-alpha-channel-opacity is-style-wide">
{post_navigation(older, newer)}
</div>
{more_posts(site, post)}"""
    body_class = f"post-template-default single single-post postid-{post.post_id} single-format-standard"
    return site.chrome.document(head, body_class, main)


# --------------------------------------------------------------------------- listings


@dataclass(frozen=True)
class Listing:
    """A paginated list of posts: the home page or an archive."""

    base_path: str  # "/", "/category/baking/" ...
    title: str  # for <title>, without the site name
    heading: str  # HTML of the h1; empty for the home page
    description: str
    body_class: str
    paged_class: str  # e.g. "category-paged": WordPress adds "<this>-N" on page N (nothing on the home page)
    posts: list[Post]  # newest first
    intro: str = ""  # HTML shown above the list (term description, author bio)
    nav_current: str = ""
    after: str = ""  # HTML below the pagination on the first page (the home page's archives list)

    def page_path(self, number: int) -> str:
        """The path of page ``number`` (1-based) of this listing."""
        return self.base_path if number == 1 else f"{self.base_path}page/{number}/"

    @property
    def page_count(self) -> int:
        """How many pages the listing has (at least one)."""
        return max(1, -(-len(self.posts) // PER_PAGE))


def excerpt_item(post: Post) -> str:
    """One post in a listing: title, date, excerpt."""
    return (
        f'<li class="{post_classes(post)}">\n'
        f'<h2 class="wp-block-post-title"><a href="{post.url}" target="_self">'
        f"{esc(texturize(post.title))}</a></h2>\n"
        f"{date_block(post.published)}\n"
        f'<div class="wp-block-post-excerpt"><p class="wp-block-post-excerpt__excerpt">'
        f"{esc(texturize(post.excerpt))} </p></div>\n</li>"
    )


def pagination(listing: Listing, number: int) -> str:
    """The query pagination block: previous page, page numbers, next page."""
    if listing.page_count == 1:
        return ""
    parts = []
    if number > 1:
        previous = listing.page_path(number - 1)
        parts.append(f'<a href="{previous}" class="wp-block-query-pagination-previous">Previous Page</a>')
    numbers = []
    for n in range(1, listing.page_count + 1):
        if n == number:
            numbers.append(f'<span aria-current="page" class="page-numbers current">{n}</span>')
        else:
            numbers.append(f'<a class="page-numbers" href="{listing.page_path(n)}">{n}</a>')
    parts.append(f'<div class="wp-block-query-pagination-numbers">{"".join(numbers)}</div>')
    if number < listing.page_count:
        parts.append(
            f'<a href="{listing.page_path(number + 1)}" class="wp-block-query-pagination-next">Next Page</a>'
        )
    return (
        '<nav class="wp-block-query-pagination is-layout-flex is-content-justification-space-between" '
        f'aria-label="Pagination">{"".join(parts)}</nav>'
    )


def listing_title(listing: Listing, number: int) -> str:
    """The document title: "Baking – Page 2 – SITE", or "SITE – Page 2 – TAGLINE" for the home page."""
    page = [f"Page {number}"] if number > 1 else []
    parts = [SITE_NAME, *page, TAGLINE] if listing.base_path == "/" else [listing.title, *page, SITE_NAME]
    return " – ".join(parts)


def render_listing_page(chrome: Chrome, listing: Listing, number: int) -> str:
    """Page ``number`` of a listing."""
    chunk = listing.posts[(number - 1) * PER_PAGE : number * PER_PAGE]
    path = listing.page_path(number)
    links = []
    if number > 1:
        links.append(("prev", listing.page_path(number - 1)))
    if number < listing.page_count:
        links.append(("next", listing.page_path(number + 1)))
    schema: dict[str, object] = {
        "@type": "CollectionPage",
        "name": listing_title(listing, number),
        "url": f"{BASE}{path}",
        "isPartOf": {"@type": "WebSite", "name": SITE_NAME, "url": f"{BASE}/"},
        "inLanguage": "en-GB",
    }
    head = Head(
        title=listing_title(listing, number),
        description=listing.description,
        canonical=path,
        og_type="website",
        schema=schema,
        links=links,
    )
    items = "\n".join(excerpt_item(p) for p in chunk) or '<li class="wp-block-post">Nothing here yet.</li>'
    heading = f'<h1 class="wp-block-query-title">{listing.heading}</h1>\n' if listing.heading else ""
    body_class = listing.body_class
    if number > 1:
        body_class += f" paged paged-{number}" + (
            f" {listing.paged_class}-{number}" if listing.paged_class else ""
        )
    main = f"""<div class="wp-block-group has-global-padding is-layout-constrained">
{heading}{listing.intro}
<div class="wp-block-query">
<ul class="wp-block-post-template is-layout-flow">
{items}
</ul>
{pagination(listing, number)}
</div>
{listing.after if number == 1 else ""}
</div>"""
    return chrome.document(head, body_class, main, listing.nav_current)


def home_listing(site: Site) -> Listing:
    """The blog home page, with a heading and an archives list below the first page."""
    intro = (
        f'<h1 class="wp-block-heading">{TAGLINE}</h1>\n'
        '<p class="wp-block-paragraph">Tested recipes and plain explanations from three home cooks: bread, '
        "coffee and tea, ferments, tools, techniques and the garden. New here? "
        '<a href="/start-here/">Start here</a>.</p>'
    )
    return Listing(
        base_path="/",
        title=TAGLINE,
        heading="",
        description=SITE_DESCRIPTION,
        body_class="home blog",
        paged_class="",
        posts=site.newest_first(),
        intro=intro,
        nav_current="/",
        after=archives_block(site),
    )


def archives_block(site: Site) -> str:
    """The "Archives" block: one link per month that has posts, newest first."""
    months = sorted({(p.published.year, p.published.month) for p in site.posts}, reverse=True)
    items = "".join(f'<li><a href="/{y}/{m:02d}/">{MONTHS[m - 1]} {y}</a></li>' for y, m in months)
    return (
        '<div class="wp-block-group"><h2 class="wp-block-heading">Archives</h2>'
        f'<ul class="wp-block-archives-list wp-block-archives">{items}</ul></div>'
    )


def category_listing(site: Site, category: Category) -> Listing:
    """The archive of one category."""
    return Listing(
        base_path=f"/category/{category.slug}/",
        title=category.name,
        heading=f"Category: <span>{esc(category.name)}</span>",
        description=category.intro,
        body_class=f"archive category category-{category.slug}",
        paged_class="category-paged",
        posts=site.in_category(category),
        intro=f'<div class="wp-block-term-description"><p>{esc(category.intro)}</p></div>',
        nav_current=f"/category/{category.slug}/",
    )


def tag_listings(site: Site) -> list[Listing]:
    """One archive per tag slug (tags that differ only in case or spacing share one)."""
    names: dict[str, str] = {}
    for post in site.posts:
        for tag in post.tags:
            names.setdefault(tag_slug(tag), tag)
    return [
        Listing(
            base_path=f"/tag/{slug}/",
            title=name,
            heading=f"Tag: <span>{esc(name)}</span>",
            description=f"Posts tagged “{name}” on {SITE_NAME}.",
            body_class=f"archive tag tag-{slug}",
            paged_class="tag-paged",
            posts=site.newest_first(p for p in site.posts if slug in {tag_slug(t) for t in p.tags}),
        )
        for slug, name in sorted(names.items())
        if slug
    ]


def author_listing(site: Site, author: Author) -> Listing:
    """The archive of one author, with the author's bio."""
    return Listing(
        base_path=f"/author/{author.slug}/",
        title=author.name,
        heading=f"Author: <span>{esc(author.name)}</span>",
        description=author.bio,
        body_class=f"archive author author-{author.slug}",
        paged_class="author-paged",
        posts=site.newest_first(p for p in site.posts if p.author == author),
        intro=f'<div class="wp-block-post-author-biography"><p>{esc(author.bio)}</p></div>',
    )


def month_listings(site: Site) -> list[Listing]:
    """One archive per month that has posts."""
    months = sorted({(p.published.year, p.published.month) for p in site.posts})
    listings = []
    for year, month in months:
        label = f"{MONTHS[month - 1]} {year}"
        listings.append(
            Listing(
                base_path=f"/{year}/{month:02d}/",
                title=label,
                heading=f"Month: <span>{label}</span>",
                description=f"Posts published on {SITE_NAME} in {label}.",
                body_class="archive date",
                paged_class="date-paged",
                posts=site.newest_first(
                    p for p in site.posts if (p.published.year, p.published.month) == (year, month)
                ),
            )
        )
    return listings


def all_listings(site: Site) -> list[Listing]:
    """The home page and every archive."""
    return [
        home_listing(site),
        *(category_listing(site, c) for c in CATEGORIES.values()),
        *tag_listings(site),
        *(author_listing(site, a) for a in AUTHORS.values()),
        *month_listings(site),
    ]


# --------------------------------------------------------------------------- pages, 404, robots, sitemap


def hub_lists(site: Site) -> str:
    """The body of the Start here page: every post, by category, oldest first, with the category intro."""
    sections = []
    for category in CATEGORIES.values():
        posts = sorted((p for p in site.posts if p.category == category), key=lambda p: (p.published, p.slug))
        if not posts:
            continue
        items = "".join(f'<li><a href="{p.url}">{esc(texturize(p.title))}</a></li>' for p in posts)
        sections.append(
            f'<h2 class="wp-block-heading">{esc(category.name)}</h2>\n'
            f"<p>{esc(category.intro)} "
            f'<a href="/category/{category.slug}/">All {esc(category.name.lower())} posts</a></p>\n'
            f'<ul class="wp-block-list">{items}</ul>'
        )
    return "\n\n".join(sections)


def render_page(site: Site, page: Page) -> str:
    """A site page (About, Contact, Privacy, Start here)."""
    renderer = Renderer(page.source, site.post_urls, site.planned, "/wp-content/uploads/")
    content = renderer.render(page.body)
    if page.layout == "hub":
        content += "\n\n" + hub_lists(site)
    schema: dict[str, object] = {
        "@type": "WebPage",
        "name": page.title,
        "description": page.excerpt,
        "url": f"{BASE}{page.url}",
        "isPartOf": {"@type": "WebSite", "name": SITE_NAME, "url": f"{BASE}/"},
        "inLanguage": "en-GB",
    }
    head = Head(f"{page.title} – {SITE_NAME}", page.excerpt, page.url, "article", schema)
    main = f"""<div class="wp-block-group has-global-padding is-layout-constrained">
<h1 class="wp-block-post-title">{esc(texturize(page.title))}</h1>
</div>
<div class="entry-content wp-block-post-content has-global-padding is-layout-constrained">
{content}
</div>"""
    return site.chrome.document(head, f"page-template-default page page-id-{page.page_id}", main, page.url)


def render_404(site: Site) -> str:
    """The page served for unknown paths."""
    latest = "".join(
        f'<li><a href="{p.url}">{esc(texturize(p.title))}</a></li>' for p in site.newest_first()[:5]
    )
    schema: dict[str, object] = {"@type": "WebPage", "name": "Page not found", "inLanguage": "en-GB"}
    head = Head(
        f"Page not found – {SITE_NAME}",
        "The page you were looking for does not exist.",
        None,
        "website",
        schema,
    )
    main = f"""<div class="wp-block-group has-global-padding is-layout-constrained">
<h1 class="wp-block-heading">Page not found</h1>
<p>The page you requested could not be found. It may have moved, or the address may be mistyped.
Try the <a href="/">home page</a> or the <a href="/start-here/">list of every post</a>.</p>
<h2 class="wp-block-heading">Latest posts</h2>
<ul class="wp-block-latest-posts__list wp-block-latest-posts">{latest}</ul>
</div>"""
    return site.chrome.document(head, "error404", main)


def robots_txt() -> str:
    """WordPress's default robots.txt, plus the sitemap."""
    rules = "User-agent: *\nDisallow: /wp-admin/\nAllow: /wp-admin/admin-ajax.php\n"
    return f"{rules}\nSitemap: {BASE}/sitemap.xml\n"


def sitemap_xml(site: Site) -> str:
    """The sitemap: home page, site pages and every post, absolute with ``{{BASE}}``."""
    newest = site.newest_first()
    latest = newest[0].published.isoformat() if newest else date.today().isoformat()
    entries = [("/", latest)]
    entries += [(page.url, latest) for page in site.pages]
    entries += [(post.url, post.published.isoformat()) for post in newest]
    urls = "\n".join(f"<url><loc>{BASE}{path}</loc><lastmod>{day}</lastmod></url>" for path, day in entries)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}\n</urlset>\n'
    )


STYLE_CSS = """/*
Theme Name: Twenty Twenty-Three
Version: 1.3
*/
body { margin: 0; font-family: system-ui, sans-serif; line-height: 1.6; color: #111; background: #fff; }
.wp-site-blocks > * { max-width: 1100px; margin: 0 auto; padding: 0 1.5rem; }
.is-layout-constrained > * { max-width: 680px; margin-left: auto; margin-right: auto; }
.is-layout-flex { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; align-items: center; }
.is-content-justification-space-between { justify-content: space-between; }
.wp-block-navigation__container { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; padding: 0; }
.wp-block-post-template { list-style: none; padding: 0; }
.wp-block-post { margin-bottom: 2.5rem; }
.wp-block-image img { max-width: 100%; height: auto; background: #d8d2c4; }
.wp-element-caption { font-size: 0.875rem; color: #555; }
.wp-block-table table { border-collapse: collapse; width: 100%; }
.wp-block-table th, .wp-block-table td { border: 1px solid #ccc; padding: 0.4rem 0.6rem; text-align: left; }
.wp-block-quote { border-left: 2px solid currentColor; margin-left: 0; padding-left: 1.5rem; }
.screen-reader-text { position: absolute; left: -10000px; }
"""


# --------------------------------------------------------------------------- placeholder images


def placeholder_jpeg(width: int, height: int, grey: int = 200) -> bytes:
    """A valid baseline JPEG of one flat grey, built by hand (every block has only a DC value)."""
    blocks = -(-width // 8) * -(-height // 8)
    dc = 8 * (grey - 128)  # the DC coefficient of a flat 8x8 block, quantiser 1
    category = dc.bit_length()
    # DC table: symbol 0 -> "00", symbol `category` -> "01"; AC table: EOB (0x00) -> "0".
    bits = "01" + format(dc, f"0{category}b") + "0" + "000" * (blocks - 1)
    bits += "1" * (-len(bits) % 8)
    data = bytearray()
    for i in range(0, len(bits), 8):
        byte = int(bits[i : i + 8], 2)
        data += bytes([byte, 0]) if byte == 0xFF else bytes([byte])

    def segment(marker: int, payload: bytes) -> bytes:
        return struct.pack(">BBH", 0xFF, marker, len(payload) + 2) + payload

    counts = [0] * 16
    dht_dc = bytes([0x00]) + bytes([0, 2] + counts[2:]) + bytes([0, category])
    dht_ac = bytes([0x10]) + bytes([1] + counts[1:]) + bytes([0])
    return b"".join(
        [
            b"\xff\xd8",
            segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x48\x00\x48\x00\x00"),
            segment(0xDB, bytes([0]) + bytes([1] * 64)),
            segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + bytes([1, 0x11, 0])),
            segment(0xC4, dht_dc),
            segment(0xC4, dht_ac),
            segment(0xDA, bytes([1, 1, 0x00, 0, 63, 0])),
            bytes(data),
            b"\xff\xd9",
        ]
    )


# --------------------------------------------------------------------------- writing the site


def write(out: Path, path: str, text: str | bytes) -> None:
    """Write one file; a path ending in ``/`` becomes ``index.html`` in that folder."""
    target = out / path.lstrip("/")
    if path.endswith("/"):
        target = target / "index.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text, encoding="utf-8")


def prepare_output(out: Path) -> None:
    """Create the output folder; empty it first if an earlier build made it, refuse other non-empty ones."""
    if out.exists():
        if not out.is_dir():
            raise BuildError(f"{out}: exists and is not a folder")
        if any(out.iterdir()):
            if not (out / BUILD_MARKER).is_file():
                raise BuildError(f"{out}: not empty and not made by this script; choose another --out")
            shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / BUILD_MARKER).write_text("built by benchmarks/blogsite/build.py\n", encoding="utf-8")


def copyright_years(posts: Sequence[Post]) -> str:
    """``2024–2026`` from the first and last post years."""
    if not posts:
        return str(date.today().year)
    first, last = posts[0].published.year, posts[-1].published.year
    return str(first) if first == last else f"{first}–{last}"


def build(out: Path, posts_dir: Path = POSTS_DIR, pages_dir: Path = PAGES_DIR) -> dict[str, int]:
    """Build the whole site into ``out``; returns counts of what was written."""
    posts = load_posts(posts_dir)
    site = Site(posts, load_pages(pages_dir), Chrome(copyright_years(posts)), planned_slugs(PLAN_FILE))
    prepare_output(out)
    images: list[str] = []
    for index, post in enumerate(site.posts):
        write(out, post.url, render_post(site, index, images))
    listing_pages = 0
    for listing in all_listings(site):
        for number in range(1, listing.page_count + 1):
            write(out, listing.page_path(number), render_listing_page(site.chrome, listing, number))
            listing_pages += 1
    for page in site.pages:
        write(out, page.url, render_page(site, page))
    image = placeholder_jpeg(*IMAGE_SIZE)
    for path in images:
        if path.lower().endswith((".jpg", ".jpeg")):
            write(out, path, image)
    write(out, "/404.html", render_404(site))
    write(out, "/robots.txt", robots_txt())
    write(out, "/sitemap.xml", sitemap_xml(site))
    write(out, STYLESHEET, STYLE_CSS)
    return {
        "posts": len(site.posts),
        "pages": len(site.pages),
        "listing pages": listing_pages,
        "images": len(images),
    }


def main(argv: list[str] | None = None, report: Callable[[str], None] = print) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder to write the site to")
    args = parser.parse_args(argv)
    try:
        counts = build(args.out)
    except BuildError as error:
        print(f"build.py: error: {error}", file=sys.stderr)
        return 1
    report(f"wrote {args.out}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
