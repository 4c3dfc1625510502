"""Everything the report shows, computed once from the crawl, the queue and the output folder."""

from __future__ import annotations

import csv
import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from postprocess.apps.report.decisions import Decisions, read_decisions
from postprocess.apps.report.depth import DepthScenarios, depth_scenarios
from postprocess.apps.report.graph import Edges, LinkGraph, link_graph, orphans
from postprocess.apps.report.health import CrawlHealth, crawl_health
from postprocess.apps.report.inbound import InboundLinks, Orphan, orphan_table
from postprocess.apps.report.trend import Snapshot, crawl_trend
from postprocess.stages.candidates import Suggestion
from postprocess.stages.load import Crawl

NEAR_DUPLICATES_SHOWN = 25


@dataclass
class Analysis:
    """The link structure now and after the queue, crawl health, the trend over jobs, decisions."""

    graph: LinkGraph
    content_after: Edges  # content links once every queue row is applied
    depths: DepthScenarios
    orphans: list[Orphan]
    links: InboundLinks
    health: CrawlHealth
    trend: list[Snapshot]
    decisions: Decisions | None
    near_duplicates: list[dict[str, str]]

    @property
    def orphans_after(self) -> int:
        return len(orphans(self.graph, self.content_after))

    def figures(self) -> dict:
        """What summary.json keeps of it."""
        found = {"start_page": self.graph.start, "depth": self.depths.to_json(),
                 "content_orphans": {"now": len(self.orphans), "after": self.orphans_after},
                 "health": self.health.to_json()}
        if len(self.trend) > 1:
            found["trend"] = [s.to_json() for s in self.trend]
        if self.decisions is not None:
            found["decisions"] = dict(self.decisions.counts)
        return found


def near_duplicates(out: Path, n: int = NEAR_DUPLICATES_SHOWN) -> list[dict[str, str]]:
    """The ``n`` most similar pairs of cannibalisation.csv (empty when there is none), read a row at a
    time: the file holds every near-duplicate pair (109,313 at 100k synthetic pages)."""
    path = out / "cannibalisation.csv"
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        return heapq.nlargest(n, csv.DictReader(handle), key=lambda r: float(r.get("similarity") or 0))


def analyse(crawl: Crawl, rows: Sequence[Suggestion], out: Path | str, job: str | None = None,
            decisions: Path | str | None = None) -> Analysis:
    """The report's figures for ``crawl`` and its queue ``rows`` written into ``out`` (``job``: the one
    crawl job the run read, if any; the trend always covers every job in the crawl directory; ``decisions``:
    the decisions database, default decisions.sqlite beside ``out``)."""
    out = Path(out)
    graph = link_graph(crawl)
    pairs = [(s.source_url, s.target_url) for s in rows]
    found = read_decisions(out, decisions)
    depths = depth_scenarios(graph, pairs, found.approved if found is not None else None)
    content_after = graph.content.plus(pairs)
    links = InboundLinks(graph, rows, content_after)
    health = crawl_health(crawl, set(depths.depths["all"]["now"]), job)
    trend = crawl_trend(crawl.directory) if crawl.directory else []
    return Analysis(graph, content_after, depths, orphan_table(graph, rows, depths), links, health, trend,
                    found, near_duplicates(out))
