"""The site's link graph between crawled pages: content links and all links, and what the queue adds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from postprocess.stages.load import Crawl

#: source URL -> the pages it links to (other crawled pages only, each once).
Edges = dict[str, frozenset[str]]


@dataclass(frozen=True)
class LinkGraph:
    """The crawled pages, the start page and two edge sets: links in running content, and all links."""

    pages: tuple[str, ...]
    start: str | None
    content: Edges
    every: Edges

    def edges(self, which: str) -> Edges:
        """``content`` or ``all``."""
        return self.content if which == "content" else self.every


def start_page(crawl: Crawl) -> str | None:
    """The page the crawl started from: depth 0, else the shallowest page; None without depths."""
    with_depth = [(p.depth, p.url) for p in crawl.pages if p.depth is not None]
    return min(with_depth)[1] if with_depth else None


def _edges(pairs: Iterable[tuple[str, str]], known: set[str]) -> Edges:
    found: dict[str, set[str]] = {}
    for source, target in pairs:
        if source != target and source in known and target in known:
            found.setdefault(source, set()).add(target)
    return {s: frozenset(t) for s, t in found.items()}


def link_graph(crawl: Crawl) -> LinkGraph:
    """The graph of ``crawl`` (aliases already resolved by the loader)."""
    known = {p.url for p in crawl.pages}
    content = _edges(((k.source_url, k.target_url) for k in crawl.links if k.position == "content"), known)
    every = _edges(((k.source_url, k.target_url) for k in crawl.links), known)
    return LinkGraph(tuple(p.url for p in crawl.pages), start_page(crawl), content, every)


def with_links(edges: Edges, added: Iterable[tuple[str, str]], pages: Iterable[str]) -> Edges:
    """``edges`` plus the (source, target) pairs of ``added`` between known pages."""
    merged = {s: set(t) for s, t in edges.items()}
    for source, targets in _edges(added, set(pages)).items():
        merged.setdefault(source, set()).update(targets)
    return {s: frozenset(t) for s, t in merged.items()}


def inbound(edges: Edges) -> Counter[str]:
    """Distinct other pages linking to each page."""
    return Counter(t for targets in edges.values() for t in targets)


def orphans(graph: LinkGraph, edges: Edges | None = None) -> list[str]:
    """Pages other than the start page that no other page links to in running content."""
    counts = inbound(graph.content if edges is None else edges)
    return [u for u in graph.pages if u != graph.start and counts.get(u, 0) == 0]
