"""``LinkTable``: a crawl's links as columns — integer URL ids, anchor ids, position codes.

A list of ``Link`` objects costs ~430 bytes a link (an object and four strings each); the
table costs ~14 (two int32 URL ids, an int32 anchor id, a position code, two flags), every
URL and anchor text stored once. It is a ``Sequence[Link]``: iterating it makes each
``Link`` on the fly (what the report and the evaluation read), while the stages ask it for
what they need as arrays or sets in one pass (``pairs``, ``inbound``, ``content``, ``linked_from``,
``without``). ``links_table(links)`` turns any sequence of links into a table (a list made by
the evaluation, say) and returns a table unchanged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from postprocess.stages.spill import mapped


@dataclass(frozen=True, slots=True)
class Link:
    """One link of a page's newest fetch, its target rewritten through the alias map."""

    source_url: str
    target_url: str
    anchor_text: str = ""
    position: str = "content"
    nofollow: bool = False
    internal: bool = True


class LinkTable(Sequence[Link]):
    """Links in row order as columns; ``urls`` and ``anchors`` are the tables the ids point into."""

    #: The per-link columns (arrays, one value a link).
    COLUMNS = ("source", "target", "anchor", "position", "nofollow", "internal")

    def __init__(self, urls: Sequence[str], source: np.ndarray, target: np.ndarray,
                 anchors: Sequence[str], anchor: np.ndarray, positions: Sequence[str], position: np.ndarray,
                 nofollow: np.ndarray, internal: np.ndarray) -> None:
        self.urls = list(urls)
        self.source = np.asarray(source, dtype=np.int32)
        self.target = np.asarray(target, dtype=np.int32)
        self.anchors = list(anchors)
        self.anchor = np.asarray(anchor, dtype=np.int32)
        self.positions = list(positions)
        self.position = np.asarray(position, dtype=np.uint8)
        self.nofollow = np.asarray(nofollow, dtype=bool)
        self.internal = np.asarray(internal, dtype=bool)
        self._ids: dict[str, int] | None = None
        self._inbound: Counter[str] | None = None

    # -- Sequence[Link] -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.source)

    @overload
    def __getitem__(self, i: int) -> Link: ...

    @overload
    def __getitem__(self, i: slice) -> LinkTable: ...

    def __getitem__(self, i: int | slice) -> Link | LinkTable:
        if isinstance(i, slice):
            return self.take(np.arange(len(self))[i])
        return Link(self.urls[self.source[i]], self.urls[self.target[i]], self.anchors[self.anchor[i]],
                    self.positions[self.position[i]], bool(self.nofollow[i]), bool(self.internal[i]))

    def __iter__(self) -> Iterator[Link]:
        urls, anchors, positions = self.urls, self.anchors, self.positions
        step = 65536
        for start in range(0, len(self), step):
            end = start + step
            yield from map(Link, [urls[i] for i in self.source[start:end].tolist()],
                           [urls[i] for i in self.target[start:end].tolist()],
                           [anchors[i] for i in self.anchor[start:end].tolist()],
                           [positions[i] for i in self.position[start:end].tolist()],
                           self.nofollow[start:end].tolist(), self.internal[start:end].tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LinkTable({len(self)} links, {len(self.urls)} URLs, {len(self.anchors)} anchor texts)"

    # -- columns --------------------------------------------------------------------------------
    @property
    def ids(self) -> dict[str, int]:
        """URL → id."""
        if self._ids is None:
            self._ids = {url: i for i, url in enumerate(self.urls)}
        return self._ids

    def take(self, rows: np.ndarray) -> LinkTable:
        """The links at ``rows`` (indices or a boolean mask), sharing the URL and anchor tables."""
        table = LinkTable.__new__(LinkTable)
        table.urls, table.anchors, table.positions = self.urls, self.anchors, self.positions
        table._ids, table._inbound = self._ids, None
        for name in self.COLUMNS:
            setattr(table, name, getattr(self, name)[rows])
        return table

    def code(self, position: str) -> int:
        """The code of a position name (-1 when no link has it)."""
        return self.positions.index(position) if position in self.positions else -1

    def content(self) -> np.ndarray:
        """Mask of in-content links."""
        return self.position == self.code("content")

    def pair_keys(self, mask: np.ndarray | None = None) -> np.ndarray:
        """source id × len(urls) + target id of each link (of ``mask``), as int64."""
        if mask is None:
            return self.source.astype(np.int64) * len(self.urls) + self.target
        return self.source[mask].astype(np.int64) * len(self.urls) + self.target[mask]

    def pairs(self, content_only: bool = False) -> set[tuple[str, str]]:
        """(source, target) URL pairs linked (by in-content links only when ``content_only``)."""
        keys = distinct(self.pair_keys(self.content() if content_only else None))
        n, urls = len(self.urls), self.urls
        return {(urls[k // n], urls[k % n]) for k in keys.tolist()}

    def inbound(self) -> Counter[str]:
        """Distinct other pages linking to each URL (any position); counted once per table (the
        ranking and the report both ask), a copy handed out."""
        if self._inbound is None:
            keys = distinct(self.pair_keys(self.source != self.target))
            targets, counts = np.unique(keys % len(self.urls), return_counts=True)
            urls = self.urls
            self._inbound = Counter({urls[t]: c for t, c in zip(targets.tolist(), counts.tolist(),
                                                                strict=True)})
        return Counter(self._inbound)

    def pair_set(self, content_only: bool = False) -> PairSet:
        """``pairs`` as sorted integer keys: ``(source, target) in`` it, at 8 bytes a pair."""
        return PairSet(self, distinct(self.pair_keys(self.content() if content_only else None)))

    def linked_among(self, keys: np.ndarray) -> np.ndarray:
        """Those of ``keys`` (sorted ``pair_keys``) that a link of the table has, sorted and distinct;
        the links' keys made ``KEY_STEP`` links at a time (every link's key at once: 8 bytes a link,
        ~54 MB at 100k pages, made by each confidence fold)."""
        found = []
        n = len(self.urls)
        for start in range(0, len(self.source), KEY_STEP):
            step = slice(start, start + KEY_STEP)
            linked = self.source[step].astype(np.int64) * n + self.target[step]
            found.append(linked[in_sorted(keys, linked)])
        return distinct_joined(found)

    def by_source(self) -> TargetsBySource:
        """Source URL → the set of URLs it links, made when asked (``linked_from`` without the sets)."""
        return TargetsBySource(self)

    def linked_from(self) -> dict[str, set[str]]:
        """Source URL → the URLs it links."""
        keys = distinct(self.pair_keys())
        n, urls = len(self.urls), self.urls
        out: dict[str, set[str]] = {}
        for key in keys.tolist():
            source = urls[key // n]
            found = out.get(source)
            if found is None:
                found = out[source] = set()
            found.add(urls[key % n])
        return out

    def content_uses(self) -> Iterator[tuple[str, str, str]]:
        """(source URL, target URL, anchor text) of in-content links, in link order."""
        mask = self.content()
        urls, anchors = self.urls, self.anchors
        yield from zip([urls[i] for i in self.source[mask].tolist()],
                       [urls[i] for i in self.target[mask].tolist()],
                       [anchors[i] for i in self.anchor[mask].tolist()], strict=True)

    def anchor_groups(self, skip_self: bool = False) -> tuple[list[int], list[int], list[int]]:
        """(anchor id, target id, number of links) of each distinct (anchor text, target) of the
        in-content links (without a page's links to itself when ``skip_self``), in the order of
        their first link: what a loop over ``content_uses`` counts, in one NumPy pass."""
        mask = self.content()
        if skip_self:
            mask &= self.source != self.target
        width = max(1, len(self.urls))
        keys = masked_keys(self.anchor, self.target, mask, width)
        del mask
        unique, _, counts = first_seen(keys)
        del keys
        return (unique // width).tolist(), (unique % width).tolist(), counts.tolist()

    def keys_of(self, pairs: Iterable[tuple[str, str]]) -> np.ndarray:
        """The given (source, target) URL pairs as sorted ``pair_keys`` (pairs of URLs the table does
        not hold left out)."""
        ids, n = self.ids, len(self.urls)
        return np.sort(np.fromiter((ids[s] * n + ids[t] for s, t in pairs if s in ids and t in ids),
                                   dtype=np.int64))

    def without(self, pairs: Iterable[tuple[str, str]]) -> LinkTable:
        """These links without any link of the given (source, target) URL pairs."""
        hidden = self.keys_of(pairs)
        if not len(hidden):
            return self
        return self.take(~in_sorted(hidden, self.pair_keys()))

    @classmethod
    def from_links(cls, links: Iterable[Link]) -> LinkTable:
        """A table of any links (in their order)."""
        urls: dict[str, int] = {}
        anchors: dict[str, int] = {}
        positions: dict[str, int] = {}
        source, target, anchor, position, nofollow, internal = [], [], [], [], [], []
        for link in links:
            source.append(urls.setdefault(link.source_url, len(urls)))
            target.append(urls.setdefault(link.target_url, len(urls)))
            anchor.append(anchors.setdefault(link.anchor_text, len(anchors)))
            position.append(positions.setdefault(link.position, len(positions)))
            nofollow.append(link.nofollow)
            internal.append(link.internal)
        return cls(list(urls), np.asarray(source, dtype=np.int32), np.asarray(target, dtype=np.int32),
                   list(anchors), np.asarray(anchor, dtype=np.int32), list(positions),
                   np.asarray(position, dtype=np.uint8), np.asarray(nofollow, dtype=bool),
                   np.asarray(internal, dtype=bool))


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` by a sort: NumPy 2.4's ``unique`` takes a hashing path that is ~150×
    slower on millions of distinct int64 keys (6.8M link keys: 7.9 s, sorted here in 0.05 s)."""
    return _without_repeats(np.sort(np.asarray(values)))


def _without_repeats(ordered: np.ndarray) -> np.ndarray:
    """Sorted ``ordered`` with each value once."""
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def distinct_joined(pieces: list[np.ndarray]) -> np.ndarray:
    """``distinct(np.concatenate(pieces))`` (int64; empty without pieces), the list emptied as the
    pieces are joined: the joined values are sorted in place, not copied beside the pieces (~17
    bytes a value at the peak, where ~33)."""
    if not pieces:
        return np.zeros(0, dtype=np.int64)
    joined = np.concatenate(pieces) if len(pieces) > 1 else np.array(pieces[0])
    pieces.clear()
    joined.sort()
    return _without_repeats(joined)


def ranges(lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """The positions lows[0]..highs[0]-1, lows[1]..highs[1]-1, … in one array."""
    lengths = highs - lows
    offsets = np.repeat(lows - (np.cumsum(lengths) - lengths), lengths)
    return offsets + np.arange(int(lengths.sum()))


def pairs_in(keys: np.ndarray, high: np.ndarray, low: np.ndarray, width: int) -> np.ndarray:
    """Mask of the pairs whose key ``high[i] × width + low[i]`` stands in ``keys`` (sorted), the pairs'
    keys made ``KEY_STEP`` at a time (all at once: ~24 bytes a pair, ~0.9 GB for a confidence fold's
    look at a million synthetic pages' ~38M in-content link uses)."""
    found = np.zeros(len(high), dtype=bool)
    for start in range(0, len(high), KEY_STEP):
        step = slice(start, start + KEY_STEP)
        found[step] = in_sorted(keys, high[step].astype(np.int64) * width + low[step])
    return found


def masked_keys(high: np.ndarray, low: np.ndarray, mask: np.ndarray, width: int) -> np.ndarray:
    """``high[mask] * width + low[mask]`` as int64, made ``KEY_STEP`` links at a time into the one
    result: ~8 bytes a kept link at the peak, where the expression makes ~20."""
    keys = np.empty(int(np.count_nonzero(mask)), dtype=np.int64)
    filled = 0
    for start in range(0, len(mask), KEY_STEP):
        kept = mask[start:start + KEY_STEP]
        part = keys[filled:filled + int(np.count_nonzero(kept))]
        np.multiply(high[start:start + KEY_STEP][kept], width, out=part, dtype=np.int64)
        part += low[start:start + KEY_STEP][kept]
        filled += len(part)
    return keys


def kept_at(mask: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """The positions in ``mask`` of its ``numbers``-th True values (``np.flatnonzero(mask)[numbers]``),
    found ``KEY_STEP`` positions at a time: no array of every kept position is made."""
    numbers = np.asarray(numbers, dtype=np.int64)
    found = np.empty(len(numbers), dtype=np.int64)
    if not len(numbers):
        return found
    steps = range(0, len(mask), KEY_STEP)
    ends = np.cumsum([np.count_nonzero(mask[start:start + KEY_STEP]) for start in steps], dtype=np.int64)
    step_of = np.searchsorted(ends, numbers, side="right")
    for k in np.unique(step_of).tolist():
        wanted = np.flatnonzero(step_of == k)
        before = int(ends[k - 1]) if k else 0
        positions = np.flatnonzero(mask[k * KEY_STEP:(k + 1) * KEY_STEP])
        found[wanted] = k * KEY_STEP + positions[numbers[wanted] - before]
    return found


#: Keys that ``first_seen`` sorts at once; more are taken a range of values at a time.
FIRST_SEEN_BLOCK = 1 << 22


def first_seen(keys: np.ndarray, block: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``keys`` in the order of their first occurrence, with that position and their count.
    More than ``block`` keys (None: ``FIRST_SEEN_BLOCK``) are taken a range of values at a time (its
    bounds from a sample of the keys), each range's distinct keys found apart: a key's occurrences
    all fall in one range, so the answer is the same, and the sort's three arrays of 8 bytes a key
    are made for a range, not for all (beside the keys: ~5 bytes a key at the peak, where ~18)."""
    keys = np.asarray(keys)
    block = FIRST_SEEN_BLOCK if block is None else block
    if len(keys) <= block:
        return _first_seen(keys)
    sample = np.sort(keys[::max(1, len(keys) // (1 << 16))])
    ranges_wanted = -(-len(keys) // block)
    cuts = np.unique(sample[(np.arange(1, ranges_wanted) * len(sample)) // ranges_wanted])
    del sample
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for lo, hi in zip([None, *cuts.tolist()], [*cuts.tolist(), None], strict=True):
        inside = np.ones(len(keys), dtype=bool) if lo is None else keys >= lo
        if hi is not None:
            inside &= keys < hi
        at = np.flatnonzero(inside)
        del inside
        values, first, counts = _first_seen(keys[at])
        found.append((values, at[first], counts))
        del at
    values = np.concatenate([part[0] for part in found])
    first = np.concatenate([part[1] for part in found])
    counts = np.concatenate([part[2] for part in found])
    order = np.argsort(first, kind="stable")
    return values[order], first[order], counts[order]


def _first_seen(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``first_seen`` in one stable sort: the first of equal keys is their first occurrence."""
    if not len(keys):
        return keys, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    by_key = np.argsort(keys, kind="stable")
    ordered = keys[by_key]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    counts = np.diff(np.append(starts, len(keys)))
    first = by_key[starts]
    del by_key
    order = np.argsort(first, kind="stable")
    return ordered[starts][order], first[order], counts[order]


def links_table(links: Sequence[Link]) -> LinkTable:
    """``links`` as a table (itself when it is one)."""
    return links if isinstance(links, LinkTable) else LinkTable.from_links(links)


class PairSet:
    """(source URL, target URL) pairs of a ``LinkTable`` as sorted int64 keys (``in``, ``len``, iteration)."""

    def __init__(self, table: LinkTable, keys: np.ndarray) -> None:
        self.ids, self.urls, self.keys = table.ids, table.urls, keys
        self._n = len(table.urls)

    def __contains__(self, pair: object) -> bool:
        if not isinstance(pair, tuple) or len(pair) != 2:
            return False
        i, j = self.ids.get(pair[0]), self.ids.get(pair[1])
        if i is None or j is None:
            return False
        key = i * self._n + j
        at = int(np.searchsorted(self.keys, key))
        return at < len(self.keys) and int(self.keys[at]) == key

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        n, urls = self._n, self.urls
        return ((urls[k // n], urls[k % n]) for k in self.keys.tolist())


class TargetsBySource:
    """Source URL → the set of URLs it links, from a ``LinkTable`` sorted by source (CSR), a set made
    only for the source asked for."""

    def __init__(self, table: LinkTable) -> None:
        order = np.argsort(table.source, kind="stable")
        self.targets = mapped(table.target[order])  # 4 bytes a link, read to the anchoring's end
        self.indptr = np.searchsorted(table.source[order], np.arange(len(table.urls) + 1))
        self.ids, self.urls = table.ids, table.urls

    def get(self, source: str, default: set[str] | None = None) -> set[str] | None:
        i = self.ids.get(source)
        if i is None or self.indptr[i] == self.indptr[i + 1]:
            return default
        urls = self.urls
        return {urls[t] for t in self.targets[self.indptr[i]:self.indptr[i + 1]].tolist()}

    def __getitem__(self, source: str) -> set[str]:
        return self.get(source) or set()


def linked_keys(links: Sequence[Link], items: Sequence[str], content_only: bool = False,
                where: dict[str, int] | None = None) -> np.ndarray:
    """The pairs linked between different pages of ``items`` (a list of URLs; ``where``: URL ->
    its number, when made already), as sorted distinct keys source item × len(items) + target
    item (by in-content links only when ``content_only``)."""
    found = _linked_steps(links, items, content_only, where)
    if len(found) == 1:
        return found[0]
    return distinct_joined(found)


def linked_csr(links: Sequence[Link], items: Sequence[str], content_only: bool = False,
               where: dict[str, int] | None = None, block: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``linked_keys`` as CSR arrays: (indptr, int64: where each item's targets start, and last where
    they end; targets, int32 item numbers, ascending within a source). Each step's distinct keys are
    merged a range of sources at a time, straight into the targets (~15 bytes a linked pair at the
    peak: the steps' keys, the targets and a range's keys), where sorting them all into keys and then
    into arrays made ~22 (a million synthetic pages' ~68M links: the report's link graph, ~1.5 GB)."""
    n = len(items)
    pieces = _linked_steps(links, items, content_only, where)
    total = sum(len(piece) for piece in pieces)
    targets = np.empty(total, dtype=np.int32)
    counts = np.zeros(n, dtype=np.int64)
    ranges_wanted = max(1, -(-total // (FIRST_SEEN_BLOCK if block is None else block)))
    bounds = np.linspace(0, n, ranges_wanted + 1).astype(np.int64)
    filled = 0
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if lo == hi:
            continue
        keys = np.concatenate([piece[np.searchsorted(piece, lo * n):np.searchsorted(piece, hi * n)]
                               for piece in pieces]) if pieces else np.zeros(0, dtype=np.int64)
        keys.sort()  # a range's keys, joined: its own array
        keys = _without_repeats(keys)
        targets[filled:filled + len(keys)] = keys % n
        counts[lo:hi] = np.bincount(keys // n - lo, minlength=hi - lo)
        filled += len(keys)
        del keys
    pieces.clear()
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, targets[:filled] if filled < total else targets


def _linked_steps(links: Sequence[Link], items: Sequence[str], content_only: bool,
                  where: dict[str, int] | None) -> list[np.ndarray]:
    """``linked_keys``' distinct keys of each step of ``KEY_STEP`` links (sorted, each step's once)."""
    table = links_table(links)
    where = where if where is not None else {url: i for i, url in enumerate(items)}
    item = np.array([where.get(url, -1) for url in table.urls], dtype=np.int64)
    content = table.content() if content_only else None
    found = []  # each step's distinct keys: the site's links at once held ~40 bytes a link in arrays
    for start in range(0, len(table), KEY_STEP):
        step = slice(start, start + KEY_STEP)
        source, target = table.source[step], table.target[step]
        if content is not None:
            source, target = source[content[step]], target[content[step]]
        source, target = item[source], item[target]
        both = (source >= 0) & (target >= 0) & (source != target)
        found.append(distinct(source[both] * len(items) + target[both]))
    return found


#: Links made keys at a time by ``linked_keys`` (~40 bytes each while they are), ``masked_keys`` and
#: ``kept_at``.
KEY_STEP = 1 << 20


#: ``in_sorted`` looks up this many values at a time: its transients (each value's place, 8 bytes,
#: and the key there, 8 more) stay ~32 MB whatever the length of what it is asked about.
IN_SORTED_BATCH = 1 << 21


def in_sorted(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Mask of the ``wanted`` values that stand in ``keys`` (sorted), ``IN_SORTED_BATCH`` values at a
    time (a confidence fold asks it about every link of the site: 6.8M at 100k pages, where its
    transients for all of them at once were ~16 bytes a value, ~0.1 GB)."""
    found = np.zeros(len(wanted), dtype=bool)
    if not len(keys):
        return found
    last = len(keys) - 1
    for start in range(0, len(wanted), IN_SORTED_BATCH):
        part = wanted[start:start + IN_SORTED_BATCH]
        place = np.searchsorted(keys, part)
        np.minimum(place, last, out=place)
        np.equal(keys[place], part, out=found[start:start + IN_SORTED_BATCH])
    return found


def pair_set(links: Sequence[Link], content_only: bool = False) -> PairSet | set[tuple[str, str]]:
    """What ``linked_pairs`` holds, as a ``PairSet`` for a ``LinkTable``: for ``in`` tests."""
    if isinstance(links, LinkTable):
        return links.pair_set(content_only)
    return linked_pairs(links, content_only)


def content_uses(links: Sequence[Link]) -> Iterator[tuple[str, str, str]]:
    """(source URL, target URL, anchor text) of the in-content links of any sequence, in order."""
    if isinstance(links, LinkTable):
        return links.content_uses()
    return ((k.source_url, k.target_url, k.anchor_text) for k in links if k.position == "content")


def linked_pairs(links: Sequence[Link], content_only: bool = False) -> set[tuple[str, str]]:
    """(source, target) URL pairs linked, by in-content links only when ``content_only``."""
    if isinstance(links, LinkTable):
        return links.pairs(content_only)
    return {(k.source_url, k.target_url) for k in links if not content_only or k.position == "content"}
