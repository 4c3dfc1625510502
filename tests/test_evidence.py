"""Lexical evidence in the ranking (scoring parts, extra candidates) and names from links in anchors."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from crawlkit import COMPOST, ESPRESSO, GRINDER, POUR_OVER, ROSES, SITE, TOMATOES, bundled_model, link, url

from postprocess.options import Options
from postprocess.stages import scoring
from postprocess.stages.anchors import AnchorFinder, add_anchors, link_names
from postprocess.stages.candidates import Suggestion, find_candidates
from postprocess.stages.embed import embed_pages
from postprocess.stages.index import build_index
from postprocess.stages.load import Block, Crawl, Link, Page, build_crawl


@pytest.mark.parametrize(("inbound", "value"),
                         [(0, 1.0), (1, 1 / (1 + math.log(2))), (20, 1 / (1 + math.log(21)))])
def test_needs_links_falls_with_inbound_links(inbound: int, value: float) -> None:
    assert scoring.needs_links(inbound) == pytest.approx(value)
    assert scoring.needs_links(-3) == 1.0


@pytest.mark.parametrize(
    ("parts", "score"),
    [
        ({"similarity": 0.8}, 0.8),  # nothing else known: the similarity
        ({"similarity": 0.8, "date_factor": 0.5}, 0.4),
        ({"similarity": 0.6, "best_chunk": 0.8}, 0.7),
        ({"similarity": 0.6, "best_chunk": 0.6, "lexical": 0.2, "mention": 0.5, "needs_links": 0.5},
         0.6 + 0.2 + 1.0 + 0.2),
        ({"similarity": 0.6, "best_chunk": 0.6, "mention": 1.0, "date_factor": 0.5}, (0.6 + 2.0) * 0.5),
    ],
)
def test_combine_adds_weighted_evidence_to_the_similarity(parts: dict[str, float], score: float) -> None:
    assert scoring.combine(parts, Options()) == pytest.approx(score)


def linked_crawl() -> Crawl:
    links = [
        link(ESPRESSO, GRINDER, "burr grinder"),
        link(COMPOST, TOMATOES, "tomatoes"),
        link(COMPOST, ROSES, "roses"),
    ]
    return build_crawl(SITE, links, [])


@pytest.fixture(scope="module")
def site_run():  # noqa: ANN201 - (crawl, embeddings, index)
    crawl = linked_crawl()
    embeddings = embed_pages(crawl, bundled_model(), Options())
    return crawl, embeddings, build_index(embeddings.urls, embeddings.vectors, 10)


@pytest.mark.slow
def test_every_suggestion_carries_the_evidence_parts(site_run) -> None:  # noqa: ANN001
    crawl, embeddings, index = site_run
    queue, _, _ = find_candidates(crawl, embeddings, index, Options(min_score=-1.0))
    assert queue
    for s in queue:
        assert set(scoring.PART_COLUMNS) <= set(s.parts)
        assert s.score == pytest.approx(scoring.combine(s.parts, Options()))
    # The pour-over page says "burr grinder", the anchor the espresso page links the grinder with.
    pour = {s.target_url: s for s in queue if s.source_url == POUR_OVER}
    assert pour[GRINDER].parts["mention"] > 0
    assert all(s.parts["mention"] == 0 for s in queue if s.source_url == ROSES)


@pytest.mark.slow
def test_named_and_lexically_close_pages_join_the_semantic_neighbours(site_run) -> None:  # noqa: ANN001
    crawl, embeddings, _ = site_run
    evidence = scoring.Evidence(crawl, embeddings, neighbours=1)
    row = embeddings.row()
    found = evidence.candidates(row[POUR_OVER], np.array([row[ROSES]]), np.array([0.1]))
    urls = [embeddings.urls[t] for t in found.rows.tolist()]
    assert urls[0] == ROSES and found.similarities[0] == 0.1  # the index's neighbours first, untouched
    assert GRINDER in urls  # named in the text ("burr grinder")
    assert POUR_OVER not in urls and len(urls) == len(set(urls))
    for t, cosine in zip(found.rows[1:].tolist(), found.similarities[1:].tolist(), strict=True):
        expected = float(embeddings.vectors[t] @ embeddings.vectors[row[POUR_OVER]])
        assert cosine == pytest.approx(expected, abs=1e-5)
    lexical = evidence.site.lexical.matrix
    for t, cosine in zip(found.rows.tolist(), found.lexical.tolist(), strict=True):
        assert cosine == pytest.approx((lexical[t] @ lexical[row[POUR_OVER]].T).toarray()[0, 0], abs=1e-6)


@pytest.mark.slow
def test_min_score_applies_to_the_combined_score(site_run) -> None:  # noqa: ANN001
    crawl, embeddings, index = site_run
    everything, _, _ = find_candidates(crawl, embeddings, index, Options(min_score=-1.0, per_source=10))
    lifted = max(everything, key=lambda s: s.score - s.parts["similarity"])  # evidence lifts it most
    cut = (lifted.parts["similarity"] + lifted.score) / 2
    kept, _, rejected = find_candidates(crawl, embeddings, index, Options(min_score=cut, per_source=10))
    assert (lifted.source_url, lifted.target_url) in {(s.source_url, s.target_url) for s in kept}
    assert all(s.score >= cut for s in kept)
    assert rejected["below_min_score"] > 0


def test_link_names_order_the_surest_names_first() -> None:
    links = [
        Link(url("/a"), ESPRESSO, "espresso shot"), Link(url("/b"), ESPRESSO, "espresso shot"),
        Link(url("/c"), ESPRESSO, "coffee"), Link(url("/d"), GRINDER, "coffee"),  # ambiguous: half each
        Link(url("/e"), GRINDER, "coffee", position="nav"),  # nav links do not count
        Link(url("/f"), ESPRESSO, "here"), Link(url("/g"), ESPRESSO, "the guide"),  # no name
        Link(ESPRESSO, ESPRESSO, "espresso"),  # self link
    ]
    names = link_names(links)
    assert names[ESPRESSO] == [("espresso", "shot"), ("coffee",)]
    assert names[GRINDER] == [("coffee",)]
    assert link_names(links, min_commonness=0.6)[ESPRESSO] == [("espresso", "shot")]


def test_anchor_prefers_the_name_other_pages_link_the_target_with() -> None:
    target = Page(url=url("/brewing/ratio/"), title="Brew ratio calculator", h1="Brew ratio calculator",
                  text="Work out grams of coffee per gram of water.")
    text = "Coffee grounds and water. The golden ratio of sixteen to one suits most brewers."
    source = Page(url=url("/coffee/"), title="Coffee", h1="Coffee", text=text,
                  blocks=(Block("paragraph", text),))
    others = [Page(url=url(f"/tea/{i}/"), title="Tea", h1="Tea", text="The golden ratio applies to tea too.")
              for i in range(3)]
    links = [Link(o.url, target.url, "golden ratio") for o in others]
    s = Suggestion(source.url, target.url, 1.0)
    crawl = Crawl(pages=[target, source, *others[:2]], links=links[:2])
    add_anchors(crawl, [s], AnchorFinder(crawl))
    assert s.anchor == ""  # two links are two editors' wording, not yet the site's name for the page
    crawl = Crawl(pages=[target, source, *others], links=links)
    add_anchors(crawl, [s], AnchorFinder(crawl))
    assert (s.anchor, s.anchor_type, s.evidence) == ("golden ratio", "text", "link")
    assert "sixteen to one" in s.context


@pytest.mark.slow
def test_sources_ranked_a_block_at_a_time_give_what_each_source_ranked_alone_gives(monkeypatch) -> None:
    """The ranking filters, scores and pools a block of sources' pairs together: every pair's parts,
    score and place, the rejections (self, language, linked, decided, near duplicate, min score) and
    the near-duplicate rows are those of ranking each source on its own, whatever the block's size."""
    from crawlkit import page

    from postprocess.stages import candidates

    pages = [*SITE,
             page(url("/coffee/espresso-again/"), "How to pull a good espresso shot | Example Kitchen",
                  SITE[0]["text"], published="2020-01-01T00:00:00Z"),
             page(url("/fr/cafe/"), "Le café filtre | Example Kitchen", SITE[1]["text"], lang="fr"),
             page(url("/garden/copy/"), SITE[3]["title"], SITE[3]["text"])]  # a near duplicate, unlinked
    again = url("/coffee/espresso-again/")  # a near duplicate of the espresso page, which links it
    crawl = build_crawl(pages, [link(ESPRESSO, GRINDER, "burr grinder"), link(COMPOST, TOMATOES, "tomatoes"),
                                link(COMPOST, ROSES, "roses"), link(ESPRESSO, again, "again")], [])
    embeddings = embed_pages(crawl, bundled_model(), Options())
    index = build_index(embeddings.urls, embeddings.vectors, 10)
    options = Options(min_score=0.35, per_source=10, date_decay_days=365)
    held_back = {(POUR_OVER, GRINDER): "rejected", (ROSES, COMPOST): "approved"}

    def ranked(block: int) -> tuple[list[dict], list[dict], dict[str, int]]:
        monkeypatch.setattr(candidates, "RANK_BLOCK", block)
        pool, cannibal, rejected = find_candidates(crawl, embeddings, index, options, held_back=held_back)
        return ([dataclasses.asdict(s) for s in pool], [dataclasses.asdict(s) for s in cannibal],
                dict(rejected))

    alone = ranked(1)
    assert alone[0] and alone[1]  # pairs kept, and a near-duplicate pair
    twins = {(row["source_url"], row["target_url"]): row["parts"]["already_linked"] for row in alone[1]}
    assert twins[tuple(sorted((ESPRESSO, again)))] == 1.0  # linked one way: the pair is linked already
    assert 0.0 in twins.values()  # and a pair that is not
    for reason in ("near_duplicate", "already_linked", "cross_language", "below_min_score"):
        assert alone[2].get(reason), reason
    assert any(key.startswith("decided_") for key in alone[2])
    for block in (2, 3, 256):
        assert ranked(block) == alone, block


def test_the_in_content_uses_are_read_a_step_of_links_at_a_time(monkeypatch):
    """The in-content links between pages with a row, as three columns in link order: the ones a
    selection of them all gives, read a step of links at a time (the peak ~13 bytes a kept link,
    where selecting them at once made ~27: ~1 GB at a million pages, once a confidence fold)."""
    from crawlkit import traced_peak

    from postprocess.stages.links import LinkTable

    rng = np.random.default_rng(6)
    n, pages = 1_000_000, 5_000
    table = LinkTable([f"u{k}" for k in range(pages)], rng.integers(0, pages, n), rng.integers(0, pages, n),
                      [f"a{k}" for k in range(100)], rng.integers(0, 100, n), ["nav", "content"],
                      rng.integers(0, 2, n), np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    rows = np.where(rng.random(pages) < 0.9, np.arange(pages), -1).astype(np.int32)  # a tenth unindexed
    mask = table.content()
    source, target = rows[table.source[mask]], rows[table.target[mask]]
    keep = (source >= 0) & (target >= 0)
    expected = (source[keep], target[keep], table.anchor[mask][keep])
    del mask, source, target, keep
    monkeypatch.setattr(scoring, "USES_STEP", 1 << 16)
    got, peak = traced_peak(lambda: scoring._content_uses(table, rows))
    for mine, theirs in zip(got, expected, strict=True):
        assert mine.dtype == np.int32 and np.array_equal(mine, theirs)
    kept = len(expected[0])
    assert peak < 15 * kept, peak / kept
