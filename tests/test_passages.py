"""Paragraph vectors: made once, kept in the cache, read back only when a pool asks for them."""

from __future__ import annotations

import numpy as np
import pytest
from crawlkit import bundled_model

from postprocess.stages.passages import PASSAGE_CHARS, PassageVectors

pytestmark = pytest.mark.slow

TEXTS = ["Descale the espresso machine with citric acid every month.",
         "Prune roses in late winter, just above an outward-facing bud.",
         "Descale the espresso machine with citric acid every month."]


def test_a_run_holds_what_it_made_and_reads_the_rest_from_the_cache(tmp_path):
    model = bundled_model()
    first = PassageVectors(model, tmp_path)
    vectors = first.encode(TEXTS)
    assert vectors.shape == (3, 384) and np.array_equal(vectors[0], vectors[2]) and first.embedded == 2
    matrix, rows = first.lookup(TEXTS)
    assert matrix.shape == (2, 384) and rows.tolist() == [0, 1, 0]  # each distinct paragraph once
    first.save()
    loads = []

    def load():  # noqa: ANN202 - the model, counted
        loads.append(1)
        return model

    again = PassageVectors(load, tmp_path, model_id=model.model_id)
    assert again.vectors == {}  # nothing read when made
    assert np.array_equal(again.encode(TEXTS[::-1]), vectors[::-1])
    assert loads == [] and again.embedded == 0 and again.vectors == {}  # from the cache, not kept
    new = "A chain wants oil after every wet ride, wiped off before it gathers grit."
    both = again.encode([TEXTS[1], new])
    assert loads == [1] and again.embedded == 1 and list(again.vectors) != []
    assert np.array_equal(both[0], vectors[1])
    assert np.allclose(both[1], model.encode([new])[0], atol=1e-6)
    long = "word " * PASSAGE_CHARS  # cut to PASSAGE_CHARS: the same key as its first characters
    assert np.array_equal(again.encode([long]), again.encode([long[:PASSAGE_CHARS] + "more"]))
    again.save()
    third = PassageVectors(lambda: pytest.fail("the model was loaded"), tmp_path, model_id=model.model_id)
    assert np.array_equal(third.encode([new])[0], both[1])
