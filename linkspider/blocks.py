"""The main content as ordered blocks, and the page's kind: pure functions of the parsed content.

A block is one run of text an editor sees as a unit: a paragraph, a list item, a
heading, a code block, a table cell, a quote, a caption, a definition term or its
definition. Inside a block, inline code (``<code>``, ``<kbd>`` …) and existing
links are marked as character spans of the block's text, so a later step can
tell where a new link may go (running text, outside links) and insert it into
the right paragraph.

The page kind says whether an editor writes the page: ``content`` (article,
guide, reference page), ``listing`` (tag/category/author/date archive, blog
index, search results), ``navigation`` (site index, table of contents, sitemap
page), ``code`` (a generated source-code listing) or ``other`` (next to no
text). It is read from the page's own structure and markup — share of text in
links and code, repeated excerpt blocks, JSON-LD and OpenGraph types, body
classes — not from one CMS's URL patterns.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lxml import etree

from linkspider.items import BLOCK_KINDS, PAGE_KINDS, PROSE_KINDS

__all__ = ["BLOCK_KINDS", "PAGE_KINDS", "PROSE_KINDS", "Block", "content_blocks", "page_kind"]

_TAG_KINDS = {
    "p": "paragraph", "li": "list_item", "dd": "definition", "dt": "term", "blockquote": "quote",
    "q": "quote", "td": "table_cell", "th": "table_cell", "figcaption": "caption", "caption": "caption",
    "legend": "caption", "pre": "code", "h1": "heading", "h2": "heading", "h3": "heading",
    "h4": "heading", "h5": "heading", "h6": "heading", "summary": "heading", "address": "other",
    "textarea": "code",
}
#: Kinds an element inherits from an ancestor whatever its own tag ("<p>" inside "<li>" is list text).
_STICKY = frozenset({"heading", "code", "caption", "term", "table_cell", "quote", "list_item", "definition"})
_INLINE_CODE = frozenset({"code", "tt", "kbd", "samp", "var"})
#: Inline elements: their text joins the enclosing block.
_INLINE = frozenset({
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font",
    "i", "ins", "kbd", "label", "mark", "nobr", "s", "samp", "small", "span", "strike", "strong", "sub",
    "sup", "time", "tt", "u", "var", "wbr", "img", "output", "meter", "progress", "ruby", "rt", "rp", "q",
})
_SILENT = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "select", "button",
                     "object", "embed", "canvas", "map", "input", "datalist", "dialog", "math", "head"})
_WS = re.compile(r"\s+")
_CODE_CLASS = re.compile(r"(?:^|[\s_-])(?:highlight|codehilite|sourcecode|code-block|listing)(?:$|[\s_-])")
#: Loose text (no <p>) of at least this many words is a paragraph; shorter loose text is "other".
LOOSE_PARAGRAPH_WORDS = 10


@dataclass
class Block:
    """One block of the main content: its kind, its text, and spans of inline code and links in it."""

    kind: str
    text: str
    code: list[tuple[int, int]] = field(default_factory=list)
    links: list[tuple[int, int, str | None]] = field(default_factory=list)  # start, end, absolute URL

    def as_row(self, canonical: Callable[[str], str | None] | None = None) -> dict[str, object]:
        """The block as a Parquet struct (link URLs through ``canonical`` when given)."""
        return {
            "kind": self.kind,
            "text": self.text,
            "code": [{"start": s, "end": e} for s, e in self.code],
            "links": [{"start": s, "end": e, "url": canonical(u) if canonical and u else u}
                      for s, e, u in self.links],
        }


class _Builder:
    """Text of the block being read, with whitespace collapsed and spans kept in step."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parts: list[str] = []
        self.length = 0
        self.ends_space = True
        self.code: list[tuple[int, int]] = []
        self.links: list[tuple[int, int, str | None]] = []

    def add(self, text: str | None, pre: bool = False) -> None:
        if not text:
            return
        if not pre:
            text = _WS.sub(" ", text)
            if self.ends_space and text.startswith(" "):
                text = text[1:]
            if not text:
                return
        self.parts.append(text)
        self.length += len(text)
        self.ends_space = text[-1].isspace()

    def block(self) -> Block | None:
        text = "".join(self.parts).rstrip()
        if not text.strip():
            return None
        n = len(text)

        def clip(start: int, end: int) -> tuple[int, int] | None:
            end = min(end, n)
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            return (start, end) if end > start else None

        code = [c for s, e in self.code if (c := clip(s, e))]
        links = [(c[0], c[1], u) for s, e, u in self.links if (c := clip(s, e))]
        kind = self.kind
        if kind == "loose":
            kind = "paragraph" if len(text.split()) >= LOOSE_PARAGRAPH_WORDS else "other"
        return Block(kind, text, code, links)


def _classes(el: etree._Element) -> str:
    return (el.get("class") or "").lower()


def _own_kind(el: etree._Element, inherited: str) -> str:
    """The element's block kind: code, headings and terms always show; inside a list item, quote,
    cell … other blocks take the enclosing kind ("<p>" inside "<li>" is list text)."""
    tag = el.tag
    kind = _TAG_KINDS.get(tag)
    if kind is None and (el.get("role") or "").lower() == "heading":
        kind = "heading"
    if kind is None and tag in ("div", "section") and _CODE_CLASS.search(_classes(el)):
        kind = "code"
    if kind in ("code", "heading", "term") and inherited != "code":
        return kind
    if inherited in _STICKY:
        return inherited
    return kind or inherited


def content_blocks(root: etree._Element, resolve: Callable[[str], str | None]) -> list[Block]:
    """The blocks under ``root`` in document order; ``resolve`` makes an href absolute (None: not a page)."""
    blocks: list[Block] = []
    stack: list[_Builder] = []

    def flush() -> None:
        if stack:
            done = stack[-1]
            block = done.block()
            if block is not None:
                blocks.append(block)
            stack[-1] = _Builder(done.kind)

    def visit(el: etree._Element, kind: str, pre: bool) -> None:
        tag = el.tag
        if not isinstance(tag, str) or tag in _SILENT:
            return
        if tag in _INLINE or tag == "br":
            builder = stack[-1]
            if tag == "br":
                builder.add("\n" if pre else " ", pre)
                return
            start = builder.length
            builder.add(el.text, pre)
            for child in el:
                visit(child, kind, pre)
                stack[-1].add(child.tail, pre)
            if stack[-1] is not builder:  # a block inside an inline element split it: no span
                return
            if tag in _INLINE_CODE:
                builder.code.append((start, builder.length))
            elif tag == "a" and el.get("href") is not None:
                href = el.get("href", "").strip()
                builder.links.append((start, builder.length, resolve(href) if href else None))
            elif tag == "img" and el.get("alt"):
                builder.add(f" {el.get('alt')} ")
            return
        flush()
        own = _own_kind(el, kind)
        stack.append(_Builder(own))
        inner_pre = pre or tag in ("pre", "textarea") or own == "code"
        stack[-1].add(el.text, inner_pre)
        for child in el:
            visit(child, own, inner_pre)
            stack[-1].add(child.tail, inner_pre)
        flush()
        stack.pop()

    stack.append(_Builder("loose"))
    visit(root, "loose", False)
    flush()
    return blocks


# --- page kinds --------------------------------------------------------------------------------

_LISTING_TYPES = frozenset({"collectionpage", "itemlist", "searchresultspage", "blog", "profilepage"})
_CONTENT_TYPES = frozenset({"article", "blogposting", "newsarticle", "techarticle", "howto", "recipe",
                            "report", "scholarlyarticle", "faqpage", "qapage", "product"})
_LISTING_BODY = frozenset({"archive", "category", "tag", "author", "date", "search", "search-results",
                           "search-no-results", "blog", "paged", "tax", "term", "post-type-archive"})
_CONTENT_BODY = frozenset({"single", "single-post", "singular", "page-template-default",
                           "post-template-default"})
#: Navigation: this share of the text (without code and headings) is link text, or this share of
#: the words stands in blocks that are mostly links (tables of contents), or link tables (indexes).
NAVIGATION_LINK_SHARE = 0.5
NAVIGATION_LINK_BLOCKS = 0.4
NAVIGATION_TABLE = (0.6, 0.3)  # share of words in table cells, share of link text
#: A page whose text is at least this share code blocks is a code listing.
CODE_SHARE = 0.8
#: Repeated excerpt blocks (an entry with a linked heading and a summary) that make a listing.
MIN_EXCERPTS = 3
#: Fewer words than this in the content and no other sign: "other" (a form, an error page).
MIN_CONTENT_WORDS = 30


@dataclass
class KindSignals:
    """What the page's markup says about its kind (kept for tests and the report)."""

    body_classes: frozenset[str] = frozenset()
    schema_types: frozenset[str] = frozenset()
    og_type: str = ""
    excerpts: int = 0
    link_share: float = 0.0  # share of the text (without code and headings) inside links
    link_block_share: float = 0.0  # share of the words in blocks that are mostly one or more links
    table_share: float = 0.0  # share of the words in table cells
    code_share: float = 0.0
    words: int = 0


#: An excerpt entry (a linked heading and its summary) has at most this many words.
EXCERPT_WORDS = 150


def _linked_heading(heading: etree._Element) -> bool:
    """A heading whose whole text is one link (an entry's title linking to the entry)."""
    link = next(heading.iter("a"), None)
    heading_text = " ".join("".join(heading.itertext()).split())
    if link is None or not heading_text:
        return False
    return " ".join("".join(link.itertext()).split()) == heading_text


def _words(element: etree._Element) -> int:
    return len("".join(element.itertext()).split())


def _flat_entries(parent: etree._Element, tag: str) -> int:
    """Entries laid out as siblings — a linked ``tag`` heading, then a short summary until the next
    one (``<h2><a>…</a></h2><p>…</p><h2>…``) — when they hold most of the words of ``parent``."""
    entries, entry_words, current = 0, 0, -1
    for child in parent:
        if not isinstance(child.tag, str):
            continue
        if child.tag == tag:
            if 0 <= current <= EXCERPT_WORDS:
                entries, entry_words = entries + 1, entry_words + current
            current = _words(child) if _linked_heading(child) else -1
        elif current >= 0:
            current += _words(child)
    if 0 <= current <= EXCERPT_WORDS:
        entries, entry_words = entries + 1, entry_words + current
    return entries if entry_words * 2 >= _words(parent) else 0


def _excerpt_count(content: etree._Element) -> int:
    """Most repeated sibling signature among short entries whose heading is a link: an archive's excerpts
    (each in its own element, or laid out as a run of sibling headings and summaries)."""
    signatures: Counter[tuple[object, str, str]] = Counter()
    runs: dict[tuple[object, str], int] = {}
    for heading in content.iter("h2", "h3", "h4"):
        if not _linked_heading(heading):
            continue
        entry = heading.getparent()
        while entry is not None and entry is not content and entry.tag not in ("article", "li", "div"):
            entry = entry.getparent()
        if (entry is None or entry is content or "section" in _classes(entry).split()
                or _words(entry) > EXCERPT_WORDS):
            # a document's own sections (Sphinx div.section) are not excerpts; a run of entries as
            # siblings of one parent is
            parent = heading.getparent()
            if parent is not None and (parent, heading.tag) not in runs:
                runs[(parent, heading.tag)] = _flat_entries(parent, heading.tag)
            continue
        parent = entry.getparent()
        classes = " ".join(sorted(t for t in _classes(entry).split() if not re.search(r"\d", t)))
        signatures[(parent, entry.tag, classes)] += 1
    return max([*signatures.values(), *runs.values()], default=0)


def kind_signals(root: etree._Element, content: etree._Element, blocks: Iterable[Block],
                 schema_types: Iterable[str], og_type: str) -> KindSignals:
    """Measure the signals ``page_kind`` decides from."""
    body = root.find("body")
    body_classes = frozenset(_classes(body).split()) if body is not None else frozenset()
    chars = Counter[str]()
    link_chars = code_chars = words = text_words = link_words = table_words = 0
    for b in blocks:
        n = len(b.text)
        chars[b.kind] += n
        count = len(b.text.split())
        words += count
        if b.kind == "code":
            code_chars += n
        elif b.kind != "heading":
            linked = sum(e - s for s, e, _ in b.links)
            link_chars += linked
            text_words += count
            if linked >= n / 2:
                link_words += count
            if b.kind == "table_cell":
                table_words += count
    total = sum(chars.values())
    linkable = total - chars["code"] - chars["heading"]
    return KindSignals(
        body_classes=body_classes,
        schema_types=frozenset(t.lower() for t in schema_types),
        og_type=og_type.lower(),
        excerpts=_excerpt_count(content),
        link_share=link_chars / linkable if linkable else 0.0,
        link_block_share=link_words / text_words if text_words else 0.0,
        table_share=table_words / text_words if text_words else 0.0,
        code_share=code_chars / total if total else 0.0,
        words=words,
    )


def page_kind(s: KindSignals) -> str:
    """content, listing, navigation, code or other, from the signals of one page."""
    says_content = bool(s.schema_types & _CONTENT_TYPES) or s.og_type == "article" or bool(
        s.body_classes & _CONTENT_BODY)
    says_listing = bool(s.schema_types & _LISTING_TYPES) or (
        bool(s.body_classes & _LISTING_BODY) and not s.body_classes & _CONTENT_BODY)
    if says_listing and not (says_content and s.excerpts < MIN_EXCERPTS):
        return "listing"
    if s.excerpts >= MIN_EXCERPTS and not says_content:
        return "listing"
    if s.code_share >= CODE_SHARE:
        return "code"
    link_table = s.table_share >= NAVIGATION_TABLE[0] and s.link_share >= NAVIGATION_TABLE[1]
    if s.words >= 20 and (s.link_share >= NAVIGATION_LINK_SHARE
                          or s.link_block_share >= NAVIGATION_LINK_BLOCKS or link_table):
        return "navigation"
    if s.words < MIN_CONTENT_WORDS:
        return "other"
    return "content"
