"""Click depth and orphans on a small hand-made site, now and after the queue's (or approved) links."""

from __future__ import annotations

import numpy as np
import pytest

from postprocess.apps.report.depth import click_depths, depth_scenarios, summarise
from postprocess.apps.report.graph import Edges, LinkGraph, link_graph, orphans, start_page
from postprocess.apps.report.inbound import InboundLinks, inbound_histogram, orphan_table
from postprocess.stages.candidates import Suggestion
from postprocess.stages.links import distinct
from postprocess.stages.load import Crawl, Link, Page

S, A, B, C, D, E, F = (f"https://site.test/{name}/" for name in "sabcdef")

# Running content: S -> A -> B -> C -> D (D four clicks deep). The navigation (every page) links S and
# A..E; F is reached by nothing (only a sitemap found it). E has no inbound content link: an orphan.
CONTENT = [(S, A), (A, B), (B, C), (C, D), (D, D)]  # D links itself: not an inbound link
NAV = [(p, t) for p in (S, A, B, C, D, E) for t in (S, A, B, C, D, E) if p != t]


def crawl() -> Crawl:
    depth = {S: 0, A: 1, B: 1, C: 1, D: 1, E: 1, F: None}
    pages = [Page(url=u, title=u, text="text", depth=d) for u, d in depth.items()]
    links = [Link(s, t, position="content") for s, t in CONTENT]
    links += [Link(s, t, position="nav") for s, t in NAV]
    links.append(Link(A, "https://elsewhere.test/", position="content", internal=False))  # not a page
    return Crawl(pages=pages, links=links)


def row(source: str, target: str) -> Suggestion:
    return Suggestion(source, target, 1.0, anchor="words", anchor_type="text", context="some words")


def test_breadth_first_depth_from_the_start_page():
    edges = Edges.from_pairs([(S, A), (A, B), (A, C), (B, C), (C, A), (D, S)], [S, A, B, C, D])
    assert edges == {S: {A}, A: {B, C}, B: {C}, C: {A}, D: {S}}
    assert click_depths(edges, S) == {S: 0, A: 1, B: 2, C: 2}  # D links in, nothing links D
    assert click_depths(edges, None) == {}
    assert click_depths(Edges.from_pairs([], [S]), S) == {S: 0}
    added = edges.plus([(C, D), (C, D), (E, S), (S, A), (B, B)])  # E is no page; S -> A is there
    assert added == {S: {A}, A: {B, C}, B: {C}, C: {A, D}, D: {S}}
    assert edges.plus([(A, S)]).keys.tolist() == sorted(edges.plus([(A, S)]).keys.tolist())  # kept sorted
    assert Edges.from_pairs([], [S, A]).plus([(S, A)]) == {S: {A}}
    assert edges.plus([(C, D)]).inbound() == {S: 1, A: 2, B: 1, C: 2, D: 1}


def test_edges_hold_four_bytes_a_link_and_make_their_keys_when_asked():
    """The report holds three edge sets of the site's links (now, all, after the queue): each link is
    its target's number (int32), the sources are the CSR offsets; the keys are made from them."""
    pages = [f"https://s.test/{i}" for i in range(300)]
    pairs = [(pages[i], pages[(i * 7 + k) % 300]) for i in range(300) for k in (1, 2, 5, 11)]
    edges = Edges.from_pairs(pairs, pages)
    n = edges.links()
    assert n == 1200
    assert edges.targets.nbytes + edges.indptr.nbytes <= 4 * n + 8 * (len(pages) + 1)
    expected = sorted({pages.index(s) * 300 + pages.index(t) for s, t in pairs})
    assert edges.keys.tolist() == expected
    assert Edges(pages, edges.keys) == edges
    assert Edges([], edges.keys[:0]).keys.tolist() == [] and len(Edges([], edges.keys[:0])) == 0


@pytest.mark.parametrize("block", [1, 3, 64])
def test_the_queues_links_go_into_place_a_block_of_sources_at_a_time(monkeypatch, block):
    """``plus`` finds each new link's place a block of sources at a time: the same edges as the set of
    old and new pairs, for blocks with nothing new, sources with no link yet, repeats and links
    already there."""
    import random

    from postprocess.apps.report import graph

    monkeypatch.setattr(graph, "PLUS_BLOCK_SOURCES", block)
    rng = random.Random(block)
    pages = [f"https://s.test/{i}" for i in range(40)]
    old = {(rng.choice(pages[:30]), rng.choice(pages)) for _ in range(150)}
    new = [(rng.choice(pages), rng.choice(pages)) for _ in range(60)]
    new += [*sorted(old)[:10], (pages[39], pages[0]), (pages[39], pages[0])]
    edges = Edges.from_pairs(old, pages).plus(new)
    expected = Edges.from_pairs(old | set(new), pages)
    assert edges.targets.tolist() == expected.targets.tolist()
    assert edges.indptr.tolist() == expected.indptr.tolist() and edges == expected


def test_adding_the_queues_links_makes_no_key_for_every_link(monkeypatch):
    """A million pages' links are ~60M: ``plus`` holds the result's targets (4 bytes a link) and one
    block's keys, not every link's key (8 bytes) and the keys with the new ones inserted (8 more)."""
    import numpy as np
    from crawlkit import traced_peak

    from postprocess.apps.report import graph

    monkeypatch.setattr(graph, "PLUS_BLOCK_SOURCES", 1024)
    rng = np.random.default_rng(0)
    pages = [f"https://s.test/{i}" for i in range(20_000)]
    keys = np.unique(rng.integers(0, 20_000, 2_000_000) * 20_000 + rng.integers(0, 20_000, 2_000_000))
    edges = Edges(pages, keys[keys // 20_000 != keys % 20_000])
    new = [(pages[i], pages[(i * 7 + 1) % 20_000]) for i in range(0, 20_000, 3)]
    added, peak = traced_peak(lambda: edges.plus(new))
    assert added.links() > edges.links()
    assert peak < 6 * edges.links(), (peak, edges.links())  # the result's 4 bytes a link and a block's keys


@pytest.mark.parametrize("step", [1, 5, 1 << 21])
def test_depths_follow_a_levels_links_a_step_at_a_time(monkeypatch, step):
    """Breadth-first a step of links at a time gives every page's depth as a plain breadth-first walk:
    steps of one link, of a few pages, and the whole level at once."""
    import random
    from collections import deque

    from postprocess.apps.report import graph

    monkeypatch.setattr(graph, "STEP_LINKS", step)
    rng = random.Random(step)
    pages = [f"https://s.test/{i}" for i in range(200)]
    pairs = {(rng.choice(pages[:150]), rng.choice(pages)) for _ in range(500)}
    pairs |= {(pages[0], pages[i]) for i in range(1, 200, 37)}  # a start page with a few links
    edges = Edges.from_pairs(pairs, pages)
    expected = {pages[0]: 0}
    walk = deque([pages[0]])
    while walk:
        url = walk.popleft()
        for target in sorted(t for s, t in pairs if s == url and t != url):
            if target not in expected:
                expected[target] = expected[url] + 1
                walk.append(target)
    assert 20 < len(expected) < 200  # pages it reaches, and pages it does not
    assert edges.depths(pages[0]) == expected


def test_depths_do_not_hold_a_wide_levels_links_at_once(monkeypatch):
    """A level of a million synthetic pages' links holds ~30M of them: following them at once was
    ~36 bytes a link (~0.7 GB in the report, the run's largest RSS); a step at a time, a step's."""
    import numpy as np
    from crawlkit import traced_peak

    from postprocess.apps.report import graph

    monkeypatch.setattr(graph, "STEP_LINKS", 1 << 14)
    rng = np.random.default_rng(1)
    n = 50_000
    sources = np.concatenate([np.zeros(n - 1, dtype=np.int64), np.repeat(np.arange(1, n), 40)])
    targets = np.concatenate([np.arange(1, n), rng.integers(1, n, 40 * (n - 1))])
    keys = distinct(sources * n + targets)
    pages = [f"https://s.test/{i}" for i in range(n)]
    edges = Edges(pages, keys[keys // n != keys % n])
    depths, peak = traced_peak(lambda: edges.depths(pages[0]))
    assert len(depths) == n and max(depths.values()) == 1  # the whole site is the first level
    assert peak < 10_000_000, peak  # the answer (~5 MB) and a step's arrays; 2M links at once: ~34 MB


def test_a_chain_of_pages_has_as_many_levels_as_pages():
    """Each page links only the next: every level is one page, the last page as deep as the chain
    (the next level is the pages each step reached, not a scan of every page a level)."""
    n = 20_000
    pages = [f"https://s.test/{i}" for i in range(n)]
    edges = Edges(pages, np.arange(n - 1, dtype=np.int64) * n + np.arange(1, n))
    depths = edges.depths(pages[0])
    assert len(depths) == n and [depths[p] for p in pages[::4999]] == [0, 4999, 9998, 14997, 19996]
    assert depths[pages[-1]] == n - 1 and edges.depths(pages[n // 2])[pages[-1]] == n - 1 - n // 2


def test_inbound_counts_count_a_step_of_links_at_a_time(monkeypatch):
    """``bincount`` makes int64 page numbers of the int32 targets it counts (~0.5 GB of a million
    synthetic pages' links at once); a step at a time, the same counts, and the peak is a step's."""
    from crawlkit import traced_peak

    from postprocess.apps.report import graph

    rng = np.random.default_rng(2)
    n = 50_000
    keys = distinct(rng.integers(0, n, 2_000_000) * n + rng.integers(0, n, 2_000_000))
    edges = Edges([f"https://s.test/{i}" for i in range(n)], keys[keys // n != keys % n])
    whole = np.bincount(edges.targets, minlength=n)
    monkeypatch.setattr(graph, "STEP_LINKS", 1 << 14)
    counts, peak = traced_peak(edges.inbound_counts)
    assert counts.tolist() == whole.tolist() and counts.sum() == edges.links()
    assert peak < 2_000_000, peak  # the counts (0.4 MB) and a step's; every link at once: ~16 MB


def test_the_graph_separates_content_links_from_all_links():
    graph = link_graph(crawl())
    assert graph.start == S == start_page(crawl())
    assert graph.content == {S: {A}, A: {B}, B: {C}, C: {D}}  # no self link, no link off the site
    assert graph.every[S] == {A, B, C, D, E}
    assert click_depths(graph.content, S) == {S: 0, A: 1, B: 2, C: 3, D: 4}
    assert click_depths(graph.every, S) == {S: 0, A: 1, B: 1, C: 1, D: 1, E: 1}


def test_orphans_have_no_inbound_content_link_and_exclude_the_start_page():
    graph = link_graph(crawl())
    assert orphans(graph) == [E, F]
    assert orphans(graph, graph.content.plus([(A, E)])) == [F]


def test_start_page_without_depth_zero_is_the_shallowest_and_none_without_depths():
    pages = [Page(url=A, depth=3), Page(url=B, depth=2), Page(url=C)]
    assert start_page(Crawl(pages=pages, links=[])) == B
    assert start_page(Crawl(pages=[Page(url=A)], links=[])) is None


def test_summary_counts_pages_per_depth_and_the_unreachable():
    summary = summarise({S: 0, A: 1, B: 2, C: 3, D: 4}, [S, A, B, C, D, E, F])
    assert summary.histogram == {0: 1, 1: 1, 2: 1, 3: 1, 4: 1}
    assert summary.unreachable == 2 and summary.reachable == 5
    assert summary.mean == pytest.approx(2.0) and summary.deepest == 4
    assert summarise({}, [A]).mean is None
    assert summary.to_json() == {"mean": 2.0, "reachable": 5, "unreachable": 2,
                                 "histogram": {"0": 1, "1": 1, "2": 1, "3": 1, "4": 1}}


def test_depth_now_after_the_queue_and_after_approved_links_only():
    graph = link_graph(crawl())
    queue = [(A, D), (S, E), (B, F), (F, "https://site.test/not-crawled/")]
    depths = depth_scenarios(graph, queue, approved=[(A, D)])
    assert depths.scenarios() == ["now", "after", "approved"]
    content = depths.depths["content"]
    assert content["now"] == {S: 0, A: 1, B: 2, C: 3, D: 4}
    assert content["after"] == {S: 0, A: 1, B: 2, C: 3, D: 2, E: 1, F: 3}
    assert content["approved"] == {S: 0, A: 1, B: 2, C: 3, D: 2}
    assert depths.summary("content", "now").mean == pytest.approx(10 / 5)
    assert depths.summary("content", "after").mean == pytest.approx(12 / 7)
    assert depths.summary("content", "approved").unreachable == 2
    every = depths.depths["all"]
    assert every["now"][D] == 1 and F not in every["now"]
    assert every["after"][F] == 2  # the queue's B -> F is the only path to F
    assert depths.to_json()["all"]["after"]["unreachable"] == 0
    assert depths.closer("content", "after") == 3 and depths.closer("content", "approved") == 1  # D, E, F
    assert depths.to_json()["content"]["now"]["pages_closer"] == 0
    assert "approved" not in depth_scenarios(graph, queue).depths["content"]  # no decisions: no scenario


def test_orphan_table_names_the_sources_that_would_feed_each_orphan_and_its_depths():
    graph = link_graph(crawl())
    rows = [row(A, E), row(C, E), row(A, E), row(B, F)]
    depths = depth_scenarios(graph, [(r.source_url, r.target_url) for r in rows])
    table = orphan_table(graph, rows, depths)
    assert [(o.url, o.sources) for o in table] == [(E, (A, C)), (F, (B,))]
    e, f = table
    assert (e.depth_now, e.depth_after, e.content_depth_after) == (1, 1, 2)
    assert (f.depth_now, f.depth_after, f.content_depth_after) == (None, 2, 3)


def test_inbound_counts_hubs_starved_and_most_proposed():
    graph = link_graph(crawl())
    rows = [row(A, E), row(C, E), row(S, D)]
    links = InboundLinks(graph, rows, graph.content.plus([(r.source_url, r.target_url) for r in rows]))
    assert dict(zip(graph.pages, links.content_now.tolist(), strict=True)) == {S: 0, A: 1, B: 1, C: 1, D: 1,
                                                                              E: 0, F: 0}
    assert links.page(D).content_after == 2 and links.page(E).content_after == 2
    assert links.histogram("now") == {"0": 3, "1": 4, "2": 0, "3–4": 0, "5–9": 0, "10–19": 0, "20–49": 0,
                                      "50–99": 0, "100+": 0}
    assert [p.url for p in links.most_proposed()] == [E, D]
    kinds = ["listing" if u == B else "content" for u in graph.pages]
    count, starved = links.starved(kinds)
    assert count == 3 and [p.url for p in starved] == [D, A, C]  # a queue row to D puts it first
    assert inbound_histogram(np.array([0, 3, 120]))["0"] == 1 and inbound_histogram([120])["100+"] == 1
    assert [p.url for p in links.hubs()] == [A, B, C, D]  # one inbound link each: by URL
    assert [p.url for p in links.hubs(2)] == [A, B] and links.page("https://elsewhere.test/").all_now == 0


def test_hubs_are_the_most_linked_pages_ties_by_url():
    """The hubs are the pages sorted by inbound content links (most first, then URL), those with none
    left out: the same list as sorting every page, with ties at the cut."""
    pages = [f"https://s.test/{i:02d}" for i in range(30)]
    rng = np.random.default_rng(3)
    pairs = {(pages[int(s)], pages[int(t)]) for s, t in rng.integers(0, 30, (60, 2)) if s != t}
    graph = LinkGraph(tuple(pages), pages[0], Edges.from_pairs(pairs, pages), Edges.from_pairs(pairs, pages))
    links = InboundLinks(graph, [], graph.content)
    counts = graph.content.inbound()
    for n in (1, 3, 7, 30, 40):
        expected = [u for u in sorted(pages, key=lambda u: (-counts.get(u, 0), u))[:n] if counts.get(u, 0)]
        assert [p.url for p in links.hubs(n)] == expected
