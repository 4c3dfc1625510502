"""The score of a (source, target) pair: its parts, and how they combine.

A part is a number in a named column of suggestions.csv. The ranking computes
them for all of one source's candidates at once, as columns: to add one, compute
it in ``Evidence.part_columns`` and use it in ``combine``; nothing else changes.

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
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from postprocess.options import Options
from postprocess.stages.links import LinkTable, content_uses, links_table, pairs_in
from postprocess.stages.load import Crawl, Page, PageValues

if TYPE_CHECKING:
    from postprocess.background import Background
    from postprocess.stages.lexical import AnchorUses

#: Parts always present, in CSV column order (``Evidence.part_columns`` may add more).
PART_COLUMNS = ("similarity", "best_chunk", "lexical", "mention", "needs_links", "date_factor")
#: Weight of each additive part; the semantic parts share weight 1 (best_chunk falls back to similarity).
WEIGHTS = {"similarity": 0.5, "best_chunk": 0.5, "lexical": 1.0, "mention": 2.0, "needs_links": 0.4}


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


def pages_in_order(crawl: Crawl, urls: Sequence[str]) -> list[Page]:
    """The crawl's pages of ``urls``, in that order (the page vectors' order)."""
    pages = {p.url: p for p in crawl.pages}
    return [pages[u] for u in urls]


@dataclass
class LexicalJob:
    """The TF-IDF job of the pages ``urls`` (in the vectors' order), started before its ``Evidence``."""

    urls: list[str]
    job: Background


def start_lexical_job(crawl: Crawl, embeddings: object, neighbours: int, workers: int) -> LexicalJob:
    """The TF-IDF index and neighbours of the embedded pages, started now in a second process (see
    ``lexical.start_lexical_job``), for the ``Evidence`` made later for the same pages: a run starts
    it before building the page index, a stage of one core (~150 s at a million pages)."""
    from postprocess.stages.lexical import PageDocuments
    from postprocess.stages.lexical import start_lexical_job as start

    urls = list(embeddings.urls)  # type: ignore[attr-defined]
    return LexicalJob(urls, start(PageDocuments(pages_in_order(crawl, urls)), neighbours, workers))


class Evidence:
    """Per-run evidence beyond the Annoy neighbours: page and chunk vectors, lexical index, names."""

    def __init__(self, crawl: Crawl, embeddings: object, neighbours: int, workers: int = 1,
                 lexical_job: LexicalJob | None = None) -> None:
        """``workers``: processes that may build it (see ``SiteEvidence``); ``lexical_job``: its TF-IDF
        job, started already for the same pages (``start_lexical_job``)."""
        from postprocess.stages.lexical import PageDocuments, SiteEvidence, clean_title, site_title_parts

        urls = list(embeddings.urls)  # type: ignore[attr-defined]
        self.vectors = embeddings.vectors  # type: ignore[attr-defined]
        self.chunks = embeddings.chunk_vectors  # type: ignore[attr-defined]
        ordered = pages_in_order(crawl, urls)
        site = site_title_parts([p.title for p in ordered])
        row = {u: i for i, u in enumerate(urls)}
        self.site = SiteEvidence(
            urls,
            [(p.h1, clean_title(p.title, site)) for p in ordered],
            PageDocuments(ordered),
            PageValues(ordered, lambda p: p.text),
            _anchor_uses(crawl, row),
            neighbours,
            workers,
            lexical_job.job if lexical_job is not None and lexical_job.urls == urls else None,
        )
        self._links_changed(crawl)

    def ready(self) -> Evidence:
        """This evidence once its TF-IDF index is made (see ``SiteEvidence.ready``)."""
        self.site.ready()
        return self

    def wait(self) -> Evidence:
        """This evidence once the process making its TF-IDF index has left, the index not read yet
        (see ``SiteEvidence.wait``)."""
        self.site.wait()
        return self

    def release(self) -> None:
        """Let go of the site's tables (the names, the TF-IDF index and its neighbours) once nothing
        will rank with this evidence again: a later use fails."""
        del self.site

    def with_links(self, crawl: Crawl) -> Evidence:
        """This evidence for the same pages with other links (a confidence fold hides some): the
        lexical index is kept, names and inbound counts are made again."""
        evidence = copy.copy(self)
        evidence.site = self.site.with_anchor_uses(_anchor_uses(crawl, self.site.row))
        evidence._links_changed(crawl)
        return evidence

    def without(self, crawl: Crawl, hidden: Collection[tuple[str, str]]) -> Evidence:
        """This evidence (made for ``crawl``) for its links less those of the ``hidden`` (source,
        target) URL pairs: what ``with_links`` makes for the crawl without them, at a confidence
        fold's cost. Only the names the hidden links give are counted again, and their targets'
        inbound links; the rest is this evidence's (a fold ranks a sample of the sources, and the
        names made again for the whole site were most of its memory). Links not in a table: the
        crawl without them, through ``with_links``."""
        from postprocess.stages.lexical import AnchorUses

        links = crawl.links
        if not isinstance(links, LinkTable) or not self.site.names.hides_links:
            return self.with_links(replace(crawl, links=links_table(links).without(hidden)))
        evidence = copy.copy(self)
        uses = _anchor_uses(crawl, self.site.row)
        assert isinstance(uses, AnchorUses)
        row, width = self.site.row, len(self.site.urls)
        keys = np.sort(np.array([row[s] * width + row[t] for s, t in hidden if s in row and t in row],
                                dtype=np.int64))
        hidden_uses = pairs_in(keys, uses.source, uses.target, width)
        evidence.site = self.site.with_names(self.site.names.without_links(uses, hidden_uses))
        del uses, hidden_uses
        # A hidden pair is one page fewer linking its target (``inbound_counts``: any position).
        n = len(links.urls)
        table_keys = links.keys_of(hidden)
        table_keys = table_keys[table_keys // n != table_keys % n]
        linked = links.linked_among(table_keys)
        fewer = Counter(links.urls[t] for t in (linked % n).tolist())
        if fewer:
            inbound = links.inbound()
            evidence.needs_links = self.needs_links.copy()
            for url, k in fewer.items():
                if url in row:
                    evidence.needs_links[row[url]] = needs_links(inbound.get(url, 0) - k)
        return evidence

    def _links_changed(self, crawl: Crawl) -> None:
        inbound = inbound_counts(crawl)
        self.needs_links = np.array([needs_links(inbound.get(url, 0)) for url in self.site.urls],
                                    dtype=np.float64)

    def candidates(self, source: int, rows: np.ndarray, similarities: np.ndarray) -> Candidates:
        """The index's neighbours (``rows``, ``similarities``) of row ``source``, then the lexical
        neighbours and named pages they missed (with their cosines); each with its TF-IDF cosine."""
        seen = set(rows.tolist())
        extra = [t for t in self.site.candidates(source) if t not in seen and t != source]
        if extra:
            cosines = self.vectors[extra] @ self.vectors[source]
            rows = np.concatenate([rows, np.asarray(extra, dtype=np.int64)])
            similarities = np.concatenate([similarities, cosines.astype(np.float64)])
        lexical = self.site.lexical.similarities(source, rows)
        return Candidates(rows, similarities, lexical)

    def with_mentions(self, source: int, found: Candidates) -> Candidates:
        """``found`` (the source's candidates) with the weight of the best name of each target the
        source's text mentions (0 where it names none)."""
        weights = self.site.mention_weights(source)
        found.mention = np.array([weights.get(t, 0.0) for t in found.rows.tolist()], dtype=np.float64)
        return found

    def part_columns(self, sources: np.ndarray, place: np.ndarray,
                     found: Candidates) -> dict[str, np.ndarray]:
        """The evidence parts of ``found`` (the candidates of the sources ``sources``, each pair's
        source ``sources[place]``, in source order; with their mentions: ``with_mentions``), rounded,
        one column each."""
        targets = found.rows
        best = found.similarities.copy()
        ends = np.searchsorted(place, np.arange(1, len(sources) + 1))
        start = 0
        for source, end in zip(sources.tolist(), ends.tolist(), strict=True):
            chunks = self.chunks[source]
            if len(chunks) and end > start:  # the best passage of the source for each of its targets
                best[start:end] = (chunks @ self.vectors[targets[start:end]].T).max(axis=0)
            start = end
        assert found.mention is not None, "part_columns needs the candidates' mentions (with_mentions)"
        return {
            "best_chunk": rounded(best),
            "lexical": rounded(found.lexical.astype(np.float64)),
            "mention": rounded(found.mention),
            "needs_links": rounded(self.needs_links[targets]),
        }


@dataclass(slots=True)
class Candidates:
    """Candidate targets (evidence rows) with their cosines and TF-IDF cosines (and, once looked up,
    the weight of the source's mention of each: ``Evidence.with_mentions``)."""

    rows: np.ndarray
    similarities: np.ndarray
    lexical: np.ndarray
    mention: np.ndarray | None = None

    def take(self, keep: np.ndarray) -> Candidates:
        return Candidates(self.rows[keep], self.similarities[keep], self.lexical[keep],
                          None if self.mention is None else self.mention[keep])

    @staticmethod
    def joined(each: Sequence[Candidates]) -> Candidates:
        """Several sources' candidates, one after another (each with its mentions, or none)."""
        mentions = [c.mention for c in each]
        return Candidates(np.concatenate([c.rows for c in each]),
                          np.concatenate([c.similarities for c in each]),
                          np.concatenate([c.lexical for c in each]),
                          None if any(m is None for m in mentions) else np.concatenate(mentions))


def inbound_counts(crawl: Crawl) -> Counter[str]:
    """Distinct other pages linking to each URL (any position)."""
    if isinstance(crawl.links, LinkTable):
        return crawl.links.inbound()
    pairs = {(link.source_url, link.target_url) for link in crawl.links if link.source_url != link.target_url}
    return Counter(target for _, target in pairs)


#: Links ``_content_uses`` reads at once.
USES_STEP = 1 << 20


def _content_uses(links: LinkTable, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source row, target row, anchor id) of the in-content links between pages that have a row
    (``rows``: by URL id, -1 for none), in link order: counted a step of links at a time, then
    written into the three columns a step at a time (~13 bytes a kept link at the peak, where
    selecting them at once made ~27: a million synthetic pages' ~38M, ~1 GB)."""

    def step(start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        content = links.position[start:start + USES_STEP] == links.code("content")
        source = rows[links.source[start:start + USES_STEP][content]]
        target = rows[links.target[start:start + USES_STEP][content]]
        keep = (source >= 0) & (target >= 0)
        return source[keep], target[keep], links.anchor[start:start + USES_STEP][content][keep]

    starts = range(0, len(links), USES_STEP)
    sizes = [len(step(start)[0]) for start in starts]
    columns = tuple(np.empty(sum(sizes), dtype=np.int32) for _ in range(3))
    at = 0
    for start, size in zip(starts, sizes, strict=True):
        for column, part in zip(columns, step(start), strict=True):
            column[at:at + size] = part
        at += size
    return columns


def _anchor_uses(crawl: Crawl, row: dict[str, int]) -> list[tuple[int, int, str]] | AnchorUses:
    """(source row, target row, anchor text) of the crawl's in-content links between indexed pages
    (as columns when the links are a table)."""
    from postprocess.stages.lexical import AnchorUses

    links = crawl.links
    if isinstance(links, LinkTable):
        rows = np.fromiter((row.get(url, -1) for url in links.urls), dtype=np.int32, count=len(links.urls))
        return AnchorUses(*_content_uses(links, rows), links.anchors)
    return [(row[source], row[target], anchor or "") for source, target, anchor in content_uses(crawl.links)
            if source in row and target in row]


Number = TypeVar("Number", float, np.ndarray)


def rounded(values: Number, digits: int = 6) -> Number:
    """``round(value, digits)`` of a number, or of each number of an array, exactly as Python rounds.

    An array is scaled and rounded to the nearest integer; the rare value whose scaled form lies
    within a hair of a half (where the scaling's own rounding could tip it) is rounded by Python.
    """
    if not isinstance(values, np.ndarray):
        return round(values, digits)
    scale = 10.0 ** digits
    scaled = values * scale
    out = np.rint(scaled) / scale
    doubtful = np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6
    if doubtful.any():
        out[doubtful] = [round(v, digits) for v in values[doubtful].tolist()]
    return out


def combine(parts: Mapping[str, Number], options: Options) -> Number:
    """The ranking score: weighted sum of the parts (similarity alone when nothing else is known) ×
    date; each part a number, or a column of numbers (one per pair)."""
    semantic = (WEIGHTS["similarity"] * parts["similarity"]
                + WEIGHTS["best_chunk"] * parts.get("best_chunk", parts["similarity"]))
    bonus = sum(WEIGHTS[name] * parts.get(name, 0.0) for name in ("lexical", "mention", "needs_links"))
    return rounded((semantic + bonus) * parts.get("date_factor", 1.0))
