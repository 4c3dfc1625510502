"""A suggested link (``Suggestion``), and the candidate pool held as columns (``Pool``).

The pool is every scored pair the caps let through, about three times the queue: most
of it finds no anchor. Held as NumPy columns (page numbers, score, rank, each score
part), a pair costs ~150 bytes instead of ~1 KB as a ``Suggestion`` with a dict of
parts; rows are made a source at a time, when the anchors need them.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field

import numpy as np


class _Layout:
    """The names of a row's parts, in order, shared by every row with the same names."""

    __slots__ = ("after", "index", "names")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.index = {name: i for i, name in enumerate(names)}
        self.after: dict[str, _Layout] = {}  # name -> this layout with that name added

    def plus(self, name: str) -> _Layout:
        found = self.after.get(name)
        if found is None:
            found = self.after[name] = layout(self.names + (name,))
        return found


_LAYOUTS: dict[tuple[str, ...], _Layout] = {}


def layout(names: tuple[str, ...]) -> _Layout:
    """The one layout of these names."""
    found = _LAYOUTS.get(names)
    if found is None:
        found = _LAYOUTS[names] = _Layout(names)
    return found


class Parts(MutableMapping[str, float]):
    """A row's score parts: a mapping of name to value, as a dict is, held as one array of doubles
    with the names shared by all rows that have the same ones (~0.3 KB a row with 25 parts, against
    ~1.8 KB as a dict of floats: a queue's rows are ~3 a page). A value that is not a ``float`` is
    kept as it is, beside the array."""

    __slots__ = ("_layout", "_other", "_values")

    def __init__(self, items: Mapping[str, object] | Iterable[tuple[str, object]] = ()) -> None:
        self._layout = layout(())
        self._values = array("d")
        self._other: dict[str, object] | None = None
        for name, value in items.items() if isinstance(items, Mapping) else items:
            self[name] = value

    @classmethod
    def of(cls, names: _Layout, values: Iterable[float]) -> Parts:
        """Parts with these names and float values, in the same order."""
        parts = cls.__new__(cls)
        parts._layout, parts._values, parts._other = names, array("d", values), None
        return parts

    def __getitem__(self, name: str) -> float:
        i = self._layout.index[name]
        if self._other is not None and name in self._other:
            return self._other[name]  # type: ignore[return-value]
        return self._values[i]

    def get(self, name: str, default: object = None) -> object:  # type: ignore[override]
        return self[name] if name in self._layout.index else default

    def __contains__(self, name: object) -> bool:
        return name in self._layout.index

    def __setitem__(self, name: str, value: float) -> None:
        i = self._layout.index.get(name)
        if i is None:
            self._layout = self._layout.plus(name)
            self._values.append(0.0)
            i = len(self._values) - 1
        if type(value) is float:
            self._values[i] = value
            if self._other is not None:
                self._other.pop(name, None)
        else:
            self._values[i] = math.nan
            if self._other is None:
                self._other = {}
            self._other[name] = value

    def __delitem__(self, name: str) -> None:
        i = self._layout.index[name]
        names = self._layout.names
        self._layout = layout(names[:i] + names[i + 1:])
        del self._values[i]
        if self._other is not None:
            self._other.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._layout.names)

    def __len__(self) -> int:
        return len(self._layout.names)

    def __repr__(self) -> str:
        return repr(dict(self))

    def __reduce__(self) -> tuple[object, ...]:
        return _restored, (self._layout.names, self._values, self._other)


def names_of_parts(rows: Iterable[Suggestion]) -> set[str]:
    """Every part name of ``rows`` (a layout's names read once, not a row's at a time)."""
    seen: set[str] = set()
    shapes: set[int] = set()
    for s in rows:
        parts = s.parts
        if type(parts) is Parts:
            if id(parts._layout) in shapes:
                continue
            shapes.add(id(parts._layout))
        seen.update(parts)
    return seen


def part_columns(rows: Sequence[Suggestion], names: Sequence[str]
                 ) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """Each part of ``names`` over ``rows``: (values, absent) as columns, read a layout's rows at a
    time (each row's doubles joined, not looked up a name at a time: at a million synthetic pages the
    queue's 1.8 M rows × 25 parts took ~30 s that way). None when a row's parts are not ``Parts``
    of floats alone (a dict, or a value kept beside the array): the caller reads them one by one."""
    groups: dict[int, tuple[_Layout, list[int]]] = {}
    for i, s in enumerate(rows):
        parts = s.parts
        if type(parts) is not Parts or parts._other is not None:
            return None
        found = groups.get(id(parts._layout))
        if found is None:
            found = groups[id(parts._layout)] = (parts._layout, [])
        found[1].append(i)
    n = len(rows)
    columns = {name: (np.zeros(n, dtype=np.float64), np.ones(n, dtype=bool)) for name in names}
    for shape, members in groups.values():
        width = len(shape.names)
        if not width:
            continue
        joined = b"".join([rows[i].parts._values for i in members])  # type: ignore[attr-defined]
        values = np.frombuffer(joined, dtype=np.float64).reshape(len(members), width)
        at = np.array(members, dtype=np.int64)
        for j, name in enumerate(shape.names):
            if name in columns:
                columns[name][0][at] = values[:, j]
                columns[name][1][at] = False
    return columns


def _restored(names: tuple[str, ...], values: array, other: dict[str, object] | None) -> Parts:
    parts = Parts.of(layout(names), values)
    parts._other = other
    return parts


@dataclass(slots=True)
class Suggestion:
    """One proposed link: in ``source_url``, link ``anchor`` to ``target_url``."""

    source_url: str
    target_url: str
    score: float
    parts: MutableMapping[str, float] = field(default_factory=dict)  # a dict, or ``Parts``
    rank: int = 0  # 1 = best suggestion of its source
    anchor: str = ""
    anchor_type: str = ""  # "text": stands in the source text; "title": shortened target title
    context: str = ""  # the sentence the anchor stands in
    evidence: str = ""  # why the anchor names the target: link, title, slug, part, heading
    paragraph: int = -1  # the source's prose block the anchor stands in (``passages.paragraph_texts``)
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
        shared = layout(tuple(names))
        rows = [Suggestion(urls[s], urls[t], score, Parts.of(shared, parts), rank=rank)
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
