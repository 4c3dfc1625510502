"""Main text, metadata and link positions of an HTML page: pure functions of HTML.

One lxml parse per page. Landmarks (nav, header, footer, aside) are found from
tags, ARIA roles and — outside the page's explicit content — class and id
names; each link takes the position of its nearest landmark. The main text is
the content region (``<main>``, ``role=main``, a single ``<article>``, a known
content container, else the body) with landmarks, cookie banners, skip links
and — when no content container is marked — link-dense blocks removed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin, urlsplit

from lxml import etree

from linkspider.blocks import Block, content_blocks, kind_signals, page_kind
from linkspider.urls import remove_dot_segments


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
    blocks: list[Block] = field(default_factory=list)  # the main content, block by block
    kind: str = "content"  # content | listing | navigation | code | other (linkspider.blocks)


# --- landmarks ------------------------------------------------------------------

_TAG_LANDMARKS = {"nav": "nav", "aside": "aside", "header": "header", "footer": "footer"}
_ROLE_LANDMARKS = {
    "navigation": "nav",
    "menu": "nav",
    "menubar": "nav",
    "banner": "header",
    "contentinfo": "footer",
    "complementary": "aside",
}
#: Class/id names (joined tokens) that mark the page's main content.
_CONTENT_NAMES = frozenset(
    {
        "content", "main", "main content", "maincontent", "page content", "site content", "entry content",
        "post content", "article content", "article body", "post body", "entry body", "body",
        "yui main", "docs content", "documentwrapper", "bodywrapper",
    }
)
_HEADER_NAMES = frozenset(
    {"header", "hd", "masthead", "topbar", "site header", "global header", "main header", "top header",
     "page header top", "siteheader"}
)
_REMOVED_SUBSTRINGS = ("cookie", "consent", "gdpr", "onetrust", "skip link", "skiplink", "skip to")
_TOKEN_SPLIT = re.compile(r"[^a-z0-9]+")
#: Containers whose link density is judged when the page marks no content region.
_DENSITY_BLOCKS = frozenset({"ul", "ol", "dl", "div", "table", "section", "p", "center", "form"})
#: Elements that can be a landmark or the content container (inline elements never are).
_CONTAINER_TAGS = ("div", "section", "ul", "ol", "dl", "table", "td", "form", "nav", "aside", "header",
                   "footer", "main", "article", "center")
_NOISE_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "select", "button", "textarea",
               "object", "embed", "canvas", "map", "input", "datalist", "dialog")
_BLOCK_TAGS = (
    "p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd", "pre", "blockquote",
    "table", "tr", "caption", "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "figure",
    "figcaption", "header", "footer", "nav", "aside", "address", "details", "summary", "form", "fieldset",
    "legend", "center", "option",
)
_WS = re.compile(r"\s+")
_SKIPPED_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "sms:", "callto:", "file:", "ftp:")


def _class_landmark(names: list[str], label: str) -> str | None:
    """'nav', 'header', 'footer', 'aside' or 'removed' from class and id names and aria-label."""
    if "breadcrumb" in label:
        return "nav"
    if not names:
        return None
    words = [" ".join(t for t in _TOKEN_SPLIT.split(name) if t) for name in names]
    joined = " ".join(words)
    if any(s in joined for s in _REMOVED_SUBSTRINGS):
        return "removed"
    tokens = joined.split()
    if any(t.startswith("sidebar") or t.endswith("sidebar") or t in ("widget", "widgets", "aside")
           for t in tokens):
        return "aside"
    if any(t.startswith("footer") or t.endswith("footer") or t in ("ft", "colophon", "copyright")
           for t in tokens):
        return "footer"
    if any(w in _HEADER_NAMES for w in words):
        return "header"
    if any(
        t.startswith(("nav", "menu")) or t.endswith("nav") or "breadcrumb" in t
        or t in ("related", "pagination", "pager", "crumbs", "toolbar", "toc")
        for t in tokens
    ):
        return "nav"
    return None


def _landmark_id(el: etree._Element) -> str | None:
    """The id, unless it looks made from a heading or a code name (Sphinx sections, viewcode blocks).

    Landmark ids are short ("sidebar", "global-nav", "site-header"); "s-related-fields" or
    "ModelAdmin.save_related" are not landmarks.
    """
    id_ = el.get("id")
    if not id_ or el.tag == "section" or "." in id_ or "section" in (el.get("class") or "").split():
        return None
    return id_ if len(_TOKEN_SPLIT.split(id_.lower())) <= 2 else None


_LABEL_CACHE: dict[tuple[str | None, str | None, str | None], str | None] = {}


def _class_label(key: tuple[str | None, str | None, str | None]) -> str | None:
    """Landmark label, 'content', 'removed' or None for a (class, id, aria-label) triple; cached."""
    try:
        return _LABEL_CACHE[key]
    except KeyError:
        pass
    cls, id_, label = key
    if id_ and {"widget", "widgets"} & set(_TOKEN_SPLIT.split(id_.lower())):
        id_ = None  # "widget" is a sidebar's class name, but an id "Widget" is a code name
    names = f"{cls or ''} {id_ or ''}".lower().split()
    if any(" ".join(t for t in _TOKEN_SPLIT.split(n) if t) in _CONTENT_NAMES for n in names):
        result: str | None = "content"
    else:
        result = _class_landmark(names, (label or "").lower())
    if len(_LABEL_CACHE) > 50_000:
        _LABEL_CACHE.clear()
    _LABEL_CACHE[key] = result
    return result


class _Layout:
    """Landmarks, the content region and link-dense blocks of one parsed page."""

    def __init__(self, root: etree._Element) -> None:
        self.root = root
        body = root.find("body")
        self.body = body if body is not None else root
        self.landmarks: dict[etree._Element, str] = {}
        self.explicit: set[etree._Element] = set()  # main, article, role=main
        self.containers: set[etree._Element] = set()  # named content containers (#content, div.body …)
        candidates = []
        for el in root.iter(*_CONTAINER_TAGS):
            tag = el.tag
            if tag in ("main", "article"):
                self.explicit.add(el)
            elif tag in _TAG_LANDMARKS:
                self.landmarks[el] = _TAG_LANDMARKS[tag]
            role = el.get("role")
            if role:
                role = role.strip().lower()
                if role in ("main", "article"):
                    self.explicit.add(el)
                elif role in _ROLE_LANDMARKS:
                    self.landmarks[el] = _ROLE_LANDMARKS[role]
            if el in self.explicit:
                continue
            key = (el.get("class"), _landmark_id(el), el.get("aria-label"))
            if key == (None, None, None):
                continue
            label = _class_label(key)
            if label == "content":
                if el not in self.landmarks:
                    self.containers.add(el)
            elif label is not None and (label == "removed" or el not in self.landmarks):
                candidates.append((el, label))
        total_p = sum(1 for _ in root.iter("p")) if candidates else 0
        for el, label in candidates:
            if label != "removed" and self._is_wrapper(el, label, total_p):
                continue
            if label != "removed" and self._inside_explicit(el):
                continue
            self.landmarks[el] = label
        # a <header> inside an article or main is the article's own heading
        for el in [e for e, lab in self.landmarks.items() if e.tag == "header" and lab == "header"]:
            if el.get("role") is None and self._inside_explicit(el, strict=True):
                del self.landmarks[el]
        self.content = self._content_root()
        self.pruned: set[etree._Element] = set()
        if self.content is self.body:
            self._prune(self.body, self._text_len(self.body))

    def _is_wrapper(self, el: etree._Element, label: str, total_p: int) -> bool:
        """True for a page wrapper whose class only mentions a landmark ("has-sidebar", "nav-open")."""
        if any(_within(x, el) for x in self.explicit):
            return True
        if label != "header" and next(el.iter("h1"), None) is not None:
            return True
        return sum(1 for _ in el.iter("p")) > max(4, total_p / 2)

    def _inside_explicit(self, el: etree._Element, strict: bool = False) -> bool:
        for anc in el.iterancestors():
            if anc in self.explicit and (not strict or anc.tag in ("main", "article") or anc.get("role")):
                return True
        return False

    def _content_root(self) -> etree._Element:
        """The element the main text comes from."""
        mains = [e for e in self.explicit if e.tag == "main" or (e.get("role") or "").lower() == "main"]
        articles = [e for e in self.explicit if e.tag == "article"]
        others = list(self.explicit)
        if len(articles) > 1:
            others = [e for e in others if e.tag != "article"]
        for group in (mains, articles if len(articles) == 1 else [], others, list(self.containers)):
            if len(group) == 1 and _has_text(group[0]):
                return group[0]
            best = max(group, key=self._text_len, default=None)
            if best is not None and self._text_len(best) > 0:
                return best
        return self.body

    @staticmethod
    def _text_len(el: etree._Element) -> int:
        return int(el.xpath("string-length(normalize-space(.))"))

    def _prune(self, el: etree._Element, total: int) -> None:
        """Mark link-dense blocks (menus without markup) under ``el``.

        Each link votes for its nearest block container (list, table, div …); a
        container with three or more links, mostly link text and less than half
        of the page's text is boilerplate. One pass over the links, not the tree.
        """
        votes: dict[etree._Element, list[etree._Element]] = {}
        for a in el.iter("a"):
            if a.get("href") is None:
                continue
            node = a.getparent()
            while node is not None and node is not el and node.tag not in _DENSITY_BLOCKS:
                node = node.getparent()
            if node is None or node is el or node in self.landmarks:
                continue
            votes.setdefault(node, []).append(a)
        for block, links in votes.items():
            if len(links) < 3:
                continue
            text_len = self._text_len(block)
            if text_len == 0 or text_len >= total / 2:
                continue
            link_len = sum(len(" ".join(_text(a).split())) for a in links)
            if link_len / text_len >= 0.6:
                self.pruned.add(block)

    def position(self, el: etree._Element, cache: dict[etree._Element, str]) -> str:
        """Where ``el`` stands: its nearest landmark; footers and sidebars absorb the navs in them.

        A named content container (``#content``, ``div.body``) only makes 'content' of what
        no landmark holds.
        """
        path = []
        found = "other"
        node: etree._Element | None = el
        while node is not None:
            if node in cache:
                found = cache[node]
                break
            label = self.landmarks.get(node)
            if label is None and node in self.pruned:
                label = "other"
            if label is None and node in self.explicit:
                label = "content"
            if label in ("nav", "header", "aside"):
                outer = self._outer_region(node)
                if outer == "footer" or (outer == "aside" and label == "nav"):
                    label = outer
            if label is not None:
                found = "other" if label == "removed" else label
                cache[node] = found
                break
            path.append(node)
            node = node.getparent()
        for n in reversed(path):
            if found == "other" and (n is self.content or n in self.containers):
                found = "content"
            cache[n] = found
        return found

    def _outer_region(self, el: etree._Element) -> str | None:
        for anc in el.iterancestors():
            if anc is self.content:
                return None
            label = self.landmarks.get(anc)
            if label in ("footer", "aside"):
                return label
        return None


# --- metadata -------------------------------------------------------------------


def _clean(text: str | None) -> str:
    return _WS.sub(" ", text or "").strip()


def _meta(root: etree._Element) -> dict[str, str]:
    """First non-empty content of each <meta name|property|itemprop> (lower-case keys)."""
    found: dict[str, str] = {}
    for el in root.iter("meta"):
        content = el.get("content")
        if content is None or not content.strip():
            continue
        for attr in ("name", "property", "itemprop", "http-equiv"):
            key = el.get(attr)
            if key:
                found.setdefault(key.strip().lower(), content.strip())
    return found


def _robots_directives(root: etree._Element) -> set[str]:
    """Directives of every robots (and googlebot) meta tag, lower-case."""
    directives: set[str] = set()
    for el in root.iter("meta"):
        if (el.get("name") or "").strip().lower() in ("robots", "googlebot"):
            directives.update(d.strip() for d in (el.get("content") or "").lower().split(","))
    return directives


def iso_date(value: str | None) -> str | None:
    """An ISO 8601 date or datetime from common date spellings, else None."""
    if not value:
        return None
    value = value.strip()
    candidates = [value, value.replace("Z", "+00:00").replace("z", "+00:00")]
    if re.fullmatch(r"\d{4}/\d{2}/\d{2}", value):
        candidates.append(value.replace("/", "-"))
    if re.fullmatch(r"\d{8}", value):
        candidates.insert(0, f"{value[:4]}-{value[4:6]}-{value[6:]}")
    if re.fullmatch(r"\d{4}-\d{2}", value):
        candidates.append(value + "-01")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?", value):
        candidates.append(value.replace(" ", "T"))
    for candidate in candidates:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", candidate):
            try:
                return datetime.strptime(candidate, "%Y-%m-%d").date().isoformat()
            except ValueError:
                return None
        try:
            return datetime.fromisoformat(candidate).isoformat()
        except ValueError:
            pass
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError):
        return None


def _json_ld_nodes(root: etree._Element) -> list[dict]:
    """Every JSON-LD object of the page, top-level and in @graph / mainEntity, in order."""
    nodes: list[dict] = []
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json" or not script.text:
            continue
        try:
            data = json.loads(script.text)
        except ValueError:
            continue
        stack = [data]
        while stack:
            node = stack.pop(0)
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict):
                nodes.append(node)
                for key in ("@graph", "mainEntity", "mainEntityOfPage"):
                    if isinstance(node.get(key), (list, dict)):
                        stack.append(node[key])
    return nodes


def _json_ld_types(nodes: list[dict]) -> list[str]:
    types: list[str] = []
    for node in nodes:
        value = node.get("@type")
        types.extend(t for t in (value if isinstance(value, list) else [value]) if isinstance(t, str))
    return types


def _json_ld_dates(nodes: list[dict]) -> tuple[str | None, str | None]:
    published = modified = None
    for node in nodes:
        published = published or iso_date(_str(node.get("datePublished")))
        modified = modified or iso_date(_str(node.get("dateModified")))
    return published, modified


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


_PUBLISHED_META = ("article:published_time", "datepublished", "date", "dc.date", "dc.date.issued",
                   "dcterms.date", "dcterms.created", "dcterms.issued", "publish_date", "pubdate")
_MODIFIED_META = ("article:modified_time", "og:updated_time", "datemodified", "dcterms.modified",
                  "dc.date.modified", "last-modified", "revised")


def _dates(
    root: etree._Element, meta: dict[str, str], content: etree._Element, ld_nodes: list[dict]
) -> tuple[str | None, str | None]:
    published = next((d for k in _PUBLISHED_META if (d := iso_date(meta.get(k)))), None)
    modified = next((d for k in _MODIFIED_META if (d := iso_date(meta.get(k)))), None)
    if published is None or modified is None:
        ld_published, ld_modified = _json_ld_dates(ld_nodes)
        published = published or ld_published
        modified = modified or ld_modified
    if published is None:
        for scope in (content, root):
            published = next((d for t in scope.iter("time") if (d := iso_date(t.get("datetime")))), None)
            if published:
                break
    return published, modified


def _lang(root: etree._Element, text: str) -> str | None:
    raw = (root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang") or "").strip()
    primary = raw.replace("_", "-").split("-")[0].lower()
    if len(primary) == 2 and primary.isalpha():
        return primary
    return detect_lang(text)


_MIN_WORDS_FOR_DETECTION = 15
_DETECTION_CHARS = 600  # py3langid's cost grows with the text; 600 characters tell a language well


def detect_lang(text: str) -> str | None:
    """ISO 639-1 code of ``text`` by py3langid, or None when the text is too short to tell."""
    if len(text.split()) < _MIN_WORDS_FOR_DETECTION:
        return None
    import py3langid  # loads its model on first use (about a second)

    return py3langid.classify(text[:_DETECTION_CHARS])[0]


# --- text -------------------------------------------------------------------------


def _heading_text(el: etree._Element) -> str:
    return _clean(_text(el)).rstrip("¶#").strip()


def _main_text(layout: _Layout, may_hide: bool = True) -> tuple[str, list[str], str]:
    """Main text, h2–h6 headings and the content's h1; drops boilerplate from the tree."""
    root = layout.content
    explicit_root = layout.content is not layout.body
    for el, label in list(layout.landmarks.items()):
        # notes and footnotes marked <aside> inside the content are part of the text
        if explicit_root and label == "aside" and el.tag == "aside":
            continue
        if _within(el, root):
            _drop(el)
    for el in layout.pruned:
        _drop(el)
    if may_hide:  # the XPath scans are skipped on pages whose source never says "hidden"
        hidden = _HIDDEN_XPATH(root) + [
            el for el in _ARIA_HIDDEN_XPATH(root) if el.get("aria-hidden", "").strip().lower() == "true"
        ]
        for el in hidden:
            _drop(el)
    for el in [a for a in root.iter("a") if "headerlink" in (a.get("class") or "")]:  # Sphinx "¶"
        _drop(el)
    h1 = next((t for el in root.iter("h1") if (t := _heading_text(el))), "")
    headings = [t for el in root.iter("h2", "h3", "h4", "h5", "h6") if (t := _heading_text(el))]
    lines = (" ".join(block.split()) for block in str(_TEXT_XSLT(root)).split(_BREAK))
    return "\n".join(line for line in lines if line), headings, h1


_BREAK = "\ue000"  # block boundary while the text is built (source newlines are only spaces)
_BLOCK_MATCH = "|".join(_BLOCK_TAGS)
_SILENT_MATCH = "|".join(_NOISE_TAGS)  # names only: a predicate would be tested on every element
_HIDDEN_XPATH = etree.XPath("descendant::*[@hidden]")
_ARIA_HIDDEN_XPATH = etree.XPath("descendant::*[@aria-hidden]")
#: Text of an element: block elements on their own lines, table cells spaced, code lines kept,
#: scripts, styles, form controls and hidden elements silent. XSLT runs in C: several times
#: faster than walking the tree from Python.
_TEXT_XSLT = etree.XSLT(
    etree.XML(
        f"""<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="utf-8"/>
  <xsl:template match="{_SILENT_MATCH}" priority="3"/>
  <xsl:template match="{_BLOCK_MATCH}" priority="2">&#xE000;<xsl:apply-templates/>&#xE000;</xsl:template>
  <xsl:template match="td|th" priority="2"><xsl:apply-templates/><xsl:text> </xsl:text></xsl:template>
  <xsl:template match="pre//text()" priority="2"><xsl:value-of select="translate(., '&#10;', '&#xE000;')"/>
  </xsl:template>
</xsl:stylesheet>"""
    )
)


def _has_text(el: etree._Element) -> bool:
    return any(t.strip() for t in el.itertext())


def _text(el: etree._Element) -> str:
    """All text under ``el`` (comments are removed at parse time)."""
    return "".join(el.itertext())


def _within(el: etree._Element, root: etree._Element) -> bool:
    if el is root:
        return False
    return any(anc is root for anc in el.iterancestors())


def _drop(el: etree._Element) -> None:
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


# --- links ------------------------------------------------------------------------


def _anchor_text(a: etree._Element) -> str:
    text = _clean(_text(a))
    if text:
        return text
    alts = " ".join(_clean(img.get("alt")) for img in a.iter("img") if img.get("alt"))
    return _clean(alts) or _clean(a.get("aria-label")) or _clean(a.get("title"))


class _Resolver:
    """urljoin for the hrefs of one page, faster for the common cases and cached."""

    _SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

    def __init__(self, base: str) -> None:
        self.base = base
        parts = urlsplit(base)
        self.simple = parts.scheme in ("http", "https") and bool(parts.netloc)
        self.scheme = parts.scheme
        self.origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path or "/"
        self.path = path
        self.directory = self.origin + path[: path.rfind("/") + 1]
        self.cache: dict[str, str | None] = {}

    def __call__(self, href: str) -> str | None:
        """Absolute http(s) URL of ``href`` without its fragment, or None."""
        try:
            return self.cache[href]
        except KeyError:
            pass
        url = self._join(href)
        if url is not None:
            url = url.partition("#")[0]
            if not url.lower().startswith(("http://", "https://")):
                url = None
        self.cache[href] = url
        return url

    def _join(self, href: str) -> str | None:
        if not self.simple or self._SCHEME.match(href) or "\\" in href:
            try:
                return urljoin(self.base, href)
            except ValueError:
                return None
        if href.startswith("//"):
            return f"{self.scheme}:{href}"
        if href.startswith("?"):
            return self.origin + self.path + href
        joined = self.origin + href if href.startswith("/") else self.directory + href
        if "/." in joined:
            head, sep, tail = joined.partition("?")
            rest = head[len(self.origin):] or "/"
            joined = self.origin + remove_dot_segments(rest) + sep + tail
        return joined


def _links(layout: _Layout, base: str) -> list[OutLink]:
    links = []
    cache: dict[etree._Element, str] = {}
    resolve = _Resolver(base)
    for a in layout.root.iter("a"):
        href = a.get("href")
        if href is None:
            continue
        href = href.strip()
        if not href or href.startswith("#") or href.lower().startswith(_SKIPPED_SCHEMES):
            continue
        url = resolve(href)
        if url is None:
            continue
        rel = a.get("rel")
        nofollow = rel is not None and "nofollow" in rel.lower().split()
        links.append(OutLink(url, _anchor_text(a), layout.position(a, cache), nofollow))
    return links


# --- the page ---------------------------------------------------------------------


def parse_html(html: str | bytes) -> etree._Element:
    """The lxml document of ``html`` (an empty <html> for empty or unparsable input).

    Plain lxml elements (not lxml.html's): building lxml.html's element classes
    costs more than the rest of the extraction on large pages.
    """
    if isinstance(html, str):
        html, parser = html.encode("utf-8"), _UTF8_PARSER
    else:
        parser = _PARSER
    root = None
    if html and not html.isspace():
        try:
            root = etree.fromstring(html, parser)
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            root = None
    if root is None or not isinstance(root.tag, str):
        root = etree.fromstring(b"<html><body></body></html>", _PARSER)
    return root


_PARSER = etree.HTMLParser(remove_comments=True, remove_pis=True)
_UTF8_PARSER = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)


def extract_page(html: str | bytes, url: str, detect_language: bool = True) -> PageContent:
    """Parse one HTML page fetched from ``url``.

    ``detect_language=False`` skips py3langid on pages without a ``lang`` attribute
    (about 1 ms a page, the largest single cost on small pages); ``lang`` is then None.
    """
    root = parse_html(html)
    page = PageContent()
    page.title = _clean(root.findtext(".//title"))
    meta = _meta(root)
    page.meta_description = _clean(meta.get("description") or meta.get("og:description"))
    directives = _robots_directives(root)
    page.noindex = bool(directives & {"noindex", "none"})
    page.nofollow = bool(directives & {"nofollow", "none"})

    base_el = root.find(".//base[@href]")
    base = url
    if base_el is not None and base_el.get("href", "").strip():
        base = urljoin(url, base_el.get("href").strip())
    for link in root.iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split() and (link.get("href") or "").strip():
            page.canonical = urljoin(base, link.get("href").strip()).partition("#")[0]
            break

    layout = _Layout(root)
    page.links = _links(layout, base)
    ld_nodes = _json_ld_nodes(root)
    page.published, page.modified = _dates(root, meta, layout.content, ld_nodes)
    may_hide = b"hidden" in html if isinstance(html, bytes) else "hidden" in html
    page.text, page.headings, page.h1 = _main_text(layout, may_hide)
    page.blocks = content_blocks(layout.content, _Resolver(base))
    page.kind = page_kind(kind_signals(root, layout.content, page.blocks, _json_ld_types(ld_nodes),
                                       meta.get("og:type", "")))
    if not page.h1:
        page.h1 = next((t for el in root.iter("h1") if (t := _heading_text(el))), "")
    page.word_count = len(page.text.split())
    page.lang = _lang(root, page.text if detect_language else "")
    return page


def content_hash(text: str) -> str:
    """Stable hash of the main text (sha1 hex), blind to whitespace and case changes."""
    return hashlib.sha1(_clean(text).lower().encode("utf-8")).hexdigest()

