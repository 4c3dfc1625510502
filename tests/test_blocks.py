"""Content blocks and page kinds from real page markup (Sphinx, a WordPress theme, a news article)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from lxml import etree

from linkspider.blocks import KindSignals, content_blocks, page_kind
from linkspider.extract import extract_page

FIXTURES = Path(__file__).parent / "fixtures" / "extract"
BLOG = Path(__file__).resolve().parents[1] / "benchmarks" / "blogsite" / "build.py"


def page(name: str, url: str = "https://docs.test/page.html"):
    return extract_page((FIXTURES / name).read_bytes(), url)


def blocks_of(html: str):
    root = etree.fromstring(html, etree.HTMLParser())
    return content_blocks(root.find("body"), lambda href: "https://site.test" + href)


def test_sphinx_reference_page_blocks():
    p = page("django-ref-contrib-sites.html", "https://docs.test/ref/contrib/sites.html")
    kinds = Counter(b.kind for b in p.blocks)
    assert kinds["heading"] >= 10 and kinds["code"] >= 10 and kinds["paragraph"] >= 40
    assert p.blocks[0].kind == "heading" and p.blocks[0].text == "The “sites” framework"
    assert any(b.kind == "code" and b.text.startswith("from django.contrib.sites.models import Site\n")
               for b in p.blocks)
    site_id = next(b for b in p.blocks if b.text.startswith("The SITE_ID setting"))
    assert site_id.kind == "paragraph"
    assert [site_id.text[s:e] for s, e in site_id.code][:2] == ["SITE_ID", "Site"]
    first_link = [(site_id.text[s:e], u) for s, e, u in site_id.links][0]
    assert first_link == ("SITE_ID", "https://docs.test/ref/settings.html")
    term = next(b for b in p.blocks if b.text == "domain")
    assert term.kind == "term"  # an attribute name in a definition list, inside another definition
    assert any(b.kind == "definition" and b.text.startswith("The fully qualified domain name")
               for b in p.blocks)
    assert p.kind == "content"


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [
        ("django-ref-contrib-sites.html", "content"),
        ("django-faq-help.html", "content"),
        ("django-modules-context-processors.html", "code"),  # Sphinx _modules/: generated source listing
        ("django-topics-http-index.html", "navigation"),  # a table of contents
        ("news-article.html", "content"),
    ],
)
def test_page_kinds_of_real_pages(fixture, kind):
    assert page(fixture).kind == kind


def test_news_article_blocks():
    p = page("news-article.html", "https://news.test/2026/05/cycle-lanes/")
    by_text = {b.text: b for b in p.blocks}
    assert by_text["The first protected lane opened on Mill Street in March."].kind == "caption"
    quote = "We expect the first lanes to open before the schools return in September."
    assert by_text[quote].kind == "quote"
    assert by_text["What changes for drivers"].kind == "heading"
    assert by_text["Two junctions get new traffic lights."].kind == "list_item"
    assert by_text["Mill Street"].kind == "table_cell"
    vote = next(b for b in p.blocks if b.text.startswith("The council voted"))
    assert [(vote.text[s:e], u) for s, e, u in vote.links] == [
        ("public consultation", "https://news.test/news/2025/consultation-results/")]
    work = next(b for b in p.blocks if b.text.startswith("Work starts"))
    assert [work.text[s:e] for s, e in work.code] == ["A-road"]
    assert not any("Gazette" in b.text or "About us" in b.text for b in p.blocks)  # header and footer


@pytest.fixture(scope="module")
def blog(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("blog") / "site"
    subprocess.run([sys.executable, str(BLOG), "--out", str(out)], check=True, capture_output=True)
    return out


def blog_page(site: Path, path: str):
    return extract_page((site / path / "index.html").read_bytes(), f"https://blog.test/{path}/")


def test_wordpress_post_is_content_with_its_blocks(blog):
    p = blog_page(blog, "2025/03/french-press-guide")
    assert p.kind == "content"
    kinds = Counter(b.kind for b in p.blocks)
    assert kinds["paragraph"] >= 5 and kinds["heading"] >= 2
    assert not any("More posts" in b.text for b in p.blocks if b.kind == "paragraph")
    linked = [b for b in p.blocks if b.kind == "paragraph" and b.links]
    assert linked and all(b.text[s:e] for b in linked for s, e, _ in b.links)


@pytest.mark.parametrize(
    ("path", "kind"),
    [("", "listing"), ("page/2", "listing"), ("category/baking", "listing"), ("tag/sourdough", "listing"),
     ("author/maya", "listing"), ("2025/03", "listing"), ("start-here", "navigation"), ("about", "content")],
)
def test_wordpress_page_kinds(blog, path, kind):
    assert blog_page(blog, path).kind == kind


def test_inline_spans_follow_collapsed_whitespace():
    [b] = blocks_of('<body><p>Use   the <code> get_current_site </code>\n helper, see <a href="/x/">the\n'
                    "  docs</a>.</p></body>")
    assert b.text == "Use the get_current_site helper, see the docs."
    assert [b.text[s:e] for s, e in b.code] == ["get_current_site"]
    assert [(b.text[s:e], u) for s, e, u in b.links] == [("the docs", "https://site.test/x/")]


def test_blocks_never_cross_and_nested_paragraphs_take_the_list_kind():
    blocks = blocks_of("<body><ul><li><p>First item text.</p><pre>code()\nmore()</pre></li></ul>"
                       "<div>A loose run of text without any paragraph tag around it at all.</div>"
                       "<div>Short.</div></body>")
    assert [(b.kind, b.text) for b in blocks] == [
        ("list_item", "First item text."), ("code", "code()\nmore()"),
        ("paragraph", "A loose run of text without any paragraph tag around it at all."), ("other", "Short.")]


@pytest.mark.parametrize(
    ("signals", "kind"),
    [
        (KindSignals(body_classes=frozenset({"archive", "tag"}), words=300), "listing"),
        (KindSignals(schema_types=frozenset({"collectionpage"}), words=300), "listing"),
        (KindSignals(excerpts=5, words=300), "listing"),
        (KindSignals(excerpts=5, og_type="article", words=300), "content"),  # an article with related posts
        (KindSignals(schema_types=frozenset({"blogposting"}), excerpts=1, words=300), "content"),
        (KindSignals(code_share=0.9, words=300), "code"),
        (KindSignals(link_share=0.7, words=300), "navigation"),
        (KindSignals(link_block_share=0.6, link_share=0.3, words=300), "navigation"),
        (KindSignals(table_share=0.8, link_share=0.4, words=300), "navigation"),
        (KindSignals(words=10), "other"),
        (KindSignals(link_share=0.1, code_share=0.3, words=300), "content"),
    ],
)
def test_page_kind_rules(signals, kind):
    assert page_kind(signals) == kind


def _blog_page(body: str) -> str:
    return f"<html><head><title>Blog</title></head><body><main><article>{body}</article></main></body></html>"


ENTRY = '<h2><a href="/blog/{n}/">Post number {n}</a></h2><p>{n} May 2026. A short summary of the post, ' \
        'a sentence or two that says what it is about and why one would read it.</p>'


def test_a_run_of_linked_headings_with_short_summaries_is_a_listing():
    """A blog index laid out as sibling headings and summaries (the bundled sample's /blog/), with an
    introduction: a listing. The same run as a short "related posts" tail of a long article: content."""
    intro = ("<h1>The blog</h1><p>" + "Notes from our kitchen: experiments that worked and experiments "
             "that did not, written in turn and tested on two setups before they go out. " * 4 + "</p>")
    index = _blog_page(intro + '<section class="post-list">' + "".join(ENTRY.format(n=n) for n in range(3))
                       + "</section>")
    assert extract_page(index, "https://blog.test/blog/").kind == "listing"
    prose = "".join(f"<p>{'Grind size and water temperature decide how the cup tastes. ' * 12}</p>"
                    for _ in range(4))
    article = _blog_page("<h1>Dialling in espresso</h1>" + prose + "<h2>Related</h2>"
                         + "".join(ENTRY.format(n=n).replace("h2", "h3") for n in range(3)))
    assert extract_page(article, "https://blog.test/espresso/").kind == "content"
    two = _blog_page(intro + '<section class="post-list">' + "".join(ENTRY.format(n=n) for n in range(2))
                     + "</section>")
    assert extract_page(two, "https://blog.test/blog/").kind == "content"  # two entries: not yet a listing
