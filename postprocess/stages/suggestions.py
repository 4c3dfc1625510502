"""A suggested link (``Suggestion``), and the candidate pool held as columns (``Pool``).

The pool is every scored pair the caps let through, about three times the queue: most
of it finds no anchor. Held as NumPy columns (page numbers, score, rank, each score
part), a pair costs ~150 bytes instead of ~1 KB as a ``Suggestion`` with a dict of
parts; rows are made a source at a time, when the anchors need them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(slots=True)
class Suggestion:
    """One proposed link: in ``source_url``, link ``anchor`` to ``target_url``."""

    source_url: str
    target_url: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    rank: int = 0  # 1 = best suggestion of its source
    anchor: str = ""
    anchor_type: str = ""  # "text": stands in the source text; "title": shortened target title
    context: str = ""  # the sentence the anchor stands in
    evidence: str = ""  # why the anchor names the target: link, title, slug, part, heading
    passage: str = ""  # the paragraph (block) the anchor stands in
    confidence: float = 0.0  # probability that the site's editors would make this link


#: Rows made at a time when a pool is read whole.
BATCH_ROWS = 4096


class Pool(Sequence[Suggestion]):
    """Scored pairs, best first, as columns: ``urls[sources[i]]`` → ``urls[targets[i]]`` with
    ``scores[i]``, ``ranks[i]`` and ``parts[name][i]`` (absent where ``absent[name][i]``).

    Reading a row makes a new ``Suggestion`` (``rows``, indexing, iteration): changing it does not
    change the pool.
    """

    def __init__(self, urls: Sequence[str], sources: np.ndarray, targets: np.ndarray, scores: np.ndarray,
                 ranks: np.ndarray, parts: Mapping[str, np.ndarray],
                 absent: Mapping[str, np.ndarray] | None = None) -> None:
        self.urls = urls
        self.sources = np.asarray(sources, dtype=np.int32)
        self.targets = np.asarray(targets, dtype=np.int32)
        self.scores = np.asarray(scores, dtype=np.float64)
        self.ranks = np.asarray(ranks, dtype=np.int32)
        self.parts = {name: np.asarray(column, dtype=np.float64) for name, column in parts.items()}
        self.absent = {name: mask for name, mask in (absent or {}).items() if mask.any()}
        if any(len(column) != len(self.sources) for column in (self.targets, self.scores, self.ranks,
                                                               *self.parts.values())):
            raise ValueError("a pool's columns must be of one length")

    @classmethod
    def from_rows(cls, rows: Sequence[Suggestion]) -> Pool:
        """The pool of ``rows`` (in their order); a part a row lacks is absent there."""
        number: dict[str, int] = {}
        sources = [number.setdefault(s.source_url, len(number)) for s in rows]
        targets = [number.setdefault(s.target_url, len(number)) for s in rows]
        names = list(dict.fromkeys(name for s in rows for name in s.parts))
        parts = {name: np.array([s.parts.get(name, 0.0) for s in rows], dtype=np.float64) for name in names}
        absent = {name: np.array([name not in s.parts for s in rows], dtype=bool) for name in names}
        return cls(list(number), np.array(sources, dtype=np.int64), np.array(targets, dtype=np.int64),
                   np.array([s.score for s in rows], dtype=np.float64),
                   np.array([s.rank for s in rows], dtype=np.int64), parts, absent)

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, item):  # noqa: ANN001, ANN204 - an int or a slice, as a Sequence takes
        if isinstance(item, slice):
            return self.rows(np.arange(len(self))[item])
        if not -len(self) <= item < len(self):
            raise IndexError("pool row out of range")
        return self.rows(np.array([item % len(self)]))[0]

    def __iter__(self) -> Iterator[Suggestion]:
        for start in range(0, len(self), BATCH_ROWS):
            yield from self.rows(np.arange(start, min(start + BATCH_ROWS, len(self))))

    def rows(self, positions: np.ndarray) -> list[Suggestion]:
        """New ``Suggestion`` rows for the pool's ``positions``, in that order."""
        urls = self.urls
        names = list(self.parts)
        values = [self.parts[name][positions].tolist() for name in names]
        rows = [Suggestion(urls[s], urls[t], score, dict(zip(names, parts, strict=True)), rank=rank)
                for s, t, score, rank, *parts in zip(
                    self.sources[positions].tolist(), self.targets[positions].tolist(),
                    self.scores[positions].tolist(), self.ranks[positions].tolist(), *values, strict=True)]
        for name, mask in self.absent.items():
            for k in np.flatnonzero(mask[positions]).tolist():
                del rows[k].parts[name]
        return rows

    def by_source(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions grouped by source (``order[bounds[g]:bounds[g + 1]]`` is group g, its rows in
        pool order), the groups in URL order: the loader's page order, which it keeps the pages'
        blocks in (a pool made from rows numbers its URLs as they come)."""
        keys = self.url_ranks()[self.sources]
        order = np.argsort(keys, kind="stable")
        if not len(order):
            return order, np.zeros(1, dtype=np.int64)
        cuts = np.flatnonzero(np.diff(keys[order])) + 1
        return order, np.concatenate(([0], cuts, [len(order)]))

    def url_ranks(self) -> np.ndarray:
        """Each URL number's place in URL order (the numbers themselves when the URLs are sorted)."""
        urls = self.urls
        if all(a <= b for a, b in zip(urls, urls[1:], strict=False)):
            return np.arange(len(urls), dtype=np.int64)
        ranks = np.empty(len(urls), dtype=np.int64)
        ranks[sorted(range(len(urls)), key=urls.__getitem__)] = np.arange(len(urls))
        return ranks
