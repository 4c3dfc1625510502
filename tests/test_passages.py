"""Paragraph vectors: made once, kept in the cache, read back only when a pool asks for them."""

from __future__ import annotations

import numpy as np
import pytest
from crawlkit import SITE, SITE_LINKS, blocks_of, bundled_model, write_crawl, write_site

from postprocess.stages.anchors import AnchorFinder, anchored_rows, source_text
from postprocess.stages.load import load_crawl
from postprocess.stages.passages import PASSAGE_CHARS, PassageVectors, paragraph_texts
from postprocess.stages.suggestions import Pool, Suggestion

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


def test_texts_are_asked_for_only_for_the_paragraphs_to_embed(tmp_path):
    model = bundled_model()
    first = PassageVectors(model, tmp_path)
    keys = [first.key(t) for t in TEXTS]
    asked: list[list[int]] = []

    def texts_of(at: list[int]) -> list[str]:
        asked.append(at)
        return [TEXTS[i] for i in at]

    matrix, rows = first.lookup_keys(keys, texts_of)
    assert sorted(asked[0]) == [0, 1] and len(asked) == 1  # each distinct paragraph once
    assert np.array_equal(matrix[rows], first.encode(TEXTS)) and len(asked) == 1
    first.save()
    again = PassageVectors(model, tmp_path)
    assert np.array_equal(again.lookup_keys(keys, lambda at: pytest.fail(f"asked for {at}"))[0], matrix)


def test_a_rows_paragraph_is_the_prose_block_its_anchor_stands_in(tmp_path):
    """Anchored rows name their paragraph by its number among the source's prose blocks; the texts
    read back from the crawl's stored blocks are those the anchors were found in."""
    site = load_crawl(write_site(tmp_path / "site"))
    pairs = [Suggestion(a.url, b.url, 0.5, {}, rank=1)
             for a in site.pages for b in site.pages if a.url != b.url]
    found = anchored_rows(Pool.from_rows(pairs), AnchorFinder(site))
    # each page again, its anchored sentences written after two paragraphs that name nothing
    later = {s.source_url: s.context for s in found}
    text = "A first paragraph.\nA second one, about nothing.\n{}".format
    rows = [dict(row, text=text(later[row["url"]]), blocks=blocks_of(text(later[row["url"]])))
            if row["url"] in later else row for row in SITE]
    crawl = load_crawl(write_crawl(tmp_path / "later", rows, SITE_LINKS))
    rows = anchored_rows(Pool.from_rows(pairs), AnchorFinder(crawl))
    texts = paragraph_texts(crawl, rows)
    assert rows and {s.paragraph for s in rows} == {2}
    for s, text in zip(rows, texts, strict=True):
        source = source_text(crawl.pages[crawl.page_index()[s.source_url]])
        assert text == source.blocks[s.paragraph][1] and s.anchor in text
