"""Words as ids and phrases matched in NumPy (postprocess.stages.phrases)."""

import random
from collections import Counter

import numpy as np
import pytest

from postprocess.stages.phrases import (
    KeyTable,
    PhraseMatcher,
    PhraseTable,
    Vocabulary,
    counter_of,
    groups_per_item,
)


def _matcher(phrases):
    return PhraseMatcher(phrases, phrases)


def _found(matcher, vocabulary, pages):
    """(page, phrase) of every occurrence, as a sorted list."""
    words = [w for page in pages for w in page]
    ids = vocabulary.ids(words, len(words))
    groups = np.repeat(np.arange(len(pages)), [len(page) for page in pages])
    starts, numbers, _ = matcher.find(matcher.word_ids(ids, vocabulary), groups)
    return sorted(zip(groups[starts].tolist(), [matcher.phrases[n] for n in numbers.tolist()], strict=True))


def test_a_word_gets_the_next_id_once():
    vocabulary = Vocabulary()
    assert vocabulary.ids(["moka", "pot", "moka", "chemex"]).tolist() == [0, 1, 0, 2]
    assert vocabulary.words == ["moka", "pot", "chemex"] and vocabulary["pot"] == 1


def test_words_written_alike_share_the_id_of_their_normal_form():
    vocabulary = Vocabulary(str.lower)
    assert vocabulary.ids(["Moka", "pot", "moka", "MOKA"]).tolist() == [0, 1, 0, 0]
    assert vocabulary.words == ["moka", "pot"]


def test_phrases_are_found_overlapping_nested_and_not_across_pages():
    matcher = _matcher([("french", "press"), ("french", "press", "guide"), ("press",), ("press", "guide")])
    pages = [["the", "french", "press", "guide", "and", "press"], ["french"], ["press", "guide"]]
    assert _found(matcher, Vocabulary(), pages) == [
        (0, ("french", "press")), (0, ("french", "press", "guide")), (0, ("press",)), (0, ("press",)),
        (0, ("press", "guide")), (2, ("press",)), (2, ("press", "guide"))]
    # "french" ends page 1 and "press" starts page 2: no phrase across them
    assert (1, ("french", "press")) not in _found(matcher, Vocabulary(), pages)


def test_of_two_phrases_with_the_same_words_the_later_is_reported_and_none_of_no_words():
    matcher = PhraseMatcher([["moka", "pot"], [], ["moka", "pot"], ["pot"]],
                            [("first",), ("none",), ("second",), ("pot",)])
    assert _found(matcher, Vocabulary(), [["a", "moka", "pot"]]) == [(0, ("pot",)), (0, ("second",))]


def test_no_phrases_find_nothing():
    matcher = _matcher([])
    assert _found(matcher, Vocabulary(), [["moka", "pot"]]) == []


def test_every_occurrence_is_found_as_a_scan_of_each_position_finds_it():
    """Random pages over a small vocabulary (so phrases repeat and share prefixes), against a
    plain scan of every position and every phrase: where each starts, and its words."""
    rng = random.Random(7)
    vocabulary_words = [f"w{i}" for i in range(12)]
    phrases = sorted({tuple(rng.choices(vocabulary_words, k=rng.randint(1, 6))) for _ in range(60)})
    pages = [rng.choices(vocabulary_words, k=rng.randint(0, 40)) for _ in range(50)]
    words = [w for page in pages for w in page]
    groups = np.repeat(np.arange(len(pages)), [len(page) for page in pages])
    expected = sorted((start, phrase, len(phrase)) for start in range(len(words)) for phrase in phrases
                      if tuple(words[start:start + len(phrase)]) == phrase
                      and groups[start] == groups[start + len(phrase) - 1])
    vocabulary = Vocabulary()
    vocabulary.ids(["unrelated", "w3"])  # ids the matcher did not give, and words outside phrases
    matcher = _matcher(phrases)
    starts, numbers, lengths = matcher.find(matcher.word_ids(vocabulary.ids(words), vocabulary), groups)
    found = sorted(zip(starts.tolist(), [phrases[n] for n in numbers], lengths.tolist(), strict=True))
    assert found == expected and len(found) > 100


def test_the_matchers_ids_follow_a_vocabulary_that_grows():
    matcher = _matcher([("moka", "pot")])
    vocabulary = Vocabulary()
    assert _found(matcher, vocabulary, [["a", "pot"]]) == []
    assert _found(matcher, vocabulary, [["moka", "pot", "moka"]]) == [(0, ("moka", "pot"))]


def test_groups_per_item_counts_each_group_once():
    groups = np.array([0, 0, 1, 3, 3, 3])
    items = np.array([2, 2, 2, 0, 2, 0])
    assert groups_per_item(groups, items, 4).tolist() == [1, 0, 3, 0]
    assert groups_per_item(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 2).tolist() == [0, 0]
    assert counter_of(["a", "b", "c", "d"], groups_per_item(groups, items, 4)) == Counter({"a": 1, "c": 3})


def test_a_phrase_table_reads_each_phrase_s_value_and_the_later_of_two():
    phrases = [("moka", "pot"), ("chemex",), ("moka", "pot"), ("french", "press", "guide")]
    table = PhraseTable.of(phrases, [1, 2, 3, 0])
    assert table.get(("moka", "pot")) == 3 and table[("chemex",)] == 2
    assert table.get(("french", "press", "guide")) == 0 and ("french", "press", "guide") in table
    assert table.get(("moka",)) is None and table.get(("pot", "moka"), -1) == -1
    assert ("moka",) not in table and "chemex" not in table and len(table) == 3
    with pytest.raises(KeyError):
        table[("kettle",)]
    assert PhraseTable.of([], []).get(("moka",)) is None


def test_a_phrase_table_of_many_phrases_finds_them_all_in_16_bytes_or_so_a_phrase():
    """Many phrases over buckets of a few hashes: every one read back, none that is absent, the
    table ~16-24 bytes a phrase (hash, value, and its share of the bucket starts)."""
    rng = random.Random(7)
    phrases = list({tuple(f"w{rng.randrange(5000)}" for _ in range(rng.randint(1, 4))) for _ in range(30000)})
    table = PhraseTable.of(phrases, range(len(phrases)))
    assert [table.get(p) for p in phrases] == list(range(len(phrases)))
    absent = [(f"x{i}",) for i in range(2000)] + [(*p, "more") for p in phrases[:2000]]
    assert all(table.get(p) is None for p in absent)
    assert len(table) == len(phrases) and table.nbytes <= 32 * len(phrases)
    assert table == PhraseTable.of(phrases, range(len(phrases)))
    assert table != PhraseTable.of(phrases, range(1, len(phrases) + 1))


@pytest.mark.parametrize("keys", [
    np.arange(5000, dtype=np.int64) * 3_000_017,  # a trie's edge codes: node × width + word
    np.random.default_rng(3).integers(0, 1 << 62, 4000),
    np.arange(1 << 10, dtype=np.int64) << 54,  # top bits alone: first slots crowded, run past the end
    np.zeros(0, dtype=np.int64),
])
def test_a_key_table_gives_each_keys_value_and_minus_one_for_others(keys):
    keys = np.unique(keys)
    values = np.random.default_rng(4).integers(0, 1 << 40, len(keys))
    table = KeyTable(keys, values)
    assert len(table) == len(keys) and table.nbytes <= 16 * (4 * len(keys) + 64)
    asked = np.concatenate([keys, keys[::-1] + 1, np.array([-5, 0, 7, 1 << 62], dtype=np.int64)])
    expected = dict(zip(keys.tolist(), values.tolist(), strict=True))
    assert table.get(asked).tolist() == [expected.get(k, -1) for k in asked.tolist()]


def test_the_matcher_walks_its_phrases_by_table_not_by_binary_search(monkeypatch):
    """Each step of a phrase looks its next word up in a hash table of the trie's edges (a slot or
    two read), not by a binary search over them (~log₂ n reads, most of them cache misses on a large
    site's names); the phrases found are the same."""
    vocabulary = Vocabulary()
    matcher = _matcher([("django", "forms"), ("forms",), ("model", "form", "fields")])
    pages = [["django", "forms", "and", "model", "form", "fields"], ["forms", "django"]]
    expected = _found(matcher, vocabulary, pages)

    def refused(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("binary search")

    monkeypatch.setattr(np, "searchsorted", refused)
    assert _found(matcher, vocabulary, pages) == expected and expected
