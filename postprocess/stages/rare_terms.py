"""Each page's candidate neighbours by the rare words it shares with them.

Above the exact limit the lexical neighbours come from a reduced TF-IDF (a 128-dimension truncated
SVD in an Annoy index, ``LexicalIndex.approximate_neighbours``). A large site has more topics than
128 dimensions keep apart: on the synthetic million pages (10,000 topics, each with its own words)
the reduction's candidates held a fifth of the exact 50 nearest. Pages that share a rare word are
found exactly by that word's list of pages: each page's highest-weighted terms among those on at
most ``most`` pages are multiplied with those terms' pages (a sparse product, a block of pages at
a time), and the pages with the largest part of the cosine they make are the candidates — at most
``terms`` × ``most`` products a page, however large the site (docs/benchmarks.md).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

#: A term on more pages than this does not pick candidates (it is still in the exact cosine).
RARE_TERM_PAGES = 2_000
#: A page's highest-weighted rare terms that pick its candidates.
RARE_TERMS = 10
#: Pages multiplied together: bounds the product's memory (≤ terms × most entries a page).
RARE_BLOCK_ROWS = 256


def best_in_row(product: sparse.csr_matrix, offset: int, page: int, count: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Row ``offset`` of a product of pages' rows with every page: its columns (pages) other than
    ``page`` (the row's own) and their values, only the ``count`` largest where it has more (in no
    order)."""
    lo, hi = product.indptr[offset], product.indptr[offset + 1]
    columns, values = product.indices[lo:hi], product.data[lo:hi]
    keep = columns != page
    columns, values = columns[keep], values[keep]
    if len(columns) > count:
        top = np.argpartition(-values, count - 1)[:count]
        columns, values = columns[top], values[top]
    return columns, values


class RareTerms:
    """The TF-IDF rows' rare terms, by term, for ``candidates``."""

    def __init__(self, matrix: sparse.csr_matrix, most: int = RARE_TERM_PAGES,
                 terms: int = RARE_TERMS) -> None:
        self.matrix = matrix
        self.terms = terms
        rare = np.bincount(matrix.indices, minlength=matrix.shape[1]) <= most
        #: a rare term's column among the rare ones (-1: not rare)
        self.column = np.where(rare, np.cumsum(rare) - 1, -1).astype(np.int32)
        self.pages_of = matrix[:, np.flatnonzero(rare)].T.tocsr()  # rare term → its pages' weights

    def candidates(self, pages: range, count: int) -> list[np.ndarray]:
        """For each of ``pages`` (rows), up to ``count`` other rows with the largest part of its
        cosine that its ``terms`` highest-weighted rare terms make (int64, in no order)."""
        found: list[np.ndarray] = []
        for start in range(pages.start, pages.stop, RARE_BLOCK_ROWS):
            stop = min(pages.stop, start + RARE_BLOCK_ROWS)
            product = self._query(start, stop) @ self.pages_of
            product = sparse.csr_matrix(product)
            found.extend(best_in_row(product, offset, start + offset, count)[0].astype(np.int64)
                         for offset in range(stop - start))
        return found

    def _query(self, start: int, stop: int) -> sparse.csr_matrix:
        """Rows ``start:stop`` of the matrix on their ``terms`` highest-weighted rare terms only
        (equal weights: the lower column first), in the rare terms' columns."""
        matrix = self.matrix
        lo, hi = matrix.indptr[start], matrix.indptr[stop]
        row = np.repeat(np.arange(stop - start), np.diff(matrix.indptr[start:stop + 1]))
        column = self.column[matrix.indices[lo:hi]]
        weight = matrix.data[lo:hi]
        rare = column >= 0
        row, column, weight = row[rare], column[rare], weight[rare]
        order = np.lexsort((column, -weight, row))
        row, column, weight = row[order], column[order], weight[order]
        take = np.arange(len(row)) - np.searchsorted(row, row) < self.terms
        indptr = np.concatenate(([0], np.cumsum(np.bincount(row[take], minlength=stop - start))))
        return sparse.csr_matrix((weight[take], column[take], indptr),
                                 shape=(stop - start, self.pages_of.shape[0]))
