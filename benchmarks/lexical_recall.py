"""Recall of the approximate TF-IDF neighbours against the exact ones, on a seeded sample of pages.

The site's ``LexicalIndex`` is built; the exact 50 nearest of each sampled page come from a sparse
product with every row; then each way of finding candidates is measured on the sample: recall@50
and @10 of the 50 kept after the exact re-scoring, their summed cosine as a share of the exact
neighbours', and CPU ms a page for the query and re-scoring::

    python3 benchmarks/lexical_recall.py --crawl CRAWL --sample 500 \\
        --svd 128:100000 --svd 128:1000000 --widen 4,2 --search-k 1,4,16 --inverted 10:1000 \\
        --rare 10:2000:100 --rare 0:2000:100 --budget 100000:100 --union

``--svd DIMS:FIT_ROWS``: the reduction as ``LexicalIndex.approximate_neighbours`` builds it (fitted
on a seeded FIT_ROWS of the rows when the site has more), with an Annoy index of 20 trees; each
``--widen`` (re-scored candidates = widen × 50) and ``--search-k`` (× Annoy's default, trees ×
candidates) is measured on it. ``--inverted T:D``: a page's T highest-weighted terms among those on
at most D pages, every page holding one of them re-scored. ``--rare T:D:C``: the C best candidates
of ``RareTerms`` (a page's T highest-weighted terms on at most D pages; T 0: all of them), as the
run finds them, one sampled page at a time (the cost of a step of consecutive pages, as the run
queries them, is printed too). ``--budget P:C``: the C best by a page's rarest terms, as many as
fit in P postings. ``--union``: also each of those with each SVD way's candidates, re-scored
together (the run's ``approximate_neighbours`` is the SVD's at widen 4 with ``--rare 10:2000:100``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from postprocess.stages.lexical import (  # noqa: E402
    REDUCE_BLOCK_ROWS,
    LexicalIndex,
    PageDocuments,
    _add_rows,
    _build_on_disk,
)
from postprocess.stages.load import load_crawl  # noqa: E402
from postprocess.stages.rare_terms import RareTerms, best_in_row  # noqa: E402

K = 50
TREES = 20


def exact_neighbours(index: LexicalIndex, sample: np.ndarray) -> dict[int, np.ndarray]:
    """Each sampled page's exact K nearest (positive cosine), most similar first, then the lower row."""
    matrix = index.matrix
    columns = matrix.T.tocsc()
    found = {}
    for start in range(0, len(sample), 100):
        rows = sample[start:start + 100]
        product = (matrix[rows] @ columns).toarray()
        for r, i in enumerate(rows.tolist()):
            cosines = product[r]
            cosines[i] = -1.0
            top = np.lexsort((np.arange(len(cosines)), -cosines))[:K]
            found[i] = np.array([(j, cosines[j]) for j in top.tolist() if cosines[j] > 0]).reshape(-1, 2)
    return found


def kept(index: LexicalIndex, i: int, candidates: np.ndarray) -> tuple[list[int], np.ndarray]:
    """The K best of ``candidates`` by exact cosine (as ``LexicalIndex._nearest`` keeps them)."""
    cosines = index.similarities(i, candidates)
    candidates, cosines = candidates[cosines > 0], cosines[cosines > 0]
    best = np.lexsort((candidates, -cosines))[:K]
    return candidates[best].tolist(), cosines[best]


def report(label: str, exact: dict[int, np.ndarray], got: dict[int, tuple[list[int], np.ndarray]],
           seconds: float) -> None:
    def recall(top: int) -> float:
        return float(np.mean([len(set(got[i][0][:top]) & set(e[:top, 0].astype(int).tolist()))
                              / max(1, min(top, len(e))) for i, e in exact.items()]))

    def summed(top: int) -> float:
        return float(np.mean([got[i][1][:top].sum() / e[:top, 1].sum() for i, e in exact.items() if len(e)]))

    print(f"{label}: {1000 * seconds / len(exact):.3f} ms a page; recall@50 {recall(50):.4f} "
          f"@10 {recall(10):.4f}; summed cosine @50 {summed(50):.1%} @10 {summed(10):.1%}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crawl", required=True)
    parser.add_argument("--sample", type=int, default=1000)
    parser.add_argument("--svd", action="append", default=[], help="DIMS:FIT_ROWS")
    parser.add_argument("--widen", default="4")
    parser.add_argument("--search-k", default="1")
    parser.add_argument("--inverted", action="append", default=[], help="TERMS:MAX_PAGES")
    parser.add_argument("--rare", action="append", default=[],
                        help="TERMS:MAX_PAGES:CANDIDATES (TERMS 0: all)")
    parser.add_argument("--budget", action="append", default=[], help="POSTINGS:CANDIDATES")
    parser.add_argument("--union", action="store_true",
                        help="also each SVD way's candidates with each other way's")
    args = parser.parse_args()
    from annoy import AnnoyIndex
    from sklearn.decomposition import TruncatedSVD

    index = LexicalIndex(PageDocuments(load_crawl(args.crawl).pages))
    n = len(index)
    sample = np.sort(np.random.default_rng(7).choice(n, min(n, args.sample), replace=False))
    exact = exact_neighbours(index, sample)
    svd_found: dict[str, tuple[dict[int, np.ndarray], float]] = {}
    for spec in args.svd:
        dims, fit_rows = map(int, spec.split(":"))
        svd = TruncatedSVD(dims, random_state=0)
        annoy = AnnoyIndex(dims, "angular")
        annoy.set_seed(0)
        _build_on_disk(annoy)
        if n <= fit_rows:
            _add_rows(annoy, [svd.fit_transform(index.matrix).astype(np.float32)])
        else:
            svd.fit(index.matrix[np.sort(np.random.default_rng(0).choice(n, fit_rows, replace=False))])
            _add_rows(annoy, (svd.transform(index.matrix[s:s + REDUCE_BLOCK_ROWS]).astype(np.float32)
                              for s in range(0, n, REDUCE_BLOCK_ROWS)))
        annoy.build(TREES, n_jobs=1)
        for widen in map(int, args.widen.split(",")):
            for times in map(float, args.search_k.split(",")):
                count = widen * K + 1
                started = time.process_time()
                candidates = {i: np.array([j for j in annoy.get_nns_by_item(
                    i, count, search_k=int(TREES * count * times)) if j != i], dtype=np.int64)
                    for i in sample.tolist()}
                got = {i: kept(index, i, found) for i, found in candidates.items()}
                label = (f"SVD {dims} dimensions fitted on {min(n, fit_rows)} rows, widen {widen}, "
                         f"search_k x{times:g}")
                svd_found[label] = candidates, time.process_time() - started
                report(label, exact, got, svd_found[label][1])
    if args.inverted:
        by_term = index.matrix.tocsc()
        pages_of = np.diff(by_term.indptr)
        for spec in args.inverted:
            terms, most = map(int, spec.split(":"))
            started = time.process_time()
            got = {}
            for i in sample.tolist():
                lo, hi = index.matrix.indptr[i], index.matrix.indptr[i + 1]
                columns, weights = index.matrix.indices[lo:hi], index.matrix.data[lo:hi]
                rare = pages_of[columns] <= most
                chosen = columns[rare][np.argsort(-weights[rare], kind="stable")[:terms]].tolist()
                candidates = np.unique(np.concatenate(
                    [by_term.indices[by_term.indptr[c]:by_term.indptr[c + 1]] for c in chosen] or [[]]))
                got[i] = kept(index, i, candidates[candidates != i].astype(np.int64))
            report(f"inverted index, {terms} terms on at most {most} pages", exact, got,
                   time.process_time() - started)
    def compare(label: str, candidates: dict[int, np.ndarray], started: float) -> None:
        got = {i: kept(index, i, found) for i, found in candidates.items()}
        seconds = time.process_time() - started
        report(label, exact, got, seconds)
        if args.union:
            for other, (found_there, other_seconds) in svd_found.items():
                started = time.process_time()
                got = {i: kept(index, i, np.union1d(found, found_there[i]))
                       for i, found in candidates.items()}
                report(f"{label} + {other}", exact, got,
                       seconds + other_seconds + time.process_time() - started)

    for spec in args.rare:
        terms, most, count = map(int, spec.split(":"))
        started = time.process_time()
        rare = RareTerms(index.matrix, most=most, terms=terms or index.matrix.shape[1])
        print(f"terms on at most {most} pages: {rare.pages_of.nnz:,} of {index.matrix.nnz:,} entries, "
              f"by term in {time.process_time() - started:.1f} CPU s", flush=True)
        started = time.process_time()
        step = range(0, min(n, 2048))  # as the run takes them: a step of consecutive pages
        rare.candidates(step, count)
        seconds = time.process_time() - started
        print(f"  candidates of pages 0-{len(step) - 1}: {1000 * seconds / len(step):.3f} CPU ms a page",
              flush=True)
        started = time.process_time()
        candidates = {int(i): rare.candidates(range(i, i + 1), count)[0] for i in sample.tolist()}
        compare(f"rare terms: {terms or 'all'} on at most {most} pages, best {count}", candidates, started)
    if args.budget:
        started = time.process_time()
        by_term = index.matrix.T.tocsr()
        print(f"by term in {time.process_time() - started:.1f} CPU s", flush=True)
    for spec in args.budget:
        postings, count = map(int, spec.split(":"))
        started = time.process_time()
        candidates = budget_candidates(index.matrix, by_term, sample, postings, count)
        compare(f"rarest terms to {postings} postings, best {count}", candidates, started)


def budget_candidates(matrix: object, by_term: object, sample: np.ndarray, postings: int, count: int
                      ) -> dict[int, np.ndarray]:
    """Each sampled page's ``count`` best pages by the part of the cosine its rarest terms make, as
    many as fit in ``postings`` (the pages they are on, summed; at least one term)."""
    from scipy import sparse

    pages_of = np.diff(by_term.indptr)
    found = {}
    for start in range(0, len(sample), 100):
        rows = sample[start:start + 100]
        indptr, indices, data = [0], [], []
        for i in rows.tolist():
            lo, hi = matrix.indptr[i], matrix.indptr[i + 1]
            columns = matrix.indices[lo:hi]
            order = np.argsort(pages_of[columns], kind="stable")
            take = max(1, int(np.searchsorted(np.cumsum(pages_of[columns][order]), postings, side="right")))
            indices.append(columns[order[:take]])
            data.append(matrix.data[lo:hi][order[:take]])
            indptr.append(indptr[-1] + len(indices[-1]))
        query = sparse.csr_matrix((np.concatenate(data), np.concatenate(indices), np.array(indptr)),
                                  shape=(len(rows), matrix.shape[1]))
        product = sparse.csr_matrix(query @ by_term)
        for r, i in enumerate(rows.tolist()):
            found[i] = best_in_row(product, r, i, count)[0].astype(np.int64)
    return found


if __name__ == "__main__":
    main()
