"""Who links to whom: orphans and what would feed them, hubs, starved pages, the most proposed targets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from postprocess.apps.report.depth import DepthScenarios
from postprocess.apps.report.graph import Edges, LinkGraph, orphans
from postprocess.stages.candidates import Suggestion

#: Bins of the inbound-link histogram: (label, lowest count, highest count).
INBOUND_BINS = (("0", 0, 0), ("1", 1, 1), ("2", 2, 2), ("3–4", 3, 4), ("5–9", 5, 9), ("10–19", 10, 19),
                ("20–49", 20, 49), ("50–99", 50, 99), ("100+", 100, None))
#: A page with at most this many inbound content links (and at least one) is starved.
STARVED_MAX = 2


@dataclass(frozen=True)
class Orphan:
    """A page no other page links to in running content, the queue rows that would, and its depths."""

    url: str
    sources: tuple[str, ...]  # source pages of the queue rows that link to it
    depth_now: int | None  # clicks over all links (None: unreachable)
    depth_after: int | None
    content_depth_after: int | None  # over content links (now it is unreachable by definition)


@dataclass(frozen=True)
class PageLinks:
    """A page with its inbound content links now and after the queue, all links, and queue rows to it."""

    url: str
    content_now: int
    content_after: int
    all_now: int
    proposed: int


def inbound_histogram(counts: np.ndarray) -> dict[str, int]:
    """Pages per bin of inbound-link count (``INBOUND_BINS``); ``counts``: a page's count each."""
    counts = np.asarray(counts)
    found = {}
    for label, low, high in INBOUND_BINS:
        within = counts >= low if high is None else (counts >= low) & (counts <= high)
        found[label] = int(np.count_nonzero(within))
    return found


def orphan_table(graph: LinkGraph, rows: Sequence[Suggestion], depths: DepthScenarios) -> list[Orphan]:
    """Every orphan with the sources the queue proposes for it, fed ones first."""
    feeding: dict[str, list[str]] = {}
    for s in rows:
        feeding.setdefault(s.target_url, []).append(s.source_url)
    found = []
    all_now, all_after = depths.depths["all"]["now"], depths.depths["all"]["after"]
    content_after = depths.depths["content"]["after"]
    for url in orphans(graph):
        found.append(Orphan(url, tuple(dict.fromkeys(feeding.get(url, ()))), all_now.get(url),
                            all_after.get(url), content_after.get(url)))
    return sorted(found, key=lambda o: (-len(o.sources), o.url))


class InboundLinks:
    """Inbound link counts now and after the queue, and the lists the report shows. The counts are
    arrays by page number (8 bytes a page, where Counters of URLs were ~0.1 GB each at a million
    pages)."""

    def __init__(self, graph: LinkGraph, rows: Sequence[Suggestion], after: Edges) -> None:
        self.graph = graph
        self.number = graph.content.number
        self.content_now = graph.content.inbound_counts()
        self.content_after = after.inbound_counts()
        self.all_now = graph.every.inbound_counts()
        self.proposed = Counter(s.target_url for s in rows)

    def page(self, url: str) -> PageLinks:
        i = self.number.get(url)
        if i is None:
            return PageLinks(url, 0, 0, 0, self.proposed.get(url, 0))
        return PageLinks(url, int(self.content_now[i]), int(self.content_after[i]), int(self.all_now[i]),
                         self.proposed.get(url, 0))

    def histogram(self, when: str) -> dict[str, int]:
        return inbound_histogram(self.content_now if when == "now" else self.content_after)

    def hubs(self, n: int = 15) -> list[PageLinks]:
        """The pages with the most inbound content links (ties by URL)."""
        counts, pages = self.content_now, self.graph.pages
        if not len(pages) or n <= 0:
            return []
        k = len(counts) - min(n, len(counts))
        least = int(np.partition(counts, k)[k])  # the n-th most
        tied = np.flatnonzero(counts >= max(least, 1)).tolist()  # the top n and those tied with them
        top = sorted(tied, key=lambda i: (-int(counts[i]), pages[i]))[:n]
        return [self.page(pages[i]) for i in top]

    def starved(self, kinds: Sequence[str], n: int = 15) -> tuple[int, list[PageLinks]]:
        """Content pages (``kinds``: each page's kind, by page number) with 1..STARVED_MAX inbound
        content links: how many, and the first ``n``."""
        counts, pages = self.content_now, self.graph.pages
        few = np.flatnonzero((counts >= 1) & (counts <= STARVED_MAX)).tolist()
        found = [i for i in few if kinds[i] == "content"]
        found.sort(key=lambda i: (int(counts[i]), -self.proposed.get(pages[i], 0), pages[i]))
        return len(found), [self.page(pages[i]) for i in found[:n]]

    def most_proposed(self, n: int = 15) -> list[PageLinks]:
        """The queue's most frequent targets (a hub every row points at shows here)."""
        return [self.page(u) for u, _ in sorted(self.proposed.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
