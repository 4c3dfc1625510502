"""Lexical evidence for a link: shared rare words (TF-IDF) and mentions of the target's names.

Two signals that embeddings alone miss on documentation and product sites:

* ``LexicalIndex`` — TF-IDF (sublinear tf, English stop words) over each page's
  title, h1, headings and text; cosine of two pages, and each page's nearest
  pages, computed in blocks of rows so that no n×n matrix is ever built.
* ``NameIndex`` — the names a page is known by: its h1, its title without the
  site-wide suffix, and the anchor texts other pages already use to link to it.
  When a source page's text mentions one of those names, that is the phrase an
  editor would wrap in a link. Each name is weighted by how surely it means that
  page (*commonness*: the share of its uses that point to the target) and how
  often the site links it when it appears (*keyphraseness*): weight =
  commonness × √keyphraseness (the square root measured best on the Django docs,
  see docs/benchmarks.md).
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfTransformer

from postprocess.background import Background, in_chunks, parent_waits, worth_a_fork
from postprocess.memory import give_back
from postprocess.stages.links import KEY_STEP, distinct, first_seen, kept_at, masked_keys, ranges
from postprocess.stages.load import Page, text_of, text_source
from postprocess.stages.overlay import Changed
from postprocess.stages.phrases import PhraseMatcher, Vocabulary
from postprocess.stages.rare_terms import RareTerms, best_in_row
from postprocess.stages.spill import ArrayFile, OnDisk, mapped, mapped_zeros
from postprocess.stages.titles import clean_title as _clean_title
from postprocess.stages.titles import site_title_parts as _site_title_parts
from postprocess.stages.tokeniser import folded, spaced, terms
from postprocess.stages.word_scan import scan_texts

if TYPE_CHECKING:
    from annoy import AnnoyIndex

#: Title separators that set off a site-wide suffix or prefix ("Page | Site").
_TITLE_SEPARATORS = re.compile(r"\s+[|—–·:»-]+\s+")
#: Pages the TF-IDF neighbours are queried for between looks at whether to share the rest with a
#: second process (``LexicalIndex.approximate_neighbours``); also the chunk each process then takes.
QUERY_STEP = 2048
#: Longest name (in tokens) looked up in page texts.
MAX_NAME_TOKENS = 8
#: Page texts tokenised together when the names in them are counted (``scan_page_names``).
NAME_SCAN_TEXTS = 256
#: Anchor texts that never name a page.
GENERIC_ANCHORS = frozenset(
    "here click here read more more this page link next previous back top home learn more "
    "see here documentation docs read this article post".split()
)


def site_title_parts(titles: Sequence[str], share: float = 0.3) -> set[str]:
    """Title segments that appear in more than ``share`` of the titles (" / " does not separate)."""
    return _site_title_parts(titles, share, _TITLE_SEPARATORS)


def clean_title(title: str, site_parts: set[str]) -> str:
    """``title`` without its site-wide segments ("QuerySet API | Django" -> "QuerySet API")."""
    return _clean_title(title, site_parts, _TITLE_SEPARATORS)


def page_document(title: str, h1: str, headings: Iterable[str], text: str) -> str:
    """The text a page is indexed by: its names, headings and main text."""
    return "\n".join([title or "", h1 or "", " ".join(headings or ()), text or ""])


class PageDocuments(Sequence[str]):
    """Each page's indexed document (``page_document``), made when read. It keeps the pages' titles,
    h1s, headings and texts as the pages hold them (a loader's texts stay in its store), not the
    pages: pickled for a fresh process (``background``), it carries those and nothing else."""

    def __init__(self, pages: Sequence[Page]) -> None:
        self._titles = [p.title for p in pages]
        self._h1s = [p.h1 for p in pages]
        self._headings = [p.headings for p in pages]
        self._texts = [text_source(p) for p in pages]

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, i):  # noqa: ANN001, ANN204 - an int or a slice, as a list takes
        if isinstance(i, slice):
            part = PageDocuments(())
            part._titles, part._h1s = self._titles[i], self._h1s[i]
            part._headings, part._texts = self._headings[i], self._texts[i]
            return part
        return page_document(self._titles[i], self._h1s[i], self._headings[i], text_of(self._texts[i]))


#: Up to this many pages the lexical neighbours are exact (all pairs, in blocks); above, approximate.
EXACT_NEIGHBOURS_LIMIT = 20_000


#: Above this many pages the lexical neighbours' reduction (truncated SVD) is fitted on a seeded
#: sample of this many pages' TF-IDF rows and then applied to every row a block at a time: its
#: memory and time stop growing with the site (fitted on every row of a million pages it peaked
#: at +1.7 GB and took 184 s, on 100,000 rows at +0.4 GB and 29 s: docs/benchmarks.md).
SVD_FIT_ROWS = 100_000
REDUCE_BLOCK_ROWS = 16_384


#: Documents tokenised together by ``term_counts``.
TERM_COUNT_DOCUMENTS = 256
_STOP_WORDS = frozenset(ENGLISH_STOP_WORDS)


def term_counts(documents: Iterable[str], min_df: int, max_df: float) -> sparse.csr_matrix | None:
    """The documents' term counts (float32, CSR) as scikit-learn's ``CountVectorizer`` makes them
    with ``tokeniser.WORD``, folded case and English stop words, its ``min_df`` and ``max_df`` (a share of the
    documents) and its columns (the terms in alphabetical order); None where it finds no term.
    Each document's tokens are made ids (one dictionary lookup a token) and a batch of documents
    is counted in NumPy, where the vectorizer takes a Python step a token."""
    vocabulary = Vocabulary()
    stop = np.zeros(0, dtype=bool)  # by term id
    # each document's distinct terms (first-seen ids, ascending) and their counts, and how many
    # each document has: 8 bytes a (document, term) pair, which the site holds ~160 of a page, on
    # disk until they are moved into the matrix (100k pages: the counting's peak +302 → +43 MB above
    # the job's start; a million pages held ~1.3 GB more); each term's documents counted as the
    # batches come, by term id (each batch's count as long as the vocabulary then, so the last one's
    # is as long as the whole vocabulary)
    spilled = ArrayFile()
    term_ids: list[OnDisk | None] = []
    counts: list[OnDisk | None] = []
    per_document: list[np.ndarray] = []
    document_frequency = np.zeros(0, dtype=np.int64)  # by term id
    documents_seen = 0
    iterator = iter(documents)
    while batch := list(itertools.islice(iterator, TERM_COUNT_DOCUMENTS)):
        text, found, lengths = scan_texts([folded(document) for document in batch])  # ``terms``' words
        ids = vocabulary.ids_of(text, found)
        new = vocabulary.words[len(stop):]
        is_stop = np.fromiter(map(_STOP_WORDS.__contains__, new), dtype=bool, count=len(new))
        stop = np.concatenate([stop, is_stop])
        row = np.repeat(np.arange(len(batch), dtype=np.int64), lengths)
        kept = ~stop[ids]
        pairs = np.sort(row[kept] * (1 << 32) + ids[kept])
        firsts = np.flatnonzero(np.diff(pairs, prepend=-1))
        distinct = pairs[firsts]
        batch_terms = (distinct & 0xFFFFFFFF).astype(np.int32)
        more = np.bincount(batch_terms, minlength=len(vocabulary.words))
        more[:len(document_frequency)] += document_frequency
        document_frequency = more
        term_ids.append(spilled.write(batch_terms))
        counts.append(spilled.write(np.diff(np.append(firsts, len(pairs))).astype(np.float32)))
        per_document.append(np.bincount(distinct >> 32, minlength=len(batch)).astype(np.int32))
        documents_seen += len(batch)
    # the columns: the terms in alphabetical order, less those on too few or too many documents
    alphabetical = np.array(sorted(range(len(vocabulary.words)), key=vocabulary.words.__getitem__),
                            dtype=np.int64)
    most = max_df * documents_seen if isinstance(max_df, float) else max_df
    wanted = (document_frequency[alphabetical] >= min_df) & (document_frequency[alphabetical] <= most)
    if not document_frequency.any() or not wanted.any() or most < min_df:
        return None
    column = np.full(len(vocabulary.words), -1, dtype=np.int32)
    column[alphabetical[wanted]] = np.arange(int(wanted.sum()), dtype=np.int32)
    # the matrix's arrays made at their final size (a kept pair per document of a wanted term), each
    # batch's pairs moved in and let go: no copy of every pair's term, count and running total at once
    # (a row's terms stay in the order the site first used them, as the vectorizer leaves them: it
    # sorts by its first-seen ids, then renumbers the columns alphabetically; each batch's pairs
    # were sorted by document, then first-seen id, and the batches follow one another)
    pairs_kept = int(document_frequency[alphabetical[wanted]].sum())
    # in file pages (``mapped_zeros``): the matrix is the TF-IDF job's largest array, held through its
    # whole neighbours' search (100k pages: 16M pairs, 0.13 GB; a million pages ~1.3 GB)
    data = mapped_zeros(pairs_kept, np.float32)
    indices = mapped_zeros(pairs_kept, np.int32)
    kept_per_document = np.zeros(documents_seen, dtype=np.int64)
    filled = documents_done = 0
    for b in range(len(term_ids)):
        placed_terms, placed_counts, lengths = term_ids[b], counts[b], per_document[b]
        term_ids[b] = counts[b] = None
        columns, batch_counts = column[placed_terms.read()], placed_counts.read()
        keep = columns >= 0
        more = int(np.count_nonzero(keep))
        data[filled:filled + more] = batch_counts[keep]
        indices[filled:filled + more] = columns[keep]
        document = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        kept_per_document[documents_done:documents_done + len(lengths)] = np.bincount(
            document[keep], minlength=len(lengths))
        filled += more
        documents_done += len(lengths)
    indptr = np.concatenate([[0], np.cumsum(kept_per_document)]).astype(np.int32)
    return sparse.csr_matrix((data, indices, indptr), shape=(documents_seen, int(wanted.sum())))


def tfidf_in_place(counts: sparse.csr_matrix) -> sparse.csr_matrix:
    """``counts`` made TF-IDF vectors (sublinear term frequency, smoothed idf, rows L2-normalised) as
    ``TfidfTransformer(sublinear_tf=True).fit_transform`` makes them, in the counts' own arrays: no
    copy of the site's (document, term) pairs."""
    weighting = TfidfTransformer(sublinear_tf=True).fit(counts)
    return sparse.csr_matrix(weighting.transform(counts, copy=False))


class LexicalIndex:
    """TF-IDF vectors of pages, L2-normalised, with pair similarity and blockwise nearest pages."""

    def __init__(self, documents: Sequence[str], min_df: int = 1, max_df: float = 0.5) -> None:
        counts = term_counts(documents, min_df, max_df if len(documents) > 20 else 1.0)
        if counts is None:  # no term at all
            self.matrix = sparse.csr_matrix((len(documents), 1), dtype=np.float32)
        else:  # its vocabulary is not kept
            self.matrix = tfidf_in_place(counts)
        self._dense: np.ndarray | None = None  # one source row spread out, for ``similarities``

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def mapped(self) -> LexicalIndex:
        """This index with its matrix's arrays mapped from files (``spill.mapped``): read by every pair's
        score for the rest of the run and never written (100k pages: ~0.12 GB, where it was this
        process's own memory and copied by a forked process that read it)."""
        matrix = self.matrix
        self.matrix = sparse.csr_matrix((mapped(matrix.data), mapped(matrix.indices), mapped(matrix.indptr)),
                                        shape=matrix.shape, copy=False)
        return self

    def similarities(self, source: int, targets: Sequence[int] | np.ndarray) -> np.ndarray:
        """Cosine of row ``source`` with each of rows ``targets``: the target rows times the source
        row spread out dense (a sparse-by-sparse product costs several times more per call)."""
        if not len(targets):
            return np.zeros(0, dtype=np.float32)
        matrix = self.matrix
        lo, hi = matrix.indptr[source], matrix.indptr[source + 1]
        columns = matrix.indices[lo:hi]
        if self._dense is None:
            self._dense = np.zeros(matrix.shape[1], dtype=matrix.dtype)
        self._dense[columns] = matrix.data[lo:hi]
        try:
            rows = np.asarray(targets)
            if _matvec_rows is not None and matrix.indptr.dtype == matrix.indices.dtype == np.int32 \
                    and matrix.data.dtype == np.float32 and rows.min() >= 0 and rows.max() < matrix.shape[0]:
                return _rows_times(matrix, rows.astype(np.int32, copy=False), self._dense)
            return np.asarray(matrix[rows] @ self._dense, dtype=np.float32)
        finally:
            self._dense[columns] = 0.0

    def neighbours(self, k: int, block: int = 512,
                   exact_limit: int = EXACT_NEIGHBOURS_LIMIT) -> tuple[np.ndarray, np.ndarray]:
        """Each page's ``k`` most similar other pages: (rows n×k, int32; similarities n×k), -1 where
        fewer exist.

        Up to ``exact_limit`` pages: exact, ``block`` source rows at a time (a sparse product),
        so memory stays proportional to the block — but time grows with n². Above it:
        ``approximate_neighbours`` (linear in n).
        """
        n = len(self)
        if n > exact_limit:
            return self.approximate_neighbours(k)
        rows = np.full((n, k), -1, dtype=np.int32)
        sims = np.zeros((n, k), dtype=np.float32)
        transposed = self.matrix.T.tocsc()
        for start in range(0, n, block):
            product = sparse.csr_matrix(self.matrix[start : start + block] @ transposed)
            for offset in range(product.shape[0]):
                i = start + offset
                cols, vals = best_in_row(product, offset, i, k)
                order = np.argsort(-vals, kind="stable")
                rows[i, : len(order)] = cols[order]
                sims[i, : len(order)] = vals[order]
        return rows, sims

    def approximate_neighbours(self, k: int, dims: int = 128, trees: int = 20, widen: int = 4,
                               fit_rows: int = SVD_FIT_ROWS, split: Callable[[], bool] | None = None
                               ) -> tuple[np.ndarray, np.ndarray]:
        """Like ``neighbours`` without all-pairs products: the TF-IDF rows reduced to ``dims``
        (truncated SVD, fitted on ``fit_rows`` rows at most: a seeded sample on a larger site) go
        into an Annoy index; each page's ``widen`` × ``k`` nearest there and its 2 × ``k`` best by
        its rare terms (``RareTerms``: what the reduction loses on a site of many topics) are
        re-scored with the exact TF-IDF cosine (``similarities``) and the best ``k`` kept.

        The pages are queried ``QUERY_STEP`` at a time; between steps, once ``split`` says so (by
        default ``parent_waits``: the run that started this job waits for it, a core idle), the pages
        left are shared with a forked second process (``in_chunks``), the same answers sooner (1M
        pages: ~230 s of one core left when the run began to wait, done in ~115 s; docs/benchmarks.md)."""
        from annoy import AnnoyIndex
        from sklearn.decomposition import TruncatedSVD

        n = len(self)
        rows = np.full((n, k), -1, dtype=np.int32)
        sims = np.zeros((n, k), dtype=np.float32)
        dims = max(2, min(dims, self.matrix.shape[1] - 1, n - 1))
        svd = TruncatedSVD(dims, random_state=0)
        index = AnnoyIndex(dims, "angular")
        index.set_seed(0)
        _build_on_disk(index)
        if n <= fit_rows:
            blocks: Iterable[np.ndarray] = [svd.fit_transform(self.matrix).astype(np.float32)]
        else:  # fitted on a seeded sample of the rows, every row reduced a block at a time
            svd.fit(self.matrix[np.sort(np.random.default_rng(0).choice(n, fit_rows, replace=False))])
            blocks = (svd.transform(self.matrix[start:start + REDUCE_BLOCK_ROWS]).astype(np.float32)
                      for start in range(0, n, REDUCE_BLOCK_ROWS))
        _add_rows(index, blocks)
        # the reduced rows and the fitted SVD (its components: dims × terms float64, 46 MB at 100k
        # pages) let go before the index and the queries, and the SVD's dense transients handed back
        del blocks, svd
        give_back()
        index.build(trees, n_jobs=1)
        rare = RareTerms(self.matrix)
        split = split or parent_waits

        def nearest(pages: range) -> tuple[np.ndarray, np.ndarray]:
            return self._nearest(index, rare, k, widen, pages)

        start = 0
        while start < n:
            if n - start >= 2 * QUERY_STEP and split():  # the rest on both cores, in chunks
                shared = in_chunks(nearest, range(start, n), chunk=QUERY_STEP, name="ls-tfidf-nn")
                for number, (found, exact) in enumerate(shared):
                    at = start + number * QUERY_STEP
                    rows[at:at + len(found)], sims[at:at + len(found)] = found, exact
                break
            stop = min(n, start + QUERY_STEP)
            rows[start:stop], sims[start:stop] = nearest(range(start, stop))
            start = stop
        return rows, sims

    def _nearest(self, index: AnnoyIndex, rare: RareTerms, k: int, widen: int, pages: range
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``approximate_neighbours`` of the rows ``pages`` (a step of them): (rows, similarities)."""
        rows = np.full((len(pages), k), -1, dtype=np.int32)
        sims = np.zeros((len(pages), k), dtype=np.float32)
        by_rare_terms = rare.candidates(pages, 2 * k)
        for at, i in enumerate(pages):
            found = np.array([j for j in index.get_nns_by_item(i, widen * k + 1) if j != i], dtype=np.int64)
            found = np.union1d(found, by_rare_terms[at])
            exact = self.similarities(i, found)
            found, exact = found[exact > 0], exact[exact > 0]
            best = np.lexsort((found, -exact))[:k]  # most similar first, then the lower row
            rows[at, :len(best)] = found[best]
            sims[at, :len(best)] = exact[best]
        return rows, sims


try:  # scipy's own row gather and product, without ``matrix[rows] @ vector``'s checks and wrapping
    from scipy.sparse._sparsetools import csr_matvec as _matvec_rows
    from scipy.sparse._sparsetools import csr_row_index as _gather_rows
except ImportError:  # another scipy's layout: the public path, same figures
    _matvec_rows = _gather_rows = None


def _rows_times(matrix: sparse.csr_matrix, rows: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """``matrix[rows] @ dense`` as float32, through the same two routines scipy runs for it (so the
    same sums, in the same order), less the Python around them: the indexing's checks and the
    sub-matrix's construction were ~75% of a call (a page's ~200 TF-IDF neighbours re-scored: 214 →
    93 µs)."""
    indptr = matrix.indptr
    sub_indptr = np.empty(len(rows) + 1, dtype=np.int32)
    sub_indptr[0] = 0
    np.cumsum(indptr[rows + 1] - indptr[rows], out=sub_indptr[1:])
    pairs = int(sub_indptr[-1])
    sub_indices = np.empty(pairs, dtype=np.int32)
    sub_data = np.empty(pairs, dtype=np.float32)
    _gather_rows(len(rows), rows, indptr, matrix.indices, matrix.data, sub_indices, sub_data)
    out = np.zeros(len(rows), dtype=np.float32)
    _matvec_rows(len(rows), matrix.shape[1], sub_indptr, sub_indices, sub_data, dense, out)
    return out


def start_lexical_job(documents: Sequence[str], neighbours: int, workers: int = 1) -> Background:
    """The TF-IDF index of ``documents`` and each one's ``neighbours`` nearest (``_lexical_neighbours``),
    made in a second process when ``workers`` allow and the site is worth a fork, else here when first
    asked for. A fresh process: forked as it is, it kept ~0.6 GB of this one's heap at 100k pages (the
    pages this process wrote while it worked; docs/benchmarks.md); ``documents`` must then pickle."""
    return Background(_lexical_neighbours, [documents], max(1, neighbours),
                      fork=worth_a_fork(len(documents), workers), fresh=True)


def _lexical_neighbours(documents: list[Sequence[str]], k: int
                        ) -> tuple[LexicalIndex, np.ndarray, np.ndarray]:
    """The TF-IDF index of the documents and each one's ``k`` nearest (``LexicalIndex.neighbours``).
    ``documents``: a list of the one sequence of them, emptied once their terms are counted, so that
    the job's process (a fresh child: its call's arguments held by the frames that made the call)
    holds them no longer through the neighbours' search (100k pages: ``PageDocuments`` unpickled
    held 72 MB, beside 92 MB of imports)."""
    index = LexicalIndex(documents.pop())
    # the term counts' freed memory handed back before the neighbours: the allocator kept it (100k
    # pages: 0.30 → 0.13 GB held; the child's end 0.41 → 0.31 GB above its start, docs/benchmarks.md)
    give_back()
    return (index, *index.neighbours(k))


def _build_on_disk(index: AnnoyIndex) -> None:
    """``index`` built in an unlinked temporary file (Annoy's ``on_disk_build``): its nodes are file
    pages the system may drop and read again, not this process's own memory (100k pages: ~0.1 GB),
    and nothing is left behind when the process ends, however it ends."""
    handle, path = tempfile.mkstemp(prefix="linkspider-lexical-index-")
    os.close(handle)
    try:
        index.on_disk_build(path)
    finally:
        os.unlink(path)


def _add_rows(index: AnnoyIndex, blocks: Iterable[np.ndarray]) -> None:
    """Each row of ``blocks`` added to ``index`` as item 0, 1, … (in a function of its own: the loop's
    last row is a view that would keep its whole block alive in the caller)."""
    for i, vec in enumerate(itertools.chain.from_iterable(blocks)):
        index.add_item(i, vec)


@dataclass(frozen=True, slots=True)
class Mention:
    """A name of the target found in the source's text."""

    phrase: str  # as the name is written (an anchor text, the h1, the title)
    weight: float  # commonness × keyphraseness, 0..1
    kind: str  # anchor | h1 | title


@dataclass(slots=True)
class _Name:
    target: int
    phrase: str
    kind: str
    commonness: float


def _is_generic(words: Sequence[str]) -> bool:
    if not words:
        return True
    if " ".join(words) in GENERIC_ANCHORS:
        return True
    return all(w in ENGLISH_STOP_WORDS or len(w) < 2 or w.isdigit() for w in words)


@dataclass
class AnchorUses:
    """In-content links between indexed pages as columns, in link order: source and target rows,
    and each link's anchor as an id into ``texts`` (a crawl's ``LinkTable`` anchors)."""

    source: np.ndarray
    target: np.ndarray
    anchor: np.ndarray
    texts: Sequence[str]


@dataclass
class _AnchorCounts:
    """What a site's in-content links say of its anchor names."""

    pairs: list[tuple[tuple[str, ...], int, int, str]]  # (words, target, links, spelling), first seen first
    uses: Counter[tuple[str, ...]]  # links using each anchor name
    sources: dict[tuple[str, ...], int]  # distinct pages linking with each anchor name


def name_words(phrase: str) -> tuple[str, ...]:
    """A name's terms, each word one string however many names hold it (``sys.intern``): the names
    of a site share their words, where each name split held copies (100k synthetic pages: ~1.4M
    words, ~0.2M of them distinct)."""
    return tuple(map(sys.intern, terms(phrase)))


def _usable(words: tuple[str, ...]) -> bool:
    return not _is_generic(words) and len(words) <= MAX_NAME_TOKENS


def _count_anchor_uses(anchor_uses: Iterable[tuple[int, int, str]]) -> _AnchorCounts:
    use_count: Counter[tuple[str, ...]] = Counter()
    pair_count: Counter[tuple[tuple[str, ...], int]] = Counter()
    linking_sources: dict[tuple[str, ...], set[int]] = defaultdict(set)
    spelled: dict[tuple[tuple[str, ...], int], str] = {}
    split: dict[str, tuple[str, ...]] = {}  # a site reuses its anchor texts: each is split once
    for source, target, anchor in anchor_uses:
        words = split.get(anchor)
        if words is None:
            words = split[anchor] = name_words(anchor)
        if not _usable(words) or source == target:
            continue
        use_count[words] += 1
        pair_count[(words, target)] += 1
        linking_sources[words].add(source)
        spelled.setdefault((words, target), spaced(anchor))
    pairs = [(words, target, n, spelled[(words, target)]) for (words, target), n in pair_count.items()]
    return _AnchorCounts(pairs, use_count, {words: len(found) for words, found in linking_sources.items()})


def _anchor_naming(uses: AnchorUses) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """The usable names of ``uses``' anchor texts (each distinct text split once), and each text id's
    number in that list (-1: no usable name)."""
    names: dict[tuple[str, ...], int] = {}
    present = distinct(uses.anchor)
    name_of_text = np.full(int(present[-1]) + 1 if len(present) else 0, -1, dtype=np.int32)
    for a in present.tolist():
        words = name_words(uses.texts[a] or "")
        if _usable(words):
            name_of_text[a] = names.setdefault(words, len(names))
    return list(names), name_of_text


def _count_anchor_columns(uses: AnchorUses,
                          naming: tuple[list[tuple[str, ...]], np.ndarray] | None = None) -> _AnchorCounts:
    """``_count_anchor_uses`` in NumPy: each distinct anchor text split once (``naming``: the
    ``_anchor_naming`` of these texts, when made already), links grouped by (name, target) and
    (name, source) pair keys instead of a loop over every link. The links counted (a usable name,
    not to their own page) are a mask over ``uses``, not copies of its columns: each pair key array
    (int64) is made one at a time from it (~14 bytes a link at the peak, where four copies and the
    keys made ~48: a million synthetic pages' ~38M in-content links, ~1.8 GB)."""
    words_of, name_of_text = naming if naming is not None else _anchor_naming(uses)
    name = name_of_text[uses.anchor] if len(uses.anchor) else np.zeros(0, dtype=np.int32)
    keep = name >= 0
    keep &= uses.source != uses.target
    width = 1 + int(max(np.max(uses.source, where=keep, initial=-1),
                        np.max(uses.target, where=keep, initial=-1)))
    linking = _sources_per_name(masked_keys(name, uses.source, keep, width), width, len(words_of))
    keys, first, counts = first_seen(masked_keys(name, uses.target, keep, width))  # name × width + row
    anchor = uses.anchor[kept_at(keep, first)]  # the anchor text of each pair's first link
    del name, keep, first
    texts = uses.texts
    pairs = [(words_of[k // width], k % width, n, spaced(texts[a] or ""))
             for k, n, a in zip(keys.tolist(), counts.tolist(), anchor.tolist(), strict=True)]
    use_count: Counter[tuple[str, ...]] = Counter()
    for words, _, n, _ in pairs:
        use_count[words] += n
    return _AnchorCounts(pairs, use_count, {words_of[k]: int(n) for k, n in enumerate(linking.tolist()) if n})


def _sources_per_name(keys: np.ndarray, width: int, names: int) -> np.ndarray:
    """For each name number, how many distinct sources ``keys`` (name × ``width`` + source, an array
    the caller lets go: sorted in place) give it: the distinct keys counted a step at a time, never
    made whole (nearly every key is distinct: another array as large as the keys)."""
    keys.sort()
    linking = np.zeros(names, dtype=np.int64)
    for start in range(0, len(keys), KEY_STEP):
        part = keys[start:start + KEY_STEP]
        new = np.empty(len(part), dtype=bool)
        new[0] = start == 0 or part[0] != keys[start - 1]
        np.not_equal(part[1:], part[:-1], out=new[1:])
        linking += np.bincount(part[new] // width, minlength=names)
    return linking


class _PageNames(Sequence[Counter[tuple[str, ...]]]):
    """Each page's name counts as int32 columns by page (CSR): a page's ``Counter`` (names in the order
    first seen) is made when the page is read. A Counter a page cost ~2.3 KB at 30,000 pages; the
    columns cost 8 bytes a (page, name)."""

    def __init__(self, names: Sequence[tuple[str, ...]], ids: np.ndarray, counts: np.ndarray,
                 indptr: np.ndarray) -> None:
        """``ids``, ``counts``: each page's names (numbers in ``names``) and their counts, in the order
        first found, page after page; ``indptr``: where each page's start (and, last, where they end)."""
        self.names = list(names)
        self.ids, self.counts, self.indptr = ids, counts, indptr

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def __getitem__(self, i: int) -> Counter[tuple[str, ...]]:  # type: ignore[override]
        lo, hi = self.indptr[i], self.indptr[i + 1]
        return Counter(dict(zip(map(self.names.__getitem__, self.ids[lo:hi].tolist()),
                                self.counts[lo:hi].tolist(), strict=True)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def pages_mentioning(self) -> Counter[tuple[str, ...]]:
        """Name → how many pages mention it."""
        pages = np.bincount(self.ids, minlength=len(self.names)) if len(self.names) else np.zeros(0, np.int64)
        return Counter({self.names[i]: int(n) for i, n in enumerate(pages.tolist()) if n})


def scan_page_names(names: Sequence[tuple[str, ...]], texts: Iterable[str]) -> _PageNames:
    """Every occurrence of every name (tuples of ``tokeniser.terms``) in each text's terms, overlapping ones
    too, counted a page at a time in the order first found: a name ending at an earlier token first,
    of those ending at the same token the longer first. Texts are read a batch at a time, their
    tokens made ids and the names found by ``PhraseMatcher``, then grouped by page in NumPy."""
    matcher = PhraseMatcher(names, names)
    vocabulary = Vocabulary()
    width = max(1, len(names))
    ids: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    iterator = iter(texts)
    while batch := list(itertools.islice(iterator, NAME_SCAN_TEXTS)):
        text, found, lengths = scan_texts([folded(text) for text in batch])  # ``terms``' words
        words = vocabulary.ids_of(text, found)
        groups = np.repeat(np.arange(len(batch), dtype=np.int64), lengths)
        starts, numbers, spans = matcher.find(matcher.word_ids(words, vocabulary), groups)
        order = np.lexsort((-spans, starts + spans))  # by the token they end at, then the longer first
        kept, _, found_counts = first_seen(groups[starts[order]] * width + numbers[order])  # (page, name)
        ids.append((kept % width).astype(np.int32))
        counts.append(found_counts.astype(np.int32))
        sizes.append(np.bincount(kept // width, minlength=len(batch)))
    if not ids:
        return _PageNames(names, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(1, np.int64))
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(sizes))]).astype(np.int64)
    return _PageNames(names, np.concatenate(ids), np.concatenate(counts), indptr)


class _FilteredNames(Sequence[Counter[tuple[str, ...]]]):
    """Per page, a site index's name counts kept to the names of a smaller index (a fold's), made
    when a page is asked for: filtering every page up front costs a pass over the whole site."""

    def __init__(self, counts: Sequence[Counter[tuple[str, ...]]], names: dict[tuple[str, ...], list[_Name]]):
        self._counts, self._names = counts, names

    def __len__(self) -> int:
        return len(self._counts)

    def __getitem__(self, i: int) -> Counter[tuple[str, ...]]:  # type: ignore[override]
        names = self._names
        return Counter({w: n for w, n in self._counts[i].items() if w in names})


def _add_anchor_names(by_words: dict[tuple[str, ...], list[_Name]], counts: _AnchorCounts) -> None:
    """The links' names (a ``defaultdict(list)``): commonness = share of the name's uses that point
    to this target."""
    for words, target, n, spelling in counts.pairs:
        by_words[words].append(_Name(target, spelling, "anchor", n / counts.uses[words]))


def _add_page_names(by_words: dict[tuple[str, ...], list[_Name]],
                    owners: Mapping[tuple[str, ...], list[tuple[int, str, str]]]) -> None:
    """The pages' own names (h1, cleaned title: ``owners``) after the links' names; commonness shared
    among the pages with the same name, none for a page the links name that way already."""
    for words, pages in owners.items():
        names = by_words.setdefault(words, [])
        for row, phrase, kind in pages:
            if not any(n.target == row for n in names):
                names.append(_Name(row, phrase, kind, 1.0 / len(pages)))


class _WithoutNames(Sequence[Counter[tuple[str, ...]]]):
    """Per page, a site index's name counts without some names (those a fold's hidden links gave
    alone), made when a page is asked for."""

    def __init__(self, counts: Sequence[Counter[tuple[str, ...]]], gone: frozenset[tuple[str, ...]]):
        self._counts, self._gone = counts, gone

    def __len__(self) -> int:
        return len(self._counts)

    def __getitem__(self, i: int) -> Counter[tuple[str, ...]]:  # type: ignore[override]
        counts = self._counts[i]
        if self._gone.isdisjoint(counts):
            return counts
        return Counter({w: n for w, n in counts.items() if w not in self._gone})


class NameIndex:
    """Names pages are known by, and where page texts mention them.

    ``names`` are (target row, phrase, kind) triples; anchor names come from the
    links that are already on the site (``anchor_uses``: (source row, target row,
    anchor text) of in-content links, or the same as columns).
    """

    def __init__(
        self,
        titles: Sequence[tuple[str, str]],
        anchor_uses: Iterable[tuple[int, int, str]] | AnchorUses,
        texts: Sequence[str],
        base: NameIndex | None = None,
    ) -> None:
        """``base``: an index of the same texts (the site's, when this is a confidence fold's): when
        its names include all of these, its counts are filtered instead of scanning the texts again."""
        self.by_words: Mapping[tuple[str, ...], list[_Name]] = defaultdict(list)
        # Anchor names: commonness = share of the anchor's uses that point to this target.
        self._naming = _anchor_naming(anchor_uses) if isinstance(anchor_uses, AnchorUses) else None
        counts = (_count_anchor_columns(anchor_uses, self._naming) if isinstance(anchor_uses, AnchorUses)
                  else _count_anchor_uses(anchor_uses))
        _add_anchor_names(self.by_words, counts)
        # Page names: h1 and cleaned title; commonness shared among pages with the same name.
        owners: dict[tuple[str, ...], list[tuple[int, str, str]]] = defaultdict(list)
        same = {words: words for words in counts.uses}  # a page name the links give too: their tuple
        for row, (h1, title) in enumerate(titles):
            seen: set[tuple[str, ...]] = set()
            for kind, phrase in (("h1", h1), ("title", title)):
                words = name_words(phrase or "")
                if _is_generic(words) or len(words) > MAX_NAME_TOKENS or words in seen:
                    continue
                seen.add(words)
                owners[same.get(words, words)].append((row, spaced(phrase), kind))
        del same
        _add_page_names(self.by_words, owners)
        # The page names of words links also name (a fold that hides links names them again).
        self._owners = {words: pages for words, pages in owners.items() if words in counts.uses}
        # Keyphraseness: share of the pages mentioning a name that link it.
        if base is not None and all(words in base.by_words for words in self.by_words):
            # Every occurrence of every name is counted (overlapping ones too), so a page's counts
            # of fewer names are its counts of more names, filtered (in the same first-seen order),
            # and the pages mentioning each name are the base's.
            self.page_names: Sequence[Counter[tuple[str, ...]]] = _FilteredNames(base.page_names,
                                                                                 self.by_words)
            self.mentioned = base.mentioned
        else:
            names = scan_page_names(list(self.by_words), texts)
            self.page_names = names
            self.mentioned = names.pages_mentioning()
        self.keyphraseness: Mapping[tuple[str, ...], float] = {
            words: self._keyphraseness(words, counts) for words in self.by_words}

    def _keyphraseness(self, words: tuple[str, ...], counts: _AnchorCounts) -> float:
        """The share of the pages mentioning a name that link it (``counts``: the links' counts)."""
        return min(1.0, (counts.sources.get(words, 0) + 1) / (self.mentioned.get(words, 0) + 1))

    @property
    def hides_links(self) -> bool:
        """Whether ``without_links`` can make this index less some links (it was made from columns)."""
        return self._naming is not None

    def without_links(self, uses: AnchorUses, hidden: np.ndarray) -> NameIndex:
        """This index for the links it was made from (``uses``) less the ``hidden`` ones (a mask over
        them; a confidence fold's): only the names those links give are counted again, every other
        name is this index's, as a full rebuild would make it. Needs an index made from columns."""
        if self._naming is None:
            raise ValueError("only an index made from link columns can hide links")
        words_of, name_of_text = self._naming
        name = name_of_text[uses.anchor] if len(uses.anchor) else np.zeros(0, dtype=np.int32)
        touched = distinct(name[hidden & (name >= 0) & (uses.source != uses.target)])
        is_touched = np.zeros(len(words_of) + 1, dtype=bool)  # the last: no name (-1)
        is_touched[touched] = True
        kept = is_touched[name] & ~hidden
        counts = _count_anchor_columns(
            AnchorUses(uses.source[kept], uses.target[kept], uses.anchor[kept], uses.texts), self._naming)
        names: dict[tuple[str, ...], list[_Name]] = defaultdict(list)
        _add_anchor_names(names, counts)
        changed = [words_of[k] for k in touched.tolist()]
        _add_page_names(names, {words: self._owners[words] for words in changed if words in self._owners})
        fold = copy.copy(self)
        fold.by_words = Changed(self.by_words, {words: names.get(words) for words in changed})
        fold.keyphraseness = Changed(self.keyphraseness, {
            words: self._keyphraseness(words, counts) if words in names else None for words in changed})
        gone = frozenset(words for words in changed if words not in names)
        fold.page_names = _WithoutNames(self.page_names, gone) if gone else self.page_names
        return fold

    def mentions(self, source: int) -> dict[int, Mention]:
        """Targets named in page ``source``'s text, with their best name."""
        best: dict[int, Mention] = {}
        for words in self.page_names[source]:
            for name in self.by_words[words]:
                if name.target == source:
                    continue
                weight = name.commonness * math.sqrt(self.keyphraseness[words])
                current = best.get(name.target)
                if current is None or weight > current.weight:
                    best[name.target] = Mention(name.phrase, weight, name.kind)
        return best

    def mention_weights(self, sources: Sequence[int]) -> list[dict[int, float]] | None:
        """For each of ``sources``, what ``mentions`` gives as target → weight (the same targets in the
        same order, the same weights), made for all of them in NumPy; None where this index's page
        names are not its own scan's columns (a confidence fold's: ``mentions`` one at a time)."""
        names = self.page_names
        if not isinstance(names, _PageNames) or not isinstance(self.by_words, dict):
            return None
        table = self.__dict__.get("_weight_table")
        if table is None:
            table = self._weight_table = _NameWeights(self, names.names)
        return table.of(names, np.asarray(sources, dtype=np.int64))

    def names_of(self, target: int) -> list[Mention]:
        """Every name of page ``target``, best first (for choosing an anchor)."""
        out = [
            Mention(name.phrase, name.commonness * math.sqrt(self.keyphraseness[words]), name.kind)
            for words, names in self.by_words.items()
            for name in names
            if name.target == target
        ]
        return sorted(out, key=lambda m: -m.weight)


class _NameWeights:
    """Every name of an index as columns, by the names' words in the order its page names number them
    (``indptr``): each name's target and weight (commonness × √keyphraseness, as ``mentions`` makes it)."""

    def __init__(self, index: NameIndex, words: Sequence[tuple[str, ...]]) -> None:
        sizes, targets, weights = [], [], []
        for key in words:
            named = index.by_words.get(key, ())
            root = math.sqrt(index.keyphraseness[key]) if named else 0.0
            sizes.append(len(named))
            targets += [name.target for name in named]
            weights += [name.commonness * root for name in named]
        self.indptr = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
        self.targets = np.array(targets, dtype=np.int64)
        self.weights = np.array(weights, dtype=np.float64)

    def of(self, names: _PageNames, sources: np.ndarray) -> list[dict[int, float]]:
        """Each source's named targets (not itself) → the best weight, the targets in the order the
        source first names them; of equal weights the first found counts (``mentions``)."""
        lo, hi = names.indptr[sources], names.indptr[sources + 1]
        found = names.ids[ranges(lo, hi)].astype(np.int64)  # the sources' names, source after source
        source_of = np.repeat(np.arange(len(sources), dtype=np.int64), hi - lo)
        first, last = self.indptr[found], self.indptr[found + 1]
        each = ranges(first, last)  # each name of those words, in order
        source_of = np.repeat(source_of, last - first)
        targets, weights = self.targets[each], self.weights[each]
        other = targets != sources[source_of]
        source_of, targets, weights = source_of[other], targets[other], weights[other]
        width = int(targets.max()) + 1 if len(targets) else 1
        key = source_of * width + targets
        order = np.lexsort((-weights, key))  # stable: of equal weights, the first found first
        ordered = key[order]
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(key) else key
        best = weights[order[starts]]
        firsts = np.minimum.reduceat(order, starts) if len(key) else key  # where each target is first named
        seen = np.argsort(firsts, kind="stable")  # source after source, each in first-named order
        pair_source, pair_target = np.divmod(ordered[starts][seen], width)
        ends = np.searchsorted(pair_source, np.arange(1, len(sources) + 1))
        out, at = [], 0
        pair_target, best = pair_target.tolist(), best[seen].tolist()
        for end in ends.tolist():
            out.append(dict(zip(pair_target[at:end], best[at:end], strict=True)))
            at = end
        return out


class SiteEvidence:
    """Everything the ranking knows about a site beyond page vectors, built once per run.

    ``urls`` are the pages in vector order (the embedded pages); ``titles`` their
    (h1, clean title); ``documents`` their indexed text; ``anchor_uses`` the
    in-content links already on the site as (source row, target row, anchor text);
    ``neighbours`` how many lexical neighbours each source contributes as candidates.
    """

    def __init__(self, urls: Sequence[str], titles: Sequence[tuple[str, str]], documents: Sequence[str],
                 texts: Sequence[str], anchor_uses: Iterable[tuple[int, int, str]], neighbours: int,
                 workers: int = 1, lexical_job: Background | None = None) -> None:
        """``workers`` above 1 (and a site worth a fork): the TF-IDF index and its neighbours are made
        in a second process while this one indexes the names and goes on (``ready`` waits for them;
        they are also waited for when first read). ``lexical_job``: that process, started earlier for
        these ``documents`` (``lexical_job``, the function)."""
        self.urls = list(urls)
        self.row = {url: i for i, url in enumerate(self.urls)}
        self._lexical_job: Background | None = (lexical_job if lexical_job is not None
                                                else start_lexical_job(documents, neighbours, workers))
        # the pages' own strings, not copies (or the loader's texts, read when scanned: ``PageValues``)
        self._titles, self._texts = titles, texts if isinstance(texts, Sequence) else list(texts)
        self.names = NameIndex(titles, anchor_uses, self._texts)
        give_back()  # what the names' scan freed (100k pages, alone: 0.31 GB held after it, 0.17 handed back)
        self._mentions: dict[int, dict[int, Mention]] = {}
        self._weights: dict[int, dict[int, float]] = {}  # a block's mention weights (``look_ahead``)

    def ready(self) -> SiteEvidence:
        """Wait for the TF-IDF index if a second process is making it. Call it before forking another
        process that reads it: a child must not wait on its parent's child."""
        job = self.__dict__.get("_lexical_job")
        if job is not None:
            lexical, rows, sims = job.result()
            # read by the ranking to its end, never written: mapped from files, not this process's memory
            self.lexical, self.lexical_rows, self.lexical_sims = lexical.mapped(), mapped(rows), mapped(sims)
            del lexical, rows, sims
            self._lexical_job = None
        return self

    def wait(self) -> SiteEvidence:
        """Wait until the process making the TF-IDF index has left, its index not read yet
        (``ready`` reads it)."""
        job = self.__dict__.get("_lexical_job")
        if job is not None:
            job.wait()
        return self

    def __getattr__(self, name: str) -> object:  # only for attributes not set yet
        if name in ("lexical", "lexical_rows", "lexical_sims") and self.__dict__.get("_lexical_job"):
            return getattr(self.ready(), name)
        raise AttributeError(name)

    def with_anchor_uses(self, anchor_uses: Iterable[tuple[int, int, str]]) -> SiteEvidence:
        """The same pages with other links (confidence folds, evaluation): the TF-IDF index and
        its neighbours depend on the pages alone and are kept; the names are made again."""
        return self.with_names(NameIndex(self._titles, anchor_uses, self._texts, base=self.names))

    def with_names(self, names: NameIndex) -> SiteEvidence:
        """The same pages with other names (an index of other links)."""
        evidence = copy.copy(self.ready())
        evidence.names = names
        evidence._mentions, evidence._weights = {}, {}
        return evidence

    def mentions(self, source: int) -> dict[int, Mention]:
        """Targets named in the source's text (the last source's are kept: the ranking asks for one
        source's pairs at a time, and a cache of every source's would hold them all)."""
        found = self._mentions.get(source)
        if found is None:
            self._mentions = {source: self.names.mentions(source)}
            found = self._mentions[source]
        return found

    def look_ahead(self, sources: Sequence[int]) -> None:
        """Make the mention weights of ``sources`` (a block the ranking is about to read) at once,
        where the names allow (``NameIndex.mention_weights``); those of the block before are let go."""
        weights = self.names.mention_weights(sources)
        self._weights = dict(zip(sources, weights, strict=True)) if weights is not None else {}

    def mention_weights(self, source: int) -> dict[int, float]:
        """The targets the source's text names → the weight of its best name of each (``mentions``)."""
        weights = self._weights.get(source)
        if weights is None:
            weights = {target: mention.weight for target, mention in self.mentions(source).items()}
        return weights

    def candidates(self, source: int) -> list[int]:
        """Rows the lexical evidence proposes for ``source``: TF-IDF neighbours, then named pages."""
        rows = [r for r in self.lexical_rows[source].tolist() if r >= 0]
        seen = set(rows)
        rows += [t for t in self.mention_weights(source) if t not in seen]
        return rows
