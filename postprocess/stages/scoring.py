"""The score of a (source, target) pair: its parts, and how they combine.

A part is a number in a named column of suggestions.csv. To add one, compute it
in ``score_parts`` and use it in ``combine``; nothing else changes.

The parts (weights tuned with ``python -m postprocess evaluate`` on the Django
docs and checked on the PostgreSQL docs, see docs/benchmarks.md):

* ``similarity`` — cosine of the two page vectors (the Annoy neighbour score);
* ``best_chunk`` — the best cosine between one passage (chunk) of the source and
  the target page: a long page that covers the target in one section;
* ``lexical`` — TF-IDF cosine of the two pages (shared rare words: names of
  functions, products, places that embeddings blur);
* ``mention`` — the source's text already names the target: one of the anchor
  texts other pages link it with, its h1 or its title (commonness ×
  √keyphraseness, see ``postprocess/stages/lexical.py``);
* ``needs_links`` — 1 / (1 + ln(1 + inbound)), inbound = other pages linking to
  the target: orphans get 1, a page with 20 inbound links 0.25;
* ``date_factor`` — the source's date decay (1 when off).

score = (½·similarity + ½·best_chunk + 1·lexical + 2·mention + 0.4·needs_links) × date_factor.
With only ``similarity`` known the score is the similarity, so ``--min-score``
keeps its meaning for pairs without lexical evidence; evidence can only raise a
pair above it.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from postprocess.options import Options
from postprocess.stages.links import LinkTable, content_uses
from postprocess.stages.load import Crawl, Page

if TYPE_CHECKING:
    from postprocess.stages.lexical import AnchorUses

#: Parts always present, in CSV column order (``score_parts`` may add more).
PART_COLUMNS = ("similarity", "best_chunk", "lexical", "mention", "needs_links", "date_factor")
#: Weight of each additive part; the semantic parts share weight 1 (best_chunk falls back to similarity).
WEIGHTS = {"similarity": 0.5, "best_chunk": 0.5, "lexical": 1.0, "mention": 2.0, "needs_links": 0.4}


@dataclass
class ScoringContext:
    """What the parts may need beyond the two pages (filled once per run)."""

    crawl: Crawl
    options: Options
    reference: datetime  # "now" for date decay: the newest fetch in the crawl
    extra: dict[str, object] = field(default_factory=dict)
    evidence: Evidence | None = None  # lexical evidence and vectors; None: similarity and date only


def crawl_reference_date(crawl: Crawl) -> datetime:
    """The newest fetched_at of the crawl (decay is reproducible for one crawl)."""
    dates = [p.fetched_at for p in crawl.pages if p.fetched_at is not None]
    return max(dates) if dates else datetime.now(UTC)


def parse_date(value: str | None) -> datetime | None:
    """An ISO 8601 date or datetime (naive = UTC); None when absent or unreadable."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def date_factor(published: str | None, reference: datetime, half_life_days: float) -> float:
    """0.5 ** (age / half-life) for a dated page; 1.0 for undated pages or when decay is off."""
    if half_life_days <= 0:
        return 1.0
    when = parse_date(published)
    if when is None:
        return 1.0
    age_days = max(0.0, (reference - when).total_seconds() / 86400.0)
    return 0.5 ** (age_days / half_life_days)


def needs_links(inbound: int) -> float:
    """1 for an orphan, falling slowly with the number of pages that already link to the target."""
    return 1.0 / (1.0 + math.log1p(max(0, inbound)))


class Evidence:
    """Per-run evidence beyond the Annoy neighbours: page and chunk vectors, lexical index, names."""

    def __init__(self, crawl: Crawl, embeddings: object, neighbours: int) -> None:
        from postprocess.stages.lexical import SiteEvidence, clean_title, page_document, site_title_parts

        urls = list(embeddings.urls)  # type: ignore[attr-defined]
        self.vectors = embeddings.vectors  # type: ignore[attr-defined]
        self.chunks = embeddings.chunk_vectors  # type: ignore[attr-defined]
        pages = {p.url: p for p in crawl.pages}
        ordered = [pages[u] for u in urls]
        site = site_title_parts([p.title for p in ordered])
        row = {u: i for i, u in enumerate(urls)}
        self.site = SiteEvidence(
            urls,
            [(p.h1, clean_title(p.title, site)) for p in ordered],
            [page_document(p.title, p.h1, p.headings, p.text) for p in ordered],
            [p.text for p in ordered],
            _anchor_uses(crawl, row),
            neighbours,
        )
        self._links_changed(crawl)

    def with_links(self, crawl: Crawl) -> Evidence:
        """This evidence for the same pages with other links (a confidence fold hides some): the
        lexical index is kept, names and inbound counts are made again."""
        evidence = copy.copy(self)
        evidence.site = self.site.with_anchor_uses(_anchor_uses(crawl, self.site.row))
        evidence._links_changed(crawl)
        return evidence

    def _links_changed(self, crawl: Crawl) -> None:
        self.inbound = inbound_counts(crawl)
        self._source = -1
        self._lexical: dict[int, float] = {}

    def candidates(self, source_url: str, neighbours: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """The Annoy neighbours, then the lexical neighbours and named pages they missed (with cosines)."""
        source = self.site.row.get(source_url)
        if source is None:
            return neighbours
        row = self.site.row
        merged = [(url, sim) for url, sim in neighbours]
        seen = {row.get(url) for url, _ in merged}
        extra = [t for t in self.site.candidates(source) if t not in seen and t != source]
        if extra:
            cosines = self.vectors[extra] @ self.vectors[source]
            merged += [(self.site.urls[t], float(c)) for t, c in zip(extra, cosines, strict=True)]
        targets = [row[url] for url, _ in merged if url in row]
        self._source = source
        cosines = self.site.lexical_similarities(source, targets).tolist()
        self._lexical = dict(zip(targets, cosines, strict=True))
        return merged

    def parts(self, source: int, target: int, similarity: float, target_url: str) -> dict[str, float]:
        chunks = self.chunks[source]
        best = float((chunks @ self.vectors[target]).max()) if len(chunks) else similarity
        if source == self._source and target in self._lexical:
            lexical = self._lexical[target]
        else:
            lexical = float(self.site.lexical_similarities(source, [target])[0])
        mention = self.site.mention(source, target)
        return {
            "best_chunk": round(best, 6),
            "lexical": round(lexical, 6),
            "mention": round(mention.weight if mention else 0.0, 6),
            "needs_links": round(needs_links(self.inbound.get(target_url, 0)), 6),
        }


def inbound_counts(crawl: Crawl) -> Counter[str]:
    """Distinct other pages linking to each URL (any position)."""
    if isinstance(crawl.links, LinkTable):
        return crawl.links.inbound()
    pairs = {(link.source_url, link.target_url) for link in crawl.links if link.source_url != link.target_url}
    return Counter(target for _, target in pairs)


def _anchor_uses(crawl: Crawl, row: dict[str, int]) -> list[tuple[int, int, str]] | AnchorUses:
    """(source row, target row, anchor text) of the crawl's in-content links between indexed pages
    (as columns when the links are a table)."""
    from postprocess.stages.lexical import AnchorUses

    links = crawl.links
    if isinstance(links, LinkTable):
        rows = np.fromiter((row.get(url, -1) for url in links.urls), dtype=np.int64, count=len(links.urls))
        mask = links.content()
        source, target = rows[links.source[mask]], rows[links.target[mask]]
        keep = (source >= 0) & (target >= 0)
        return AnchorUses(source[keep], target[keep], links.anchor[mask][keep], links.anchors)
    return [(row[source], row[target], anchor or "") for source, target, anchor in content_uses(crawl.links)
            if source in row and target in row]


def more_candidates(source_url: str, neighbours: list[tuple[str, float]],
                    context: ScoringContext) -> list[tuple[str, float]]:
    """``neighbours`` (target URL, cosine) plus what the lexical evidence adds, when there is any."""
    if context.evidence is None:
        return neighbours
    return context.evidence.candidates(source_url, neighbours)


def score_parts(source: Page, target: Page, similarity: float, context: ScoringContext) -> dict[str, float]:
    """The parts of one pair's score.

    Date decay applies to the SOURCE's published date: a link from an old news post
    brings an evergreen target few readers, so such sources sink in the queue.
    """
    parts = {"similarity": round(float(similarity), 6)}
    evidence = context.evidence
    if evidence is not None:
        s, t = evidence.site.row.get(source.url), evidence.site.row.get(target.url)
        if s is not None and t is not None:
            parts.update(evidence.parts(s, t, similarity, target.url))
    parts["date_factor"] = round(date_factor(source.published, context.reference,
                                             context.options.date_decay_days), 6)
    return parts


def combine(parts: dict[str, float], options: Options) -> float:
    """The ranking score: weighted sum of the parts (similarity alone when nothing else is known) × date."""
    semantic = (WEIGHTS["similarity"] * parts["similarity"]
                + WEIGHTS["best_chunk"] * parts.get("best_chunk", parts["similarity"]))
    bonus = sum(WEIGHTS[name] * parts.get(name, 0.0) for name in ("lexical", "mention", "needs_links"))
    return round((semantic + bonus) * parts.get("date_factor", 1.0), 6)
