"""Filters, caps and score parts: pure functions, tables of cases."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import numpy as np
import pytest

from postprocess.errors import InputError
from postprocess.options import Options, validate
from postprocess.stages.candidates import (
    PairFilter,
    Suggestion,
    apply_caps,
    capped,
    capped_numbers,
    existing_links,
    source_exclusion,
    target_exclusion,
)
from postprocess.stages.load import Crawl, Link, Page
from postprocess.stages.scoring import Candidates, combine, date_factor, inbound_counts, parse_date, rounded

A = Page(url="https://s.test/a/", text="a text", lang="en")
B = Page(url="https://s.test/b/", text="b text", lang="en")
LINKED = {(A.url, B.url)}


def _with(page: Page, **changes: object) -> Page:
    values = {name: getattr(page, name) for name in Page.__slots__}
    values.update(changes)
    return Page(**values)


@pytest.mark.parametrize(
    ("source", "target", "similarity", "linked", "options", "reason"),
    [
        (A, B, 0.7, set(), Options(), None),
        (A, A, 0.99, set(), Options(), "self"),
        (A, B, 0.7, LINKED, Options(), "already_linked"),
        (B, A, 0.7, LINKED, Options(), None),  # a link one way does not block the other way
        (A, B, 0.97, set(), Options(max_similarity=0.95), "near_duplicate"),
        (A, B, 0.97, set(), Options(max_similarity=0.99), None),
        (A, _with(B, lang="fr"), 0.7, set(), Options(), "cross_language"),
        (A, _with(B, lang="fr"), 0.7, set(), Options(allow_cross_language=True), None),
        (A, _with(B, lang="en-GB"), 0.7, set(), Options(), None),  # same language, another region
        (A, _with(B, lang=None), 0.7, set(), Options(), None),  # unknown language: kept
        (A, _with(B, thin=True), 0.7, set(), Options(), "target_thin"),
        (A, _with(B, noindex=True), 0.7, set(), Options(), "target_noindex"),
        (A, _with(B, status=404), 0.7, set(), Options(), "target_status"),
        (A, _with(B, kind="listing"), 0.7, set(), Options(), "target_listing"),
        (A, _with(B, kind="listing"), 0.7, set(), Options(listing_targets=True), None),
    ],
)
def test_pair_filter(source, target, similarity, linked, options, reason):
    pages = [source] if source.url == target.url else [source, target]
    crawl = Crawl(pages=pages, links=[Link(s, t) for s, t in linked])
    rejected: Counter[str] = Counter()
    found = Candidates(np.array([len(pages) - 1]), np.array([similarity]), np.zeros(1, dtype=np.float32))
    keep = PairFilter(crawl, [p.url for p in pages], options).allowed(0, found, rejected)
    assert keep.tolist() == [reason is None]
    assert rejected == (Counter({reason: 1}) if reason else Counter())


def test_pair_filter_counts_each_rejected_pair_under_its_first_reason():
    pages = [A, B, _with(B, url="https://s.test/c/", thin=True, lang="fr"),
             _with(B, url="https://s.test/d/", lang="fr"), _with(B, url="https://s.test/e/")]
    crawl = Crawl(pages=pages, links=[Link(A.url, B.url), Link(A.url, pages[4].url, position="nav")])
    found = Candidates(np.arange(5), np.array([0.99, 0.5, 0.5, 0.5, 0.99]), np.zeros(5, dtype=np.float32))
    rejected: Counter[str] = Counter()
    filters = PairFilter(crawl, [p.url for p in pages], Options(max_similarity=0.95))
    assert filters.allowed(0, found, rejected).tolist() == [False] * 5
    assert rejected == Counter({"self": 1, "already_linked": 2, "target_thin": 1, "cross_language": 1})
    content_only = PairFilter(crawl, [p.url for p in pages], Options(max_similarity=0.95,
                                                                     content_links_only=True))
    rejected.clear()
    assert content_only.allowed(0, found, rejected).tolist() == [False] * 5
    assert rejected == Counter({"self": 1, "already_linked": 1, "target_thin": 1, "cross_language": 1,
                                "near_duplicate": 1})


@pytest.mark.parametrize(
    ("page", "options", "source_reason", "target_reason"),
    [
        (A, Options(), None, None),
        (_with(A, thin=True), Options(), None, "target_thin"),
        (_with(A, thin=True), Options(exclude_thin_sources=True), "source_thin", "target_thin"),
        (_with(A, status=500), Options(), "source_status", "target_status"),
        (_with(A, text=" "), Options(), "source_no_text", None),
        (_with(A, noindex=True), Options(), None, "target_noindex"),
    ],
)
def test_page_exclusions(page, options, source_reason, target_reason):
    assert source_exclusion(page, options) == source_reason
    assert target_exclusion(page) == target_reason


LINKS = [Link("s", "t1", "x", "content"), Link("s", "t2", "y", "nav"), Link("s", "s", "self", "content")]


@pytest.mark.parametrize(
    ("content_only", "pairs"),
    [(False, {("s", "t1"), ("s", "t2"), ("s", "s")}), (True, {("s", "t1"), ("s", "s")})],
)
def test_existing_links_any_position_or_content_only(content_only, pairs):
    assert existing_links(LINKS, content_only) == pairs


def test_inbound_counts_distinct_sources_without_self_links():
    links = [Link("a", "t"), Link("a", "t"), Link("b", "t"), Link("t", "t")]
    crawl = Crawl(pages=[], links=links)
    assert inbound_counts(crawl)["t"] == 2


def _s(source: str, target: str, score: float) -> Suggestion:
    return Suggestion(source, target, score)


@pytest.mark.parametrize(
    ("per_source", "per_target", "kept"),
    [
        (5, 20, [("a", "x"), ("a", "y"), ("b", "x"), ("c", "x"), ("a", "z")]),
        (1, 20, [("a", "x"), ("b", "x"), ("c", "x")]),
        (5, 1, [("a", "x"), ("a", "y"), ("a", "z")]),
        (2, 2, [("a", "x"), ("a", "y"), ("b", "x")]),
    ],
)
def test_caps_are_greedy_in_score_order(per_source, per_target, kept):
    ranked = [_s("a", "x", 0.9), _s("a", "y", 0.8), _s("b", "x", 0.7), _s("c", "x", 0.6), _s("a", "z", 0.5)]
    result = apply_caps(ranked, per_source, per_target)
    assert [(s.source_url, s.target_url) for s in result] == kept
    ranks: dict[str, int] = {}
    for s in result:
        ranks[s.source_url] = ranks.get(s.source_url, 0) + 1
        assert s.rank == ranks[s.source_url]


NOW = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("published", "half_life", "factor"),
    [
        (None, 365, 1.0),
        ("2026-11-01", 0, 1.0),  # decay off
        ("2026-11-01", 365, 1.0),
        ("2025-11-01", 365, 0.5),
        ("2024-11-01T10:00:00Z", 365, 0.25),
        ("2024-11-02", 365, 0.25),
        ("not a date", 365, 1.0),
        ("2027-01-01", 365, 1.0),  # in the future: no boost
    ],
)
def test_date_factor(published, half_life, factor):
    assert date_factor(published, NOW, half_life) == pytest.approx(factor, abs=0.002)


@pytest.mark.parametrize(
    ("value", "parsed"),
    [("2026-01-02", datetime(2026, 1, 2, tzinfo=UTC)), ("2026-01-02T03:04:05+00:00",
                                                       datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
     ("", None), (None, None), ("yesterday", None)],
)
def test_parse_date(value, parsed):
    assert parse_date(value) == parsed


def test_combine_is_similarity_times_date_factor():
    assert combine({"similarity": 0.8, "date_factor": 0.5}, Options()) == pytest.approx(0.4)
    assert combine({"similarity": 0.8}, Options()) == pytest.approx(0.8)


def test_combine_gives_a_column_what_it_gives_each_pair():
    rng = np.random.default_rng(7)
    names = ("similarity", "best_chunk", "lexical", "mention", "needs_links", "date_factor")
    columns = {name: rounded(rng.uniform(-0.2, 1.0, 500).astype(np.float32).astype(np.float64))
               for name in names}
    scores = combine(columns, Options())
    for i in range(500):
        assert scores[i] == combine({name: float(columns[name][i]) for name in names}, Options())


def test_rounding_a_column_is_pythons_rounding_of_each_number():
    rng = np.random.default_rng(3)
    values = np.concatenate([
        rng.uniform(-3, 3, 200_000),
        rng.uniform(0, 1, 200_000).astype(np.float32).astype(np.float64),  # what cosines give
        np.arange(-2000, 2000) / 1e6 + 5e-7,  # halves, as near as a float gets to them
        [0.0, -0.0, 2.5e-7, -2.5e-7, 1e-12],
    ])
    assert rounded(values).tolist() == [round(v, 6) for v in values.tolist()]


def test_caps_take_the_same_pairs_by_number_as_by_url():
    sources, targets = [1, 1, 2, 3, 1], [7, 8, 7, 7, 9]
    assert capped(sources, targets, 2, 2) == [(0, 1), (1, 2), (2, 1)]


@pytest.mark.parametrize(("per_source", "per_target", "chunk"), [(2, 2, 7), (9, 3, 1 << 16), (1, 40, 100)])
def test_caps_over_page_numbers_in_chunks_take_what_the_caps_over_urls_take(per_source, per_target, chunk):
    """``capped_numbers`` reads the pairs a chunk at a time and counts in lists: the same pairs, in
    the same order, with the same ranks as ``capped`` over every pair at once."""
    rng = np.random.default_rng(per_source)
    sources, targets = rng.integers(0, 300, 5_000), rng.integers(0, 300, 5_000)
    expected = capped(sources.tolist(), targets.tolist(), per_source, per_target)
    taken, ranks = capped_numbers(sources.astype(np.int32), targets, per_source, per_target, 300, chunk)
    assert list(zip(taken.tolist(), ranks.tolist(), strict=True)) == expected
    assert taken.dtype == np.int64 and ranks.dtype == np.int32


def _scored_pairs(sources: int, seed: int) -> list[tuple[int, np.ndarray, np.ndarray, dict[str, np.ndarray]]]:
    """Random scored pairs for ``sources`` sources, as the ranking adds them a source at a time."""
    rng = np.random.default_rng(seed)
    found = []
    for source in range(sources):
        n = int(rng.integers(0, 40))
        parts = {"similarity": rng.random(n), "lexical": rng.random(n), "date_factor": np.full(n, 0.5)}
        found.append((source, rng.integers(0, sources, n), np.round(rng.random(n), 3), parts))  # ties: URLs
    return found


@pytest.mark.parametrize("spill", [1, 50, 1 << 16])
def test_the_pairs_parts_written_to_disk_come_back_as_the_caps_take_them(monkeypatch, spill):
    """The score parts of the pairs before the caps go to a temporary file ``SPILL_PAIRS`` pairs at a
    time (also those of chunks joined and pickled back from the second process): the capped pool
    is the one made in memory, column for column."""
    import pickle

    from postprocess.stages import candidates

    urls = [f"https://s.test/{i:04d}/" for i in range(500)]
    pairs = _scored_pairs(500, 3)

    def pools():  # in one process, and as chunks that come back from the second one
        whole, chunked = candidates._PairColumns(), candidates._PairColumns()
        for source, targets, scores, parts in pairs:
            whole.add(source, targets, scores, parts)
        for start in range(0, 500, 120):
            chunk = candidates._PairColumns()
            for source, targets, scores, parts in pairs[start:start + 120]:
                chunk.add(source, targets, scores, parts)
            chunk.join()
            chunked.extend(pickle.loads(pickle.dumps(chunk)))
        return whole.capped(urls, 4, 3), chunked.capped(urls, 4, 3)

    expected = pools()
    monkeypatch.setattr(candidates, "SPILL_PAIRS", spill)
    for made in pools():
        for wanted in expected:
            assert len(made) == len(wanted) > 0
            for name in ("sources", "targets", "scores", "ranks"):
                assert getattr(made, name).tolist() == getattr(wanted, name).tolist()
            assert made.parts.keys() == wanted.parts.keys()
            for name in made.parts:
                assert made.parts[name].tobytes() == wanted.parts[name].tobytes()


def test_the_pairs_parts_are_not_held_in_memory_before_the_caps():
    """200,000 scored pairs with 10 parts (16 MB of parts): the pool holds their sources, targets and
    scores, and at most ``SPILL_PAIRS`` pairs' parts."""
    import tracemalloc

    from postprocess.stages import candidates

    rng = np.random.default_rng(1)
    parts = {f"part{i}": rng.random(100) for i in range(10)}
    tracemalloc.start()
    try:
        pool = candidates._PairColumns()
        for source in range(2000):
            pool.add(source, rng.integers(0, 2000, 100), rng.random(100), parts)
        held, _ = tracemalloc.get_traced_memory()
        taken = pool.capped([f"u{i:05d}" for i in range(2000)], 3, 3)
    finally:
        tracemalloc.stop()
    assert pool.size == 200_000 and len(taken) > 0
    assert held < 200_000 * 16 + candidates.SPILL_PAIRS * 80 + 2_000_000, held  # 20 MB before


def test_the_caps_take_pairs_best_first_ties_broken_by_source_then_target_url():
    """The pool's pairs are those ``apply_caps`` takes from the rows sorted by ``sort_key`` (score
    descending, then source URL, then target URL), with the URLs' order not the pages' numbers and
    many scores tied; the scores given are left as they were."""
    from postprocess.stages import candidates

    rng = np.random.default_rng(7)
    urls = [f"https://s.test/{name}/" for name in rng.permutation([f"p{i:03d}" for i in range(300)])]
    pool, rows, given = candidates._PairColumns(), [], []
    for source in range(300):
        targets = rng.choice(300, 20, replace=False)
        scores = np.round(rng.random(20), 1)  # ~10 values: ties everywhere
        pool.add(source, targets, scores, {"similarity": scores * 2})
        given.append((scores, scores.copy()))
        rows += [Suggestion(urls[source], urls[t], float(v), {})
                 for t, v in zip(targets, scores, strict=True)]
    taken = pool.capped(urls, 4, 3)
    expected = apply_caps(sorted(rows, key=candidates.sort_key), 4, 3)
    assert [(urls[s], urls[t], v, r) for s, t, v, r in zip(taken.sources, taken.targets, taken.scores,
                                                            taken.ranks, strict=True)] == [
        (e.source_url, e.target_url, e.score, e.rank) for e in expected]
    assert taken.parts["similarity"].tolist() == [e.score * 2 for e in expected]
    assert all(scores.tobytes() == copy.tobytes() for scores, copy in given)


@pytest.mark.parametrize("band", [37, 500, 1 << 22])
def test_pairs_sorted_a_band_of_scores_at_a_time_come_in_the_order_of_one_sort(monkeypatch, band):
    """The caps sort the pairs a band of scores at a time (``CAPS_BAND_PAIRS``): the bands, best
    first, give the pairs in the order one sort of them all gives (score descending, then the URL
    key), with many tied scores, -0.0 beside 0.0, and NaN scores last; the caps then take the same
    pairs."""
    from postprocess.stages import candidates

    monkeypatch.setattr(candidates, "CAPS_BAND_PAIRS", band)
    rng = np.random.default_rng(11)
    scores = np.round(rng.random(3000) - 0.2, 1)  # ~12 values
    scores[rng.choice(3000, 40, replace=False)] = -0.0
    scores[rng.choice(3000, 30, replace=False)] = np.nan
    keys = rng.permutation(3000).astype(np.int64)
    order = candidates._UrlOrder([f"u{i:04d}" for i in range(3000)])
    pieces = list(candidates._in_best_order(keys, scores, order))
    rows = np.concatenate([piece[2] for piece in pieces])
    assert rows.tolist() == candidates._best_first(keys, scores).tolist()
    bands = list(candidates._score_bands(scores, band))
    if band > 3000:
        assert len(bands) == 1
    else:  # every row once; a band's scores all below the band before it's
        assert len(bands) > 2 and sorted(np.concatenate(bands).tolist()) == list(range(3000))
        lowest = [np.nanmin(scores[b]) if not np.isnan(scores[b]).all() else np.nan for b in bands]
        highest = [np.nanmax(scores[b]) if not np.isnan(scores[b]).all() else np.nan for b in bands]
        assert all(lo > hi for lo, hi in zip(lowest[:-2], highest[1:-1], strict=True))
        assert np.isnan(scores[bands[-1]]).all()


def test_the_caps_sort_holds_one_key_and_the_order_beside_the_pairs(monkeypatch):
    """The caps' sort holds, beside the pairs waiting (16 bytes each), one int64 key that takes the
    place of the sources and targets, the scores joined and the order (24 bytes a pair; under 28 with
    the caps' pass over a chunk), where two 8-byte URL keys, a negated copy of the scores and the
    columns joined and reordered held ~57."""
    import tracemalloc

    from postprocess.stages import candidates

    monkeypatch.setattr(candidates, "CAPS_CHUNK", 1024)  # the caps' pass: ~80 bytes a pair of a chunk
    rng = np.random.default_rng(2)
    pool = candidates._PairColumns()
    for source in range(2000):
        pool.add(source, rng.integers(0, 2000, 100), rng.random(100), {})
    tracemalloc.start()
    try:
        taken = pool.capped([f"u{i:05d}" for i in range(2000)], 3, 3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(taken) > 0
    assert peak < 200_000 * 28, peak


def test_the_caps_sort_holds_a_bands_order_not_every_pairs(monkeypatch):
    """Sorted a band of scores at a time, the caps hold beside the pairs waiting (16 bytes each) the
    key and the scores (16 bytes a pair), two masks (2) and a band's order and copies: under 23
    bytes a pair with bands of a twentieth of the pairs, where one sort of them all held ~26; the
    same pairs taken."""
    import tracemalloc

    from postprocess.stages import candidates

    monkeypatch.setattr(candidates, "CAPS_CHUNK", 1024)
    rng = np.random.default_rng(2)
    urls = [f"u{i:05d}" for i in range(2000)]

    def pool() -> candidates._PairColumns:
        made = candidates._PairColumns()
        for source in range(2000):
            made.add(source, rng.integers(0, 2000, 100), rng.random(100), {})
        return made

    state = rng.bit_generator.state
    whole = pool().capped(urls, 3, 3)
    rng.bit_generator.state = state
    banded = pool()
    monkeypatch.setattr(candidates, "CAPS_BAND_PAIRS", 10_000, raising=False)
    tracemalloc.start()
    try:
        taken = banded.capped(urls, 3, 3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert taken.sources.tolist() == whole.sources.tolist()
    assert taken.targets.tolist() == whole.targets.tolist()
    assert taken.ranks.tolist() == whole.ranks.tolist() and len(taken) > 0
    assert peak < 200_000 * 23, peak


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (Options(per_source=0), "--per-source must be at least 1"),
        (Options(per_target=0), "--per-target"),
        (Options(neighbours=0), "--neighbours"),
        (Options(trees=0), "--trees"),
        (Options(title_weight=1.5), "--title-weight"),
        (Options(min_score=-1.5), "--min-score"),
        (Options(max_similarity=1.5), "--max-similarity"),
        (Options(date_decay_days=-1), "--date-decay-days"),
        (Options(chunk_overlap=-1), "--chunk-overlap"),
    ],
)
def test_invalid_options_are_one_line_errors(options, message):
    with pytest.raises(InputError, match=message):
        validate(options)


@pytest.mark.parametrize("min_score", [-1.0, 0.5, 0.99, 2.0])
def test_min_score_may_pass_max_similarity(min_score):
    """The combined score passes 1 with lexical and name evidence: a cut of 2 is a valid choice."""
    validate(Options(min_score=min_score, max_similarity=0.95))


@pytest.mark.parametrize("content_only", [False, True])
def test_a_folds_filters_are_the_sites_less_the_hidden_pairs(content_only):
    """``PairFilter.without`` (a confidence fold's filters, the site's made once) lets through the
    pairs a filter made for the crawl without the hidden links lets through; the rest is the site's."""
    pages = [A, B, _with(B, url="https://s.test/c/"), _with(B, url="https://s.test/d/")]
    links = [Link(A.url, B.url), Link(A.url, B.url, position="nav"), Link(A.url, pages[2].url),
             Link(pages[3].url, A.url, position="nav"), Link(B.url, pages[2].url)]
    crawl = Crawl(pages=pages, links=links)
    urls = [p.url for p in pages]
    options = Options(content_links_only=content_only)
    hidden = {(A.url, B.url), (pages[3].url, A.url), ("https://s.test/gone/", A.url)}
    fewer = PairFilter(crawl, urls, options).without(hidden)
    rebuilt = PairFilter(Crawl(pages=pages, links=[k for k in links if (k.source_url, k.target_url)
                                                   not in hidden]), urls, options)
    assert fewer.linked.tolist() == rebuilt.linked.tolist()
    assert fewer.all_linked.tolist() == rebuilt.all_linked.tolist()
    assert fewer.pages == rebuilt.pages
    found = Candidates(np.arange(4), np.array([0.5] * 4), np.zeros(4, dtype=np.float32))
    assert fewer.allowed(0, found, Counter()).tolist() == [False, True, False, True]
