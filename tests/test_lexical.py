"""Lexical evidence: tokens, site titles, TF-IDF neighbours, names and mentions."""

from __future__ import annotations

import os
import random
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from crawlkit import traced_peak

from postprocess.stages.lexical import (
    AnchorUses,
    LexicalIndex,
    NameIndex,
    SiteEvidence,
    clean_title,
    site_title_parts,
)
from postprocess.stages.rare_terms import RareTerms

TITLES = [
    "QuerySet API reference | Django documentation | Django",
    "Models | Django documentation | Django",
    "Forms | Django documentation | Django",
    "Django documentation",
]


def test_site_title_parts_and_clean_title() -> None:
    parts = site_title_parts(TITLES)
    assert parts == {"django documentation", "django"}
    assert clean_title(TITLES[0], parts) == "QuerySet API reference"
    assert clean_title("Home — Brew Guide", {"brew guide"}) == "Home"
    assert clean_title("Django documentation", parts) == "Django documentation"  # never empty


DOCS = [
    "espresso grind size pressure extraction espresso machine",
    "espresso machine pressure boiler pump",
    "pour over filter paper kettle bloom",
    "kettle water temperature pour over",
    "",
]


def test_lexical_neighbours_are_the_pages_sharing_rare_words() -> None:
    index = LexicalIndex(DOCS)
    rows, sims = index.neighbours(2, block=2)  # blocks smaller than the site
    assert rows[0, 0] == 1 and rows[1, 0] == 0
    assert rows[2, 0] == 3 and rows[3, 0] == 2
    assert (rows[4] == -1).all() and (sims[4] == 0).all()
    assert all(i not in rows[i] for i in range(len(DOCS)))
    pair = index.similarities(0, np.array([1, 2]))
    assert pair[0] == pytest.approx(sims[0, 0]) and pair[1] == 0.0


def test_one_sources_cosines_are_the_sparse_products_bit_for_bit() -> None:
    index = LexicalIndex(DOCS)
    matrix = index.matrix
    for source in [0, 2, 0, 4, 1]:  # one spread-out row serves each call, then is cleared
        targets = np.array([3, 1, 0, 2, 4, 1])
        expected = np.asarray((matrix[targets] @ matrix[source].T).todense(), dtype=np.float32).ravel()
        assert index.similarities(source, targets).tolist() == expected.tolist()


def test_cosines_are_summed_by_scipys_own_routines_without_the_indexings_python(monkeypatch) -> None:
    """A source's cosines with its ~200 candidates go straight to scipy's row gather and product
    (``matrix[rows] @ vector`` spent ~75% of a call in Python checks): the same float32 sums, bit for
    bit, on a site's rows in any order, repeated or not; a row outside the matrix is still refused."""
    from postprocess.stages import lexical

    rng = np.random.default_rng(0)
    words = [f"w{n}" for n in range(300)]
    docs = [" ".join(rng.choice(words, int(rng.integers(1, 120)))) for _ in range(400)]
    index = LexicalIndex(docs)
    matrix = index.matrix
    gathered: list[int] = []
    real = lexical._gather_rows
    monkeypatch.setattr(lexical, "_gather_rows",
                        lambda rows, *rest: gathered.append(rows) or real(rows, *rest))
    for source in (0, 17, 399):
        dense = np.asarray(matrix[source].todense(), dtype=np.float32).ravel()
        for targets in (rng.choice(400, 201, replace=False), np.array([5, 5, 0, 399]), [3, 1]):
            expected = np.asarray(matrix[np.asarray(targets)] @ dense, dtype=np.float32)
            assert index.similarities(source, targets).tobytes() == expected.tobytes()
    assert gathered == [201, 4, 2] * 3
    with pytest.raises(IndexError):
        index.similarities(0, [400])


def test_the_tfidf_index_made_in_a_second_process_is_the_one_made_here(monkeypatch) -> None:
    """The second process is a fresh interpreter (none of this one's heap: forked as it was, it kept
    ~0.6 GB of it at 100k pages), sent the documents pickled."""
    from postprocess import background

    forks: list[tuple[bool, bool]] = []
    real = background.Background.__init__

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - records each fork
        real(self, *args, **kwargs)
        forks.append((self.forked, self.fresh))

    titles = [(f"Page {i}", f"Page {i}") for i in range(len(DOCS))]
    here = SiteEvidence([f"u{i}" for i in range(len(DOCS))], titles, DOCS, DOCS, [], 2, workers=2)
    monkeypatch.setattr(background, "SPLIT_MIN_ITEMS", 1)
    monkeypatch.setattr(background.Background, "__init__", counted)
    there = SiteEvidence([f"u{i}" for i in range(len(DOCS))], titles, DOCS, DOCS, [], 2, workers=2)
    assert forks == [(True, True)]
    assert (there.lexical.matrix != here.lexical.matrix).nnz == 0
    assert there.lexical_rows.tolist() == here.lexical_rows.tolist()
    assert there.lexical_sims.tolist() == here.lexical_sims.tolist()


def test_the_tfidf_queries_left_are_shared_with_a_second_process_once_the_run_waits(
        tmp_path, monkeypatch) -> None:
    """The neighbours are queried a step of pages at a time; once the run waits for the job (here:
    from the third look on), the pages left go in chunks to this process and a forked second one,
    with the same rows and similarities as one process makes."""
    from postprocess.stages import lexical

    monkeypatch.setattr(lexical, "QUERY_STEP", 40)
    rng = np.random.default_rng(5)
    vocab = [f"w{i}" for i in range(3000)]
    docs = [" ".join(vocab[int(w)] for w in rng.choice(100, 60) + 100 * (d % 30)) for d in range(600)]
    index = LexicalIndex(docs)
    alone = index.approximate_neighbours(5, split=lambda: False)
    calls = tmp_path / "calls"
    real = LexicalIndex._nearest

    def logged(self, found, rare, k, widen, pages):  # noqa: ANN001, ANN202 - which process queried which pages
        with calls.open("a") as log:
            log.write(f"{os.getpid()} {pages.start} {Path('/proc/self/comm').read_text().strip()}\n")
        time.sleep(0.1)  # slow enough that the second process, started by a fork, takes chunks too
        return real(self, found, rare, k, widen, pages)

    monkeypatch.setattr(LexicalIndex, "_nearest", logged)
    looks: list[int] = []
    shared = index.approximate_neighbours(5, split=lambda: looks.append(1) or len(looks) >= 3)
    assert shared[0].tolist() == alone[0].tolist() and shared[1].tolist() == alone[1].tolist()
    queried = [line.split() for line in calls.read_text().splitlines()]
    assert sorted(int(start) for _, start, _ in queried) == list(range(0, 600, 40))
    here = {int(start) for pid, start, _ in queried if int(pid) == os.getpid()}
    assert {0, 40} <= here and len(looks) == 3  # two steps before the wait, then no more looks
    theirs = {(int(pid), name) for pid, _, name in queried if int(pid) != os.getpid()}
    assert len(theirs) == 1 and next(iter(theirs))[1] == "ls-tfidf-nn"  # a second process took chunks


def _vectorizer_counts(documents, max_df):
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    from postprocess.stages.tokeniser import WORD, folded

    return CountVectorizer(stop_words=list(ENGLISH_STOP_WORDS), token_pattern=WORD.pattern,
                           preprocessor=folded, max_df=max_df, dtype=np.float32).fit_transform(documents)


@pytest.mark.parametrize("batch", [2, 256])
def test_term_counts_are_the_vectorizers_to_the_byte(monkeypatch, batch) -> None:
    """The counts, their columns (alphabetical, less the terms on over a tenth of the documents) and
    each row's order (the terms in the order the documents first used them) are scikit-learn's,
    read a few documents at a time or all at once."""
    from postprocess.stages import lexical

    monkeypatch.setattr(lexical, "TERM_COUNT_DOCUMENTS", batch)
    documents = [*DOCS, "Zebra QuerySet.filter() and the zebra", "", "the and of", "Álgebra naïve CAFÉ café",
                 "model model model views", "models.Model views django"]
    ours = lexical.term_counts(documents, 1, 0.1)
    theirs = _vectorizer_counts(documents, 0.1)
    assert ours.shape == theirs.shape == (11, 18) and ours.dtype == theirs.dtype == np.float32
    for name in ("data", "indices", "indptr"):
        assert getattr(ours, name).tobytes() == getattr(theirs, name).tobytes(), name
    assert lexical.term_counts(["the and", "", "of"], 1, 1.0) is None  # only stop words: no term
    assert lexical.term_counts([], 1, 1.0) is None


def test_lexical_index_of_pages_without_words() -> None:
    index = LexicalIndex(["", "  "])
    rows, _ = index.neighbours(1)
    assert (rows == -1).all()


def name_index() -> NameIndex:
    titles = [(name, name) for name in ("Espresso", "Grinders", "Pour over", "Home")]
    uses = [
        (3, 0, "espresso guide"), (2, 0, "espresso guide"),  # anchor only ever used for page 0
        (3, 1, "burr grinder"),
        (3, 1, "here"), (3, 2, "here"),  # generic: never a name
        (0, 1, "equipment"), (2, 3, "equipment"),  # ambiguous: half the uses each
    ]
    texts = [
        "Pull a shot. A burr grinder matters. Our equipment page.",
        "Read the espresso guide before you buy equipment.",
        "pour over needs a kettle",
        "home",
    ]
    return NameIndex(titles, uses, texts)


def test_mentions_find_anchor_names_and_titles_in_the_source_text() -> None:
    names = name_index()
    found = names.mentions(1)
    assert found[0].phrase == "espresso guide" and found[0].kind == "anchor"
    assert found[0].weight > found[3].weight  # "equipment" points to two pages
    assert set(found) == {0, 3}  # "equipment" also names page 1 itself: no self mention
    from_espresso = names.mentions(0)
    assert from_espresso[1].phrase == "burr grinder" and from_espresso[1].weight == pytest.approx(1.0)


def test_generic_anchors_are_not_names() -> None:
    names = name_index()
    assert ("here",) not in names.by_words
    assert all(m.phrase != "here" for t in range(4) for m in names.names_of(t))


def test_page_never_mentions_itself() -> None:
    names = name_index()
    assert 2 not in names.mentions(2)


def test_approximate_neighbours_find_what_the_exact_search_finds(monkeypatch) -> None:
    """Above the exact limit the neighbours come from a reduced index, re-scored exactly: on
    topic clusters they are (nearly) the exact ones, with the exact cosines."""
    from sklearn.decomposition import TruncatedSVD

    fitted_rows: list[int] = []  # the rows each reduction is fitted on (the real fit, watched:
    real_fit = TruncatedSVD.fit_transform  # ``fit`` fits through it too)
    monkeypatch.setattr(TruncatedSVD, "fit_transform",
                        lambda self, X, y=None: fitted_rows.append(X.shape[0]) or real_fit(self, X))
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(3000)]
    docs = []
    for d in range(600):
        topic = d % 30
        words = rng.choice(100, 80) + 100 * topic  # each topic has its own 100 words
        docs.append(" ".join(vocab[int(w)] for w in words))
    index = LexicalIndex(docs)
    exact_rows, exact_sims = index.neighbours(5)
    rows, sims = index.neighbours(5, exact_limit=100)
    found = sum(len(set(a) & set(b)) for a, b in zip(rows.tolist(), exact_rows.tolist(), strict=True))
    assert found / exact_rows.size >= 0.9
    same = rows == exact_rows
    assert np.allclose(sims[same], exact_sims[same], atol=1e-5)
    # a large site's reduction is fitted on a sample of its rows (a third here), then applied to all
    fitted_rows.clear()
    sampled, _ = index.approximate_neighbours(5, fit_rows=200)
    assert fitted_rows[0] == 200
    found = sum(len(set(a) & set(b)) for a, b in zip(sampled.tolist(), exact_rows.tolist(), strict=True))
    assert found / exact_rows.size >= 0.9
    fitted_rows.clear()
    assert index.approximate_neighbours(5, fit_rows=600)[0].tolist() == rows.tolist()  # all: as before
    assert fitted_rows[0] == 600


def test_a_fold_index_filters_the_site_index_counts_as_a_scan_would() -> None:
    site = name_index()
    titles = [(name, name) for name in ("Espresso", "Grinders", "Pour over", "Home")]
    texts = ["Pull a shot. A burr grinder matters. Our equipment page.",
             "Read the espresso guide before you buy equipment.", "pour over needs a kettle", "home"]
    fold_uses = [(3, 0, "espresso guide"), (0, 1, "equipment")]  # some links hidden: fewer names
    fold = NameIndex(titles, fold_uses, texts, base=site)
    scanned = NameIndex(titles, fold_uses, texts)
    assert list(fold.page_names) == scanned.page_names
    assert [list(c) for c in fold.page_names] == [list(c) for c in scanned.page_names]  # same order
    assert all(fold.mentioned.get(w, 0) == scanned.mentioned.get(w, 0) for w in fold.by_words)
    assert fold.keyphraseness == scanned.keyphraseness
    assert all(fold.mentions(s) == scanned.mentions(s) for s in range(4))
    # a name the site index does not have: the texts are scanned
    other = NameIndex(titles, [(1, 2, "kettle")], texts, base=site)
    assert ("kettle",) in other.page_names[2]


def test_a_fold_index_counts_again_only_the_names_its_hidden_links_give() -> None:
    """``without_links`` gives the names, commonness, spellings, keyphraseness, page counts and
    mentions a rebuild from the links left gives: a name only hidden links gave is gone from the
    pages' counts, a page's title names it again once no link names it that way, a shared name's
    commonness and its first spelling move, and the other names are the site index's own."""
    titles = [(name, name) for name in ("Espresso", "Grinders", "Pour over", "Home", "Kettles")]
    texts = ["A burr grinder and the espresso guide; grinders.", "Espresso  guide, grinders, a kettle.",
             "pour over, espresso guide, burr grinder", "home, grinders and kettles", "a kettle"]
    uses = [(1, 0, "Espresso  Guide"), (2, 0, "espresso guide"), (3, 0, "espresso guide"),
            (0, 1, "grinders"), (2, 1, "burr grinder"), (3, 2, "burr grinder"),
            (1, 4, "kettle"), (2, 4, "kettle"), (0, 2, "pour over"), (0, 0, "espresso guide")]
    hide = {(1, 0), (0, 1), (1, 4), (2, 4), (3, 2)}  # pairs: every link between them is hidden
    texts_of = sorted({anchor for _, _, anchor in uses})
    columns = AnchorUses(np.array([s for s, _, _ in uses], dtype=np.int32),
                         np.array([t for _, t, _ in uses], dtype=np.int32),
                         np.array([texts_of.index(a) for _, _, a in uses], dtype=np.int32), texts_of)
    hidden = np.array([(s, t) in hide for s, t, _ in uses])
    site = NameIndex(titles, columns, texts)
    assert site.hides_links
    fold = site.without_links(columns, hidden)
    left = [use for use, gone in zip(uses, hidden, strict=True) if not gone]
    rebuilt = NameIndex(titles, left, texts)
    assert set(fold.by_words) == set(rebuilt.by_words) and len(fold.by_words) == len(rebuilt.by_words)
    assert all(fold.by_words[w] == rebuilt.by_words[w] for w in rebuilt.by_words)
    assert dict(fold.keyphraseness) == dict(rebuilt.keyphraseness)
    assert [list(fold.page_names[i].items()) for i in range(5)] == [
        list(rebuilt.page_names[i].items()) for i in range(5)]
    assert all(list(fold.mentions(s).items()) == list(rebuilt.mentions(s).items()) for s in range(5))
    assert ("kettle",) not in fold.by_words and ("kettle",) in site.by_words  # only hidden links gave it
    assert [n.kind for n in fold.by_words[("grinders",)]] == ["h1"]  # the page names itself so again
    assert fold.by_words[("espresso", "guide")][0].phrase == "espresso guide"  # the first spelling left
    assert fold.by_words[("pour", "over")] is site.by_words[("pour", "over")]  # untouched: the site's
    with pytest.raises(ValueError, match="columns"):
        NameIndex(titles, uses, texts).without_links(columns, hidden)


def _scanned(names, text):
    """A name's count on a page, in the order a scan of its tokens first meets each: the names
    ending at each token, the longer first (every occurrence, overlapping ones too)."""
    from postprocess.stages.tokeniser import terms

    words = terms(text)
    found: Counter = Counter()
    for end in range(1, len(words) + 1):
        for start in range(end):
            if tuple(words[start:end]) in names:
                found[tuple(words[start:end])] += 1
    return found


def test_the_site_index_keeps_each_pages_name_counts_as_columns() -> None:
    """Each page's counts, read back in the order they were found, are those a scan of its text gives;
    held as int32 columns, not a Counter a page; the pages mentioning each name come from them."""
    titles = [(name, name) for name in ("Espresso", "Grinders", "Pour over", "Home", "Conical burr grinder")]
    texts = ["A grinder, then espresso; espresso again. Grinders!", "", "pour over and espresso", "home",
             "Pour over: a conical burr grinder beats a burr grinder. Grinder."]
    index = NameIndex(titles, [(0, 1, "grinder"), (2, 3, "burr grinder")], texts)
    scans = [_scanned(set(index.by_words), text) for text in texts]
    assert isinstance(index.page_names.ids, np.ndarray) and index.page_names.ids.dtype == np.int32
    assert [list(index.page_names[i].items()) for i in range(5)] == [list(c.items()) for c in scans]
    assert index.page_names[0] == {("grinder",): 1, ("espresso",): 2, ("grinders",): 1}
    assert list(index.page_names[4].items()) == [  # at "grinder", the longer names first
        (("pour", "over"), 1), (("conical", "burr", "grinder"), 1), (("burr", "grinder"), 2),
        (("grinder",), 3)]
    assert index.page_names[1] == {} and len(index.page_names) == 5
    assert dict(index.mentioned) == {("grinder",): 2, ("espresso",): 2, ("grinders",): 1, ("pour", "over"): 2,
                                     ("burr", "grinder"): 1, ("conical", "burr", "grinder"): 1}


def test_names_are_counted_alike_in_batches_of_a_few_texts(monkeypatch) -> None:
    from postprocess.stages import lexical

    titles = [(f"Moka pot {i}", f"Moka pot {i}") for i in range(9)]
    texts = [f"The moka pot {i} and moka pot {i + 1}; moka pot." for i in range(9)]
    whole = NameIndex(titles, [(0, 1, "moka pot")], texts)
    monkeypatch.setattr(lexical, "NAME_SCAN_TEXTS", 2)
    batched = NameIndex(titles, [(0, 1, "moka pot")], texts)
    assert [list(batched.page_names[i].items()) for i in range(9)] == [
        list(whole.page_names[i].items()) for i in range(9)]
    assert batched.page_names[3] == {("moka", "pot"): 3, ("moka", "pot", "3"): 1, ("moka", "pot", "4"): 1}


def test_anchor_names_are_counted_alike_from_columns_and_from_link_rows() -> None:
    """The columns (every distinct anchor text split once, links grouped in NumPy) give the names,
    commonness, spellings, order and keyphraseness the loop over every link gives."""
    titles = [(name, name) for name in ("Espresso", "Grinders", "Pour over", "Home")]
    texts = ["A burr grinder and the espresso guide.", "Espresso  guide, grinders and burr grinders.",
             "pour over, espresso guide", "home"]
    uses = [(1, 0, "Espresso  guide"), (2, 0, "espresso guide"), (2, 0, "espresso guide"),
            (0, 1, "burr grinder"), (3, 1, "burr grinder"),
            (1, 1, "burr grinder"),  # a page's link to itself names nothing
            (0, 2, "here"), (3, 0, "burr grinder"), (0, 3, "")]
    texts_of = sorted({anchor for _, _, anchor in uses}) + ["unused"]
    columns = AnchorUses(np.array([s for s, _, _ in uses]), np.array([t for _, t, _ in uses]),
                         np.array([texts_of.index(a) for _, _, a in uses], dtype=np.int32), texts_of)
    rows = NameIndex(titles, uses, texts)
    cols = NameIndex(titles, columns, texts)
    assert list(cols.by_words) == list(rows.by_words)
    assert cols.by_words == rows.by_words
    assert cols.by_words[("espresso", "guide")][0].phrase == "Espresso guide"  # the first spelling
    assert cols.keyphraseness == rows.keyphraseness
    assert cols.keyphraseness[("burr", "grinder")] == pytest.approx(3 / 3)  # 2 pages link it, 2 mention it
    assert cols.page_names == rows.page_names


def test_anchor_counts_from_int32_columns_keep_their_pair_keys_in_int64() -> None:
    """The columns stay int32 (12 bytes a link); a (name, page) key past 2**31 (40,000 names on a
    70,000-page site) still counts as the loop over the links counts it."""
    import string

    pages = 70_001
    letters = string.ascii_lowercase
    words = [letters[i // 676] + letters[i // 26 % 26] + letters[i % 26] + "x" for i in range(17_576)]
    texts_of = [f"{a} {b}" for a, b in zip(words * 3, words[7:] * 3 + words[:7] * 3, strict=True)][:40_000]
    uses = [(k % 5_000, pages - 1 - k % 3, texts_of[k]) for k in range(40_000)]
    uses += [(9, pages - 1, texts_of[-1]), (10, 3, texts_of[-1])]
    columns = AnchorUses(np.array([s for s, _, _ in uses], dtype=np.int32),
                         np.array([t for _, t, _ in uses], dtype=np.int32),
                         np.array([*range(40_000), 39_999, 39_999], dtype=np.int32), texts_of)
    titles, texts = [("", "")] * pages, [""] * pages
    rows, cols = NameIndex(titles, uses, texts), NameIndex(titles, columns, texts)
    assert len(cols.by_words) == 40_000 and cols.by_words == rows.by_words
    assert cols.keyphraseness == rows.keyphraseness


def test_term_counts_hold_a_few_bytes_a_document_and_term_pair_while_counting():
    """What is held for every (document, term) pair of the site before the matrix is made: a term
    id and a count (8 bytes), and a transient copy or two; not a row, term and count as int64 each
    and their copies and sorting order (83 bytes a pair at this size)."""
    from postprocess.stages import lexical

    rng = random.Random(3)
    words = [f"w{i}x" for i in range(20_000)]
    documents = [" ".join(rng.choice(words) for _ in range(rng.randint(50, 400))) for _ in range(3000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        matrix = lexical.term_counts(documents, 1, 0.5)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # the pairs moved into the matrix's arrays a batch at a time: 28.6 bytes a pair at the peak here,
    # 36.4 with every pair's column, count and running total made at once (20.9 since the words are
    # found in NumPy, ``word_scan``, not held as a list of strings a batch)
    assert matrix.nnz > 600_000 and peak / matrix.nnz < 32


def test_tf_idf_weights_the_counts_in_their_own_arrays_as_the_transformer_does():
    """The TF-IDF vectors are the transformer's to the byte, made in the counts' arrays (a site's
    pairs are not copied: 8 bytes a pair at 100k pages is 128 MB)."""
    from sklearn.feature_extraction.text import TfidfTransformer

    from postprocess.stages import lexical

    rng = random.Random(5)
    words = [f"w{i}x" for i in range(2_000)]
    documents = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 300))) for _ in range(500)]
    expected = TfidfTransformer(sublinear_tf=True).fit_transform(lexical.term_counts(documents, 1, 0.5))
    counts = lexical.term_counts(documents, 1, 0.5)
    data = counts.data
    weighted = lexical.tfidf_in_place(counts)
    assert weighted.data is data or np.shares_memory(weighted.data, data)
    assert weighted.data.tobytes() == expected.data.tobytes()
    assert weighted.indices.tolist() == expected.indices.tolist()
    assert weighted.indptr.tolist() == expected.indptr.tolist()


def test_the_tfidf_job_hands_freed_memory_back_before_and_during_its_neighbours(monkeypatch) -> None:
    """The allocator keeps what the term counts and the SVD freed unless told: the job hands it back
    after the index is made and again before the reduced rows' Annoy index is built and queried."""
    from postprocess.stages import lexical

    events: list[str] = []
    monkeypatch.setattr(lexical, "give_back", lambda: events.append("give back"))
    built = lexical.LexicalIndex.__init__
    monkeypatch.setattr(lexical.LexicalIndex, "__init__",
                        lambda self, *a, **k: (built(self, *a, **k), events.append("index"))[0])
    rng = random.Random(0)
    words = [f"w{i}" for i in range(300)]
    documents = [" ".join(rng.choice(words) for _ in range(40)) for _ in range(60)]
    index = lexical.LexicalIndex(documents)
    events.clear()
    approximate = index.approximate_neighbours(5)
    assert events == ["give back"]  # the SVD's transients, before the Annoy index
    events.clear()
    _, rows, sims = lexical._lexical_neighbours([documents], 5)
    assert events[:2] == ["index", "give back"] and rows.shape == sims.shape == (60, 5)
    assert approximate[0].shape == (60, 5)


@pytest.mark.parametrize("fit_rows", [2000, 500])
def test_the_neighbours_queries_hold_no_reduced_rows_no_svd_and_an_index_in_a_deleted_file(
        tmp_path, monkeypatch, fit_rows) -> None:
    """While the reduced index is queried (the long part of the TF-IDF job) the process holds the
    neighbours' arrays and little else of its own: not the reduced rows, not the fitted SVD (dims ×
    terms), not the Annoy index (built in an unlinked temporary file, mapped; none left behind)."""
    import tempfile
    from pathlib import Path

    from annoy import AnnoyIndex  # noqa: F401 - imported before memory is traced
    from sklearn.decomposition import TruncatedSVD  # noqa: F401

    from postprocess.stages import lexical

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(4000)]
    documents = [" ".join(vocab[int(w)] for w in rng.choice(100, 60) + 100 * (d % 40)) for d in range(1500)]
    index = lexical.LexicalIndex(documents)
    seen: dict[str, object] = {}

    class Watched(lexical.LexicalIndex):
        def similarities(self, source, targets):  # noqa: ANN001, ANN202
            if not seen:
                seen["held"] = tracemalloc.get_traced_memory()[0]
                maps = Path("/proc/self/maps").read_text()
                seen["mapped"] = [line for line in maps.splitlines() if "linkspider-lexical-index-" in line]
            return super().similarities(source, targets)

    watched = Watched.__new__(Watched)
    watched.__dict__.update(index.__dict__)
    tracemalloc.start()
    try:
        rows, sims = watched.approximate_neighbours(5, dims=64, fit_rows=fit_rows)
    finally:
        tracemalloc.stop()
    neighbours_bytes = rows.nbytes + sims.nbytes  # 60 KB; the reduced rows 384 KB, the SVD's 2 MB
    # and the rare terms' pages (~0.5 MB) with the first step's candidates by them (~0.3 MB)
    rare = RareTerms(index.matrix)
    rare_bytes = rare.column.nbytes + sum(a.nbytes for a in (rare.pages_of.data, rare.pages_of.indices,
                                                             rare.pages_of.indptr))
    step_bytes = sum(sys.getsizeof(c) for c in rare.candidates(range(min(1500, lexical.QUERY_STEP)), 10))
    assert seen["held"] < neighbours_bytes + rare_bytes + step_bytes + 150_000, seen["held"]
    assert seen["mapped"] and all(line.endswith("(deleted)") for line in seen["mapped"])
    assert list(tmp_path.iterdir()) == []
    assert rows.shape == (1500, 5) and (rows >= 0).all()


def test_the_names_and_the_anchor_finder_hand_back_what_their_builds_freed(monkeypatch) -> None:
    """Both are built in the main process while the TF-IDF job runs beside it: each hands the
    allocator's freed memory back once it is made (after the names' scan; the finder after each of
    its five passes and at its end)."""
    from crawlkit import SITE, SITE_LINKS

    from postprocess.stages import anchors, lexical
    from postprocess.stages.load import build_crawl

    events: list[str] = []
    monkeypatch.setattr(lexical, "give_back", lambda: events.append("give back"))
    monkeypatch.setattr(anchors, "give_back", lambda: events.append("give back"))
    scanned = lexical.NameIndex.__init__
    monkeypatch.setattr(lexical.NameIndex, "__init__",
                        lambda self, *a, **k: (scanned(self, *a, **k), events.append("names"))[0])
    evidence = SiteEvidence(["a", "b", "c", "d", "e"], [("", "")] * 5, DOCS, DOCS, [], 2)
    assert events == ["names", "give back"] and evidence.names is not None
    events.clear()
    finder = anchors.AnchorFinder(build_crawl(SITE, SITE_LINKS, []))
    assert events == ["give back"] * 6 and finder.pages


def test_the_names_share_their_words_and_the_page_names_the_links_give_share_their_tuples() -> None:
    """However many names hold a word, it is one string (``sys.intern``); a page's name the links
    give too is their words' tuple, not a copy; a name already spaced is the page's own string."""
    h1 = "".join(["Burr grinders ", "at home"])
    titles = [("Espresso guide", ""), (h1, "Espresso machines"), ("Kettles", "Espresso guide"), ("", "")]
    texts = ["an espresso guide and burr grinders at home", "the espresso machines", "kettles", ""]
    uses = [(1, 0, "espresso  guide"), (2, 0, "Espresso guide"), (0, 2, "kettles"), (3, 1, "burr grinders")]
    texts_of = sorted({anchor for _, _, anchor in uses})
    columns = AnchorUses(np.array([s for s, _, _ in uses], dtype=np.int32),
                         np.array([t for _, t, _ in uses], dtype=np.int32),
                         np.array([texts_of.index(a) for _, _, a in uses], dtype=np.int32), texts_of)
    for anchor_uses in (uses, columns):
        index = NameIndex(titles, anchor_uses, texts)
        keys = {words: words for words in index.by_words}
        assert {("espresso", "guide"), ("kettles",), ("burr", "grinders", "at", "home")} <= set(keys)
        strings: dict[str, set[int]] = {}
        for words in [*index.by_words, *index._owners]:
            for word in words:
                strings.setdefault(word, set()).add(id(word))
        assert all(len(ids) == 1 for ids in strings.values()), strings
        assert index._owners and all(keys[words] is words for words in index._owners)
        [name] = [n for n in index.by_words[("burr", "grinders", "at", "home")] if n.kind == "h1"]
        assert name.phrase is h1


def test_the_counted_pairs_wait_on_disk_until_they_are_moved_into_the_matrix() -> None:
    """Each batch's (document, term) pairs go to disk as they are counted (8 bytes a pair: ~1.3 GB at
    a million pages): the counting's peak is a batch's work, not every pair (3.2M pairs, 25.6 MB,
    here; held in memory, the peak was 40 MB)."""
    from postprocess.stages import lexical

    rng = random.Random(3)
    words = [f"w{i}x" for i in range(3_000)]
    documents = [" ".join(rng.sample(words, 400)) for _ in range(8_000)]
    tracemalloc.start()
    try:
        matrix = lexical.term_counts(documents, 1, 1.0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert matrix.nnz == 3_200_000
    assert peak < 8 * matrix.nnz


def test_the_tfidf_matrix_is_made_in_file_pages_not_the_jobs_own_memory(
        mapped_from_a_file: Callable[[np.ndarray], bool]) -> None:
    """The TF-IDF job's largest array, its matrix's values and columns (~1.3 GB at a million pages,
    held through its whole neighbours' search), is written to file pages as it is made and weighted
    there: the same matrix as scikit-learn's vectorizer and transformer make."""
    documents = [f"espresso grinder burr {i} kettle" if i % 2 else f"tomato compost soil {i} kettle"
                 for i in range(40)]
    matrix = LexicalIndex(documents).matrix
    assert mapped_from_a_file(matrix.data) and mapped_from_a_file(matrix.indices)
    from sklearn.feature_extraction.text import TfidfTransformer

    expected = TfidfTransformer(sublinear_tf=True).fit_transform(_vectorizer_counts(documents, 0.5))
    assert matrix.indptr.tobytes() == expected.indptr.tobytes()
    assert matrix.indices.tobytes() == expected.indices.tobytes()
    assert matrix.data.tobytes() == expected.data.tobytes()


def test_the_tfidf_index_and_neighbours_the_ranking_reads_are_mapped_from_files(
        mapped_from_a_file: Callable[[np.ndarray], bool]) -> None:
    """Once ready, the site's TF-IDF matrix and its neighbours (read by every pair's score to the end
    of the run, written by nothing: ~0.14 GB at 100k pages) are mapped from files, not held in the
    process's memory; the similarities are those of the index as it was made."""
    documents = [f"espresso grinder burr {i} kettle" if i % 2 else f"tomato compost soil {i}"
                 for i in range(40)]
    made = LexicalIndex(documents)
    expected = made.similarities(1, np.arange(40))
    urls = [f"u{i}" for i in range(40)]
    evidence = SiteEvidence(urls, [("", "")] * 40, documents, documents, [], 3).ready()
    matrix = evidence.lexical.matrix
    assert all(mapped_from_a_file(a) for a in (matrix.data, matrix.indices, matrix.indptr))
    assert mapped_from_a_file(evidence.lexical_rows) and mapped_from_a_file(evidence.lexical_sims)
    assert np.array_equal(evidence.lexical.similarities(1, np.arange(40)), expected)
    assert evidence.candidates(1)[:3] == [r for r in evidence.lexical_rows[1].tolist() if r >= 0][:3]


def test_the_tfidf_job_lets_its_documents_go_once_their_terms_are_counted(monkeypatch) -> None:
    """The job's documents (72 MB at 100k pages in the fresh child) are held by nothing of the job's
    through the neighbours' search: the list they come in is emptied once the index is made."""
    import gc
    import weakref

    from postprocess.stages import lexical

    class Documents(list):
        pass

    rng = random.Random(0)
    words = [f"w{i}" for i in range(300)]
    documents = Documents(" ".join(rng.choice(words) for _ in range(40)) for _ in range(60))
    alive = weakref.ref(documents)
    seen: list[bool] = []
    search = lexical.LexicalIndex.neighbours

    def neighbours(self, *args, **kwargs):  # noqa: ANN001, ANN202 - LexicalIndex.neighbours's
        gc.collect()
        seen.append(alive() is not None)
        return search(self, *args, **kwargs)

    monkeypatch.setattr(lexical.LexicalIndex, "neighbours", neighbours)
    box = [documents]
    del documents
    _, rows, _ = lexical._lexical_neighbours(box, 5)
    assert box == [] and seen == [False] and rows.shape == (60, 5)


def test_mention_weights_of_a_block_are_each_sources_mentions() -> None:
    """The mention weights the ranking makes for a block of sources at once are, source by source,
    ``mentions``' targets in its order with its weights: the best name of each target, of equal
    weights the first found, never the source itself; and None for a fold's index, whose names are
    not columns of its own."""
    rng = np.random.default_rng(5)
    vocabulary = ["espresso", "grinder", "kettle", "filter", "roast", "bean", "milk", "guide"]

    def phrase(words: int) -> str:
        return " ".join(rng.choice(vocabulary, words))

    pages = 60
    titles = [(phrase(1 + i % 2), phrase(2)) for i in range(pages)]
    uses = [(int(rng.integers(pages)), int(rng.integers(pages)), phrase(1 + int(rng.integers(2))))
            for _ in range(300)]
    texts = [f"{phrase(12)}. {phrase(9)}" for _ in range(pages)]
    texts_of = sorted({anchor for _, _, anchor in uses})
    columns = AnchorUses(np.array([s for s, _, _ in uses], dtype=np.int32),
                         np.array([t for _, t, _ in uses], dtype=np.int32),
                         np.array([texts_of.index(a) for _, _, a in uses], dtype=np.int32), texts_of)
    names = NameIndex(titles, columns, texts)
    expected = [{t: m.weight for t, m in names.mentions(s).items()} for s in range(pages)]
    assert sum(len(e) for e in expected) > 5 * pages  # many targets named, many names each
    ties = [len(names.by_words[w]) for w in names.by_words]
    assert max(ties) > 1  # names shared by several pages
    blocks = [list(range(pages)), [7], [3, 1, 2], list(range(pages - 1, -1, -2))]
    for block in blocks:
        made = names.mention_weights(block)
        assert [list(m.items()) for m in made] == [list(expected[s].items()) for s in block]
    hidden = np.zeros(len(uses), dtype=bool)
    hidden[:20] = True
    assert names.without_links(columns, hidden).mention_weights([0, 1]) is None


def test_rare_terms_pick_the_pages_that_share_a_page_s_rarest_highest_weighted_words() -> None:
    """A page's candidates are the pages holding its highest-weighted terms among those on few
    pages, best by the part of the cosine those terms make; never the page itself; a term on more
    pages than the limit picks none."""
    documents = ["zebra quokka common", "zebra common", "quokka common", "common other",
                 "zebra quokka", "unrelated words"]
    index = LexicalIndex(documents)
    everyone = RareTerms(index.matrix, most=10, terms=10)
    assert [sorted(c.tolist()) for c in everyone.candidates(range(6), 10)] == [
        [1, 2, 3, 4], [0, 2, 3, 4], [0, 1, 3, 4], [0, 1, 2], [0, 1, 2], []]
    rare = RareTerms(index.matrix, most=3, terms=10)  # "common" (4 pages) picks no candidates
    assert [sorted(c.tolist()) for c in rare.candidates(range(6), 10)] == [
        [1, 2, 4], [0, 4], [0, 4], [], [0, 1, 2], []]
    assert [len(c) for c in rare.candidates(range(6), 1)] == [1, 1, 1, 0, 1, 0]  # the best one
    # only the highest-weighted rare term: "zebra" and "quokka" weigh the same in page 0 (each on
    # three pages), so the lower column (the terms are in alphabetical order): "quokka", on 2 and 4
    one = RareTerms(index.matrix, most=3, terms=1)
    assert sorted(one.candidates(range(1), 10)[0].tolist()) == [2, 4]


def test_rare_terms_find_the_neighbours_a_reduction_of_too_few_dimensions_loses(monkeypatch) -> None:
    """More topics (200, six pages each) than the reduction's dimensions (the synthetic million's
    case): its candidates miss many exact neighbours; with the pages' rare terms' candidates they
    are the exact ones."""
    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(8000)]
    common = [f"c{i}" for i in range(50)]
    docs = [" ".join([vocab[int(w)] for w in rng.choice(40, 30) + 40 * (d % 200)]
                     + [common[int(w)] for w in rng.choice(50, 30)]) for d in range(1200)]
    index = LexicalIndex(docs)
    exact_rows, exact_sims = index.neighbours(3)

    def found(rows: np.ndarray) -> float:
        return sum(len(set(a) & set(b)) for a, b in zip(rows.tolist(), exact_rows.tolist(), strict=True)) \
            / exact_rows.size

    rows, sims = index.approximate_neighbours(3, dims=4)
    assert found(rows) == 1.0 and np.allclose(sims, exact_sims, atol=1e-5)
    monkeypatch.setattr(RareTerms, "candidates", lambda self, pages, count: [np.zeros(0, int)] * len(pages))
    assert found(index.approximate_neighbours(3, dims=4)[0]) < 0.8


def _random_uses(n: int, seed: int) -> tuple[AnchorUses, list[tuple[int, int, str]]]:
    """``n`` in-content links between 1,000 pages with 300 anchor texts, ~3 a target (some of stopwords
    only, some links to their own page), as columns and as (source, target, text) tuples."""
    rng = np.random.default_rng(seed)
    words = ["espresso", "guide", "burr", "grinder", "kettle", "pour", "over", "the", "a", "here", "click"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 4)))) for _ in range(300)]
    source = rng.integers(0, 1000, n).astype(np.int32)
    target = (source + rng.integers(0, 40, n)).astype(np.int32) % 1000  # a few to their own page
    anchor = ((target * 7 + rng.integers(0, 3, n)) % len(texts)).astype(np.int32)  # ~3 a target
    tuples = [(int(s), int(t), texts[a]) for s, t, a in zip(source, target, anchor, strict=True)]
    return AnchorUses(source, target, anchor, texts), tuples


def test_anchor_counts_as_columns_are_the_loops_over_the_links(monkeypatch):
    """The columns' anchor counts (a mask over the links, keys made a step at a time, the distinct
    keys counted a step at a time, the groups a range at a time) are the loop's: its pairs in the
    order of their first link with that link's spelling, the uses and the sources of each name."""
    from postprocess.stages import lexical, links

    monkeypatch.setattr(links, "KEY_STEP", 997)
    monkeypatch.setattr(lexical, "KEY_STEP", 997)
    monkeypatch.setattr(links, "FIRST_SEEN_BLOCK", 1_500)
    columns, tuples = _random_uses(20_000, 4)
    got, expected = lexical._count_anchor_columns(columns), lexical._count_anchor_uses(tuples)
    assert got.pairs == expected.pairs and got.uses == expected.uses and got.sources == expected.sources
    empty = lexical._count_anchor_columns(AnchorUses(*(np.zeros(0, dtype=np.int32),) * 3, []))
    assert empty.pairs == [] and not empty.uses and not empty.sources


def test_anchor_counts_as_columns_hold_one_key_array_at_a_time(monkeypatch):
    """No copy of the links' columns is made for the counted links (a mask over them): the peak is
    about one array of 8 bytes a link (a million synthetic pages' ~38M in-content links: ~0.8 GB at
    the peak, where four copies and the keys made ~1.8)."""
    from postprocess.stages import lexical, links

    monkeypatch.setattr(links, "FIRST_SEEN_BLOCK", 1 << 17)
    columns, _ = _random_uses(1_000_000, 5)
    naming = lexical._anchor_naming(columns)
    _, peak = traced_peak(lambda: lexical._count_anchor_columns(columns, naming))
    assert peak < 19 * len(columns.source), peak / len(columns.source)  # now ~15; copies and keys made ~25
