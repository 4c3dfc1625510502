"""The targets' names as word ids, and the places a batch of sources writes them (``NameTable``)."""

from __future__ import annotations

import random

import numpy as np

from postprocess.stages.name_table import NameTable

VOCABULARY = ["model", "field", "query", "set", "form", "api", "view"]
OTHER_WORDS = ["the", "a", "of", "custom", "django"]  # words no name has


def _places_one_by_one(names: dict[str, list[tuple[str, ...]]], words: list[str], targets: list[str]
                       ) -> list[list[tuple[int, int, tuple[str, ...]]]]:
    """Each target's names looked for in the words one by one: by name in order, then by place."""
    found = []
    for url in targets:
        places = []
        for key in names.get(url, []):
            for i in range(len(words) - len(key) + 1):
                if tuple(words[i:i + len(key)]) == key:
                    places.append((i, i + len(key) - 1, key))
        found.append(places)
    return found


def test_a_batchs_places_are_those_a_pair_at_a_time_finds_in_the_same_order():
    """Random names of one to four words (repeated words, names sharing a first word, a name at a
    text's very end, one cut by it) and random sources: every pair's places — a target the table
    lacks, a source of no words, one of no name's words included — are the ones a search of each
    name in turn finds, by the target's name order and then by place, with each name's words and kind."""
    rng = random.Random(7)
    for _ in range(40):
        names = {f"t{k}": list(dict.fromkeys(tuple(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 4)))
                                           for _ in range(rng.randint(0, 6))))
                 for k in range(6)}
        kinds = {url: [rng.randrange(5) for _ in keys] for url, keys in names.items()}
        table = NameTable((url, list(zip(keys, kinds[url], strict=True))) for url, keys in names.items())
        sources = [[rng.choice(VOCABULARY + OTHER_WORDS) for _ in range(rng.choice([0, 1, 5, 30, 80]))]
                   for _ in range(rng.randint(1, 5))]
        sources.append(["the", "custom", "django"])
        targets = [rng.sample([*names, "missing"], rng.randint(0, 7)) for _ in sources]
        found = table.places([table.ids(words) for words in sources], targets)
        for words, urls, places in zip(sources, targets, found, strict=True):
            expected = _places_one_by_one(names, words, urls)
            assert [[(i, j, table.name(n)[0]) for i, j, n in where] for where in places] == expected
            for url, where in zip(urls, places, strict=True):
                for _, _, n in where:
                    key, kind = table.name(n)
                    assert kind == kinds[url][names[url].index(key)]


def test_a_word_no_name_has_gets_no_id_and_a_target_named_twice_is_kept_once():
    table = NameTable([("a", [(("model", "form"), 1)]), ("a", [(("view",), 2)]), ("b", [])])
    assert table.ids(["model", "view", "form", "custom"]).tolist() == [0, -1, 1, -1]
    assert len(table) == 1 and table.row == {"a": 0, "b": 1}
    assert table.places([np.array([0, 1], dtype=np.int32)], [["b", "a"]]) == [[[], [(0, 1, 0)]]]
