"""The site's link graph between crawled pages: content links and all links, and what the queue adds."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from postprocess.stages.links import distinct, distinct_joined, in_sorted, linked_csr, ranges
from postprocess.stages.load import Crawl

#: Sources whose links' keys ``Edges.plus`` makes at a time (~68 links a page on a synthetic site:
#: ~36 MB of keys).
PLUS_BLOCK_SOURCES = 1 << 16
#: Links ``Edges.depths`` follows, and ``Edges.inbound_counts`` counts, at a time (~30 bytes a link
#: while the depths follow them: ~60 MB).
STEP_LINKS = 1 << 21


class Edges(Mapping[str, frozenset[str]]):
    """Links between crawled pages, each (source, target) once, no self links: source URL -> the
    pages it links to. Stored as page numbers sorted by source (CSR arrays: 4 bytes a link, the
    targets; ``keys`` are made when asked for); counting inbound links, click depths and adding the
    queue's links work on the arrays."""

    def __init__(self, pages: Sequence[str], keys: np.ndarray, number: dict[str, int] | None = None) -> None:
        """``keys``: source × len(pages) + target of each edge, sorted, each once."""
        self.pages = tuple(pages)
        self.number = number if number is not None else {url: i for i, url in enumerate(self.pages)}
        n = len(self.pages)
        keys = np.asarray(keys, dtype=np.int64)
        # int32 page numbers (keys and targets as int64 were 16 bytes a link: ~0.2 GB of the
        # report's three edge sets at 100k synthetic pages, 6.8M links)
        self.targets = (keys % n).astype(np.int32) if n else np.zeros(0, dtype=np.int32)
        self.indptr = np.searchsorted(keys // n, np.arange(n + 1)) if n else np.zeros(1, dtype=np.int64)

    @property
    def keys(self) -> np.ndarray:
        """source × len(pages) + target of each edge, sorted (made from the CSR arrays)."""
        return self._keys_of(0, len(self.pages))

    def _keys_of(self, first: int, last: int) -> np.ndarray:
        """``keys`` of the edges from the sources ``first`` … ``last - 1``."""
        n = len(self.pages)
        sources = np.repeat(np.arange(first, last, dtype=np.int64), np.diff(self.indptr[first:last + 1]))
        return sources * n + self.targets[self.indptr[first]:self.indptr[last]]

    @classmethod
    def from_csr(cls, pages: Sequence[str], indptr: np.ndarray, targets: np.ndarray,
                 number: dict[str, int] | None = None) -> Edges:
        """The edges of CSR arrays (``links.linked_csr``): ``targets`` int32, ascending within a source."""
        edges = cls.__new__(cls)
        edges.pages = tuple(pages)
        edges.number = number if number is not None else {url: i for i, url in enumerate(edges.pages)}
        edges.targets, edges.indptr = targets, indptr
        return edges

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str]], pages: Sequence[str],
                   number: dict[str, int] | None = None) -> Edges:
        """The (source URL, target URL) ``pairs`` between ``pages`` (others, repeats and self links
        are left out)."""
        number = number if number is not None else {url: i for i, url in enumerate(pages)}
        keys = [number[s] * len(pages) + number[t]
                for s, t in pairs if s in number and t in number and s != t]
        return cls(pages, distinct(np.array(keys, dtype=np.int64)), number)

    def plus(self, pairs: Iterable[tuple[str, str]]) -> Edges:
        """These edges and the (source, target) ``pairs`` between known pages: each new link's target
        put into place in the CSR arrays, found a block of ``PLUS_BLOCK_SOURCES`` sources' keys at a
        time (every link's key at once, and the keys with the new ones inserted, were 16 bytes a
        link beside the result's 4: ~1 GB at a million synthetic pages, three times a report)."""
        more = Edges.from_pairs(pairs, self.pages, self.number).keys
        n = len(self.pages)
        places, new_keys = [], []
        bounds = np.searchsorted(more, np.arange(0, n + PLUS_BLOCK_SOURCES, PLUS_BLOCK_SOURCES) * n)
        for block, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)):
            if lo == hi:
                continue
            first = block * PLUS_BLOCK_SOURCES
            keys = self._keys_of(first, min(n, first + PLUS_BLOCK_SOURCES))
            new = more[lo:hi][~in_sorted(keys, more[lo:hi])]
            places.append(self.indptr[first] + np.searchsorted(keys, new))
            new_keys.append(new)
        added = np.concatenate(new_keys) if new_keys else np.zeros(0, dtype=np.int64)
        edges = copy.copy(self)  # the same pages and numbers; the arrays made anew below
        edges.targets = np.insert(self.targets, np.concatenate(places) if places else added,
                                  (added % max(n, 1)).astype(np.int32))
        edges.indptr = self.indptr + np.searchsorted(added // max(n, 1), np.arange(n + 1))
        return edges

    def inbound(self) -> Counter[str]:
        """Distinct other pages linking to each page (by URL; ``inbound_counts`` by page number)."""
        counts = self.inbound_counts()
        return Counter({self.pages[i]: int(counts[i]) for i in np.flatnonzero(counts).tolist()})

    def inbound_counts(self) -> np.ndarray:
        """Distinct other pages linking to each page, by page number (int64): counted
        ``STEP_LINKS`` links at a time (``bincount`` makes int64 page numbers of what it counts:
        every link's at once was 8 bytes a link, ~0.5 GB of a million synthetic pages' links)."""
        counts = np.zeros(len(self.pages), dtype=np.int64)
        for start in range(0, len(self.targets), STEP_LINKS):
            counts += np.bincount(self.targets[start:start + STEP_LINKS], minlength=len(self.pages))
        return counts

    def depths(self, start: str | None) -> dict[str, int]:
        """Clicks from ``start`` to every page it reaches (breadth-first, a level at a time; a level's
        links followed ``STEP_LINKS`` at a time: a level's links at once were ~36 bytes a link,
        ~0.7 GB at the widest level of a million synthetic pages' links)."""
        if start is None or start not in self.number:
            return {} if start is None else {start: 0}
        depth = np.full(len(self.pages), -1, dtype=np.int32)
        depth[self.number[start]] = 0
        frontier = np.array([self.number[start]], dtype=np.int64)
        level = 0
        while len(frontier):
            found = []  # the next level: what each piece reached (not a scan of every page a level)
            for part in self._parts_by_links(frontier):
                reached = self.targets[ranges(self.indptr[part], self.indptr[part + 1])]
                new = reached[depth[reached] < 0]
                depth[new] = level + 1
                found.append(new)
            level += 1
            frontier = distinct_joined(found)
        return {self.pages[i]: int(depth[i]) for i in np.flatnonzero(depth >= 0).tolist()}

    def _parts_by_links(self, sources: np.ndarray) -> Iterator[np.ndarray]:
        """``sources`` in consecutive pieces of about ``STEP_LINKS`` links each (a source with
        more links is a piece of its own)."""
        ends = np.cumsum(self.indptr[sources + 1] - self.indptr[sources])
        total = int(ends[-1]) if len(ends) else 0
        cuts = np.searchsorted(ends, np.arange(STEP_LINKS, total, STEP_LINKS), side="right")
        bounds = distinct(np.concatenate(([0], cuts, [len(sources)])))
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            yield sources[lo:hi]

    def links(self) -> int:
        """How many (source, target) pairs."""
        return len(self.targets)

    # -- Mapping: source URL -> frozenset of target URLs (sources that link somewhere) ----------
    def __getitem__(self, url: str) -> frozenset[str]:
        i = self.number.get(url)
        if i is None or self.indptr[i] == self.indptr[i + 1]:
            raise KeyError(url)
        return frozenset(self.pages[t] for t in self.targets[self.indptr[i]:self.indptr[i + 1]].tolist())

    def __iter__(self) -> Iterator[str]:
        return (self.pages[i] for i in np.flatnonzero(np.diff(self.indptr)).tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(np.diff(self.indptr)))


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


def link_graph(crawl: Crawl) -> LinkGraph:
    """The graph of ``crawl`` (aliases already resolved by the loader), read from the link columns."""
    pages = tuple(p.url for p in crawl.pages)
    number = {url: i for i, url in enumerate(pages)}
    return LinkGraph(pages, start_page(crawl),
                     Edges.from_csr(pages, *linked_csr(crawl.links, pages, content_only=True, where=number),
                                    number),
                     Edges.from_csr(pages, *linked_csr(crawl.links, pages, where=number), number))


def orphans(graph: LinkGraph, edges: Edges | None = None) -> list[str]:
    """Pages other than the start page that no other page links to in running content."""
    counts = (graph.content if edges is None else edges).inbound_counts()
    return [graph.pages[i] for i in np.flatnonzero(counts == 0).tolist() if graph.pages[i] != graph.start]
