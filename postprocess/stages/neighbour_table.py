"""Every page's nearest pages, asked of the page index once, in a fresh process beside the run's
other work, and kept in a file that the ranking reads (``NeighbourTable``).

Each Annoy query walks its trees across most of the index file: a block of 2,048 sources read
~1.6 GB of a million pages' index into the ranking process's resident set, beside its own ~5 GB
(docs/benchmarks.md). Asked once, by a process that holds nothing else, the answers take 8 bytes
a neighbour (an int32 item, Annoy's float32 distance) in an unlinked temporary file (``TMPDIR``),
and the ranking reads a source's row of it, not the index. They are Annoy's answers as they came,
so every ranking that reads them ranks as one that asks the index.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from typing import IO

import numpy as np
from annoy import AnnoyIndex

from postprocess.background import Background
from postprocess.stages.spill import write_at

#: Sites with fewer pages than this ask the index as they rank: the table's process and file would
#: cost more than the index's pages they keep out of the ranking.
MIN_PAGES = 2000
#: Pages whose answers the table's process writes at once (~1.6 MB with 50 neighbours).
WRITE_BLOCK = 4096


class NeighbourTable:
    """The answers of ``get_nns_by_item(item, width, search_k)`` for every item of an index of
    ``pages`` items: ``width`` int32 items (−1 past the last one found), then as many float32
    distances, for each page; written by ``write_table`` (in another process, while this one works
    on) into the file this object holds, and read once ``ready`` says it is complete."""

    def __init__(self, pages: int, width: int, search_k: int) -> None:
        self.pages, self.width, self.search_k = pages, width, search_k
        self._file: IO[bytes] | None = tempfile.TemporaryFile(prefix="linkspider-neighbours-")
        os.posix_fallocate(self._file.fileno(), 0, self.size)  # a full TMPDIR fails here, not later
        self.path = f"/proc/{os.getpid()}/fd/{self._file.fileno()}"  # where the writing process opens it
        self._job: Background[int] | None = None
        self._items: np.ndarray | None = None
        self._distances: np.ndarray | None = None

    @property
    def size(self) -> int:
        """The file's bytes: 8 a neighbour."""
        return 2 * _distances_at(self.pages, self.width)

    def fits(self, count: int, search_k: int) -> bool:
        """Whether it holds the answers of a query for ``count`` other pages with ``search_k``."""
        return count + 1 == self.width and search_k == self.search_k

    def start(self, index_file: str, dimension: int, fork: bool) -> None:
        """``write_table`` of the index saved at ``index_file``, in a fresh process when ``fork``
        (else here, when first needed)."""
        self._job = Background(write_table, index_file, dimension, self.path, self.pages, self.width,
                               self.search_k, fork=fork, fresh=True, name="ls-neighbours")

    def ready(self) -> None:
        """Wait for the table to be complete and map it (read-only, shared: file pages the system may
        drop, and that a forked process reads without a copy). Call it before a fork."""
        if self._items is not None:
            return
        if self._job is None or self._file is None:
            raise RuntimeError("the neighbour table was never started")
        written = self._job.result()
        if written != self.pages:
            raise RuntimeError(f"the neighbour table holds {written} of {self.pages} pages")
        self._job = None
        region = mmap.mmap(self._file.fileno(), self.size, prot=mmap.PROT_READ)  # holds the file open
        self._file.close()
        self._file = None
        self._items = np.frombuffer(region, dtype=np.int32, count=self.pages * self.width
                                    ).reshape(self.pages, self.width)
        self._distances = np.frombuffer(region, dtype=np.float32, count=self.pages * self.width,
                                        offset=_distances_at(self.pages, self.width)
                                        ).reshape(self.pages, self.width)

    def answer(self, item: int) -> tuple[np.ndarray, np.ndarray]:
        """The index's answer for ``item``: the items found, best first (int64), and their Annoy
        distances (float64), as ``get_nns_by_item`` gave them."""
        self.ready()
        assert self._items is not None and self._distances is not None
        row = self._items[item]
        found = self.width if row[-1] >= 0 else int(np.argmax(row < 0))
        return row[:found].astype(np.int64), self._distances[item, :found].astype(np.float64)


def _distances_at(pages: int, width: int) -> int:
    """Where the table's file holds its distances: after every page's ``width`` int32 items."""
    return pages * width * 4


def write_table(index_file: str, dimension: int, path: str, pages: int, width: int, search_k: int) -> int:
    """Ask the index saved at ``index_file`` for each item's ``width`` nearest (``search_k``) and write
    the answers into the table's file at ``path`` (layout: ``NeighbourTable``); the pages written."""
    annoy = AnnoyIndex(dimension, "angular")
    annoy.load(index_file)
    if annoy.get_n_items() != pages:
        raise ValueError(f"{index_file} holds {annoy.get_n_items()} pages, not {pages}")
    half = _distances_at(pages, width)
    with open(path, "r+b", buffering=0) as table:
        for start in range(0, pages, WRITE_BLOCK):
            stop = min(pages, start + WRITE_BLOCK)
            items = np.full((stop - start, width), -1, dtype=np.int32)
            distances = np.zeros((stop - start, width), dtype=np.float32)
            for row, item in enumerate(range(start, stop)):
                found, far = annoy.get_nns_by_item(item, width, search_k=search_k, include_distances=True)
                items[row, :len(found)] = found
                distances[row, :len(far)] = far
            write_at(table.fileno(), memoryview(items).cast("B"), start * width * 4)
            write_at(table.fileno(), memoryview(distances).cast("B"), half + start * width * 4)
    annoy.unload()
    return pages


def start_table(index_file: str, dimension: int, pages: int, count: int, search_k: int,
                workers: int) -> NeighbourTable | None:
    """The table of every page's ``count`` nearest others, started now in a fresh process; None with
    one worker or a site under ``MIN_PAGES`` (the ranking asks the index). The process is started
    even beside two others (the TF-IDF job's, this one's): it holds little of its own, and the index's
    pages it reads are kept out of the ranking's process, whatever the cores do meanwhile."""
    if workers < 2 or pages < MIN_PAGES:
        return None
    table = NeighbourTable(pages, count + 1, search_k)
    table.start(index_file, dimension, fork=True)
    return table
