"""Over time: the figures of each crawl job of one site, and what changed since the job before.

A crawl directory may hold several jobs (weekly recrawls, each a whole crawl: an incremental
recrawl carries unchanged pages into its own job). Jobs whose fetch times overlap are one crawl
written by several workers, and are counted as one snapshot; a job much smaller than the crawl
before it is a partial update, laid over that crawl.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import mean

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from postprocess.apps.report.depth import click_depths, summarise
from postprocess.apps.report.graph import Edges, LinkGraph, link_graph, orphans
from postprocess.stages.links import in_sorted
from postprocess.stages.load import BadParts, Crawl, load_crawl, micros

#: A job with fewer pages than this share of the previous crawl's is a partial update, not a crawl.
PARTIAL_SHARE = 0.5


@dataclass(frozen=True)
class Gained:
    """A page with more inbound content links than in the previous snapshot; its depth before and after."""

    url: str
    links_before: int
    links_after: int
    depth_before: int | None  # over all links
    depth_after: int | None


@dataclass
class Snapshot:
    """One crawl of the site (one job, or jobs that ran at the same time)."""

    jobs: tuple[str, ...]
    started: datetime
    pages: int = 0
    orphans: int = 0
    mean_depth: float | None = None  # over all links
    mean_content_depth: float | None = None
    content_links: int = 0
    links_added: int | None = None  # content links (source, target) not in the previous snapshot
    links_removed: int | None = None
    gained: list[Gained] = field(default_factory=list)
    partial: bool = False  # a partial update laid over the crawl before it

    @property
    def label(self) -> str:
        return self.started.strftime("%Y-%m-%d %H:%M")

    def to_json(self) -> dict:
        gained = [g for g in self.gained if g.depth_before is not None and g.depth_after is not None]
        return {"jobs": list(self.jobs), "started": self.started.isoformat(), "partial": self.partial,
                "pages": self.pages,
                "orphans": self.orphans, "mean_depth": _round(self.mean_depth),
                "mean_content_depth": _round(self.mean_content_depth), "content_links": self.content_links,
                "links_added": self.links_added, "links_removed": self.links_removed,
                "pages_gaining_links": len(self.gained),
                "their_depth_before": _round(mean(g.depth_before for g in gained)) if gained else None,
                "their_depth_after": _round(mean(g.depth_after for g in gained)) if gained else None}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _groups(directory: str) -> list[tuple[tuple[str, ...], datetime]]:
    """Job ids grouped into snapshots (overlapping fetch-time ranges), oldest first, read from the
    pages' job and fetched_at columns alone, a part at a time (a part that cannot be read is left
    out: the loader has already named it or stopped)."""
    spans: dict[str, list[int]] = {}
    for path in sorted((Path(directory) / "pages").glob("part-*.parquet")):
        try:
            if not {"job", "fetched_at"} <= set(pq.read_schema(path).names):
                continue
            part = pq.read_table(path, columns=["job", "fetched_at"])
        except (OSError, pa.ArrowException):
            continue
        at = micros(part["fetched_at"])
        dated = pc.fill_null(pc.and_(pc.not_equal(part["job"], ""), pa.array(at != 0)), False)
        part = pa.table({"job": part["job"], "at": at}).filter(dated)
        for row in part.group_by("job").aggregate([("at", "min"), ("at", "max")]).to_pylist():
            span = spans.setdefault(row["job"], [row["at_min"], row["at_max"]])
            span[0], span[1] = min(span[0], row["at_min"]), max(span[1], row["at_max"])
    groups: list[tuple[list[str], int, int]] = []
    for job, (start, end) in sorted(spans.items(), key=lambda kv: (kv[1][0], kv[0])):
        if groups and start <= groups[-1][2]:
            groups[-1][0].append(job)
            groups[-1] = (groups[-1][0], groups[-1][1], max(groups[-1][2], end))
        else:
            groups.append(([job], start, end))
    return [(tuple(jobs), datetime.fromtimestamp(start / 1e6, UTC)) for jobs, start, _ in groups]


def _page_count(directory: str) -> int:
    """How many distinct page URLs the crawl's parts hold (their url column alone)."""
    urls = []
    for path in sorted((Path(directory) / "pages").glob("part-*.parquet")):
        try:
            urls.extend(pq.read_table(path, columns=["url"])["url"].chunks)
        except (OSError, pa.ArrowException):
            continue
    return pc.count_distinct(pa.chunked_array(urls, pa.string())).as_py() if urls else 0


def _outline(directory: str, jobs: frozenset[str]) -> Crawl:
    """The crawl of ``jobs`` as the loader reads it (newest row per URL, aliases, each source's newest
    links), pages without their text: columns, not a Python object per link."""
    return load_crawl(directory, jobs, BadParts(), outline=True)


def _snapshot(jobs: tuple[str, ...], started: datetime, crawl: Crawl, partial: bool = False
              ) -> tuple[Snapshot, LinkGraph]:
    graph = link_graph(crawl)
    snap = Snapshot(jobs, started, pages=len(crawl.pages), orphans=len(orphans(graph)),
                    content_links=graph.content.links(), partial=partial)
    snap.mean_depth = summarise(click_depths(graph.every, graph.start), graph.pages).mean
    snap.mean_content_depth = summarise(click_depths(graph.content, graph.start), graph.pages).mean
    return snap, graph


def _common_links(before: Edges, after: Edges) -> int:
    """How many (source URL, target URL) pairs of ``after`` are in ``before`` too (pages numbered
    apart in each: ``after``'s numbers are mapped to ``before``'s)."""
    mapped = np.array([before.number.get(url, -1) for url in after.pages], dtype=np.int64)
    if not len(mapped) or not after.links():
        return 0
    n = len(after.pages)
    ours = after.keys
    sources, targets = mapped[ours // n], mapped[ours % n]
    del ours
    known = (sources >= 0) & (targets >= 0)
    keys = sources[known] * len(before.pages) + targets[known]
    return int(np.count_nonzero(in_sorted(before.keys, keys)))


def crawl_trend(directory: str) -> list[Snapshot]:
    """One snapshot per crawl in ``directory``, oldest first, each compared with the one before.

    A job with fewer than ``PARTIAL_SHARE`` of the previous snapshot's pages is not a whole crawl (a
    part written for a few changed pages): it is laid over the previous snapshot, newest row per URL,
    as the loader would read the directory. Each snapshot is read by the loader, as an outline (links
    as columns, pages without text), one at a time: only the previous one's link graph is kept.
    """
    groups = _groups(directory)
    if len(groups) < 2:  # nothing to compare: the report shows no trend, and no link is read
        return [Snapshot(jobs, started, pages=_page_count(directory)) for jobs, started in groups]
    snapshots: list[Snapshot] = []
    previous: frozenset[str] = frozenset()  # the jobs the previous snapshot was read from
    before: LinkGraph | None = None
    for jobs, started in groups:
        read = frozenset(jobs)
        crawl = _outline(directory, read)
        partial = before is not None and len(crawl.pages) < PARTIAL_SHARE * snapshots[-1].pages
        if partial:
            read = previous | read
            crawl = _outline(directory, read)
        snap, graph = _snapshot(jobs, started, crawl, partial)
        del crawl
        if before is not None:
            common = _common_links(before.content, graph.content)
            snap.links_added = graph.content.links() - common
            snap.links_removed = before.content.links() - common
            snap.gained = gained_links(before, graph)
        snapshots.append(snap)
        previous, before = read, graph
    return snapshots


def gained_links(before: LinkGraph, after: LinkGraph) -> list[Gained]:
    """Pages of both crawls with more inbound content links in ``after``: their depth before and after."""
    links_before, links_after = before.content.inbound(), after.content.inbound()
    depth_before = click_depths(before.every, before.start)
    depth_after = click_depths(after.every, after.start)
    common = set(before.pages) & set(after.pages)
    found = [Gained(u, links_before.get(u, 0), links_after[u], depth_before.get(u), depth_after.get(u))
             for u in sorted(common) if links_after.get(u, 0) > links_before.get(u, 0)]
    return sorted(found, key=lambda g: (-(g.links_after - g.links_before), g.url))
