"""The tokeniser's words found in NumPy (``word_scan``): the same words, forms and ids as the regex
and the vocabulary's one look-up a word."""

from __future__ import annotations

import itertools
import random
import re
import tracemalloc

import numpy as np
import pytest

from postprocess.stages import word_scan
from postprocess.stages.phrases import Vocabulary
from postprocess.stages.tokeniser import WORD, folded, normal_form, terms
from postprocess.stages.word_scan import FormTable, form_hash, inside_sentences, scan, scan_texts

#: The pattern the proper nouns' words inside sentences were found with before ``inside_sentences``.
MID_SENTENCE = re.compile(r"(?<=[\w,;)’'\"”] )[A-Za-z][\w’'-]*")
#: Pieces of text that meet every rule: joiners between word characters and not, calls, plurals,
#: letters outside ASCII (one whose lower case is two characters, a final sigma), breaks.
PIECES = [*"abcxyzABCXYZ0129_ -'’.()\n\x00é,;:!?\"”“", "ies", "ss", "s", "()", "İ", "ﬁ", "ΣΑΣ", "Straße",
          "QuerySet.update()", "don’t", "3.2", "built-in", "queries", "class", "bus", "ties", "a-", "-b"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 120))) for _ in range(count)]


def test_the_words_are_where_the_regex_finds_them() -> None:
    for text in _texts(1, 2000):
        found = scan(text)
        assert list(zip(found.starts.tolist(), found.ends.tolist(), strict=True)) == [
            m.span() for m in WORD.finditer(text)]


def test_the_words_inside_sentences_are_the_ones_the_proper_nouns_count() -> None:
    """``inside_sentences`` against the pattern ``anchors`` counted them with (``MID_SENTENCE``)."""
    rng = random.Random(8)
    pieces = [*PIECES, "”", ")", ";", ",", " ", " A", "Ab-c", "O'Neil", "x, Foo", "a. Bar", "[", "@", "`"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 80)))
        found = inside_sentences(text)
        assert [text[s:e] for s, e in zip(found.starts.tolist(), found.ends.tolist(), strict=True)] == (
            MID_SENTENCE.findall(text))
        assert found.forms.tolist() == [form_hash(w) for w in MID_SENTENCE.findall(text)]


def test_a_break_is_a_word_of_its_own_where_asked_for() -> None:
    with_breaks = re.compile(WORD.pattern + "|\x00")
    for text in _texts(2, 500):
        found = scan(text, breaks=True)
        assert [text[s:e] for s, e in zip(found.starts.tolist(), found.ends.tolist(), strict=True)] == (
            with_breaks.findall(text))


def test_a_words_form_hashes_as_its_string_does() -> None:
    """As written and as ``normal_form`` makes it (ASCII words in NumPy, others from ``normal_form``)."""
    for text in _texts(3, 1000):
        for form, of in (("written", str), ("normal", normal_form)):
            found = scan(text, form)
            expected = [form_hash(of(text[s:e])) for s, e in zip(found.starts.tolist(), found.ends.tolist(),
                                                                  strict=True)]
            assert found.forms.tolist() == expected


def test_forms_that_differ_hash_apart_and_the_same_form_alike() -> None:
    assert form_hash("queries") != form_hash("query") != form_hash("querie")
    assert scan("Queries query QUERY() queries", "normal").forms.tolist() == [form_hash("query")] * 4
    assert scan("ab ba", "written").forms[0] != scan("ab ba", "written").forms[1]


def test_the_vocabularys_ids_of_a_scan_are_its_ids_of_the_words() -> None:
    """New forms take the next ids in the order they first stand, batch after batch; a form the
    vocabulary was given as a string keeps its id."""
    texts = _texts(4, 1200)
    by_word, by_scan = Vocabulary(normal_form), Vocabulary(normal_form)
    assert by_word["\x00"] == by_scan["\x00"] == 0
    for start in range(0, len(texts), 97):
        batch = texts[start:start + 97]
        found = [WORD.findall(text) for text in batch]
        expected = by_word.ids(itertools.chain.from_iterable(found))
        text, scanned, lengths = scan_texts(batch, "normal")
        assert by_scan.ids_of(text, scanned).tolist() == expected.tolist()
        assert lengths.tolist() == list(map(len, found))
    assert by_scan.words == by_word.words


def test_terms_of_folded_texts_are_the_terms() -> None:
    texts = _texts(5, 300)
    vocabulary = Vocabulary()
    text, scanned, lengths = scan_texts([folded(t) for t in texts])
    ids = vocabulary.ids_of(text, scanned)
    assert [vocabulary.words[i] for i in ids.tolist()] == [w for t in texts for w in terms(t)]
    assert lengths.tolist() == [len(terms(t)) for t in texts]


def test_texts_are_scanned_a_piece_at_a_time_with_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(6, 400) + ["word " * 200, "", "x"]
    whole = scan_texts(texts, "normal", breaks=True)
    monkeypatch.setattr(word_scan, "SCAN_CHARACTERS", 50)  # most texts a piece of their own, some longer
    pieces = scan_texts(texts, "normal", breaks=True)
    assert pieces[0] == whole[0] and pieces[2].tolist() == whole[2].tolist()
    for name in ("starts", "ends", "forms"):
        assert getattr(pieces[1], name).tolist() == getattr(whole[1], name).tolist()
    assert scan_texts([])[2].tolist() == [] and len(scan_texts(["", ""])[1].starts) == 0


def test_a_scans_memory_is_a_pieces_not_the_whole_texts() -> None:
    """~40 bytes a character while a piece is scanned: 4M characters held ~160 MB scanned at once."""
    texts = ["Lorem ipsum dolor sit amet, queries() don't 3.2. " * 40] * 2000  # 3.9M characters
    scan_texts(texts[:10])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        joined, found, _ = scan_texts(texts, "normal")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    words = sum(a.nbytes for a in (found.starts, found.ends, found.forms))  # the pieces', then joined
    assert peak < len(joined) + 2 * words + 40 * 65_536 + (8 << 20)


def test_the_form_table_finds_what_it_was_given_as_it_grows() -> None:
    rng = np.random.default_rng(7)
    table = FormTable()
    given: dict[int, int] = {}
    for round_ in range(6):
        drawn = rng.integers(0, 1 << 63, size=5000, dtype=np.int64).astype(np.uint64) << np.uint64(1)
        hashes = np.unique(drawn)
        hashes = np.array([h for h in hashes.tolist() if h not in given] + ([0] if round_ == 0 else []),
                          dtype=np.uint64)  # 0 is a hash like any other
        ids = np.arange(len(given), len(given) + len(hashes))
        table.add(hashes, ids)
        given.update(zip(hashes.tolist(), ids.tolist(), strict=True))
    assert len(table) == len(given)
    asked = np.array([*given, 12345, 1 << 40], dtype=np.uint64)
    assert table.get(asked).tolist() == [*given.values(), -1, -1]
    short = np.array([form_hash(c) for c in "abcdefghij"], dtype=np.uint64)  # small numbers, near slots
    table.add(short, np.arange(10))
    assert table.get(short).tolist() == list(range(10))


def test_the_hashs_powers_kept_stay_a_pieces_after_a_long_text() -> None:
    """A text longer than the powers kept (one page of 2.2M characters) is scanned with powers made
    for it and let go: what stays is at most ``_POWERS_KEPT`` a base (8 MB), not 16 bytes a character
    of the longest text ever scanned."""
    found = scan("ab " * 733_334, "normal")
    assert len(found.starts) == 733_334 and set(found.forms.tolist()) == {form_hash("ab")}
    assert all(len(powers) <= word_scan._POWERS_KEPT for powers in word_scan._tables.values())
