"""Candidate pairs from the index, the filters, the caps and the ranking.

Filters, in order: self, pages that cannot be targets (thin, noindex, non-2xx),
pairs across languages, pairs already linked, similarity below ``min_score``,
similarity above ``max_similarity`` (near duplicates: cannibalisation report).
Then the survivors are ranked by score and taken greedily, best first, while the
source has fewer than ``per_source`` and the target fewer than ``per_target``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from postprocess.options import Options
from postprocess.stages import scoring
from postprocess.stages.embed import Embeddings
from postprocess.stages.index import PageIndex
from postprocess.stages.links import linked_pairs, pair_set
from postprocess.stages.load import Crawl, Link, Page


@dataclass(slots=True)
class Suggestion:
    """One proposed link: in ``source_url``, link ``anchor`` to ``target_url``."""

    source_url: str
    target_url: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    rank: int = 0  # 1 = best suggestion of its source
    anchor: str = ""
    anchor_type: str = ""  # "text": stands in the source text; "title": shortened target title
    context: str = ""  # the sentence the anchor stands in
    evidence: str = ""  # why the anchor names the target: link, title, slug, part, heading
    passage: str = ""  # the paragraph (block) the anchor stands in
    confidence: float = 0.0  # probability that the site's editors would make this link


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
    if not page.text.strip():
        return "source_no_text"
    if options.exclude_thin_sources and page.thin:
        return "source_thin"
    return None


def pair_rejection(source: Page, target: Page, similarity: float, linked: Container[tuple[str, str]],
                   options: Options, score: float | None = None) -> str | None:
    """Why a pair is not suggested, or None; ``near_duplicate`` pairs go to cannibalisation.

    ``min_score`` applies to ``score`` when given (the combined score), else to ``similarity``.
    """
    if source.url == target.url:
        return "self"
    reason = target_exclusion(target, options)
    if reason:
        return reason
    if (not options.allow_cross_language and source.lang and target.lang
            and source.lang.split("-")[0].lower() != target.lang.split("-")[0].lower()):
        return "cross_language"
    if (source.url, target.url) in linked:
        return "already_linked"
    if (similarity if score is None else score) < options.min_score:
        return "below_min_score"
    if similarity > options.max_similarity:
        return "near_duplicate"
    return None


def apply_caps(ranked: Iterable[Suggestion], per_source: int, per_target: int) -> list[Suggestion]:
    """Take suggestions best first while source and target are under their caps; set ``rank``."""
    given: Counter[str] = Counter()
    received: Counter[str] = Counter()
    kept: list[Suggestion] = []
    for s in ranked:
        if given[s.source_url] >= per_source or received[s.target_url] >= per_target:
            continue
        given[s.source_url] += 1
        received[s.target_url] += 1
        s.rank = given[s.source_url]
        kept.append(s)
    return kept


def sort_key(s: Suggestion) -> tuple[float, str, str]:
    """Score descending, then URLs, so the queue order is reproducible."""
    return (-s.score, s.source_url, s.target_url)


Duplicates = dict[tuple[str, str], Suggestion]  # unordered near-duplicate pair -> its row


def _record_duplicate(duplicates: Duplicates, a: str, b: str, similarity: float,
                      linked: Container[tuple[str, str]]) -> None:
    """Keep one row per unordered near-duplicate pair, for the cannibalisation report."""
    first, second = sorted((a, b))
    if (first, second) not in duplicates:
        both_ways = (first, second) in linked or (second, first) in linked
        duplicates[(first, second)] = Suggestion(first, second, round(similarity, 6), {
            "similarity": round(similarity, 6), "already_linked": float(both_ways)})


def find_candidates(crawl: Crawl, embeddings: Embeddings, index: PageIndex, options: Options,
                    pool_size: int | None = None, pool_targets: int | None = None,
                    evidence: scoring.Evidence | None = None, sources: frozenset[str] | None = None,
                    held_back: Mapping[tuple[str, str], str] | None = None,
                    ) -> tuple[list[Suggestion], list[Suggestion], Counter[str]]:
    """The ranked, capped queue, the near-duplicate pairs, and the count of each rejection.

    ``pool_size`` / ``pool_targets`` cap each source / target instead of ``per_source`` /
    ``per_target``: the pool that anchors and confidence then thin out. ``evidence`` (built for
    this crawl's pages and links) is reused when given; ``sources`` limits the sources ranked.
    ``held_back`` maps pairs an editor already decided to their state: they leave before the
    caps (rejection ``decided_<state>``), so the queue fills with pairs nobody has judged.
    """
    pages = {p.url: p for p in crawl.pages}
    context = scoring.ScoringContext(crawl=crawl, options=options,
                                     reference=scoring.crawl_reference_date(crawl),
                                     evidence=evidence or scoring.Evidence(crawl, embeddings,
                                                                           options.neighbours))
    items = [(item, url) for item, url in enumerate(index.urls)
             if url in pages and (sources is None or url in sources)]
    linked = pair_set(crawl.links, options.content_links_only)
    all_linked = pair_set(crawl.links) if options.content_links_only else linked
    pool, duplicates, rejected = _score_sources(items, pages, index, options, context, linked, all_linked,
                                                held_back or {})
    pool.sort(key=sort_key)
    queue = apply_caps(pool, pool_size or options.per_source, pool_targets or options.per_target)
    rejected["over_cap"] += len(pool) - len(queue)
    cannibal = sorted(duplicates.values(), key=sort_key)
    return queue, cannibal, rejected


def _score_sources(items: Sequence[tuple[int, str]], pages: Mapping[str, Page], index: PageIndex,
                   options: Options, context: scoring.ScoringContext, linked: Container[tuple[str, str]],
                   all_linked: Container[tuple[str, str]], held_back: Mapping[tuple[str, str], str],
                   ) -> tuple[list[Suggestion], Duplicates, Counter[str]]:
    """Every pair of these (index item, URL) sources that passes the filters, scored (no caps)."""
    rejected: Counter[str] = Counter()
    pool: list[Suggestion] = []
    duplicates: Duplicates = {}
    count = max(options.neighbours, options.per_source)
    for item, url in items:
        source = pages[url]
        reason = source_exclusion(source, options)
        if reason:
            rejected[reason] += 1
            continue
        neighbours = [(index.urls[other], sim)
                      for other, sim in index.neighbours(item, count, options.search_k)]
        for target_url, similarity in scoring.more_candidates(source.url, neighbours, context):
            target = pages.get(target_url)
            if target is None:
                continue
            if similarity > options.max_similarity and source.url != target.url:
                _record_duplicate(duplicates, source.url, target.url, similarity, all_linked)
            reason = pair_rejection(source, target, similarity, linked, options, score=float("inf"))
            if reason:
                rejected[reason] += 1
                continue
            decided = held_back.get((source.url, target.url))
            if decided:
                rejected[f"decided_{decided}"] += 1
                continue
            parts = scoring.score_parts(source, target, similarity, context)
            score = scoring.combine(parts, options)
            if score < options.min_score:
                rejected["below_min_score"] += 1
                continue
            pool.append(Suggestion(source.url, target.url, score, parts))
    return pool, duplicates, rejected
