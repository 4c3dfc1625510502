"""Words and phrases found in running text held as integer ids: one dictionary lookup a word, then
the phrases of a whole batch of pages matched at once in NumPy (no Python step a word or a match)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from postprocess.stages.links import distinct


class Vocabulary(dict[str, int]):
    """Word as written → the id of its normal form (``normalise``: lower case, a plural stripped...);
    a form not seen before gets the next id (``words[i]`` is the form of id ``i``). Each written
    word is normalised once: after that it is one dictionary lookup."""

    def __init__(self, normalise: Callable[[str], str] = str) -> None:
        super().__init__()
        self.normalise = normalise
        self.words: list[str] = []
        self._of_form: dict[str, int] = {}

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
        order = np.argsort(all_codes, kind="stable")
        self._codes = all_codes[order]
        self._nodes = np.concatenate(nodes)[order] if nodes else np.zeros(0, dtype=np.int64)
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
                codes = nodes * width + words[at]
                place = np.minimum(np.searchsorted(self._codes, codes), len(self._codes) - 1)
                walked = self._codes[place] == codes
                starts, nodes = starts[walked], self._nodes[place[walked]]
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
