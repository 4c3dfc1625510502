"""Words and phrases found in running text held as integer ids: one dictionary lookup a word, then
the phrases of a whole batch of pages matched at once in NumPy (no Python step a word or a match)."""

from __future__ import annotations

import itertools
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from postprocess.stages.links import distinct
from postprocess.stages.word_scan import FormTable, Scan


class Vocabulary(dict[str, int]):
    """Word as written → the id of its normal form (``normalise``: lower case, a plural stripped...);
    a form not seen before gets the next id (``words[i]`` is the form of id ``i``). Each written
    word is normalised once: after that it is one dictionary lookup."""

    def __init__(self, normalise: Callable[[str], str] = str) -> None:
        super().__init__()
        self.normalise = normalise
        self.words: list[str] = []
        self._of_form: dict[str, int] = {}
        self._of_hash = FormTable()  # a form's hash (``word_scan``) → its id

    def __missing__(self, written: str) -> int:
        form = self.normalise(written)
        number = self._of_form.get(form)
        if number is None:
            number = self._of_form[form] = len(self.words)
            self.words.append(form)
        self[written] = number
        return number

    def ids(self, words: Iterable[str], count: int = -1) -> np.ndarray:
        """The ids of ``words`` (new ones added), by C loops: a map over the dictionary's lookup."""
        return np.fromiter(map(self.__getitem__, words), dtype=np.int64, count=count)

    def ids_of(self, text: str, found: Scan) -> np.ndarray:
        """The ids of the words ``found`` in ``text`` (``word_scan``: the forms' hashes, made as this
        vocabulary's ``normalise`` makes them), the same as ``ids`` of those words: a form not seen
        before gets the next id, in the order the forms first stand in the text. The forms are
        looked up in NumPy (``FormTable``); a new one's string is made once, from its first word."""
        ids = self._of_hash.get(found.forms)
        unknown = np.flatnonzero(ids < 0)
        if len(unknown):
            distinct, first, which = np.unique(found.forms[unknown], return_index=True, return_inverse=True)
            numbers = np.empty(len(distinct), dtype=np.int64)
            at = unknown[first]
            starts, ends = found.starts[at].tolist(), found.ends[at].tolist()
            for k in np.argsort(first, kind="stable").tolist():  # in the order they first stand
                form = self.normalise(text[starts[k]:ends[k]])
                number = self._of_form.get(form)
                if number is None:
                    number = self._of_form[form] = len(self.words)
                    self.words.append(form)
                numbers[k] = number
            self._of_hash.add(distinct, numbers)
            ids[unknown] = numbers[which.reshape(-1)]
        return ids


class KeyTable:
    """Distinct int64 keys → values of at least 0, looked up a whole array at once: an open-addressing
    table (linear probing, at most half full) made once, in NumPy. A look-up reads a slot or two where
    a binary search over the sorted keys read ~log₂ n, most of them cache misses on a large site (a
    million synthetic pages' phrase matchers: ~620 ns a look-up in 1M keys, ~1.9 µs in 10M; here
    ~0.1 µs)."""

    _MIX = np.uint64(0x9E3779B97F4A7C15)  # 2⁶⁴/φ: a key's first slot is the top bits of its product

    def __init__(self, keys: np.ndarray, values: np.ndarray) -> None:
        bits = max(4, (2 * len(keys)).bit_length())
        self._shift = np.uint64(64 - bits)
        first = self._first_slots(keys)
        order = np.argsort(first, kind="stable")
        first = first[order]
        # in order of first slot, each key at its first slot or just after the key before it: every
        # slot from a key's first to its own is taken, as linear probing needs, with no wrap (the last
        # keys run on past 2^bits), and one empty slot more ends every probe
        number = np.arange(len(keys), dtype=np.int64)
        place = np.maximum.accumulate(first - number) + number if len(keys) else number
        size = max(1 << bits, int(place[-1]) + 1 if len(keys) else 0) + 1
        self._keys = np.zeros(size, dtype=np.int64)
        self._values = np.full(size, -1, dtype=np.int64)
        self._keys[place] = keys[order]
        self._values[place] = values[order]

    def __len__(self) -> int:
        return int(np.count_nonzero(self._values >= 0))

    def _first_slots(self, keys: np.ndarray) -> np.ndarray:
        return ((keys.astype(np.uint64) * self._MIX) >> self._shift).astype(np.int64)

    def get(self, keys: np.ndarray) -> np.ndarray:
        """The value of each key, -1 where the table has none."""
        found = np.full(len(keys), -1, dtype=np.int64)
        active = np.arange(len(keys))
        slots = self._first_slots(keys)
        while len(active):
            values = self._values[slots]
            hit = (self._keys[slots] == keys[active]) & (values >= 0)
            found[active[hit]] = values[hit]
            going = ~hit & (values >= 0)  # a taken slot with another key: the next one
            active, slots = active[going], slots[going] + 1
        return found

    @property
    def nbytes(self) -> int:
        return self._keys.nbytes + self._values.nbytes


class PhraseMatcher:
    """Finds every occurrence of some phrases in id sequences, exactly.

    The phrases' prefixes form a trie whose edges (parent node, word) are one sorted array of
    integer codes, built level by level in NumPy. Every position that starts with a phrase's first
    word walks it together, one word further a step, for as many steps as the longest phrase has
    words."""

    def __init__(self, words: Sequence[Sequence[str]], phrases: Sequence[object]) -> None:
        """Report ``phrases[k]`` where the words ``words[k]`` stand in a row (of two with the same
        words, the later one; a phrase of no words is never reported)."""
        self.phrases = phrases
        self._word_ids = Vocabulary()  # a phrase word → its id less 1 (0 is a word in no phrase)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        flat = self._word_ids.ids(itertools.chain.from_iterable(words), int(lengths.sum())) + 1
        self._width = len(self._word_ids.words) + 1
        starts = np.cumsum(lengths) - lengths
        node = np.zeros(len(words), dtype=np.int64)  # each phrase's node so far; the root is 0
        codes: list[np.ndarray] = []
        nodes: list[np.ndarray] = []
        self._first = np.zeros(self._width, dtype=np.int64)  # the root's child for each word (0: none)
        self._longest = int(lengths.max()) if len(words) else 0
        for step in range(self._longest):
            longer = np.flatnonzero(lengths > step)
            code = node[longer] * self._width + flat[starts[longer] + step]
            edges = distinct(code)
            first_node = 1 + sum(map(len, codes))
            node[longer] = first_node + np.searchsorted(edges, code)
            codes.append(edges)
            nodes.append(np.arange(first_node, first_node + len(edges), dtype=np.int64))
            if not step:
                self._first[edges] = nodes[0]
        all_codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
        self._edges = KeyTable(all_codes, np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64))
        self._phrase_of = np.full(len(all_codes) + 1, -1, dtype=np.int64)  # a node → the phrase ending there
        named = np.flatnonzero(lengths > 0)
        np.maximum.at(self._phrase_of, node[named], named)  # the later of two phrases with the same words
        self._ids_of_vocabulary = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.phrases)

    def word_ids(self, ids: np.ndarray, vocabulary: Vocabulary) -> np.ndarray:
        """``ids`` of ``vocabulary`` as this matcher's word ids (0 for a word in no phrase). A matcher
        serves one vocabulary, which may grow between calls: the ids of its new words are added."""
        known = len(self._ids_of_vocabulary)
        if known < len(vocabulary.words):
            of_word = self._word_ids.get
            more = np.fromiter((of_word(w, -1) + 1 for w in vocabulary.words[known:]), dtype=np.int64,
                               count=len(vocabulary.words) - known)
            self._ids_of_vocabulary = np.concatenate([self._ids_of_vocabulary, more])
        return self._ids_of_vocabulary[ids]

    def find(self, words: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every occurrence of every phrase in ``words`` (this matcher's word ids, from ``word_ids``)
        that does not cross from one group to the next (``groups``: each word's, non-decreasing), as
        three arrays: where it starts (a word number), the number of its phrase, and its words."""
        found_starts: list[np.ndarray] = []
        found_phrases: list[np.ndarray] = []
        found_lengths: list[np.ndarray] = []
        width = self._width
        starts = np.flatnonzero(self._first[words])
        nodes = self._first[words[starts]]  # the first step: the root's children, looked up directly
        for step in range(self._longest):
            if step:
                at = starts + step
                inside = at < len(words)
                inside[inside] &= groups[at[inside]] == groups[starts[inside]]
                starts, nodes, at = starts[inside], nodes[inside], at[inside]
                nodes = self._edges.get(nodes * width + words[at])
                walked = nodes >= 0
                starts, nodes = starts[walked], nodes[walked]
            phrase = self._phrase_of[nodes]
            ended = phrase >= 0
            found_starts.append(starts[ended])
            found_phrases.append(phrase[ended])
            found_lengths.append(np.full(len(found_starts[-1]), step + 1, dtype=np.int64))
            if not len(starts):
                break
        if not found_starts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(found_starts), np.concatenate(found_phrases), np.concatenate(found_lengths)


def groups_per_item(found_groups: np.ndarray, items: np.ndarray, size: int) -> np.ndarray:
    """For each item number below ``size``, in how many distinct groups it was found."""
    if not len(items):
        return np.zeros(size, dtype=np.int64)
    pairs = distinct(found_groups.astype(np.int64) * size + items)
    return np.bincount(pairs % size, minlength=size)


def counter_of(names: Sequence[object], counts: np.ndarray) -> Counter:
    """A ``Counter`` of the names whose count is not zero."""
    nonzero = np.flatnonzero(counts)
    return Counter(dict(zip([names[i] for i in nonzero.tolist()], counts[nonzero].tolist(), strict=True)))


#: A hash's bits as an unsigned number (Python's ``hash`` of a tuple is a signed 64-bit integer).
_HASH_BITS = (1 << 64) - 1


def phrase_hash(phrase: tuple[str, ...]) -> int:
    """The phrase's hash as ``PhraseTable`` keeps it (unsigned)."""
    return hash(phrase) & _HASH_BITS


def phrase_hashes(phrases: Iterable[tuple[str, ...]]) -> np.ndarray:
    """``phrase_hash`` of each phrase, as unsigned 64-bit integers."""
    return np.fromiter((hash(p) & _HASH_BITS for p in phrases), dtype=np.uint64)


class PhraseTable:
    """A read-only map of phrases (tuples of words) to integers, held as the phrases' 64-bit hashes,
    sorted, beside the values: ~16 bytes a phrase, where a dict of tuples holds ~110 (a million
    pages name ~10M phrases). A lookup finds the hash's bucket (its top bits) and reads the few
    hashes there.

    The phrases themselves are not kept: two phrases with one hash would read as one (at 10M
    phrases, about one chance in 10^5 that any two do, and one in 10^12 that a phrase not in the
    table reads another's value). Python salts string hashes per process: a table is read in the
    process that made it and in those it forks, never saved."""

    __slots__ = ("_hashes", "_shift", "_starts", "_values")

    def __init__(self, hashes: np.ndarray, values: np.ndarray) -> None:
        """``values[k]`` for the phrase whose hash (``phrase_hashes``) is ``hashes[k]``; of two equal
        hashes, the later value."""
        hashes = np.asarray(hashes, dtype=np.uint64)
        numbers = np.asarray(values, dtype=np.int64)
        if len(hashes) != len(numbers):
            raise ValueError("a phrase table needs one value a phrase")
        order = np.argsort(hashes, kind="stable")
        hashes, numbers = hashes[order], numbers[order]
        last = np.ones(len(hashes), dtype=bool)  # the later of two equal hashes
        np.not_equal(hashes[1:], hashes[:-1], out=last[:-1])
        hashes, numbers = hashes[last], numbers[last]
        bits = max(1, int(len(hashes)).bit_length())
        self._shift = 64 - bits
        buckets = (hashes >> np.uint64(self._shift)).astype(np.int64)
        starts = np.searchsorted(buckets, np.arange((1 << bits) + 1, dtype=np.int64))
        self._hashes = array("Q", hashes.tobytes())
        self._values = array("q", numbers.tobytes())
        self._starts = array("q", starts.astype(np.int64).tobytes())

    @classmethod
    def of(cls, phrases: Iterable[tuple[str, ...]], values: Iterable[int]) -> PhraseTable:
        """``values[k]`` for ``phrases[k]``; of a phrase given twice, the later value."""
        return cls(phrase_hashes(phrases), np.fromiter(values, dtype=np.int64))

    def get(self, phrase: tuple[str, ...], default: int | None = None) -> int | None:
        """The phrase's value, or ``default``."""
        h = hash(phrase) & _HASH_BITS
        bucket = h >> self._shift
        hashes = self._hashes
        for i in range(self._starts[bucket], self._starts[bucket + 1]):
            if hashes[i] == h:
                return self._values[i]
        return default

    def __getitem__(self, phrase: tuple[str, ...]) -> int:
        value = self.get(phrase)
        if value is None:
            raise KeyError(phrase)
        return value

    def __contains__(self, phrase: object) -> bool:
        return isinstance(phrase, tuple) and self.get(phrase) is not None

    def __len__(self) -> int:
        return len(self._hashes)

    @property
    def nbytes(self) -> int:
        """The bytes its arrays hold."""
        return sum(a.itemsize * len(a) for a in (self._hashes, self._values, self._starts))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, PhraseTable) and self._hashes == other._hashes
                and self._values == other._values)

    __hash__ = None  # type: ignore[assignment]
