"""Main text, metadata and link positions of an HTML page: pure functions of HTML.

INTERFACE STUB — to be implemented (see docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OutLink:
    """A link as it stands on the page (URL absolute but not yet canonical)."""

    url: str
    anchor_text: str
    position: str  # content | nav | header | footer | aside | other
    nofollow: bool = False


@dataclass
class PageContent:
    """Everything the crawl records about one HTML page."""

    title: str = ""
    meta_description: str = ""
    h1: str = ""
    headings: list[str] = field(default_factory=list)
    text: str = ""  # main content, boilerplate removed; blocks separated by newlines
    word_count: int = 0
    lang: str | None = None
    canonical: str | None = None  # absolute rel=canonical URL as declared
    published: str | None = None
    modified: str | None = None
    noindex: bool = False
    nofollow: bool = False
    links: list[OutLink] = field(default_factory=list)


def extract_page(html: str | bytes, url: str) -> PageContent:
    """Parse one HTML page fetched from ``url``."""
    raise NotImplementedError


def content_hash(text: str) -> str:
    """Stable hash of the main text (sha1 hex)."""
    raise NotImplementedError
