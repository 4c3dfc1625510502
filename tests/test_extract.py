"""Tables of cases for linkspider.extract."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkspider.extract import content_hash, extract_page, iso_date

FIXTURES = Path(__file__).parent / "fixtures" / "extract"
URL = "http://127.0.0.1:8000/blog/post.html"
ARTICLE = (
    "The quick brown fox jumps over the lazy dog. Internal links help readers find related pages. "
    "Every paragraph here is part of the article body and must survive extraction."
)


def page(body: str, head: str = "", html_attrs: str = 'lang="en"') -> str:
    return f"<!DOCTYPE html><html {html_attrs}><head>{head}</head><body>{body}</body></html>"


# --- boilerplate removal --------------------------------------------------------------

BOILERPLATE = [
    ("nav tag", "<nav><a href='/'>Home menu entry</a></nav><main><p>{a}</p></main>"),
    ("header tag", "<header><p>Site slogan here</p></header><main><p>{a}</p></main>"),
    ("footer tag", "<main><p>{a}</p></main><footer>Copyright Example Ltd</footer>"),
    ("aside tag", "<main><p>{a}</p></main><aside>Popular posts widget</aside>"),
    ("role navigation", "<div role='navigation'>Menu entry text</div><div><p>{a}</p></div>"),
    ("role banner", "<div role='banner'>Banner text words</div><div><p>{a}</p></div>"),
    ("role contentinfo", "<div><p>{a}</p></div><div role='contentinfo'>Contact address text</div>"),
    ("role complementary", "<div><p>{a}</p></div><div role='complementary'>Related widget text</div>"),
    ("class sidebar", "<div id='content'><p>{a}</p></div><div class='sidebar'>Sidebar text words</div>"),
    ("id footer", "<div><p>{a}</p></div><div id='footer'>Footer words here</div>"),
    ("class navbar", "<div class='navbar-content'>Navbar entry words</div><div><p>{a}</p></div>"),
    ("cookie banner", "<div id='cookie-notice'>We use cookies to improve</div><main><p>{a}</p></main>"),
    ("consent in main", "<main><p>{a}</p><div class='cc-consent-box'>Accept all cookies now</div></main>"),
    ("skip link", "<a class='skip-link' href='#main'>Skip to content</a><main><p>{a}</p></main>"),
    ("breadcrumb", "<div class='breadcrumbs'>Home › Blog › Post</div><div><p>{a}</p></div>"),
    ("aria breadcrumb", "<ol aria-label='Breadcrumb'><li>Crumb trail words</li></ol><div><p>{a}</p></div>"),
    ("sphinx sidebar", "<div class='body'><p>{a}</p></div><div class='sphinxsidebar'>Quick search box</div>"),
    ("sphinx related", "<div class='related'>Previous topic next</div><div class='body'><p>{a}</p></div>"),
    ("nav inside main", "<main><nav>Table of pages words</nav><p>{a}</p></main>"),
    ("script and style", "<main><script>var trackingCode = 1;</script><style>p{{}}</style><p>{a}</p></main>"),
    ("hidden", "<main><p>{a}</p><div hidden>Hidden dialog words</div></main>"),
    ("aria-hidden", "<main><p>{a}</p><div aria-hidden='true'>Decorative words</div></main>"),
    (
        "link-dense block without markup",
        "<div><a href='/a'>Alpha page</a> <a href='/b'>Beta page</a> <a href='/c'>Gamma page</a></div>"
        "<div><p>{a}</p><p>{a}</p></div>",
    ),
]
REMOVED_WORDS = {
    "nav tag": "Home menu entry", "header tag": "Site slogan", "footer tag": "Copyright",
    "aside tag": "Popular posts", "role navigation": "Menu entry", "role banner": "Banner text",
    "role contentinfo": "Contact address", "role complementary": "Related widget",
    "class sidebar": "Sidebar text", "id footer": "Footer words", "class navbar": "Navbar entry",
    "cookie banner": "cookies", "consent in main": "Accept all", "skip link": "Skip to",
    "breadcrumb": "Home ›", "aria breadcrumb": "Crumb trail", "sphinx sidebar": "Quick search",
    "sphinx related": "Previous topic", "nav inside main": "Table of pages",
    "script and style": "trackingCode",
    "hidden": "Hidden dialog", "aria-hidden": "Decorative", "link-dense block without markup": "Gamma page",
}


@pytest.mark.parametrize(("name", "body"), BOILERPLATE, ids=[b[0] for b in BOILERPLATE])
def test_boilerplate_removed(name: str, body: str) -> None:
    result = extract_page(page(body.format(a=ARTICLE)), URL)
    assert "Internal links help readers" in result.text
    assert REMOVED_WORDS[name] not in result.text


def test_article_header_is_kept_and_site_header_removed() -> None:
    html = page(
        "<header><p>Site slogan here</p></header>"
        f"<article><header><h1>Post title</h1><p>By Ann Writer</p></header><p>{ARTICLE}</p></article>"
    )
    result = extract_page(html, URL)
    assert "By Ann Writer" in result.text
    assert "Site slogan" not in result.text
    assert result.h1 == "Post title"


def test_aside_inside_article_is_kept_in_text() -> None:
    html = page(f"<article><p>{ARTICLE}</p><aside class='note'>A helpful footnote text</aside></article>")
    assert "helpful footnote" in extract_page(html, URL).text


def test_wrapper_named_like_a_sidebar_is_not_removed() -> None:
    paragraphs = "".join(f"<p>{ARTICLE} {i}</p>" for i in range(6))
    html = page(f"<div class='site has-sidebar'>{paragraphs}<div class='sidebar'>Widget words</div></div>")
    result = extract_page(html, URL)
    assert "Internal links help readers" in result.text
    assert "Widget words" not in result.text


def test_short_page_sidebar_with_paragraphs_is_removed() -> None:
    sidebar = "<div id='sidebar'><p>Previous topic</p><p>Next topic</p><p>Last update</p></div>"
    result = extract_page(page(f"<div><h1>Short</h1><p>{ARTICLE}</p></div>{sidebar}"), URL)
    assert "Internal links help readers" in result.text
    assert "Last update" not in result.text


def test_wrapper_holding_the_h1_is_not_removed() -> None:
    html = page(f"<div class='layout with-sidebar'><h1>Post title</h1><p>{ARTICLE}</p></div>")
    result = extract_page(html, URL)
    assert "Internal links help readers" in result.text


def test_toc_page_keeps_its_link_list() -> None:
    items = "".join(f"<li><a href='/p{i}.html'>Chapter number {i}</a></li>" for i in range(20))
    result = extract_page(page(f"<div><h1>Contents</h1><ul>{items}</ul></div>"), URL)
    assert "Chapter number 19" in result.text
    assert {link.position for link in result.links} == {"content"}


def test_blocks_are_lines_and_source_newlines_are_spaces() -> None:
    html = page(
        "<main><h2>First\nheading</h2><p>One sentence\nwrapped in the source.</p>"
        "<ul><li>item a</li><li>item b</li></ul><pre>line 1\nline 2</pre>"
        "<table><tr><td>cell 1</td><td>cell 2</td></tr></table>line<br>break</main>"
    )
    assert extract_page(html, URL).text.split("\n") == [
        "First heading", "One sentence wrapped in the source.", "item a", "item b", "line 1", "line 2",
        "cell 1 cell 2", "line", "break",
    ]


def test_word_count_and_headings() -> None:
    html = page(
        "<header><h2>Site heading</h2></header>"
        "<main><h1>Title<a class='headerlink' href='#t'>¶</a></h1><h2>Part one</h2><p>one two three</p>"
        "<h3>Detail<a class='headerlink' href='#d'>¶</a></h3><h4>Deeper</h4><h5>Five</h5><h6>Six</h6></main>"
    )
    result = extract_page(html, URL)
    assert result.headings == ["Part one", "Detail", "Deeper", "Five", "Six"]
    assert result.h1 == "Title"
    assert result.word_count == len(result.text.split()) == 10


# --- metadata ------------------------------------------------------------------------

META = [
    ("<title> A  title\n</title>", "title", "A title"),
    ("<meta name='description' content=' Short summary. '>", "meta_description", "Short summary."),
    ("<meta property='og:description' content='OG summary'>", "meta_description", "OG summary"),
    ("<link rel='canonical' href='/canonical/page/'>", "canonical", "http://127.0.0.1:8000/canonical/page/"),
    ("<link rel='Canonical' href='https://e.com/x#frag'>", "canonical", "https://e.com/x"),
    ("<link rel='alternate' href='/alt/'>", "canonical", None),
    ("<base href='http://cdn.example/root/'><link rel='canonical' href='p.html'>", "canonical",
     "http://cdn.example/root/p.html"),
]


@pytest.mark.parametrize(("head", "attr", "expected"), META)
def test_metadata(head: str, attr: str, expected: str | None) -> None:
    assert getattr(extract_page(page(f"<p>{ARTICLE}</p>", head), URL), attr) == expected


def test_h1_falls_back_to_the_first_h1_in_the_page() -> None:
    html = page(f"<header><h1>Site name</h1></header><main><p>{ARTICLE}</p></main>")
    assert extract_page(html, URL).h1 == "Site name"


JSON_LD = '<script type="application/ld+json">{}</script>'
DATES = [
    ("<meta property='article:published_time' content='2024-03-05T10:00:00+01:00'>", "", "published",
     "2024-03-05T10:00:00+01:00"),
    ("<meta property='article:modified_time' content='2024-04-01T08:30:00Z'>", "", "modified",
     "2024-04-01T08:30:00+00:00"),
    ("<meta property='og:updated_time' content='2024-04-02'>", "", "modified", "2024-04-02"),
    ("<meta name='date' content='2023-12-24'>", "", "published", "2023-12-24"),
    ("<meta name='DC.date' content='2022/01/31'>", "", "published", "2022-01-31"),
    ("<meta name='dcterms.modified' content='20220131'>", "", "modified", "2022-01-31"),
    (JSON_LD.format('{"@type": "Article", "datePublished": "2021-05-06", "dateModified": "2021-07-08"}'),
     "", "published", "2021-05-06"),
    (JSON_LD.format('{"@type": "Article", "datePublished": "2021-05-06", "dateModified": "2021-07-08"}'),
     "", "modified", "2021-07-08"),
    (JSON_LD.format('{"@graph": [{"@type": "WebSite"}, {"@type": "BlogPosting", "datePublished": '
                    '"2020-02-02T02:02:02Z"}]}'), "", "published", "2020-02-02T02:02:02+00:00"),
    (JSON_LD.format('[{"@type": "Thing"}, {"dateModified": "2020-03-03"}]'), "", "modified", "2020-03-03"),
    (JSON_LD.format("{not json"), "", "published", None),
    ("", "<main><time datetime='2019-09-09'>Sept 9</time></main>", "published", "2019-09-09"),
    ("", "<main><time>no attribute</time></main>", "published", None),
    ("<meta name='date' content='not a date'>", "", "published", None),
    ("<meta name='date' content='Tue, 05 Mar 2024 10:00:00 GMT'>", "", "published",
     "2024-03-05T10:00:00+00:00"),
    ("<meta name='date' content='2024-02-30'>", "", "published", None),
    # meta wins over JSON-LD, JSON-LD over <time>
    ("<meta name='date' content='2001-01-01'>" + JSON_LD.format('{"datePublished": "2002-02-02"}'),
     "<time datetime='2003-03-03'></time>", "published", "2001-01-01"),
    (JSON_LD.format('{"datePublished": "2002-02-02"}'), "<time datetime='2003-03-03'></time>", "published",
     "2002-02-02"),
]


@pytest.mark.parametrize(("head", "body", "attr", "expected"), DATES)
def test_dates(head: str, body: str, attr: str, expected: str | None) -> None:
    result = extract_page(page(body or f"<p>{ARTICLE}</p>", head), URL)
    assert getattr(result, attr) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-01-05", "2024-01-05"),
        ("2024-01", "2024-01-01"),
        ("2024-01-05 10:11", "2024-01-05T10:11:00"),
        ("2024-01-05T10:11:12.5Z", "2024-01-05T10:11:12.500000+00:00"),
        ("", None),
        (None, None),
        ("yesterday", None),
    ],
)
def test_iso_date(value: str | None, expected: str | None) -> None:
    assert iso_date(value) == expected


ROBOTS = [
    ("", False, False),
    ("<meta name='robots' content='noindex'>", True, False),
    ("<meta name='robots' content='nofollow'>", False, True),
    ("<meta name='ROBOTS' content='NOINDEX, NOFOLLOW'>", True, True),
    ("<meta name='robots' content='none'>", True, True),
    ("<meta name='robots' content='index, follow'>", False, False),
    ("<meta name='googlebot' content='noindex'>", True, False),
    ("<meta name='description' content='noindex nofollow'>", False, False),
    ("<meta name='robots' content='index, follow'><meta name='robots' content='noindex'>", True, False),
    ("<meta name='robots' content='max-snippet:-1, nofollow'>", False, True),
]


@pytest.mark.parametrize(("head", "noindex", "nofollow"), ROBOTS)
def test_robots_meta(head: str, noindex: bool, nofollow: bool) -> None:
    result = extract_page(page(f"<p>{ARTICLE}</p>", head), URL)
    assert (result.noindex, result.nofollow) == (noindex, nofollow)


FRENCH = (
    "Les liens internes aident les lecteurs à trouver les pages qui traitent du même sujet. "
    "Chaque paragraphe de cet article fait partie du contenu principal et doit être conservé."
)
LANG = [
    ('lang="en"', ARTICLE, "en"),
    ('lang="en-US"', ARTICLE, "en"),
    ('lang="FR_ca"', ARTICLE, "fr"),
    ('lang="zh-Hant"', ARTICLE, "zh"),
    ("", FRENCH, "fr"),
    ("", ARTICLE, "en"),
    ('lang=""', FRENCH, "fr"),
    ('lang="x-klingon"', FRENCH, "fr"),
    ("", "Bonjour tout le monde", None),  # too little text to tell
]


@pytest.mark.parametrize(("attrs", "text", "expected"), LANG)
def test_lang(attrs: str, text: str, expected: str | None) -> None:
    assert extract_page(page(f"<p>{text}</p>", html_attrs=attrs), URL).lang == expected


def test_language_detection_can_be_switched_off() -> None:
    assert extract_page(page(f"<p>{FRENCH}</p>", html_attrs=""), URL, detect_language=False).lang is None
    declared = page(f"<p>{FRENCH}</p>", html_attrs='lang="fr"')
    assert extract_page(declared, URL, detect_language=False).lang == "fr"


# --- links -----------------------------------------------------------------------------

POSITIONS = [
    ("<nav><a href='/x'>x</a></nav>", "nav"),
    ("<div role='navigation'><a href='/x'>x</a></div>", "nav"),
    ("<ul class='menu'><li><a href='/x'>x</a></li></ul>", "nav"),
    ("<div id='main-nav'><a href='/x'>x</a></div>", "nav"),
    ("<div class='breadcrumb'><a href='/x'>x</a></div>", "nav"),
    ("<div class='navbar-content'><a href='/x'>x</a></div>", "nav"),
    ("<header><a href='/x'>x</a></header>", "header"),
    ("<div role='banner'><a href='/x'>x</a></div>", "header"),
    ("<div id='header'><a href='/x'>x</a></div>", "header"),
    ("<header><nav><a href='/x'>x</a></nav></header>", "nav"),
    ("<footer><a href='/x'>x</a></footer>", "footer"),
    ("<div role='contentinfo'><a href='/x'>x</a></div>", "footer"),
    ("<div class='site-footer'><a href='/x'>x</a></div>", "footer"),
    ("<footer><nav><a href='/x'>x</a></nav></footer>", "footer"),
    ("<footer><div class='widget'><a href='/x'>x</a></div></footer>", "footer"),
    ("<aside><a href='/x'>x</a></aside>", "aside"),
    ("<div role='complementary'><a href='/x'>x</a></div>", "aside"),
    ("<div id='sidebar'><a href='/x'>x</a></div>", "aside"),
    ("<div class='sphinxsidebar' role='navigation'><a href='/x'>x</a></div>", "nav"),
    ("<div id='sidebar'><div class='sphinxsidebar' role='navigation'><a href='/x'>x</a></div></div>",
     "aside"),
    ("<main><p>Text <a href='/x'>x</a></p></main>", "content"),
    ("<article><p>Text <a href='/x'>x</a></p></article>", "content"),
    ("<div role='main'><a href='/x'>x</a></div>", "content"),
    ("<article><header><a href='/x'>x</a></header></article>", "content"),
    ("<article><div class='menu'><a href='/x'>x</a></div></article>", "content"),
    ("<main><nav><a href='/x'>x</a></nav></main>", "nav"),
    ("<div class='body'><p><a href='/x'>x</a></p></div>", "content"),
    ("<div id='cookie-banner'><a href='/x'>x</a></div>", "other"),
    ("<main><p>text</p></main><div><a href='/x'>x</a></div>", "other"),
    ("<div><p>Plain page, no markup, <a href='/x'>x</a></p></div>", "content"),
    ("<div id='content'><div class='sidebar'><a href='/x'>x</a></div></div>", "aside"),
    ("<div class='toc'><a href='/x'>x</a></div>", "nav"),
    ("<div class='navfooter'><a href='/x'>x</a></div>", "footer"),
    ("<div class='section' id='s-related-name'><p>See <a href='/x'>x</a></p></div>", "content"),
    ("<div class='viewcode-block' id='BoundField.as_widget'><a href='/x'>x</a></div>", "content"),
    ("<div id='prefetch_related_objects'><a href='/x'>x</a></div>", "content"),
    ("<div id='global-nav'><a href='/x'>x</a></div>", "nav"),
    ("<div class='viewcode-block' id='Widget'><a href='/x'>x</a></div>", "content"),
    ("<div class='widget'><a href='/x'>x</a></div>", "aside"),
]


@pytest.mark.parametrize(("body", "expected"), POSITIONS)
def test_link_position(body: str, expected: str) -> None:
    html = page(f"{body}<div><p>{ARTICLE}</p><p>{ARTICLE}</p><p>{ARTICLE}</p></div>")
    links = [link for link in extract_page(html, URL).links if link.url.endswith("/x")]
    assert [link.position for link in links] == [expected]


ANCHORS = [
    ("<a href='/x'>  Read\n the   guide </a>", "Read the guide"),
    ("<a href='/x'><img src='i.png' alt='Logo of Example'></a>", "Logo of Example"),
    ("<a href='/x'><img src='a.png' alt='One'><img src='b.png' alt='Two'></a>", "One Two"),
    ("<a href='/x' aria-label='Open settings'><svg></svg></a>", "Open settings"),
    ("<a href='/x' title='Title text'><img src='i.png'></a>", "Title text"),
    ("<a href='/x'><img src='i.png'></a>", ""),
    ("<a href='/x'>Text wins <img src='i.png' alt='alt'></a>", "Text wins"),
]


@pytest.mark.parametrize(("anchor", "expected"), ANCHORS)
def test_anchor_text(anchor: str, expected: str) -> None:
    [link] = extract_page(page(f"<main>{anchor}</main>"), URL).links
    assert link.anchor_text == expected


HREFS = [
    ("other.html", "http://127.0.0.1:8000/blog/other.html"),
    ("../about/", "http://127.0.0.1:8000/about/"),
    ("/root.html", "http://127.0.0.1:8000/root.html"),
    ("//cdn.example/x", "http://cdn.example/x"),
    ("https://else.example/p?q=1", "https://else.example/p?q=1"),
    ("?page=2", "http://127.0.0.1:8000/blog/post.html?page=2"),
    ("other.html#part", "http://127.0.0.1:8000/blog/other.html"),
    ("  spaced.html ", "http://127.0.0.1:8000/blog/spaced.html"),
    ("#", None),
    ("#section", None),
    ("", None),
    ("javascript:void(0)", None),
    ("JavaScript:go()", None),
    ("mailto:a@example.com", None),
    ("tel:+331234", None),
    ("data:text/html,hi", None),
    ("ftp://files.example/x", None),
]


@pytest.mark.parametrize(("href", "expected"), HREFS)
def test_link_urls(href: str, expected: str | None) -> None:
    links = extract_page(page(f"<main><a href='{href}'>link</a></main>"), URL).links
    assert [link.url for link in links] == ([expected] if expected else [])


def test_anchor_without_href_is_not_a_link() -> None:
    assert extract_page(page("<main><a name='x'>anchor</a></main>"), URL).links == []


def test_base_href() -> None:
    head = "<base href='/docs/v2/'>"
    links = extract_page(page("<main><a href='intro.html'>i</a></main>", head), URL).links
    assert [link.url for link in links] == ["http://127.0.0.1:8000/docs/v2/intro.html"]


@pytest.mark.parametrize(
    ("rel", "expected"), [("nofollow", True), ("NoFollow noopener", True), ("noopener", False), (None, False)]
)
def test_link_nofollow(rel: str | None, expected: bool) -> None:
    attr = f" rel='{rel}'" if rel else ""
    [link] = extract_page(page(f"<main><a href='/x'{attr}>x</a></main>"), URL).links
    assert link.nofollow is expected


# --- input forms -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "html",
    ["", "   ", b"", "<p>fragment only</p>", "not html at all", b"\x00\x01\x02",
     "<html><body></body></html>"],
)
def test_odd_input_does_not_crash(html: str | bytes) -> None:
    result = extract_page(html, URL)
    assert isinstance(result.text, str)
    assert result.word_count == len(result.text.split())


def test_bytes_follow_the_declared_charset() -> None:
    html = page("<main><p>Café crème</p></main>", "<meta charset='iso-8859-1'>").encode("iso-8859-1")
    assert "Café crème" in extract_page(html, URL).text


def test_str_input_ignores_a_wrong_declared_charset() -> None:
    html = page("<main><p>Café crème</p></main>", "<meta charset='iso-8859-1'>")
    assert "Café crème" in extract_page(html, URL).text


# --- content hash ------------------------------------------------------------------------


def test_content_hash() -> None:
    assert content_hash("Some text") == content_hash("  some\n text ")
    assert content_hash("Some text") != content_hash("Other text")
    assert len(content_hash("")) == 40


# --- real Sphinx pages (Django docs, trimmed copies in tests/fixtures/extract) -------------


@pytest.mark.parametrize(
    ("name", "url", "content_anchor", "h1"),
    [
        ("django-faq-help.html", "http://127.0.0.1:8000/faq/help.html", "Django Code of Conduct",
         "FAQ: Getting Help"),
        ("django-wsgi-index.html", "http://127.0.0.1:8000/howto/deployment/wsgi/index.html",
         "How to use Django with Gunicorn", "How to deploy with WSGI"),
    ],
)
def test_django_docs_page(name: str, url: str, content_anchor: str, h1: str) -> None:
    result = extract_page((FIXTURES / name).read_bytes(), url)
    assert result.h1 == h1
    assert result.lang == "en"
    assert result.title.startswith(h1)
    positions = {(link.anchor_text, link.position) for link in result.links}
    assert ("Django 3.2.25 documentation", "header") in positions  # site title in div#hd
    assert ("Table of contents", "nav") in positions  # div#global-nav
    assert ("Table of Contents", "aside") in positions  # div#sidebar > div.sphinxsidebar
    assert ("next", "nav") in positions and ("next", "footer") in positions  # div.nav in #hd and #ft
    assert (content_anchor, "content") in positions
    for boilerplate in ("Quick search", "Last update", "Previous topic", "Next topic", "Table of contents",
                        "Django 3.2.25 documentation", "« previous"):
        assert boilerplate not in result.text
    assert result.text.startswith(h1 + "\n")
    assert result.word_count > 300
