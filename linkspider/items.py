"""The crawl's records — pages, links and skipped URLs — and their Parquet schemas.

This module is the contract between the crawl and postprocess: every part file
under ``pages/``, ``links/`` and ``skipped/`` is written with exactly these
schemas. It imports nothing of Scrapy: postprocess imports it (and nothing else of
linkspider) to check every part's schema version, columns and types when it loads
a crawl (``postprocess/stages/load.py``). The README's table of columns must stay in
step with this file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from linkspider.extract import PageContent

#: Version of the crawl dataset. 2: pages gained ``kind`` and ``blocks``; 3: ``etag`` and
#: ``last_modified`` (the response's validators, for conditional recrawls); 4: ``rendered``
#: (whether a browser rendered the page: render=1, or render=auto chose to); 5: ``categories`` and
#: ``tags`` (a CMS's terms of the page: the ``wordpress`` spider; null from an HTML crawl).
SCHEMA_VERSION = "5"
#: Versions postprocess reads (3, 4 and 5 only added columns it does not need).
READABLE_VERSIONS = ("2", "3", "4", "5")

#: Where a link stands on its page.
POSITIONS = ("content", "nav", "header", "footer", "aside", "other")

#: Why a URL was not recorded as a page.
SKIP_REASONS = (
    "parameter",  # query string left after tracking parameters were stripped
    "pagination",  # /page/2/, ?page=3, ?p=2 and configured patterns
    "offsite",  # a redirect to another host, not followed
    "out_of_scope",  # outside the start path with scope=path
    "robots",  # disallowed by robots.txt
    "canonicalised",  # the page declares another URL as canonical (alias_of)
    "redirect",  # the URL redirects to alias_of
    "not_html",  # a response that is not HTML
    "too_large",  # larger than the size limit
    "http_error",  # a 4xx/5xx response
    "error",  # DNS, connection, timeout and other download errors
    "duplicate",  # same canonical URL as a page already recorded
    "max_pages",  # not fetched because the page cap was reached
    "trap",  # a URL of a crawl trap: repeating path segments, a path or query past a length
)

#: What a page is to an editor (``linkspider.blocks.page_kind``): only content pages are link sources.
PAGE_KINDS = ("content", "listing", "navigation", "code", "other")

#: Kinds of the main content's blocks (``linkspider.blocks.content_blocks``).
BLOCK_KINDS = ("paragraph", "list_item", "heading", "code", "table_cell", "quote", "caption", "term",
               "definition", "other")

#: Blocks of running prose: the only places a new link may go.
PROSE_KINDS = frozenset({"paragraph", "list_item", "quote", "definition"})

_SPAN = pa.struct([pa.field("start", pa.int32()), pa.field("end", pa.int32())])
_LINK_SPAN = pa.struct([pa.field("start", pa.int32()), pa.field("end", pa.int32()),
                        pa.field("url", pa.string())])
#: One block of the main content, in document order: its kind, its text (whitespace collapsed,
#: code blocks keep their lines), and character spans of inline code and of links (canonical URL,
#: null for a link that is not http(s)) in that text.
BLOCK_TYPE = pa.struct([
    pa.field("kind", pa.string()),
    pa.field("text", pa.string()),
    pa.field("code", pa.list_(_SPAN)),
    pa.field("links", pa.list_(_LINK_SPAN)),
])

#: How a page was first found.
FOUND_BY = ("start", "link", "sitemap", "api")  # api: read through a CMS's API (the wordpress spider)

_META = {b"linkspider_schema_version": SCHEMA_VERSION.encode()}

PAGE_SCHEMA = pa.schema(
    [
        pa.field("url", pa.string(), nullable=False),  # canonical URL: the page's identity
        pa.field("fetched_url", pa.string()),  # the URL the response came from
        pa.field("status", pa.int32()),  # HTTP status of the final response
        pa.field("title", pa.string()),
        pa.field("meta_description", pa.string()),
        pa.field("h1", pa.string()),
        pa.field("headings", pa.list_(pa.string())),  # h2–h6 in document order
        pa.field("text", pa.string()),  # main content, boilerplate removed
        pa.field("word_count", pa.int32()),
        pa.field("lang", pa.string()),  # ISO 639-1, from <html lang> then detection
        pa.field("canonical", pa.string()),  # rel=canonical as declared (canonicalised)
        pa.field("published", pa.string()),  # ISO 8601 date or datetime
        pa.field("modified", pa.string()),  # ISO 8601 date or datetime
        pa.field("noindex", pa.bool_()),
        pa.field("nofollow", pa.bool_()),  # robots meta nofollow: links not followed
        pa.field("thin", pa.bool_()),  # fewer words than LINKSPIDER_THIN_WORDS
        pa.field("depth", pa.int32()),  # clicks from the start page; null if no link path
        pa.field("found_by", pa.string()),  # start | link | sitemap | api
        pa.field("content_hash", pa.string()),  # sha1 of the main text
        pa.field("kind", pa.string()),  # one of PAGE_KINDS
        pa.field("blocks", pa.list_(BLOCK_TYPE)),  # the main content block by block (schema 2)
        pa.field("fetched_at", pa.timestamp("us", tz="UTC")),
        pa.field("job", pa.string()),  # crawl job id (Scrapyd's _job, or generated)
        pa.field("etag", pa.string()),  # the response's ETag header (schema 3)
        pa.field("last_modified", pa.string()),  # its Last-Modified header, as sent (schema 3)
        pa.field("rendered", pa.bool_()),  # the text and links are from a browser's rendering (schema 4)
        pa.field("categories", pa.list_(pa.string())),  # category names from a CMS's API (schema 5)
        pa.field("tags", pa.list_(pa.string())),  # tag names from a CMS's API (schema 5)
    ],
    metadata=_META,
)

LINK_SCHEMA = pa.schema(
    [
        pa.field("source_url", pa.string(), nullable=False),  # canonical URL of the page
        pa.field("target_url", pa.string(), nullable=False),  # canonical URL linked to
        pa.field("anchor_text", pa.string()),  # visible text (or img alt) of the link
        pa.field("position", pa.string()),  # one of POSITIONS
        pa.field("nofollow", pa.bool_()),  # rel=nofollow on the link
        pa.field("internal", pa.bool_()),  # same site (origin) as the source
        pa.field("fetched_at", pa.timestamp("us", tz="UTC")),  # of the source page
        pa.field("job", pa.string()),
    ],
    metadata=_META,
)

SKIP_SCHEMA = pa.schema(
    [
        pa.field("url", pa.string(), nullable=False),  # canonical URL
        pa.field("reason", pa.string(), nullable=False),  # one of SKIP_REASONS
        pa.field("from_url", pa.string()),  # the page that linked to it, if any
        pa.field("alias_of", pa.string()),  # redirect / canonical target (canonical URL)
        pa.field("detail", pa.string()),  # status code, content type, error message …
        pa.field("fetched_at", pa.timestamp("us", tz="UTC")),
        pa.field("job", pa.string()),
    ],
    metadata=_META,
)

TABLES: dict[str, pa.Schema] = {"pages": PAGE_SCHEMA, "links": LINK_SCHEMA, "skipped": SKIP_SCHEMA}


class PageRecord(dict[str, Any]):
    """One crawled HTML page (a row of ``pages/``)."""

    table = "pages"


class LinkRecord(dict[str, Any]):
    """One outlink of a page (a row of ``links/``)."""

    table = "links"


class SkipRecord(dict[str, Any]):
    """One URL that was not recorded as a page, and why (a row of ``skipped/``)."""

    table = "skipped"


@dataclass
class CrawledPage:
    """An HTML page the spider fetched and parsed; the pipelines turn it into rows.

    ``targets[i]`` is the canonical URL of ``content.links[i]`` (None when the
    link is not http(s)): the spider canonicalises each link once, to decide
    what to follow, and the link rows reuse it.
    """

    url: str  # canonical URL (the page identity)
    fetched_url: str  # the URL the response came from
    status: int
    content: PageContent
    targets: list[str | None]
    depth: int | None  # clicks from the start page; None when found through a sitemap
    found_by: str  # one of FOUND_BY
    fetched_at: datetime
    internal: list[bool] = field(default_factory=list)  # targets[i] is on the start URL's origin
    etag: str | None = None  # validators of the response, sent back on the next crawl
    last_modified: str | None = None
    rendered: bool = False  # the content is from the browser's rendering, not the plain HTML
    categories: list[str] | None = None  # category names (a CMS's API; None: not known)
    tags: list[str] | None = None  # tag names (a CMS's API; None: not known)


@dataclass
class CarriedPage:
    """A page the server answered 304 Not Modified: its rows of the previous job are carried over."""

    url: str
    previous_job: str
