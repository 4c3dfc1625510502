"""Candidate pairs from the index, the filters, the caps and the ranking.

Filters, in order (``PairFilter``): self, pages that cannot be targets (thin,
noindex, non-2xx), pairs across languages, pairs already linked, similarity above
``max_similarity`` (near duplicates: cannibalisation report); then pairs an editor
decided, then a combined score below ``min_score``. The survivors are ranked by
score and taken greedily, best first, while the source has fewer than
``per_source`` and the target fewer than ``per_target``. A source's pairs are
filtered and scored as columns (NumPy arrays of page numbers and parts).
"""

from __future__ import annotations

import copy
import os
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from postprocess import background
from postprocess.memory import drop_file_pages, give_back
from postprocess.options import Options
from postprocess.stages import scoring
from postprocess.stages.embed import Embeddings
from postprocess.stages.index import PageIndex
from postprocess.stages.links import in_sorted, linked_keys, linked_pairs
from postprocess.stages.load import Crawl, Link, Page, has_text
from postprocess.stages.spill import ArrayFile, OnDisk, mapped
from postprocess.stages.suggestions import Pool, Suggestion


def existing_links(links: Iterable[Link], content_only: bool = False) -> set[tuple[str, str]]:
    """(source, target) pairs already linked; only in-content links when ``content_only``."""
    return linked_pairs(links, content_only)


def target_exclusion(page: Page, options: Options | None = None) -> str | None:
    """Why a page may not receive suggestions (None: it may): content pages, listings only when asked."""
    if page.kind != "content" and not (page.kind == "listing" and options is not None
                                       and options.listing_targets):
        return f"target_{page.kind}"
    if not 200 <= page.status < 300:
        return "target_status"
    if page.noindex:
        return "target_noindex"
    if page.thin:
        return "target_thin"
    return None


def source_exclusion(page: Page, options: Options) -> str | None:
    """Why a page may not give suggestions (None: it may): content pages only; thin ones unless excluded."""
    if page.kind != "content":
        return f"source_{page.kind}"
    if not 200 <= page.status < 300:
        return "source_status"
    if not has_text(page):
        return "source_no_text"
    if options.exclude_thin_sources and page.thin:
        return "source_thin"
    return None


def apply_caps(ranked: Iterable[Suggestion], per_source: int, per_target: int) -> list[Suggestion]:
    """Take suggestions best first while source and target are under their caps; set ``rank``."""
    ranked = list(ranked)
    taken = capped([s.source_url for s in ranked], [s.target_url for s in ranked], per_source, per_target)
    for i, rank in taken:
        ranked[i].rank = rank
    return [ranked[i] for i, _ in taken]


def capped(sources: Sequence[Hashable], targets: Sequence[Hashable], per_source: int,
           per_target: int) -> list[tuple[int, int]]:
    """Pairs (``sources[i]``, ``targets[i]``), best first, taken while source and target are under
    their caps: (i, the pair's rank in its source) of each pair taken."""
    number: dict[Hashable, int] = {}
    ids = [np.fromiter((number.setdefault(key, len(number)) for key in keys), dtype=np.int64, count=len(keys))
           for keys in (sources, targets)]
    taken, ranks = capped_numbers(*ids, per_source, per_target, len(number))
    return list(zip(taken.tolist(), ranks.tolist(), strict=True))


#: Pairs the caps read at a time (as Python ints: a list of every pair's ints cost ~80 bytes a pair).
CAPS_CHUNK = 1 << 16


def capped_numbers(sources: np.ndarray, targets: np.ndarray, per_source: int, per_target: int,
                   numbers: int, chunk: int = CAPS_CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """``capped`` for pages given as numbers below ``numbers``: (positions taken, each one's rank in its
    source) as arrays, the pairs read ``chunk`` at a time."""
    chunks = ((sources[start:start + chunk], targets[start:start + chunk])
              for start in range(0, len(sources), chunk))
    return capped_chunks(chunks, per_source, per_target, numbers)


def capped_chunks(chunks: Iterable[tuple[np.ndarray, ...]], per_source: int, per_target: int,
                  numbers: int) -> tuple[np.ndarray, np.ndarray]:
    """``capped_numbers`` over the pairs given as (sources, targets) pieces, in order; a piece given
    as (sources, targets, labels) gives its pairs' labels in place of their positions."""
    given = [0] * numbers
    received = [0] * numbers
    taken, ranks = array("q"), array("i")
    start = 0
    for sources, targets, *labelled in chunks:
        labels = labelled[0].tolist() if labelled else None
        for i, (source, target) in enumerate(zip(sources.tolist(), targets.tolist(), strict=True)):
            rank = given[source] + 1
            if rank > per_source or received[target] >= per_target:
                continue
            given[source] = rank
            received[target] += 1
            taken.append(start + i if labels is None else labels[i])
            ranks.append(rank)
        start += len(sources)
    return np.frombuffer(taken, dtype=np.int64), np.frombuffer(ranks, dtype=np.int32)


def sort_key(s: Suggestion) -> tuple[float, str, str]:
    """Score descending, then URLs, so the queue order is reproducible."""
    return (-s.score, s.source_url, s.target_url)


Duplicates = dict[tuple[str, str], Suggestion]  # unordered near-duplicate pair -> its row

#: Sources ranked together: each looks up its neighbours and evidence alone, then the block's pairs
#: are filtered, scored and pooled as columns (``find_candidates``).
RANK_BLOCK = 256
#: Sources ranked between two drops of the mapped files' pages from the resident set
#: (``memory.drop_file_pages``): the page index, the page and chunk vectors and the TF-IDF matrix a
#: block of sources reads add up, over a million pages' chunk of sources, to several GB of file pages
#: (a drop after every block, whenever they passed 1 GiB, was measured: ~1.7 GB is read by one block,
#: so the peak fell only 3.7 → 2.9 GB, and the ranking took 302 → 448 s re-mapping them;
#: docs/benchmarks.md).
RANK_DROP_SOURCES = 8 * RANK_BLOCK


def neighbours_asked(options: Options) -> int:
    """How many nearest pages the ranking asks the page index for, a source at a time (what the
    neighbour table, made before it, must hold)."""
    return max(options.neighbours, options.per_source)


def find_candidates(crawl: Crawl, embeddings: Embeddings, index: PageIndex, options: Options,
                    pool_size: int | None = None, pool_targets: int | None = None,
                    evidence: scoring.Evidence | None = None, sources: frozenset[str] | None = None,
                    held_back: Mapping[tuple[str, str], str] | None = None,
                    filters: PairFilter | None = None, workers: int = 1,
                    before_caps: Callable[[], None] | None = None,
                    ) -> tuple[Pool, list[Suggestion], Counter[str]]:
    """The ranked, capped queue, the near-duplicate pairs, and the count of each rejection.

    ``pool_size`` / ``pool_targets`` cap each source / target instead of ``per_source`` /
    ``per_target``: the pool that anchors and confidence then thin out. ``evidence`` (built for
    this crawl's pages and links) is reused when given; ``sources`` limits the sources ranked.
    ``held_back`` maps pairs an editor already decided to their state: they leave before the
    caps (rejection ``decided_<state>``), so the queue fills with pairs nobody has judged.
    ``filters``: the ``PairFilter`` of this crawl over the index's pages, when made already.
    ``workers`` above 1: the sources are ranked in chunks shared with a forked second process
    (``background.in_chunks``) when there are enough of them (``background.worth_a_fork``).
    ``before_caps`` is called once every source is ranked, before the caps' sort: a caller that lets
    its evidence go there has the sort take the memory it held (this function holds neither the
    evidence nor the filters by then).

    Every source's pairs are filtered and scored as columns, and the pairs the caps keep stay
    columns (a ``Pool``): rows are made when they are read.
    """
    evidence = evidence or scoring.Evidence(crawl, embeddings, options.neighbours)
    if index.urls != evidence.site.urls:
        raise ValueError("the index and the page vectors list different pages")
    site = filters or PairFilter(crawl, index.urls, options)
    index.ready()  # the neighbour table mapped before any fork (each process reads it, none waits for it)
    reference = scoring.crawl_reference_date(crawl)
    count = neighbours_asked(options)

    def rank(items: Sequence[int], join: bool = False) -> _Ranked:
        """The scored pairs, rejections and near-duplicate pairs of the sources ``items`` (``join``:
        each column in one piece, a chunk's result to pickle back), ``RANK_BLOCK`` sources at a time."""
        ranked = _Ranked()
        for start in range(0, len(items), RANK_BLOCK):
            rank_block(items[start:start + RANK_BLOCK], ranked)
            if (start + RANK_BLOCK) % RANK_DROP_SOURCES == 0:
                drop_file_pages()
        if join:
            ranked.pool.join()
        return ranked

    def rank_block(items: Sequence[int], ranked: _Ranked) -> None:
        """Rank a block of sources: each source's neighbours and evidence are looked up on its own,
        then the block's pairs are filtered, scored and pooled as one set of columns (a source's
        pairs alone cost ~30 NumPy calls of ~50 pairs each)."""
        rejected = ranked.rejected
        sources: list[int] = []
        factors: list[float] = []
        found_each: list[scoring.Candidates] = []
        evidence.site.look_ahead(items)
        for item in items:
            source = site.pages[item]
            if source is None:  # a sample's items are its pages already (below)
                continue
            reason = source_exclusion(source, options)
            if reason:
                rejected[reason] += 1
                continue
            found = evidence.candidates(item, *index.neighbour_columns(item, count, options.search_k))
            found_each.append(evidence.with_mentions(item, found))
            sources.append(item)
            # date decay applies to the SOURCE's date: a link from an old news post brings an evergreen
            # target few readers, so such sources sink in the queue
            factors.append(scoring.rounded(scoring.date_factor(source.published, reference,
                                                               options.date_decay_days)))
        if not sources:
            return
        found = scoring.Candidates.joined(found_each)
        place = np.repeat(np.arange(len(sources), dtype=np.int64), [len(f.rows) for f in found_each])
        del found_each
        block = np.array(sources, dtype=np.int64)
        keep = site.has_page[found.rows]
        found, place = found.take(keep), place[keep]
        pair_sources = block[place]
        site.record_duplicates(pair_sources, found, ranked.duplicates)
        keep = site.allowed(pair_sources, found, rejected)
        found, place = found.take(keep), place[keep]
        if held_back:
            keep = _not_decided(block[place], found, site, held_back, rejected)
            found, place = found.take(keep), place[keep]
        parts = {"similarity": scoring.rounded(found.similarities),
                 **evidence.part_columns(block, place, found),
                 "date_factor": np.array(factors, dtype=np.float64)[place]}
        score = scoring.combine(parts, options)
        keep = score >= options.min_score
        _count(rejected, "below_min_score", len(keep) - int(keep.sum()))
        ranked.pool.add(block[place[keep]], found.rows[keep], score[keep],
                        {name: column[keep] for name, column in parts.items()})

    items: Sequence[int] = range(len(site.pages))
    if sources is not None:  # a sample (the confidence model's folds): only its pages are looked at
        items = [item for item, page in enumerate(site.pages) if page is not None and page.url in sources]
    if background.worth_a_fork(len(items), workers, background.SPLIT_MIN_SOURCES):
        # each source's pairs depend on it alone: the sources in chunks shared with a second process
        # (the TF-IDF index made first, here: ``Evidence.ready``), merged in source order
        evidence.ready()
        # the mention weights' table made here, once, and shared: made in each process after the fork,
        # it read every name object there, copying their pages into the second process
        evidence.site.look_ahead([])
        chunks = background.in_chunks(lambda part: rank(part, join=True), items,
                                      chunk=max(background.CHUNK, len(items) // 64))
    else:
        chunks = [rank(items)]  # the pieces joined once, by the caps, a column at a time
    pool = _PairColumns()
    rejected: Counter[str] = Counter()
    duplicates: Duplicates = {}
    for chunk in chunks:
        pool.extend(chunk.pool)
        rejected.update(chunk.rejected)
        for pair, row in chunk.duplicates.items():
            duplicates.setdefault(pair, row)  # the first source to find a pair writes its row
    del chunks
    # what only the ranking reads goes before the caps' sort, the stage's largest step: the evidence
    # (the names' and TF-IDF neighbours' tables) unless the caller keeps it, the filters' linked pairs
    # (8 bytes a link) — with the evidence ~1.1 GB at a million pages — and the files the ranking
    # read (the page index, the page and chunk vectors, the TF-IDF matrix) out of the resident set
    evidence = site = None
    if before_caps is not None:
        before_caps()
    give_back()
    queue = pool.capped(index.urls, pool_size or options.per_source, pool_targets or options.per_target)
    _count(rejected, "over_cap", pool.size - len(queue))
    cannibal = sorted(duplicates.values(), key=sort_key)
    return queue, cannibal, rejected


def _count(rejected: Counter[str], reason: str, count: int) -> None:
    """Add ``count`` pairs rejected for ``reason`` (a reason with none is not listed)."""
    if count:
        rejected[reason] += count


class PairFilter:
    """The filters over the index's pages (item i = ``urls[i]``): each page (None when the crawl
    lacks it), why it cannot be a target, its language, the pairs already linked."""

    def __init__(self, crawl: Crawl, urls: Sequence[str], options: Options) -> None:
        by_url = {p.url: p for p in crawl.pages}
        self.urls, self.options = urls, options
        self.pages = [by_url.get(url) for url in urls]
        self.has_page = np.array([p is not None for p in self.pages], dtype=bool)
        codes: dict[str | None, int] = {None: 0}
        self.exclusion = np.array([codes.setdefault(target_exclusion(p, options), len(codes))
                                   if p is not None else 0 for p in self.pages], dtype=np.int64)
        self.reasons: list[str | None] = list(codes)
        languages: dict[str, int] = {"": 0}
        self.language = np.array([languages.setdefault(p.lang.split("-")[0].lower(), len(languages))
                                  if p is not None and p.lang else 0 for p in self.pages], dtype=np.int64)
        # read only, once made: in file pages (``spill.mapped``) that a drop takes out of the resident
        # set while the filters wait — the site's, kept for every confidence fold's ranking, waits
        # through each fold's anchoring (its keys: ~0.5 GB at a million pages)
        self.linked = mapped(linked_keys(crawl.links, urls, options.content_links_only))
        self.all_linked = (mapped(linked_keys(crawl.links, urls)) if options.content_links_only
                           else self.linked)

    def without(self, hidden: Iterable[tuple[str, str]]) -> PairFilter:
        """These filters for the same pages with the links of the ``hidden`` (source, target) URL
        pairs gone (a confidence fold's): only the linked pairs change, a hidden pair losing all
        its links."""
        where = {url: i for i, url in enumerate(self.urls)}
        n = len(self.urls)
        keys = np.sort(np.array([where[s] * n + where[t] for s, t in hidden if s in where and t in where],
                                dtype=np.int64))
        fewer = copy.copy(self)
        fewer.linked = self.linked[~in_sorted(keys, self.linked)]
        fewer.all_linked = (self.all_linked[~in_sorted(keys, self.all_linked)]
                            if self.all_linked is not self.linked else fewer.linked)
        return fewer

    def allowed(self, source: int | np.ndarray, found: scoring.Candidates,
                rejected: Counter[str]) -> np.ndarray:
        """Mask of the pairs that pass the filters, in order (self, the target's own exclusion,
        language, already linked, near duplicate); each rejection counted under its first reason.
        ``source``: the pairs' source item, or each pair's (an int64 column beside ``found``)."""
        targets, keep = found.rows, found.rows != source
        _count(rejected, "self", len(keep) - int(keep.sum()))
        codes = np.bincount(self.exclusion[targets[keep]], minlength=len(self.reasons))
        for code in np.flatnonzero(codes[1:]) + 1:
            rejected[self.reasons[code]] += int(codes[code])
        keep &= self.exclusion[targets] == 0
        if not self.options.allow_cross_language:  # a source without a language crosses none
            language, theirs = self.language[source], self.language[targets]
            other = keep & (language != 0) & (theirs != 0) & (theirs != language)
            _count(rejected, "cross_language", int(other.sum()))
            keep &= ~other
        linked = keep & self.is_linked(source, targets, self.linked)
        _count(rejected, "already_linked", int(linked.sum()))
        keep &= ~linked
        twins = keep & (found.similarities > self.options.max_similarity)
        _count(rejected, "near_duplicate", int(twins.sum()))
        return keep & ~twins

    def is_linked(self, source: int | np.ndarray, targets: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Mask of ``targets`` that ``source`` (or each pair's source) links already (``keys``: see
        ``linked_keys``)."""
        return in_sorted(keys, source * len(self.urls) + targets)

    def record_duplicates(self, source: int | np.ndarray, found: scoring.Candidates,
                          duplicates: Duplicates) -> None:
        """Keep one row per unordered near-duplicate pair, for the cannibalisation report (the first
        pair found of the two ways); ``source`` the pairs' source, or each pair's."""
        twins = (found.similarities > self.options.max_similarity) & (found.rows != source)
        if not twins.any():
            return
        sources = np.broadcast_to(np.asarray(source, dtype=np.int64), twins.shape)[twins]
        targets = found.rows[twins]
        # linked either way, any position: looked up for all the twins at once
        linked = (self.is_linked(sources, targets, self.all_linked)
                  | self.is_linked(targets, sources, self.all_linked))
        urls = self.urls
        for source, target, similarity, both_ways in zip(sources.tolist(), targets.tolist(),
                                                        found.similarities[twins].tolist(), linked.tolist(),
                                                        strict=True):
            first, second = sorted((urls[source], urls[target]))
            if (first, second) not in duplicates:
                duplicates[(first, second)] = Suggestion(first, second, round(similarity, 6), {
                    "similarity": round(similarity, 6), "already_linked": float(both_ways)})


class _UrlOrder:
    """The pages' places when their URLs are sorted, and a pair's (source, target) as one int64 that
    sorts as the two URLs do (ties in score are broken by source URL, then target URL)."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.pages = len(urls)
        kind = np.int32 if self.pages < 1 << 31 else np.int64
        self.by_place = np.array(sorted(range(self.pages), key=urls.__getitem__), dtype=kind)
        self.place = np.empty(self.pages, dtype=kind)
        self.place[self.by_place] = np.arange(self.pages, dtype=kind)

    def keys(self, sources: list[np.ndarray], targets: list[np.ndarray], size: int) -> np.ndarray:
        """The pairs' keys, the two columns' pieces let go as they are read (the keys take their place:
        8 bytes a pair, as the two columns of 4)."""
        key = np.empty(size, dtype=np.int64)
        start = 0
        sources.reverse()
        targets.reverse()
        while sources:
            source, target = sources.pop(), targets.pop()
            end = start + len(source)
            np.multiply(self.place[source], self.pages, out=key[start:end], dtype=np.int64)
            key[start:end] += self.place[target]
            start = end
        return key

    def pairs(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (sources, targets) of ``keys``."""
        sources, targets = np.divmod(keys, self.pages)
        return self.by_place[sources], self.by_place[targets]


def _best_first(keys: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The pairs' order, best first: score descending, then the pairs' URL keys. The scores are
    negated in place for the sort and back after it (exact), not copied."""
    np.negative(scores, out=scores)
    try:
        return np.lexsort((keys, scores))
    finally:
        np.negative(scores, out=scores)


#: Pairs the caps sort at once, about: the pairs are sorted a band of scores at a time, best band
#: first, so the order and the sort's buffers are a band's, not every pair's (a million synthetic
#: pages: ~80M pairs, ~12 bytes a pair, ~1 GB of the ranking's end).
CAPS_BAND_PAIRS = 1 << 22


def _score_bands(scores: np.ndarray, pairs: int) -> Iterator[np.ndarray]:
    """The pairs' rows in bands of scores, best band first, ~``pairs`` rows each (cut at the scores of
    a sample: a score is never split, so many pairs of one score make a larger band), the rows of
    NaN scores last, where the sort puts them; each band's rows (ascending) made when it is reached.
    At most ``pairs`` scores: one band, given empty (``_in_best_order`` sorts every row in place)."""
    if len(scores) <= pairs:
        yield np.arange(0)
        return
    bands = -(-len(scores) // pairs)
    sample = np.sort(scores[::max(1, len(scores) // (64 * bands))])[::-1]  # descending, NaN first
    sample = sample[~np.isnan(sample)]
    cuts = sorted({float(sample[b * len(sample) // bands]) for b in range(1, bands)} if len(sample) else (),
                  reverse=True)
    above, mask, below = np.inf, np.empty(len(scores), dtype=bool), np.empty(len(scores), dtype=bool)
    for cut in [*cuts, -np.inf]:  # two masks made again in place for each band: 2 bytes a pair
        np.greater_equal(scores, cut, out=mask)
        if above < np.inf:
            mask &= np.less(scores, above, out=below)
        band = np.flatnonzero(mask)
        if len(band):
            yield band
        above = cut
    del mask, below
    band = np.flatnonzero(np.isnan(scores))
    if len(band):
        yield band


def _in_best_order(keys: np.ndarray, scores: np.ndarray, urls_order: _UrlOrder
                   ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The pairs best first (``_best_first``) as (sources, targets, rows) pieces of ``CAPS_CHUNK``,
    sorted a band of scores at a time (``_score_bands``): the order held is a band's."""
    for band in _score_bands(scores, CAPS_BAND_PAIRS):
        if not len(band):  # every pair: sorted in place, no copy of the keys and scores
            band = _best_first(keys, scores)
        else:
            band = band[_best_first(keys[band], scores[band])]
        for start in range(0, len(band), CAPS_CHUNK):
            rows = band[start:start + CAPS_CHUNK]
            yield (*urls_order.pairs(keys[rows]), rows)


def _not_decided(sources: np.ndarray, found: scoring.Candidates, site: PairFilter,
                 held_back: Mapping[tuple[str, str], str], rejected: Counter[str]) -> np.ndarray:
    """Mask of the pairs (``sources``: each one's source item) no editor has decided yet; decided
    ones counted as ``decided_<state>``."""
    urls = site.urls
    states = [held_back.get((urls[s], urls[t]))
              for s, t in zip(sources.tolist(), found.rows.tolist(), strict=True)]
    for state in states:
        if state:
            rejected[f"decided_{state}"] += 1
    return np.array([not state for state in states], dtype=bool)


#: Scored pairs whose score parts are kept in memory before they go to the pool's ``ArrayFile``.
SPILL_PAIRS = 1 << 16


class _PairColumns:
    """Scored pairs of many sources as columns (index items), until the caps choose among them.

    Every pair the filters and ``min_score`` let through waits here (~50 a page), and its score
    parts are most of its bytes (six parts: 48 of 64): they go to a temporary file
    (``spill.ArrayFile``) ``SPILL_PAIRS`` pairs at a time, and only the pairs the caps keep are read
    back (100k synthetic pages: ~5M pairs, ~0.25 GB of parts that the main process held while the
    pairs came back from the second process). Sources, targets and scores, which the caps sort,
    stay in memory."""

    def __init__(self) -> None:
        self.sources: list[np.ndarray] = []
        self.targets: list[np.ndarray] = []
        self.scores: list[np.ndarray] = []
        self.parts: dict[str, list[np.ndarray | OnDisk]] = {}
        self.size = 0
        self._loose = 0  # pairs whose parts are still in memory (the last pieces of each column)
        self._file: ArrayFile | None = None

    def add(self, sources: int | np.ndarray, targets: np.ndarray, scores: np.ndarray,
            parts: dict[str, np.ndarray]) -> None:
        """Pairs of one source, or each its own (``sources`` a column beside ``targets``), their
        scores and score parts."""
        self.sources.append(np.full(len(targets), sources, dtype=np.int32) if isinstance(sources, int)
                            else sources.astype(np.int32))
        self.targets.append(targets.astype(np.int32))
        self.scores.append(scores)
        for name, column in parts.items():
            self.parts.setdefault(name, []).append(column)
        self._added(len(targets))

    def _added(self, pairs: int) -> None:
        self.size += pairs
        self._loose += pairs
        if self._loose >= SPILL_PAIRS:
            self._spill()

    def _spill(self) -> None:
        """The parts still in memory written to the file, a piece per column; the sources', targets'
        and scores' small pieces joined (a piece a source costs its array's ~100 bytes)."""
        if self._file is None or self._file.owner != os.getpid():
            self._file = ArrayFile()
        for pieces in self.parts.values():
            loose = _loose_tail(pieces)
            if loose:
                pieces[-loose:] = [self._file.write(np.concatenate(pieces[-loose:]))]
        for pieces in (self.sources, self.targets, self.scores):
            loose = _loose_tail(pieces, self._loose)
            if loose > 1:
                pieces[-loose:] = [np.concatenate(pieces[-loose:])]
        self._loose = 0

    def join(self) -> None:
        """Each column's pieces joined into one (a chunk's result, small to pickle and to extend by)."""
        if len(self.sources) > 1:
            self.sources, self.targets = [np.concatenate(self.sources)], [np.concatenate(self.targets)]
            self.scores = [np.concatenate(self.scores)]
            self.parts = {name: [_joined(pieces)] for name, pieces in self.parts.items()}
            self._loose, self._file = self.size, None

    def __getstate__(self) -> dict[str, object]:
        """Pickled with its parts' values (its file is this process's), without the file."""
        return {**self.__dict__, "_file": None}

    def extend(self, other: _PairColumns) -> None:
        """Add ``other``'s pairs after these (its parts in memory, as a chunk's come back, are
        written to this pool's file when enough have come)."""
        self.sources += other.sources
        self.targets += other.targets
        self.scores += other.scores
        for name, pieces in other.parts.items():
            self.parts.setdefault(name, []).extend(pieces)
        self._added(other.size)

    def capped(self, urls: Sequence[str], per_source: int, per_target: int) -> Pool:
        """The pairs taken best first (score, then source and target URL) under the caps."""
        if not self.size:
            return Pool(urls, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), {})
        scores = _joined_once(self.scores)
        urls_order = _UrlOrder(urls)
        keys = urls_order.keys(self.sources, self.targets, self.size)
        rows, places = capped_chunks(_in_best_order(keys, scores, urls_order), per_source, per_target,
                                     len(urls))
        (sources, targets), scores = urls_order.pairs(keys[rows]), scores[rows]  # every pair's columns let go
        del keys
        by_row = np.argsort(rows, kind="stable")  # the kept rows in pair order, to read each piece once
        parts = {}
        for name in list(self.parts):
            parts[name] = _gathered(self.parts.pop(name), rows, by_row)
        self._file = None
        return Pool(urls, sources, targets, scores, places, parts)


def _loose_tail(pieces: list, most: int | None = None) -> int:
    """How many of the last ``pieces`` are arrays in memory (of ``most`` pairs at most)."""
    count, pairs = 0, 0
    for piece in reversed(pieces):
        if not isinstance(piece, np.ndarray) or (most is not None and pairs + len(piece) > most):
            break
        count, pairs = count + 1, pairs + len(piece)
    return count


def _joined_once(pieces: list[np.ndarray]) -> np.ndarray:
    """A column's pieces in memory as one array, the list emptied (its pieces freed as it is made)."""
    joined = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
    pieces.clear()
    return joined


def _joined(pieces: list[np.ndarray | OnDisk]) -> np.ndarray:
    """A column's pieces as one array."""
    return np.concatenate([piece.read() if isinstance(piece, OnDisk) else piece for piece in pieces])


def _gathered(pieces: list[np.ndarray | OnDisk], rows: np.ndarray, by_row: np.ndarray) -> np.ndarray:
    """``np.concatenate(pieces)[rows]``, each piece read once and only where a row falls in it
    (``by_row``: the order that sorts ``rows``)."""
    ordered = rows[by_row]
    out = np.empty(len(rows), dtype=pieces[0].dtype if pieces else np.float64)
    start = 0
    for piece in pieces:
        lo, hi = np.searchsorted(ordered, (start, start + len(piece)))
        if hi > lo:
            values = piece.read() if isinstance(piece, OnDisk) else piece
            out[by_row[lo:hi]] = values[ordered[lo:hi] - start]
        start += len(piece)
    return out


@dataclass
class _Ranked:
    """What ranking some sources found: their scored pairs, rejections and near-duplicate pairs."""

    pool: _PairColumns = field(default_factory=_PairColumns)
    rejected: Counter[str] = field(default_factory=Counter)
    duplicates: Duplicates = field(default_factory=dict)
