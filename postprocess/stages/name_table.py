"""The targets' names as word ids, and where a batch of sources writes them, found at once.

The anchoring looks, for each (source, target) pair, for the places where the source writes one of
the target's names (``AnchorFinder.spans``). A pair at a time, that is a Python loop over the
target's names (~11 at 10k synthetic pages) and over the places each name's first word stands, and
the target's names are read again for every source that may link it (~15 sources a target). Here
each target's names are kept once as word ids (a vocabulary of the names' own words), a source's
words are given those ids (-1: a word no name has), and the pairs of a batch of sources are matched
in one set of array operations: only the places where a whole name stands come back, in the order
the pair loop met them (the target's names in their order, then the places in the text).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

import numpy as np

from postprocess.stages.links import ranges

#: A place a name stands: its first word, its last word (word numbers in the source), the name's
#: number in the table.
Place = tuple[int, int, int]


class NameTable:
    """The names of a set of targets (each URL's names in order, each name its words and a kind
    number), as arrays: a name's words are a run of ``_words`` (ids in ``vocabulary``)."""

    def __init__(self, names_of_targets: Iterable[tuple[str, Iterable[tuple[Sequence[str], int]]]]) -> None:
        vocabulary: dict[str, int] = {}
        row: dict[str, int] = {}
        words = array("i")
        word_bounds = array("i", [0])  # 32 bits: two billion words of names would stop it (OverflowError)
        kinds = array("b")
        name_bounds = array("q", [0])
        for url, names in names_of_targets:
            if url in row:
                continue
            row[url] = len(row)
            for key, kind in names:
                words.extend([vocabulary.setdefault(word, len(vocabulary)) for word in key])
                word_bounds.append(len(words))
                kinds.append(kind)
            name_bounds.append(len(kinds))
        self.vocabulary = vocabulary
        self.row = row
        self._words_of = list(vocabulary)
        self._words = np.frombuffer(words, dtype=np.int32) if len(words) else np.zeros(0, dtype=np.int32)
        self._word_bounds = np.frombuffer(word_bounds, dtype=np.int32)
        self._kinds = np.frombuffer(kinds, dtype=np.int8) if len(kinds) else np.zeros(0, dtype=np.int8)
        self._name_bounds = np.frombuffer(name_bounds, dtype=np.int64)

    def __len__(self) -> int:
        """The names in the table."""
        return len(self._kinds)

    def name(self, number: int) -> tuple[tuple[str, ...], int]:
        """Name ``number``'s words and kind number."""
        a, b = int(self._word_bounds[number]), int(self._word_bounds[number + 1])
        return tuple(map(self._words_of.__getitem__, self._words[a:b].tolist())), int(self._kinds[number])

    def ids(self, forms: Sequence[str]) -> np.ndarray:
        """Each form's word id (int32; -1: a word no name has)."""
        get = self.vocabulary.get
        return np.fromiter((get(form, -1) for form in forms), dtype=np.int32, count=len(forms))

    def places(self, texts: Sequence[np.ndarray], targets: Sequence[Sequence[str]]
               ) -> list[list[list[Place]]]:
        """For each source (``texts[k]``: its words' ids, ``ids``) and each of its targets
        (``targets[k]``: URLs; one the table lacks has no names): the places where a whole name of
        the target stands in the source's words, by the name's order in the table, then by place."""
        found: list[list[list[Place]]] = [[[] for _ in urls] for urls in targets]
        text_lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        pair_counts = np.fromiter(map(len, targets), dtype=np.int64, count=len(targets))
        if not len(self) or not text_lengths.sum() or not pair_counts.sum():
            return found
        text_starts = np.cumsum(text_lengths) - text_lengths
        ids = np.concatenate([np.asarray(t, dtype=np.int64) for t in texts])
        # every word some name has, keyed by (its source, its id), in text order within a key
        named = np.flatnonzero(ids >= 0)
        size = len(self.vocabulary)
        keys = np.repeat(np.arange(len(texts), dtype=np.int64), text_lengths)[named] * size + ids[named]
        by_key = np.argsort(keys, kind="stable")
        keys, at = keys[by_key], named[by_key]
        # every name of every pair's target, in the pairs' order, each target's names in order
        rows = np.fromiter((self.row.get(url, -1) for urls in targets for url in urls), dtype=np.int64,
                           count=int(pair_counts.sum()))
        pair_source = np.repeat(np.arange(len(targets), dtype=np.int64), pair_counts)
        known = rows >= 0
        lows = np.where(known, self._name_bounds[np.maximum(rows, 0)], 0)
        highs = np.where(known, self._name_bounds[np.maximum(rows, 0) + 1], 0)
        name_pair = np.repeat(np.arange(len(rows), dtype=np.int64), highs - lows)
        names = ranges(lows, highs)
        firsts, lasts = self._word_bounds[names], self._word_bounds[names + 1]
        # each place where the name's first word stands in its pair's source
        wanted = pair_source[name_pair] * size + self._words[firsts]
        lo, hi = np.searchsorted(keys, wanted, "left"), np.searchsorted(keys, wanted, "right")
        place_of = np.repeat(np.arange(len(names), dtype=np.int64), hi - lo)
        start = at[ranges(lo, hi)]
        # and the name's other words after it, inside the same source
        length = (lasts - firsts)[place_of]
        source = pair_source[name_pair[place_of]]
        whole = start + length <= (text_starts + text_lengths)[source]
        for k in range(1, int(length.max()) if len(length) else 0):
            longer = whole & (length > k)
            after = np.minimum(start + k, len(ids) - 1)
            whole[longer] = ids[after[longer]] == self._words[firsts[place_of[longer]] + k]
        place_of, start, length, source = place_of[whole], start[whole], length[whole], source[whole]
        first = start - text_starts[source]
        # each place's pair as its number among its source's targets
        pair = name_pair[place_of] - (np.cumsum(pair_counts) - pair_counts)[source]
        for p, i, j, n, k in zip(pair.tolist(), first.tolist(), (first + length - 1).tolist(),
                                 names[place_of].tolist(), source.tolist(), strict=True):
            found[k][p].append((i, j, n))
        return found
