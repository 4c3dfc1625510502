"""The tokeniser's words found in NumPy: a whole batch of text scanned at once, no Python step a word.

``tokeniser.WORD`` as array operations on the text's code points: a word character is one
``re``'s ``\\w`` matches (``str.isalnum`` or ``_``), an inner ``-``, ``'``, ``’`` or ``.`` joins the
word characters on both its sides, and a call's ``()`` right after a word is part of it. The
spans are the same as ``WORD.finditer``'s (tests/test_word_scan.py holds them to it).

Each word's form is a 64-bit polynomial hash of its code points, made from one running sum over
the text (a subtraction and a product a word): the word as written, or its ``tokeniser.normal_form``
(lower case, a call's brackets dropped, a light plural strip) for ASCII words, and from
``normal_form`` itself for the few words with other letters. ``phrases.Vocabulary.ids_of`` gives
the forms their ids, looked up a whole array at once in a ``FormTable``; only a form not seen
before is made a string. Two different forms share a hash with a chance of about n²/2⁶⁵ (a million
forms: 3 in 10⁸).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from postprocess.stages.tokeniser import normal_form

#: The hash's base (odd, so that it has an inverse modulo 2⁶⁴).
_BASE = 0x100000001B3
_INVERSE = pow(_BASE, -1, 1 << 64)
_MASK = (1 << 64) - 1

#: Each ASCII character's class: 1 a word character, 2 one that may join two. The ASCII tables have a
#: 129th entry, 0, that every other character is read as (``ascii_looked_up``): a look-up of the whole
#: text at once, the few others then filled in, costs less than masking the text to look up its ASCII.
_ASCII_CLASS = np.array([1 if (chr(c).isalnum() or c == ord("_")) else 2 if chr(c) in "-'." else 0
                         for c in range(128)] + [0], dtype=np.uint8)
_ASCII_LOWER = np.array([ord(chr(c).lower()) for c in range(128)] + [0], dtype=np.uint64)
_BREAK = 0  # "\x00": a token of its own where ``breaks`` is asked for
_APOSTROPHE = 0x2019  # "’", a joiner like "'"
_S, _I, _E, _Y, _OPEN, _CLOSE = map(ord, "siey()")


@dataclass(frozen=True)
class Scan:
    """The words of a text: where each starts and ends (a call's ``()`` included), and its form's hash."""

    starts: np.ndarray  # int64 character offsets
    ends: np.ndarray
    forms: np.ndarray  # uint64


_tables: dict[int, np.ndarray] = {}  # base → its powers so far (grown to the longest piece scanned)
#: Powers kept at most (8 MB each): a longer text's are made for it and let go.
_POWERS_KEPT = 1 << 20


def _powers(base: int, size: int) -> np.ndarray:
    """``base`` to the powers 0 .. ``size`` - 1, modulo 2⁶⁴: kept and grown by doubling up to
    ``_POWERS_KEPT`` (a piece of ``SCAN_CHARACTERS``, 65,536 characters: 0.5 MB)."""
    powers = _tables.get(base)
    if powers is None or len(powers) < size:
        grown = np.full(max(size, 2 * len(powers) if powers is not None else 1 << 16), base, dtype=np.uint64)
        grown[0] = 1
        powers = np.cumprod(grown, dtype=np.uint64)  # wraps modulo 2⁶⁴, as the hash does
        if len(powers) <= _POWERS_KEPT:
            _tables[base] = powers
    return powers[:size]


def form_hash(form: str) -> int:
    """The hash ``scan`` gives a word whose form is ``form``: Σ (code point + 1) × base^position,
    modulo 2⁶⁴."""
    total = 0
    power = 1
    for ch in form:
        total += (ord(ch) + 1) * power
        power = power * _BASE & _MASK
    return total & _MASK


def code_points(text: str) -> np.ndarray:
    """The text's characters as numbers (``text[i]`` is ``chr(points[i])``)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def ascii_looked_up(table: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``table`` (129 entries) at each of ``points``: an ASCII character's own entry, any other's the last."""
    return table[np.minimum(points, np.uint32(128))]


def _word_characters(points: np.ndarray) -> np.ndarray:
    """Each character's class: 1 a word character, 2 one that may join two, 0 neither."""
    if not len(points) or int(points.max()) < 128:
        return _ASCII_CLASS[points]
    classes = ascii_looked_up(_ASCII_CLASS, points)
    large = np.flatnonzero(points >= 128)
    distinct, which = np.unique(points[large], return_inverse=True)
    of_distinct = np.fromiter((1 if chr(c).isalnum() else 2 if c == _APOSTROPHE else 0
                               for c in distinct.tolist()), dtype=np.uint8, count=len(distinct))
    classes[large] = of_distinct[which.reshape(-1)]
    return classes


def _spans(points: np.ndarray, breaks: bool) -> tuple[np.ndarray, np.ndarray]:
    """Where each word (and, with ``breaks``, each "\\x00") starts and ends."""
    classes = _word_characters(points)
    in_word = np.zeros(len(points) + 2, dtype=np.int8)  # a character of a word, with a 0 either side
    in_word[1:-1] = classes == 1
    joins = classes[1:-1] == 2
    joins &= in_word[1:-3].view(bool)
    joins &= in_word[3:-1].view(bool)
    in_word[2:-2] |= joins
    del classes, joins
    edges = np.flatnonzero(np.diff(in_word))
    starts, ends = edges[0::2], edges[1::2]
    after = ends + 1 < len(points)
    call = np.zeros(len(ends), dtype=bool)
    call[after] = (points[ends[after]] == _OPEN) & (points[ends[after] + 1] == _CLOSE)
    ends = ends + 2 * call
    if breaks:
        at = np.flatnonzero(points == _BREAK)
        if len(at):
            order = np.argsort(np.concatenate([starts, at]), kind="stable")
            starts = np.concatenate([starts, at])[order]
            ends = np.concatenate([ends, at + 1])[order]
    return starts, ends


class _Hasher:
    """The hash of any span of a text's codes: one running sum over them, then a subtraction and a
    product a span."""

    def __init__(self, codes: np.ndarray) -> None:
        """``codes``: the text's code points as uint64 (made the sum's terms in place)."""
        codes += np.uint64(1)
        codes *= _powers(_BASE, len(codes))
        self._sums = np.zeros(len(codes) + 1, dtype=np.uint64)
        np.cumsum(codes, out=self._sums[1:])

    def of(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The hash of each span ``starts[k]:ends[k]``."""
        return (self._sums[ends] - self._sums[starts]) * _powers(_INVERSE, len(self._sums))[starts]


def scan(text: str, form: Literal["written", "normal"] = "written", breaks: bool = False) -> Scan:
    """The words of ``text`` and their forms' hashes: as written, or ``normal_form``'s (``breaks``: each
    "\\x00" a token too, its form "\\x00")."""
    points = code_points(text)
    starts, ends = _spans(points, breaks)
    if form == "written":
        return Scan(starts, ends, _Hasher(points.astype(np.uint64)).of(starts, ends))
    other = points >= 128
    lowered = ascii_looked_up(_ASCII_LOWER, points)
    large = np.flatnonzero(other)
    lowered[large] = points[large]
    del large
    last = np.maximum(ends - 1, 0)
    bare = ends - 2 * (lowered[last] == _CLOSE)  # a call's "()" dropped
    size = bare - starts
    tail = [lowered[np.maximum(bare - k, 0)] for k in (1, 2, 3)]
    ies = (size > 4) & (tail[0] == _S) & (tail[1] == _E) & (tail[2] == _I)
    plural = ~ies & (size > 3) & (tail[0] == _S) & (tail[1] != _S)
    kept = bare - 3 * ies - plural
    with_other = _with_any(other, starts, ends) if other.any() else np.zeros(0, dtype=np.int64)
    del other
    forms = _Hasher(lowered).of(starts, kept)
    if ies.any():  # "queries" -> "quer" + "y"
        forms[ies] += np.uint64(_Y + 1) * _powers(_BASE, int(size.max()))[(kept - starts)[ies]]
    if len(with_other):  # words with other letters: their forms from ``normal_form`` (its lower case)
        forms[with_other] = np.fromiter(
            (form_hash(normal_form(text[s:e])) for s, e in zip(starts[with_other].tolist(),
                                                               ends[with_other].tolist(), strict=True)),
            dtype=np.uint64, count=len(with_other))
    return Scan(starts, ends, forms)


def _with_any(mask: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The numbers of the spans that hold a character of ``mask``."""
    before = np.concatenate([[0], np.cumsum(mask, dtype=np.int64)])
    return np.flatnonzero(before[ends] > before[starts])


#: Characters scanned at once by ``scan_texts`` (a text longer than this alone): the scan holds ~40
#: bytes a character while it runs, and ~60 µs of NumPy calls a piece is ~6 ns a word.
SCAN_CHARACTERS = 1 << 16


def scan_texts(texts: Sequence[str], form: Literal["written", "normal"] = "written", breaks: bool = False,
               scanner: Callable[[str], Scan] | None = None) -> tuple[str, Scan, np.ndarray]:
    """``scan`` (or ``scanner``) of the texts joined by line breaks (no word crosses one) as one text,
    and how many of its words (and breaks) each text holds; scanned ``SCAN_CHARACTERS`` at a time.
    Texts made when read (``PageValues``) are read once: the scan goes over them three times, and a
    stored page's text read again after others decompresses its group again (10k pages' proper
    nouns: 939 groups' texts read for 313)."""
    texts = texts if isinstance(texts, list) else list(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    text_starts = np.cumsum(lengths + 1) - lengths - 1
    pieces: list[Scan] = []
    first = 0
    while first < len(texts):
        last = max(first + 1, int(np.searchsorted(text_starts, text_starts[first] + SCAN_CHARACTERS)))
        piece = "\n".join(texts[first:last])
        found = scanner(piece) if scanner is not None else scan(piece, form, breaks)
        offset = text_starts[first]
        pieces.append(Scan(found.starts + offset, found.ends + offset, found.forms))
        first = last
    joined = "\n".join(texts)
    if not pieces:
        return joined, Scan(*(np.zeros(0, dtype=dtype) for dtype in (np.int64, np.int64, np.uint64))), lengths
    found = Scan(*(np.concatenate([getattr(piece, name) for piece in pieces])
                   for name in ("starts", "ends", "forms")))
    return joined, found, np.diff(np.searchsorted(found.starts, text_starts + lengths), prepend=0)


_ASCII_BEFORE_MID_SENTENCE = np.isin(np.arange(129), [ord(c) for c in ",;)'\""])


def inside_sentences(text: str) -> Scan:
    """The words ``anchors`` counts as written inside sentences, with their hashes as written: a run of
    word characters, ``’``, ``'`` and ``-`` that starts with an ASCII letter, after a space that
    follows a word character, ``,``, ``;``, ``)``, ``’``, ``'``, ``"`` or ``”`` (what the pattern
    ``(?<=[\\w,;)’'"”] )[A-Za-z][\\w’'-]*`` finds)."""
    points = code_points(text)
    classes = _word_characters(points)
    word = classes == 1
    run = word | ((classes == 2) & (points != ord(".")))  # "-", "'", "’": the joiners less "."
    before = word | ascii_looked_up(_ASCII_BEFORE_MID_SENTENCE, points)
    before |= (points == _APOSTROPHE) | (points == 0x201D)
    letter = (points | np.uint32(32)) - np.uint32(ord("a")) < 26  # wraps below "a": [A-Za-z] only
    starts = np.flatnonzero(letter[2:] & (points[1:-1] == ord(" ")) & before[:-2]) + 2
    stops = np.append(np.flatnonzero(~run), len(points))
    ends = stops[np.searchsorted(stops, starts)]
    return Scan(starts, ends, _Hasher(points.astype(np.uint64)).of(starts, ends))


class FormTable:
    """Forms' hashes → their ids, looked up a whole array at once: an open-addressing table (linear
    probing, at most half full) held in two arrays."""

    def __init__(self) -> None:
        self._bits = 10
        self._hashes = np.zeros(1 << self._bits, dtype=np.uint64)
        self._ids = np.full(1 << self._bits, -1, dtype=np.int64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def _slots(self, hashes: np.ndarray) -> np.ndarray:
        """Each hash's first slot: the top bits of its product with 2⁶⁴/φ (the polynomial hash of a short
        word has its own top bits all zero)."""
        return ((hashes * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - self._bits)).astype(np.int64)

    def get(self, hashes: np.ndarray) -> np.ndarray:
        """The id of each hash, -1 where the table has none."""
        found = np.full(len(hashes), -1, dtype=np.int64)
        active = np.arange(len(hashes))
        slots = self._slots(hashes)
        mask = len(self._ids) - 1
        while len(active):
            ids = self._ids[slots]
            hit = (self._hashes[slots] == hashes[active]) & (ids >= 0)
            found[active[hit]] = ids[hit]
            going = ~hit & (ids >= 0)  # a taken slot with another hash: the next one
            active, slots = active[going], (slots[going] + 1) & mask
        return found

    def add(self, hashes: np.ndarray, ids: np.ndarray) -> None:
        """Add hashes the table does not hold (distinct), with their ids."""
        if 2 * (self._size + len(hashes)) > len(self._ids):
            held = self._ids >= 0
            old_hashes, old_ids = self._hashes[held], self._ids[held]
            while 2 * (self._size + len(hashes)) > (1 << self._bits):
                self._bits += 1
            self._hashes = np.zeros(1 << self._bits, dtype=np.uint64)
            self._ids = np.full(1 << self._bits, -1, dtype=np.int64)
            self._size = 0
            self._place(old_hashes, old_ids)
        self._place(hashes, ids)

    def _place(self, hashes: np.ndarray, ids: np.ndarray) -> None:
        mask = len(self._ids) - 1
        pending = np.arange(len(hashes))
        slots = self._slots(hashes)
        while len(pending):
            free = np.flatnonzero(self._ids[slots] < 0)
            taken_slots, first = np.unique(slots[free], return_index=True)  # one hash a free slot a round
            placed = free[first]
            self._hashes[taken_slots] = hashes[pending[placed]]
            self._ids[taken_slots] = ids[pending[placed]]
            left = np.ones(len(pending), dtype=bool)
            left[placed] = False
            pending, slots = pending[left], (slots[left] + 1) & mask
        self._size += len(hashes)
