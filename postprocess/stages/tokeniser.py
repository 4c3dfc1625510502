"""The one tokeniser: how every stage splits text into words.

The lexical evidence (TF-IDF terms, the names a page is known by and where page texts mention
them) and the anchors (the spans a link may wrap) read the same words, so a name the lexical
evidence found in a page is a run of words the anchor search can wrap there.

A word is a run of letters and digits, kept whole across inner hyphens, apostrophes and dots
("built-in", "don't", "django.db.models", "3.2"), with a call's brackets ("count()"), so a code
name is one word and never half of one. Each stage then compares words in one of two forms:
``folded`` (lower case, typographic apostrophes made plain) for terms, where ``count()`` and the
word "count" differ; ``normalise`` (folded, a call's brackets dropped, a light plural strip) for
names and anchors, where the anchor search decides from the page's markup whether "count" is the
inline code name ``count()``.
"""

from __future__ import annotations

import functools
import re

import numpy as np

#: A word: letters and digits, joined across inner ``-``, ``'``, ``’`` and ``.``, with a call's ``()``
#: (possessive: nothing after a word can make it give a character back, so the scan never backtracks).
WORD = re.compile(r"\w++(?:[-'’.]\w++)*+(?:\(\))?+")
#: The same, as the one group of a split: the text comes back as gap, word, gap, word ... gap.
WORD_SPLIT = re.compile(f"({WORD.pattern})")


def folded(word: str) -> str:
    """Lower case, typographic apostrophes made plain: a word as written, without its case."""
    return word.lower().replace("’", "'")


def bare(word: str) -> str:
    """``word`` without a call's brackets: "count()" -> "count"."""
    return word[:-2] if word.endswith("()") else word


def normal_form(word: str) -> str:
    """Lower case, a call's brackets dropped and a light plural strip, so "queries" meets "query",
    "models" "model" and "save()" "save"; ``word`` itself when it is its normal form already (one
    string for both, where a cache or a name holds them)."""
    w = folded(bare(word))
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return word if w == word else w


#: Words whose normal forms ``normalise`` keeps, the most recently used: 99.50% of the words of a
#: 100k-page synthetic site's prose were found there, 99.51% with 16 times as many, which grew
#: with the site's vocabulary (227,849 forms after the finder's build at 100k; docs/benchmarks.md).
NORMAL_FORMS_KEPT = 1 << 16


@functools.lru_cache(maxsize=NORMAL_FORMS_KEPT)
def normalise(word: str) -> str:
    """``normal_form``, cached: a site's words repeat, and every anchor search normalises every word.
    A pass over every page's words that keeps its own map of them calls ``normal_form``."""
    return normal_form(word)


def split_ends(pattern: re.Pattern[str], text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """What ``pattern`` (one capturing group round the whole of it) matches in ``text``, with the
    character offsets where each match starts and ends: the same as its ``finditer``'s spans,
    made from the lengths of a ``split`` (no match object a match: about 2.5x faster on a page)."""
    parts = pattern.split(text)
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    ends = np.cumsum(lengths)[1::2]
    return parts[1::2], ends - lengths[1::2], ends


def terms(text: str) -> list[str]:
    """The folded words of ``text``: the terms the lexical evidence counts and matches."""
    return WORD.findall(folded(text))


def words(text: str | None) -> list[str]:
    """The normalised words of ``text``: how names and anchors are compared."""
    return list(map(normalise, WORD.findall(text or "")))


def spaced(phrase: str) -> str:
    """``phrase`` with each run of white space made one space: ``phrase`` itself when it is so already
    (a name or a spelling kept for every page holds the page's string, not a copy)."""
    joined = " ".join(phrase.split())
    return phrase if joined == phrase else joined
