"""Paragraph vectors: made once, kept in the cache, read back only when a pool asks for them."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from crawlkit import SITE, SITE_LINKS, blocks_of, bundled_model, page, write_crawl, write_site

from postprocess.stages import load, passages
from postprocess.stages.anchors import AnchorFinder, anchored_rows, source_text
from postprocess.stages.embed import Embeddings
from postprocess.stages.load import load_crawl
from postprocess.stages.passages import PASSAGE_CHARS, PassageVectors, add_passage_scores, paragraph_texts
from postprocess.stages.suggestions import Pool, Suggestion
from postprocess.stages.vector_cache import vector_column

pytestmark = pytest.mark.slow

TEXTS = ["Descale the espresso machine with citric acid every month.",
         "Prune roses in late winter, just above an outward-facing bud.",
         "Descale the espresso machine with citric acid every month."]


def test_a_run_appends_what_it_makes_to_the_cache_and_reads_it_back_from_there(tmp_path):
    model = bundled_model()
    first = PassageVectors(model, tmp_path)
    vectors = first.encode(TEXTS)
    assert vectors.shape == (3, 384) and np.array_equal(vectors[0], vectors[2]) and first.embedded == 2
    assert first.vectors == {}  # on disk as soon as made, not held
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
    assert loads == [1] and again.embedded == 1 and again.vectors == {}
    assert np.array_equal(both[0], vectors[1])
    assert np.allclose(both[1], model.encode([new])[0], atol=1e-6)
    long = "word " * PASSAGE_CHARS  # cut to PASSAGE_CHARS: the same key as its first characters
    assert np.array_equal(again.encode([long]), again.encode([long[:PASSAGE_CHARS] + "more"]))
    third = PassageVectors(lambda: pytest.fail("the model was loaded"), tmp_path, model_id=model.model_id)
    assert np.array_equal(third.encode([new])[0], both[1])


def test_texts_are_asked_for_only_for_the_paragraphs_to_embed(tmp_path):
    model = bundled_model()
    first = PassageVectors(model, tmp_path)
    keys = [first.key(t) for t in TEXTS]
    pages = model.encode(["Espresso machines.", "Roses."])
    targets = np.array([0, 1, 1])
    asked: list[list[int]] = []

    def texts_of(at: list[int]) -> list[str]:
        asked.append(at)
        return [TEXTS[i] for i in at]

    scores = first.cosines(keys, texts_of, pages, targets)
    assert sorted(asked[0]) == [0, 1] and len(asked) == 1  # each distinct paragraph once
    again = PassageVectors(model, tmp_path)
    warm = again.cosines(keys, lambda at: pytest.fail(f"asked for {at}"), pages, targets)
    assert warm.tolist() == scores.tolist()


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


def test_cosines_are_the_paragraph_vectors_against_the_targets_whatever_their_source(tmp_path):
    """A row's cosine is its paragraph's vector (made in this run, read from the cache, or embedded
    now) against its target's; only the paragraphs not found anywhere are embedded, each once."""
    model = bundled_model()
    cached, made, new = ("Prune roses in late winter.", "Descale the machine monthly.",
                         "Oil the chain after a wet ride.")
    first = PassageVectors(model, tmp_path)
    first.encode([cached])
    run = PassageVectors(model, tmp_path)
    run.encode([made])  # made by this run
    texts = [new, cached, made, new, cached]
    pages = model.encode(["Roses and their pruning.", "Espresso machines.", "Bicycle care."])
    targets = np.array([2, 0, 1, 0, 2])
    asked: list[list[int]] = []

    def texts_of(at: list[int]) -> list[str]:
        asked.append(at)
        return [texts[i] for i in at]

    scores = run.cosines([run.key(t) for t in texts], texts_of, pages, targets)
    assert asked == [[0]] and run.embedded == 2  # the new paragraph alone, once
    vectors = run.encode(texts)
    assert scores.tolist() == [float(v @ pages[t]) for v, t in zip(vectors, targets.tolist(), strict=True)]
    assert scores[0] > scores[3] and scores[1] > scores[4]  # the bicycle paragraph: nearest bicycle care


def test_a_cached_vector_of_another_length_is_embedded_again(tmp_path):
    model = bundled_model()
    text = "Prune roses in late winter."
    run = PassageVectors(model, tmp_path)
    run.parts.append(pa.table({"key": [run.key(text)], "vector": vector_column([np.ones(8, np.float32)])}))
    pages = model.encode(["Roses and their pruning."])
    scores = run.cosines([run.key(text)], lambda at: [text for _ in at], pages, np.array([0]))
    assert run.embedded == 1 and scores[0] == float(model.encode([text])[0] @ pages[0])


def test_cosines_hold_a_row_group_of_paragraph_vectors_not_all_of_them(tmp_path):
    """Scoring 40,000 cached paragraphs holds one row group of their vectors at a time: a matrix of
    all of them is 41 MB here, and was 0.5 GB at 100k synthetic pages."""
    count, dim = 40_000, 256
    rng = np.random.default_rng(7)
    paragraphs = rng.random((count, dim), dtype=np.float32)
    run = PassageVectors(lambda: pytest.fail("the model was loaded"), tmp_path, model_id="m")
    keys = [f"{i:040d}" for i in range(count)]
    run.parts.append(pa.table({"key": keys, "vector": vector_column(list(paragraphs))}))
    pages = rng.random((10, dim), dtype=np.float32)
    targets = rng.integers(0, 10, count)
    tracemalloc.start()
    try:
        scores = run.cosines(keys, lambda at: pytest.fail("asked for texts"), pages, targets)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < paragraphs.nbytes / 3, peak  # ~8 MB now
    expected = [float(paragraphs[i] @ pages[t]) for i, t in enumerate(targets.tolist())]
    assert scores.tolist() == expected


def test_passage_scores_never_hold_every_paragraph_text(tmp_path):
    """The rows' paragraphs are read from the crawl to make their cache keys one at a time: 400
    paragraphs of ~5,000 characters (2 MB of text) are never all in memory at once."""
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(5000)]
    texts = [" ".join(rng.choice(words, 1200)) for _ in range(400)]
    urls = [f"https://site.test/page-{i}/" for i in range(len(texts))]
    crawl = load_crawl(write_crawl(tmp_path / "crawl", [page(u, f"Page {i}", t) for i, (u, t) in
                                                       enumerate(zip(urls, texts, strict=True))]))
    run = PassageVectors(lambda: pytest.fail("the model was loaded"), tmp_path, model_id="m")
    paragraphs = rng.random((len(texts), 16), dtype=np.float32)
    run.parts.append(pa.table({"key": [run.key(t) for t in texts],
                               "vector": vector_column(list(paragraphs))}))
    pages = rng.random((len(urls), 16), dtype=np.float32)
    rows = [Suggestion(u, urls[(i + 1) % len(urls)], 1.0, {}, paragraph=0) for i, u in enumerate(urls)]
    embeddings = Embeddings(urls, pages, None, "m")  # type: ignore[arg-type] - no chunks read here
    tracemalloc.start()
    try:
        add_passage_scores(crawl, rows, embeddings, run)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < sum(map(len, texts)) / 2, peak
    assert [s.parts["passage"] for s in rows] == [
        round(float(paragraphs[i] @ pages[(i + 1) % len(urls)]), 6) for i in range(len(urls))]


def test_paragraphs_are_embedded_and_appended_a_step_at_a_time(tmp_path, monkeypatch):
    """A cold run's paragraphs are encoded ``EMBED_STEP`` at a time, each step a part of the cache as
    soon as it is made: what a run holds is one step's texts and vectors, and a killed run keeps the
    steps it finished. Without a cache they are held for the rest of the run."""
    model = bundled_model()
    monkeypatch.setattr(passages, "EMBED_STEP", 2)
    texts = [*TEXTS, "Oil the chain after a wet ride.", "Sow tomatoes indoors in March.",
             "Grind coffee just before brewing."]
    sizes: list[int] = []
    real = model.encode

    def encode(batch, *args, **kwargs):  # noqa: ANN001, ANN202 - the real model's, its calls counted
        sizes.append(len(batch))
        return real(batch, *args, **kwargs)

    monkeypatch.setattr(model, "encode", encode)
    run = PassageVectors(model, tmp_path)
    vectors = run.encode(texts)
    assert sizes == [2, 2, 1] and run.vectors == {} and run.embedded == 5
    assert sorted(pq.read_table(p).num_rows for p in run.parts.files()) == [1, 2, 2]
    memory = PassageVectors(model)
    assert np.allclose(memory.encode(texts), vectors, atol=1e-6) and len(memory.vectors) == 5


def test_a_cold_runs_steps_of_paragraphs_are_taken_in_page_order(tmp_path, monkeypatch):
    """The paragraphs to embed are taken a step at a time in their source pages' order, whatever the
    rows' order: a step's texts are read from a few consecutive groups of compressed pages, not from
    nearly every group as steps of keys in hash order were (each of 4 steps read all 4 groups)."""
    model = bundled_model()
    monkeypatch.setattr(passages, "EMBED_STEP", load.GROUP_PAGES)
    n = 4 * load.GROUP_PAGES
    urls = [f"https://site.test/page-{i:03d}/" for i in range(n)]
    crawl = load_crawl(write_crawl(tmp_path / "crawl", [
        page(u, f"Page {i}", f"Paragraph {i} tells how to descale machine number {i}.")
        for i, u in enumerate(urls)]))
    order = np.random.default_rng(5).permutation(n).tolist()
    rows = [Suggestion(urls[i], urls[(i + 1) % n], 1.0, {}, paragraph=0) for i in order]
    vectors = model.encode([p.title for p in crawl.pages])
    embeddings = Embeddings(urls, vectors, None, model.model_id)  # type: ignore[arg-type] - no chunks read
    reads = []
    real = load._decompressed
    monkeypatch.setattr(load, "_decompressed", lambda packed: reads.append(1) or real(packed))
    run = PassageVectors(model, tmp_path / "out")
    add_passage_scores(crawl, rows, embeddings, run)
    assert run.embedded == n
    # the keys' pass reads each group once; each step a group (and the next when a step crosses one)
    assert len(reads) <= 4 + 4 + 3, len(reads)
    texts = paragraph_texts(crawl, rows)
    expected = model.encode(texts)
    got = [s.parts["passage"] for s in rows]
    row = {u: i for i, u in enumerate(urls)}
    assert got == pytest.approx([float(expected[k] @ vectors[row[s.target_url]]) for k, s in enumerate(rows)],
                                abs=1e-5)


def test_vectors_made_in_another_process_are_adopted_into_the_cache_or_held(tmp_path):
    """Adopted vectors go where this run's own go: the cache when there is one (read back there, no
    model needed), this run's memory without one."""
    model = bundled_model()
    made = {PassageVectors(model).key(TEXTS[0]): model.encode([TEXTS[0]])[0]}
    cached = PassageVectors(model, tmp_path)
    cached.adopt(made)
    assert cached.vectors == {} and len(cached.parts.files()) == 1
    again = PassageVectors(lambda: pytest.fail("the model was loaded"), tmp_path, model_id=model.model_id)
    assert np.array_equal(again.encode([TEXTS[0]])[0], made[again.key(TEXTS[0])])
    held = PassageVectors(model)
    held.adopt(made)
    assert list(held.vectors) == list(made) and held.encode([TEXTS[0]]).shape == (1, 384)


def test_a_static_encoders_steps_of_paragraphs_are_shared_with_a_second_process(tmp_path, monkeypatch):
    """With ``workers`` above 1 (the static encoder, one core) and a cache, the steps of paragraphs to
    embed are shared with a forked second process, each appending its own parts; the vectors come
    back from the cache, the same as one process makes (a million synthetic pages: ~2.7M paragraphs,
    ~41 min on one core)."""
    from postprocess import background

    model = bundled_model()
    monkeypatch.setattr(passages, "EMBED_STEP", 2)
    texts = [*TEXTS, "Oil the chain after a wet ride.", "Sow tomatoes indoors in March.",
             "Grind coffee just before brewing.", "Prune roses in late winter."]
    one = PassageVectors(model, tmp_path / "one")
    alone = one.encode(texts)
    forks: list[bool] = []
    real = background.in_chunks

    def shared(work, items, fork=True, chunk=None):  # noqa: ANN001, ANN202 - records whether it forks
        forks.append(fork and len(items) >= 2)
        return real(work, items, fork=fork, chunk=chunk)

    monkeypatch.setattr(passages, "in_chunks", shared)
    two = PassageVectors(model, tmp_path / "two", workers=2)
    vectors = two.encode(texts)
    assert forks == [True] and two.embedded == one.embedded > 4
    assert np.array_equal(vectors, alone)
    assert sorted(pq.read_table(p).num_rows for p in two.parts.files()) == sorted(
        pq.read_table(p).num_rows for p in one.parts.files())
    assert np.array_equal(PassageVectors(model, tmp_path / "two", workers=2).encode(texts), alone)


def test_paragraph_keys_made_by_two_processes_are_those_one_makes(tmp_path, monkeypatch):
    """Past ``KEYS_SPLIT_ROWS`` anchored rows, their paragraphs' keys are made in chunks shared with a
    second process: each row gets its own paragraph's key, as one process gives it, in the rows' order."""
    import os
    import time

    rng = np.random.default_rng(5)
    urls = [f"https://site.test/page-{i}/" for i in range(60)]
    texts = {u: [f"Paragraph {k} of page {i}, about {rng.integers(1000)} things." for k in range(4)]
             for i, u in enumerate(urls)}
    crawl = load_crawl(write_crawl(tmp_path / "crawl", [
        page(u, f"Page {i}", "\n".join(texts[u]), blocks=[b for t in texts[u] for b in blocks_of(t, [])])
        for i, u in enumerate(urls)]))
    rows = [Suggestion(urls[i], urls[(i + 1) % 60], 1.0, {}, paragraph=int(k))
            for i, k in zip(rng.integers(0, 60, 400).tolist(), rng.integers(0, 4, 400).tolist(), strict=True)]
    parent, makers = os.getpid(), tmp_path / "makers"

    def key(text: str) -> str:
        with makers.open("a") as f:
            f.write(f"{os.getpid()}\n")
        if os.getpid() == parent:
            time.sleep(0.005)  # this process slow: the second takes chunks too
        return "key of " + text

    expected = ["key of " + t for t in paragraph_texts(crawl, rows)]
    assert expected == ["key of " + texts[s.source_url][s.paragraph] for s in rows]
    assert passages.paragraph_keys(crawl, rows, key, workers=1) == expected
    makers.unlink()
    monkeypatch.setattr(passages, "KEYS_SPLIT_ROWS", 10, raising=False)
    monkeypatch.setattr(passages, "KEYS_CHUNK_ROWS", 20, raising=False)
    assert passages.paragraph_keys(crawl, rows, key, workers=2) == expected
    assert len(set(makers.read_text().split())) == 2
