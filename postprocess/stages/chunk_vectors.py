"""Every page's chunk vectors as one float32 matrix, memory-mapped from a file of the run.

A page's chunks are rows ``starts[i] : starts[i] + counts[i]`` of the matrix (pages need
not lie in order: the rows are written as they are read from the cache). The embed stage
writes the matrix to ``chunk-vectors-<stamp>.f32`` in ``--out`` (raw little-endian
float32, the dimension in ``vectors.parquet``) as it reads the cache, so the vectors never
sit twice in memory, and the later stages map the file instead of holding a copy: a
million pages' chunks (~3.5 GB) are file pages the system may drop and read again, shared
by every process of the run.

The page vectors (one unit row a page, in ``vectors.parquet``'s order) are written the same way, to
``page-vectors-<stamp>.f32``, and mapped back (``write_rows``, ``map_rows``): a million pages' are
~1.5 GB that no process holds as its own memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import overload

import numpy as np

DTYPE = np.dtype("<f4")
FILE_GLOB = "chunk-vectors-*.f32"
PAGE_FILE_GLOB = "page-vectors-*.f32"


def new_file_name(kind: str = "chunk-vectors") -> str:
    """A name no earlier run used: a file is written once and never rewritten in place."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{kind}-{stamp}-{os.getpid()}.f32"


def write_rows(folder: Path, matrix: np.ndarray) -> Path:
    """``matrix`` (page vectors) written to a new ``page-vectors-*.f32`` file in ``folder`` (under a
    temporary name, then renamed); the file's path."""
    writer = RowWriter(folder / new_file_name("page-vectors"), int(matrix.shape[1]))
    try:
        writer.add(matrix)
    except BaseException:
        writer.abandon()
        raise
    return writer.finish(np.zeros(0, np.int64), np.zeros(0, np.int64)).path  # type: ignore[return-value]


def map_rows(path: Path, dim: int, rows: int) -> np.ndarray:
    """The ``rows`` × ``dim`` float32 matrix in ``path``, mapped read-only (a plain array whose
    memory is the file's pages); ValueError when the file holds another number of rows."""
    size = path.stat().st_size
    if dim <= 0 or size != rows * dim * DTYPE.itemsize:
        raise ValueError(f"{path.name} does not hold {rows} float32 rows of {dim} dimensions")
    if not rows:
        return np.zeros((0, dim), np.float32)
    return np.memmap(path, dtype=DTYPE, mode="r", shape=(rows, dim)).view(np.ndarray)


class ChunkVectors(Sequence[np.ndarray]):
    """Page i's chunk vectors (a ``counts[i]`` × dim array) for i in ``range(len(self))``."""

    def __init__(self, matrix: np.ndarray, starts: np.ndarray, counts: np.ndarray,
                 path: Path | None = None) -> None:
        self.matrix, self.path = matrix, path
        self.starts = np.asarray(starts, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)

    @classmethod
    def from_arrays(cls, arrays: Sequence[np.ndarray], dim: int) -> ChunkVectors:
        """In memory, from one array per page."""
        counts = np.array([len(a) for a in arrays], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else counts
        blocks = [np.asarray(a, dtype=np.float32).reshape(-1, dim) for a in arrays]
        matrix = np.concatenate(blocks) if blocks else np.zeros((0, dim), np.float32)
        return cls(matrix, starts, counts)

    @classmethod
    def open(cls, path: Path, dim: int, starts: np.ndarray, counts: np.ndarray) -> ChunkVectors:
        """The matrix in ``path`` mapped read-only; ValueError when its size does not fit."""
        size = path.stat().st_size
        if dim <= 0 or size % (dim * DTYPE.itemsize):
            raise ValueError(f"{path.name} does not hold {dim}-dimension float32 rows")
        rows = size // (dim * DTYPE.itemsize)
        if len(counts) and int((starts + counts).max()) > rows:
            raise ValueError(f"{path.name} holds {rows} chunk vectors, fewer than its pages need")
        matrix = (np.memmap(path, dtype=DTYPE, mode="r", shape=(rows, dim)) if rows
                  else np.zeros((0, dim), np.float32))
        return cls(matrix, starts, counts, path)

    @property
    def dimension(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.counts)

    @overload
    def __getitem__(self, i: int) -> np.ndarray: ...

    @overload
    def __getitem__(self, i: slice) -> list[np.ndarray]: ...

    def __getitem__(self, i: int | slice) -> np.ndarray | list[np.ndarray]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        start = self.starts[i]
        return self.matrix[start : start + self.counts[i]]

    def __iter__(self) -> Iterator[np.ndarray]:
        return (self[i] for i in range(len(self)))

    def save(self, folder: Path) -> ChunkVectors:
        """These vectors backed by a file in ``folder``: this one when it is there already,
        else a new file (written, then renamed into place)."""
        if self.path is not None and self.path.parent.resolve() == folder.resolve():
            return self
        writer = RowWriter(folder / new_file_name(), self.dimension)
        starts = np.zeros(len(self), dtype=np.int64)
        for i in range(len(self)):
            starts[i] = writer.add(self[i])
        return writer.finish(starts, self.counts)


class RowWriter:
    """Appends blocks of vectors to a new chunk file, or keeps them in memory (``path`` None)."""

    def __init__(self, path: Path | None, dim: int) -> None:
        self.path, self.dim, self.rows = path, dim, 0
        self._blocks: list[np.ndarray] = []
        self._tmp = path.with_name(path.name + ".tmp") if path is not None else None
        self._file = open(self._tmp, "wb") if self._tmp is not None else None  # noqa: SIM115 - closed in finish

    def add(self, block: np.ndarray) -> int:
        """Write ``block`` (rows × dim); the number of its first row."""
        block = np.ascontiguousarray(block, dtype=DTYPE).reshape(-1, self.dim)
        first = self.rows
        if self._file is not None:
            self._file.write(block.tobytes())
        else:
            self._blocks.append(block)
        self.rows += len(block)
        return first

    def finish(self, starts: np.ndarray, counts: np.ndarray) -> ChunkVectors:
        """The vectors written, for pages whose rows are ``starts``/``counts``."""
        if self._file is None or self.path is None or self._tmp is None:
            matrix = np.concatenate(self._blocks) if self._blocks else np.zeros((0, self.dim), np.float32)
            return ChunkVectors(matrix, starts, counts)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self._tmp, self.path)
        return ChunkVectors.open(self.path, self.dim, starts, counts)

    def abandon(self) -> None:
        """Drop what was written (the run failed before the file was complete)."""
        if self._file is not None and self._tmp is not None:
            self._file.close()
            self._tmp.unlink(missing_ok=True)


def remove_others(folder: Path, keep: Path | None, pattern: str = FILE_GLOB) -> None:
    """Remove the chunk files (or the files of ``pattern``) of earlier runs from ``folder`` (all but
    ``keep``)."""
    for path in folder.glob(pattern):
        if keep is None or path.name != keep.name:
            path.unlink(missing_ok=True)
