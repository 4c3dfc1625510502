"""Anchor phrases: verbatim in the source, outside existing links, one per target, title fallback."""

from __future__ import annotations

import pytest
from crawlkit import CHAIN, ESPRESSO, GRINDER, POUR_OVER, SITE, SITE_LINKS, TOMATOES, page, url

from postprocess.anchors import (
    AnchorFinder,
    add_anchors,
    blocked_spans,
    clean_title,
    context_of,
    normalise,
    short_title,
    site_title_parts,
    source_text,
)
from postprocess.candidates import Suggestion
from postprocess.load import Page, build_crawl


@pytest.mark.parametrize(
    ("word", "norm"),
    [("Queries", "query"), ("models", "model"), ("class", "class"), ("is", "is"), ("Django", "django"),
     ("bus", "bus"), ("don’t", "don't")],
)
def test_normalise(word, norm):
    assert normalise(word) == norm


TITLES = ["Models | Django documentation | Django", "Forms | Django documentation | Django",
          "Views | Django documentation | Django", "Making queries | Django documentation | Django"]


def test_site_title_parts_and_clean_title():
    parts = site_title_parts(TITLES)
    assert parts == {"django documentation", "django"}
    assert clean_title(TITLES[3], parts) == "Making queries"
    assert clean_title("Django", parts) == "Django"  # nothing left: keep the title


@pytest.mark.parametrize(
    ("title", "short"),
    [("Making queries", "Making queries"),
     ("How to pull a good espresso shot at home", "How to pull a good espresso"),
     ("Alpha beta gamma delta epsilon of zeta", "Alpha beta gamma delta epsilon"),  # no dangling stopword
     ("", "")],
)
def test_short_title(title, short):
    assert short_title(title) == short


def test_blocked_spans_find_every_whole_word_occurrence():
    text = "A burr grinder here, burr  grinder there, and burr grinders elsewhere."
    spans = blocked_spans(text, ["burr grinder", " "])
    assert [text[a:b] for a, b in spans] == ["burr grinder", "burr  grinder"]


@pytest.mark.parametrize(
    ("text", "needle", "context"),
    [
        ("First one. The needle is here. Last one.", "needle", "The needle is here."),
        ("No end at all with needle", "needle", "No end at all with needle"),
        ("Line one\nneedle line\nthree", "needle", "needle line"),
    ],
)
def test_context_is_the_sentence(text, needle, context):
    src = source_text(Page(url="u", text=text), [])
    start = text.index(needle)
    assert context_of(text, src.bounds, start, start + len(needle)) == context


def test_long_sentence_context_is_cut_around_the_anchor():
    text = ("word " * 200) + "needle " + ("word " * 200)
    src = source_text(Page(url="u", text=text), [])
    start = text.index("needle")
    ctx = context_of(text, src.bounds, start, start + 6, limit=100)
    assert "needle" in ctx and len(ctx) <= 100


def _anchor(crawl, source, targets):
    rows = [Suggestion(source, t, 1.0 - i / 10) for i, t in enumerate(targets)]
    add_anchors(crawl, rows)
    return rows


def test_anchor_stands_verbatim_in_the_source_and_fits_the_target():
    crawl = build_crawl(SITE, SITE_LINKS, [])
    [s] = _anchor(crawl, GRINDER, [ESPRESSO])
    text = next(p.text for p in crawl.pages if p.url == GRINDER)
    assert s.anchor_type == "text"
    assert s.anchor in text and s.anchor in s.context and s.context in " ".join(text.split())
    assert "espresso" in s.anchor.lower()


def test_anchor_is_never_inside_an_existing_link():
    crawl = build_crawl(SITE, SITE_LINKS, [])  # ESPRESSO already links "burr grinder" to GRINDER
    [s] = _anchor(crawl, ESPRESSO, [GRINDER])
    assert s.anchor_type == "text" and "burr grinder" not in s.anchor.lower()
    without_link = build_crawl(SITE, [], [])
    [free] = _anchor(without_link, ESPRESSO, [GRINDER])
    assert free.anchor == "burr grinder"  # the phrase the existing link took


def test_one_page_never_gets_the_same_anchor_twice():
    source = page(url("/s/"), "Source", "We roast coffee beans every day. Our coffee beans come from Peru.")
    first = page(url("/beans/"), "Coffee beans | Shop", "All about beans.")
    second = page(url("/beans-guide/"), "Coffee beans | Shop", "A guide to beans.")
    crawl = build_crawl([source, first, second], [], [])
    rows = _anchor(crawl, source["url"], [first["url"], second["url"]])
    assert rows[0].anchor == "coffee beans" and rows[0].anchor_type == "text"
    assert rows[1].anchor.lower() != rows[0].anchor.lower()
    assert rows[1].anchor == "coffee beans" or rows[1].anchor_type in ("text", "title")


def test_same_title_twice_falls_back_to_something_else():
    source = page(url("/s/"), "Source", "Nothing here matches anything at all, I promise.")
    one = page(url("/one/"), "Zebra care", "z")
    two = page(url("/two/"), "Zebra care", "z")
    crawl = build_crawl([source, one, two], [], [])
    rows = _anchor(crawl, source["url"], [one["url"], two["url"]])
    assert [r.anchor_type for r in rows] == ["title", "title"]
    assert rows[0].anchor == "Zebra care" and rows[1].anchor != rows[0].anchor


def test_title_fallback_is_marked_and_short():
    crawl = build_crawl(SITE, SITE_LINKS, [])
    [s] = _anchor(crawl, CHAIN, [TOMATOES])  # nothing about tomatoes on the chain page
    assert s.anchor_type == "title"
    assert s.anchor == "Growing tomatoes at home" and s.context == ""


def test_phrases_do_not_cross_sentences_or_start_with_stopwords():
    source = page(url("/s/"), "S", "Brewing is fun. Coffee grinders matter. The grinder of choice.")
    target = page(url("/t/"), "Coffee grinder | Shop", "x")
    crawl = build_crawl([source, target], [], [])
    finder = AnchorFinder(crawl)
    src = source_text(next(p for p in crawl.pages if p.url == source["url"]), [])
    for _, i, j in finder.best_spans(src, next(p for p in crawl.pages if p.url == target["url"])):
        phrase = src.text[src.spans[i][0]:src.spans[j][1]]
        assert ". " not in phrase
        assert phrase.split()[0].lower() not in ("the", "of")
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor == "Coffee grinders"


def test_every_suggestion_of_a_source_gets_a_distinct_anchor():
    crawl = build_crawl(SITE, [], [])
    rows = _anchor(crawl, POUR_OVER, [ESPRESSO, GRINDER, TOMATOES, CHAIN])
    anchors = [r.anchor.lower() for r in rows]
    assert len(set(anchors)) == len(anchors)
    text = next(p.text for p in crawl.pages if p.url == POUR_OVER)
    assert all(r.anchor in text for r in rows if r.anchor_type == "text")


def test_phrases_with_code_punctuation_are_not_anchors():
    source = page(url("/s/"), "S", "Pass the lookup, params and the rest. Nothing else.")
    target = page(url("/t/"), "Lookup params | Docs", "x")
    crawl = build_crawl([source, target], [], [])
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor_type == "text" and "," not in s.anchor and s.anchor in ("lookup", "params")


def test_words_shared_by_many_page_names_weigh_less():
    notes = [page(url(f"/releases/1.{i}/"), f"Django 1.{i} release notes | Docs", f"Bug fixes in 1.{i}.")
             for i in range(10)]
    source = page(url("/s/"), "S", "Read the release notes. Version 1.3 fixed the crash.")
    crawl = build_crawl([source, *notes], [], [])
    [s] = _anchor(crawl, source["url"], [url("/releases/1.3/")])
    assert s.anchor == "1.3"


def test_generic_words_alone_are_not_anchors():
    source = page(url("/s/"), "S", "Here is a new guide to brewing with care.")
    target = page(url("/t/"), "Dialling in a new bag of espresso | Shop", "x")
    crawl = build_crawl([source, target], [], [])
    [s] = _anchor(crawl, source["url"], [target["url"]])
    assert s.anchor_type == "title"  # "new" alone is no anchor
