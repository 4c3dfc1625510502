"""A confidence fold hides a share of the site's links: its evidence, pair filters and anchor finder
are the site's less those links (``without``), and must be what a rebuild from the links left makes."""

from __future__ import annotations

import random
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from crawlkit import blocks_of, link, page, url, write_crawl

from postprocess.options import Options
from postprocess.stages.anchors import AnchorFinder
from postprocess.stages.candidates import PairFilter
from postprocess.stages.links import LinkTable, links_table
from postprocess.stages.load import load_crawl
from postprocess.stages.scoring import Evidence
from postprocess.stages.tokeniser import words

TITLES = ["Espresso Guide", "Burr Grinder", "Milk Frothing", "The Kettle", "QuerySet API", "Pour over",
          "Cold brew", "Espresso machines", "Grinder settings", "Water"]
ANCHORS = ["espresso guide", "Espresso  Guide", "burr grinder", "grinder", "QuerySet", "queryset",
           "the kettle", "here", "pour over", "cold brew", "espresso", "water", "milk frothing", ""]


ANCHOR_KEYS = {tuple(words(a)) for a in ANCHORS if a}


def random_site(tmp_path, seed: int):
    rng = random.Random(seed)
    urls = [url(f"/p{i}/") for i in range(24)]
    pages, links = [], []
    for i, source in enumerate(urls):
        anchors = [(a, urls[ANCHORS.index(a)] if rng.random() < 0.7 else rng.choice(urls))
                   for a in (rng.choice(ANCHORS) for _ in range(rng.randint(4, 12)))]  # mostly one page's
        text = " ".join(f"About {a or 'this'} and the {rng.choice(ANCHORS) or 'cup'}." for a, _ in anchors)
        pages.append(page(source, f"{TITLES[i % len(TITLES)]} {i // len(TITLES) or ''}".strip(), text,
                          blocks=blocks_of(text, [(a, t) for a, t in anchors if a])))
        links += [link(source, t, a) for a, t in anchors]
        links += [link(source, rng.choice(urls), "Home", position="nav")]
    crawl = load_crawl(write_crawl(tmp_path / f"crawl-{seed}", pages, links))
    assert isinstance(crawl.links, LinkTable)
    content = sorted({(s, t) for s, t, _ in crawl.links.content_uses() if s != t})
    hidden = frozenset(rng.sample(content, len(content) // 3) + [(urls[0], url("/not-crawled/"))])
    visible = replace(crawl, links=links_table(crawl.links).without(hidden))
    return crawl, visible, hidden


def owners(owner):
    return None if owner is None else frozenset([owner]) if isinstance(owner, str) else owner


@pytest.mark.parametrize("seed", range(4))
def test_a_folds_anchor_finder_is_the_one_its_links_make(tmp_path, seed):
    crawl, visible, hidden = random_site(tmp_path, seed)
    site = AnchorFinder(crawl)
    asked = [(p.url, key) for p in crawl.pages for key in {*ANCHOR_KEYS, *site.link_names.get(p.url, ())}]
    before = [site._link_spellings(*pair) for pair in asked]  # the site's kept before the fold is made
    fold, rebuilt = site.without(crawl, hidden), site.with_links(visible)
    # a target's link spellings, as the anchors check them, are the fold's own links' (none kept from
    # the site's), and the fold keeps none in the site's place
    in_fold = [fold._link_spellings(*pair) for pair in asked]
    assert in_fold == [rebuilt._link_spellings(*pair) for pair in asked]
    assert [site._link_spellings(*pair) for pair in asked] == before
    assert in_fold != before  # the hidden links did change some spellings
    for p in crawl.pages:
        assert (fold.linked.get(p.url) or set()) == (rebuilt.linked.get(p.url) or set())
        assert list(fold.link_names.get(p.url, ())) == list(rebuilt.link_names.get(p.url, ()))
        assert dict(fold.name_uses.get(p.url, {})) == dict(rebuilt.name_uses.get(p.url, {}))
        assert set(fold.spellings.get(p.url, ())) == set(rebuilt.spellings.get(p.url, ()))
        assert fold.names(p) == rebuilt.names(p)
    for key in set(site.linking_pages) | set(rebuilt.linking_pages):
        assert fold.linking_pages.get(key, 0) == rebuilt.linking_pages.get(key, 0)
    for key in set(site._link_named) | set(rebuilt._link_named):
        assert owners(fold._link_named.get(key)) == owners(rebuilt._link_named.get(key))
    assert fold._page_named is site._page_named and fold.pages is site.pages  # the pages' own: shared
    # names the fold's links did not change are the site's, made once for every fold
    unchanged = [p for p in crawl.pages if p.url not in fold.link_names.changed]
    assert unchanged and all(fold.names(p) == site.names(p) for p in unchanged)
    assert all(p.url not in fold._names and p.url in site._names for p in unchanged)
    assert site.link_names != dict(rebuilt.link_names)  # the hidden links did change the names


def test_every_fold_reads_the_anchor_texts_words_the_site_made_once(tmp_path):
    """The words of every anchor text of the site (a pass over all of them, ~20% of a fold's time at
    a million pages) are made once, by the site's finder, not again by each fold's copy."""
    crawl, _, hidden = random_site(tmp_path, 0)
    site = AnchorFinder(crawl)
    first, second = site.without(crawl, hidden), site.without(crawl, frozenset(list(hidden)[:3]))
    made = site._anchor_keys(crawl.links)
    assert first._anchor_keys(crawl.links) is made and second._anchor_keys(crawl.links) is made
    site.folds_done()  # the learning's end: the words go with the folds
    assert "_keys_of" not in vars(site)


@pytest.mark.parametrize("seed", range(4))
def test_a_folds_evidence_and_filters_are_the_ones_its_links_make(tmp_path, seed):
    crawl, visible, hidden = random_site(tmp_path, seed)
    urls = [p.url for p in crawl.pages]
    vectors = np.random.default_rng(seed).normal(size=(len(urls), 8)).astype(np.float32)
    embeddings = SimpleNamespace(urls=urls, vectors=vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                                 chunk_vectors=[np.zeros((0, 8), np.float32)] * len(urls))
    site = Evidence(crawl, embeddings, neighbours=2)
    fold, rebuilt = site.without(crawl, hidden), site.with_links(visible)
    assert fold.needs_links.tolist() == rebuilt.needs_links.tolist()
    assert fold.needs_links.tolist() != site.needs_links.tolist()
    for row in range(len(urls)):
        assert list(fold.site.mentions(row).items()) == list(rebuilt.site.mentions(row).items())
    filters = PairFilter(crawl, urls, Options()).without(hidden)
    assert filters.linked.tolist() == PairFilter(visible, urls, Options()).linked.tolist()


def test_a_changed_mapping_reads_through_its_base_and_never_adds_to_it():
    from collections import defaultdict

    from postprocess.stages.overlay import Changed

    base = defaultdict(set, {"a": {1}, "b": {2}, "c": {3}})
    changed = Changed(base, {"b": {9}, "c": None})
    assert changed["a"] == {1} and changed["b"] == {9} and "c" not in changed and changed.get("c") is None
    assert list(changed) == ["a", "b"] and len(changed) == 2 and dict(changed) == {"a": {1}, "b": {9}}
    assert changed.get("new", ()) == () and "new" not in base  # a defaultdict base is not added to
    assert changed.changed == {"b", "c"}
