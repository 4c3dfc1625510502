"""Click depth from the start page, now and after the queue's links (or only the approved ones)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from postprocess.apps.report.graph import Edges, LinkGraph

#: The link sets depth is measured over (``LinkGraph.edges``).
LINK_SETS = ("content", "all")


def click_depths(edges: Edges, start: str | None) -> dict[str, int]:
    """Clicks from ``start`` to every page it reaches (breadth-first); {} without a start page."""
    return edges.depths(start)


@dataclass(frozen=True)
class DepthSummary:
    """Depths of a set of pages: how many at each depth, how many unreachable, the mean of the reachable."""

    histogram: dict[int, int]
    unreachable: int

    @property
    def reachable(self) -> int:
        return sum(self.histogram.values())

    @property
    def mean(self) -> float | None:
        n = self.reachable
        return sum(d * c for d, c in self.histogram.items()) / n if n else None

    @property
    def deepest(self) -> int | None:
        return max(self.histogram) if self.histogram else None

    def to_json(self) -> dict:
        mean = self.mean
        return {"mean": None if mean is None else round(mean, 3), "reachable": self.reachable,
                "unreachable": self.unreachable,
                "histogram": {str(d): n for d, n in sorted(self.histogram.items())}}


def summarise(depths: dict[str, int], pages: Iterable[str]) -> DepthSummary:
    """The depth histogram of ``pages`` (pages missing from ``depths`` are unreachable)."""
    found = Counter()
    unreachable = 0
    for url in pages:
        if url in depths:
            found[depths[url]] += 1
        else:
            unreachable += 1
    return DepthSummary(dict(sorted(found.items())), unreachable)


@dataclass(frozen=True)
class DepthScenarios:
    """Per link set (content, all) and scenario (now, after, approved): every page's depth."""

    depths: dict[str, dict[str, dict[str, int]]]
    pages: tuple[str, ...]

    def summary(self, links: str, scenario: str) -> DepthSummary:
        return summarise(self.depths[links][scenario], self.pages)

    def scenarios(self) -> list[str]:
        return list(self.depths[LINK_SETS[0]])

    def closer(self, links: str, scenario: str) -> int:
        """Pages fewer clicks from the start page in ``scenario`` than now (newly reachable ones too)."""
        now, then = self.depths[links]["now"], self.depths[links][scenario]
        return sum(1 for url, d in then.items() if url not in now or d < now[url])

    def to_json(self) -> dict:
        return {links: {name: {**summarise(d, self.pages).to_json(), "pages_closer": self.closer(links, name)}
                        for name, d in by.items()}
                for links, by in self.depths.items()}


def depth_scenarios(graph: LinkGraph, queue: Sequence[tuple[str, str]],
                    approved: Sequence[tuple[str, str]] | None = None) -> DepthScenarios:
    """Depths now, after adding every (source, target) of ``queue``, and after adding only ``approved``
    (when given); the added links are links in running content, so they join both link sets."""
    added = {"after": queue} if approved is None else {"after": queue, "approved": approved}
    depths: dict[str, dict[str, dict[str, int]]] = {}
    for links in LINK_SETS:
        edges = graph.edges(links)
        depths[links] = {"now": click_depths(edges, graph.start)}
        for name, pairs in added.items():
            depths[links][name] = click_depths(edges.plus(pairs), graph.start)
    return DepthScenarios(depths, graph.pages)
