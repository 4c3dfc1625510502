"""Annoy index (angular) over page vectors, saved with its id → URL map; neighbour queries.

Candidates come from here: each page asks for its nearest neighbours, so the work
grows with pages × neighbours, never pages² (nothing builds an n×n matrix).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from annoy import AnnoyIndex

from postprocess.errors import InputError
from postprocess.stages.output import replace_atomically

if TYPE_CHECKING:
    from postprocess.stages.neighbour_table import NeighbourTable

INDEX_FILE = "index.ann"
IDS_FILE = "index-ids.parquet"


@dataclass
class PageIndex:
    """An Annoy index whose item i is the page ``urls[i]``."""

    annoy: AnnoyIndex
    urls: list[str]
    dimension: int
    on_disk: Path | None = None  # the file it was built into (``on_disk_build``), if any
    table: NeighbourTable | None = None  # every page's answer, asked once (``neighbour_table``), if made

    def ready(self) -> None:
        """Wait for the neighbour table, if one is being made (before a fork: see ``NeighbourTable``)."""
        if self.table is not None:
            self.table.ready()

    def neighbour_columns(self, item: int, count: int, search_k: int = -1) -> tuple[np.ndarray, np.ndarray]:
        """The ``count`` nearest other pages of ``item``, best first, as two columns: the items (int64)
        and their cosine similarities (float64). From the neighbour table when it holds this query's
        answers, else from the index."""
        if self.table is not None and self.table.fits(count, search_k):
            rows, cosines = self.table.answer(item)
        else:
            ids, distances = self.annoy.get_nns_by_item(item, count + 1, search_k=search_k,
                                                        include_distances=True)
            rows, cosines = np.array(ids, dtype=np.int64), np.array(distances, dtype=np.float64)
        other = rows != item
        cosines = 1.0 - cosines * cosines / 2.0  # Annoy's angular distance: sqrt(2 − 2·cos), unit vectors
        return rows[other][:count], cosines[other][:count]


def build_index(urls: list[str], vectors: np.ndarray, trees: int, seed: int = 42,
                path: Path | None = None) -> PageIndex:
    """Build the angular index (the seed makes two runs on the same vectors identical).

    With ``path`` the index is built on disk (Annoy's ``on_disk_build``: its memory is the
    page cache, not the heap) under a temporary name and renamed to ``path`` when complete.
    """
    if trees < 1:
        raise InputError(f"--trees must be at least 1, not {trees}")
    dim = int(vectors.shape[1])
    annoy = AnnoyIndex(dim, "angular")
    annoy.set_seed(seed)
    tmp = None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".tmp-{path.name}")
        tmp.unlink(missing_ok=True)
        annoy.on_disk_build(str(tmp))
    for i, vec in enumerate(vectors):
        annoy.add_item(i, vec)
    annoy.build(trees, n_jobs=1)
    if tmp is not None and path is not None:
        os.replace(tmp, path)
    return PageIndex(annoy=annoy, urls=list(urls), dimension=dim, on_disk=path)


def save_index(index: PageIndex, out: Path) -> None:
    """Write index.ann and index-ids.parquet (id, url), each under a temporary name first."""
    out.mkdir(parents=True, exist_ok=True)
    if index.on_disk != out / INDEX_FILE:  # built in memory (or elsewhere): write it
        replace_atomically(out / INDEX_FILE, lambda tmp: index.annoy.save(str(tmp)))
    ids = pa.table({"id": pa.array(range(len(index.urls)), pa.int64()),
                    "url": pa.array(index.urls, pa.string())})
    ids = ids.replace_schema_metadata({"dimension": str(index.dimension)})
    replace_atomically(out / IDS_FILE, lambda tmp: pq.write_table(ids, tmp))


def load_index(out: Path) -> PageIndex:
    """Load what ``save_index`` wrote; InputError when the index stage has not run."""
    if not (out / INDEX_FILE).is_file() or not (out / IDS_FILE).is_file():
        raise InputError(f"no index in {out}: run the index stage first (python -m postprocess index)")
    ids = pq.read_table(out / IDS_FILE)
    dim = int((ids.schema.metadata or {}).get(b"dimension", b"0"))
    if dim < 1:
        raise InputError(f"{out / IDS_FILE} does not say the index's dimension: run the index stage again")
    annoy = AnnoyIndex(dim, "angular")
    try:
        annoy.load(str(out / INDEX_FILE))
    except OSError as exc:
        raise InputError(f"{out / INDEX_FILE} is not an index of {dim}-dimension vectors "
                         f"({str(exc).split('.')[0]}): run the index stage again") from exc
    urls = [u for _, u in sorted(zip(ids["id"].to_pylist(), ids["url"].to_pylist(), strict=True))]
    if annoy.get_n_items() != len(urls):
        raise InputError(f"{out / INDEX_FILE} holds {annoy.get_n_items()} pages but {IDS_FILE} lists "
                         f"{len(urls)}: run the index stage again")
    return PageIndex(annoy=annoy, urls=urls, dimension=dim)


def check_matches(index: PageIndex, vectors: np.ndarray, where: Path) -> None:
    """One-line InputError when the index was built from other vectors (dimension, page count)."""
    if vectors.ndim != 2 or vectors.shape[1] != index.dimension or vectors.shape[0] != len(index.urls):
        raise InputError(f"the index in {where} ({len(index.urls)} pages, {index.dimension} dimensions) "
                         f"does not match vectors.parquet ({vectors.shape[0]} pages, "
                         f"{vectors.shape[1] if vectors.ndim == 2 else '?'} dimensions): "
                         "run the index stage again")
