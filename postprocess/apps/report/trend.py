"""Over time: the figures of each crawl job of one site, and what changed since the job before.

A crawl directory may hold several jobs (weekly recrawls, each a whole crawl: an incremental
recrawl carries unchanged pages into its own job). Jobs whose fetch times overlap are one crawl
written by several workers, and are counted as one snapshot; a job much smaller than the crawl
before it is a partial update, laid over that crawl.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from statistics import mean

from postprocess.apps.report.crawlfiles import read_rows
from postprocess.apps.report.depth import click_depths, summarise
from postprocess.apps.report.graph import LinkGraph, link_graph, orphans
from postprocess.stages.load import build_crawl

PAGE_COLUMNS = ("url", "depth", "kind", "fetched_at", "job")
LINK_COLUMNS = ("source_url", "target_url", "position", "fetched_at", "job")
SKIP_COLUMNS = ("url", "reason", "alias_of", "fetched_at", "job")
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


def _groups(pages: list[dict]) -> list[tuple[tuple[str, ...], datetime]]:
    """Job ids grouped into snapshots (overlapping fetch-time ranges), oldest first; ``fetched_at`` in
    microseconds (``read_rows(times_as_int=True)``)."""
    spans: dict[str, list[int]] = {}
    for row in pages:
        if row.get("job") and row.get("fetched_at"):
            span = spans.setdefault(row["job"], [row["fetched_at"], row["fetched_at"]])
            span[0], span[1] = min(span[0], row["fetched_at"]), max(span[1], row["fetched_at"])
    groups: list[tuple[list[str], int, int]] = []
    for job, (start, end) in sorted(spans.items(), key=lambda kv: (kv[1][0], kv[0])):
        if groups and start <= groups[-1][2]:
            groups[-1][0].append(job)
            groups[-1] = (groups[-1][0], groups[-1][1], max(groups[-1][2], end))
        else:
            groups.append(([job], start, end))
    return [(tuple(jobs), datetime.fromtimestamp(start / 1e6, UTC)) for jobs, start, _ in groups]


def _snapshot(jobs: tuple[str, ...], started: datetime, rows: tuple[list[dict], list[dict], list[dict]],
              partial: bool = False) -> tuple[Snapshot, LinkGraph]:
    crawl = build_crawl(*rows)
    graph = link_graph(crawl)
    snap = Snapshot(jobs, started, pages=len(crawl.pages), orphans=len(orphans(graph)),
                    content_links=graph.content.links(), partial=partial)
    snap.mean_depth = summarise(click_depths(graph.every, graph.start), graph.pages).mean
    snap.mean_content_depth = summarise(click_depths(graph.content, graph.start), graph.pages).mean
    return snap, graph


def _pairs(graph: LinkGraph) -> set[tuple[str, str]]:
    return {(s, t) for s, targets in graph.content.items() for t in targets}


def _of(rows: list[dict], jobs: tuple[str, ...]) -> list[dict]:
    keep = set(jobs)
    return [r for r in rows if r["job"] in keep]


def crawl_trend(directory: str) -> list[Snapshot]:
    """One snapshot per crawl in ``directory``, oldest first, each compared with the one before.

    A job with fewer than ``PARTIAL_SHARE`` of the previous snapshot's pages is not a whole crawl (a
    part written for a few changed pages): it is laid over the previous snapshot, newest row per URL,
    as the loader would read the directory.
    """
    pages = read_rows(directory, "pages", PAGE_COLUMNS, times_as_int=True)
    groups = _groups(pages)
    links = read_rows(directory, "links", LINK_COLUMNS, times_as_int=True) if len(groups) > 1 else []
    skipped = read_rows(directory, "skipped", SKIP_COLUMNS, times_as_int=True) if len(groups) > 1 else []
    snapshots: list[Snapshot] = []
    previous: tuple[list[dict], list[dict], list[dict]] | None = None
    before: LinkGraph | None = None
    for jobs, started in groups:
        rows = (_of(pages, jobs), _of(links, jobs), _of(skipped, jobs))
        size = len({r["url"] for r in rows[0]})
        partial = previous is not None and size < PARTIAL_SHARE * snapshots[-1].pages
        if previous is not None and partial:
            rows = tuple(old + new for old, new in zip(previous, rows, strict=True))
        snap, graph = _snapshot(jobs, started, rows, partial)
        if before is not None:
            old, new = _pairs(before), _pairs(graph)
            snap.links_added, snap.links_removed = len(new - old), len(old - new)
            snap.gained = gained_links(before, graph)
        snapshots.append(snap)
        previous, before = rows, graph
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
