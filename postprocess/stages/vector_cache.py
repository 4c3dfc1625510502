"""An append-only store of vectors on disk: a folder of Parquet parts, never rewritten.

The page embedding cache (``cache/embeddings-<model>/``) and the paragraph cache
(``cache/passages-<model>/``) are folders of ``part-*.parquet`` files with a ``key``
column (content hash and model) and list<float32> vector columns. A run reads every
part and appends one new part holding only what it embedded: after 1% of a million
pages change, the next run writes 1% of the vectors, not all of them. Parts are
written under a temporary name and renamed, so a killed run leaves no half part; an
unreadable part is named in a warning and skipped (its pages are embedded again).
A cache file of the older layout (``embeddings-<model>.parquet``) is read as the
first part and left as it is.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from postprocess.memory import give_back
from postprocess.stages.chunk_vectors import ChunkVectors, RowWriter
from postprocess.stages.output import replace_atomically

log = logging.getLogger(__name__)


def model_slug(model_id: str) -> str:
    """A model id as a file-name part of its caches (``sentence-transformers-all-minilm-l6-v2``)."""
    return "".join(c if c.isalnum() or c in "-." else "-" for c in model_id).strip("-").lower()


def vector_column(vectors: Sequence[np.ndarray]) -> pa.Array:
    """A list<float32> column from arrays (flattened), without Python float lists."""
    flat = [np.asarray(v, dtype=np.float32).reshape(-1) for v in vectors]
    offsets = np.zeros(len(flat) + 1, dtype=np.int32)
    if flat:
        offsets[1:] = np.cumsum([len(v) for v in flat])
    values = np.concatenate(flat) if flat else np.zeros(0, dtype=np.float32)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, pa.float32()))


def matrix_column(matrix: np.ndarray) -> pa.Array:
    """``vector_column`` of a 2-D matrix's rows, its values the matrix's own memory (no copy)."""
    rows, dim = matrix.shape if matrix.ndim == 2 else (0, 0)
    offsets = pa.array(np.arange(rows + 1, dtype=np.int32) * np.int32(dim))
    values = np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1)
    return pa.ListArray.from_arrays(offsets, pa.array(values, pa.float32()))


def vectors_of(column: pa.ChunkedArray, dim: int | None = None) -> list[np.ndarray]:
    """The arrays of a list<float32> column, each reshaped to rows of ``dim`` (None: as stored)."""
    out: list[np.ndarray] = []
    for chunk in column.chunks:
        offsets = chunk.offsets.to_numpy()  # absolute positions in chunk.values
        values = chunk.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        for i in range(len(chunk)):
            vector = values[offsets[i]:offsets[i + 1]]
            out.append(vector if dim is None else vector.reshape(-1, dim))
    return out


BATCH_ROWS = 8192
#: Bytes read from a part at a time (the rest of a row group stays on disk until its turn).
READ_BUFFER = 1 << 20


class VectorParts:
    """The parts of one cache folder (``folder``), plus an older single-file cache (``legacy``)."""

    def __init__(self, folder: Path, legacy: Path | None = None) -> None:
        self.folder = folder
        self.legacy = legacy
        self._seq = 0
        self._unreadable: set[Path] = set()  # named once in a warning, then skipped

    @classmethod
    def for_model(cls, cache_dir: str | Path, kind: str, model_id: str) -> VectorParts:
        """``cache_dir/<kind>-<model>/`` (``embeddings``, ``passages``), with the older
        ``<kind>-<model>.parquet`` read as its first part."""
        name = f"{kind}-{model_slug(model_id)}"
        return cls(Path(cache_dir) / name, Path(cache_dir) / f"{name}.parquet")

    def files(self) -> list[Path]:
        """Existing parts, oldest first (the legacy file before all)."""
        parts = sorted(self.folder.glob("part-*.parquet")) if self.folder.is_dir() else []
        return ([self.legacy] if self.legacy is not None and self.legacy.is_file() else []) + parts

    def _batches(self, path: Path, columns: list[str]) -> Iterator[pa.RecordBatch]:
        """The part's rows a row group at a time; a part that cannot be read (truncated, another
        layout) ends with a warning. Errors of the caller's own work are not caught here."""
        try:
            # read through a small buffer, page by page: a part written whole (one row group, as
            # caches before row groups of BATCH_ROWS were) is not loaded at once
            yield from pq.ParquetFile(path, buffer_size=READ_BUFFER, pre_buffer=False).iter_batches(
                BATCH_ROWS, columns=columns)
        except (OSError, pa.ArrowException, KeyError) as exc:
            self._unreadable_part(path, exc)

    def _unreadable_part(self, path: Path, exc: Exception) -> None:
        if path not in self._unreadable:
            self._unreadable.add(path)
            log.warning("cache part %s is unreadable (%s); its vectors are made again", path,
                        str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    def missing(self, keys: Sequence[str]) -> np.ndarray:
        """Which of ``keys`` no readable part holds (a mask); reads the key column alone."""
        return ~self._read(keys, ["key"], lambda at, rows: None)

    def stream(self, keys: Sequence[str], take: Callable[[np.ndarray, np.ndarray], None],
               dim: int | None = None) -> np.ndarray:
        """Which of ``keys`` the parts of a single ``vector`` column hold (the paragraph cache), their
        vectors handed to ``take(positions in keys, vectors)`` a row group at a time and not kept:
        what uses them holds a row group's, never all of them. Vectors of another length than
        ``dim`` (None: the first found) count as not found."""
        width = dim

        def read(at: np.ndarray, rows: pa.RecordBatch) -> None:
            nonlocal width
            values = _fixed_length(rows.column("vector"), width)
            width = values.shape[1]
            take(at, values)

        return self._read(keys, ["key", "vector"], read)

    def gather(self, keys: Sequence[str], dim: int | None,
               chunks: RowWriter | Callable[[int], RowWriter]) -> Gathered | None:
        """The page vector and chunk vectors of each of ``keys``, the chunks written to ``chunks`` (or
        to the writer it makes for the dimension ``dim`` found): only the vectors asked for are ever
        held. None when nothing was found and ``dim`` was not given; ``found`` says which keys were."""
        vectors = np.zeros((len(keys), dim), dtype=np.float32) if dim is not None else None
        writer = chunks if isinstance(chunks, RowWriter) else None
        starts = np.zeros(len(keys), dtype=np.int64)
        counts = np.zeros(len(keys), dtype=np.int64)

        def take(at: np.ndarray, rows: pa.RecordBatch) -> None:
            nonlocal vectors, writer
            width = vectors.shape[1] if vectors is not None else None
            page_vectors = _fixed_length(rows.column("vector"), width)
            width = page_vectors.shape[1]
            lengths = pc.list_value_length(rows.column("chunks")).to_numpy(zero_copy_only=False)
            if np.any(lengths % max(width, 1)):
                raise ValueError("another dimension")
            chunk_values = np.asarray(rows.column("chunks").flatten().to_numpy(zero_copy_only=False),
                                      np.float32).reshape(-1, width)
            if vectors is None:
                vectors = np.zeros((len(keys), width), dtype=np.float32)
            if writer is None:
                writer = chunks(width)  # type: ignore[operator]
            vectors[at] = page_vectors
            first = writer.add(chunk_values)
            counts[at] = lengths // width
            starts[at] = first + np.cumsum(counts[at]) - counts[at]

        try:
            found = self._read(keys, ["key", "vector", "chunks"], take)
        except BaseException:
            if writer is not None:
                writer.abandon()
            raise
        if writer is None or vectors is None:
            return None
        return Gathered(vectors, writer.finish(starts, counts), found)

    def _read(self, keys: Sequence[str], columns: list[str],
              take: Callable[[np.ndarray, pa.RecordBatch], None]) -> np.ndarray:
        """Which of ``keys`` the parts hold, reading them newest first, a row group at a time, until
        every key is found: ``take(positions in keys, the batch's rows of those keys)`` is called for
        keys not found yet (it raises ValueError for vectors of another shape: the rest of that part
        is skipped with a warning). Arrow's buffers are handed back after."""
        wanted = np.asarray(keys, dtype=np.bytes_) if len(keys) else np.zeros(0, np.bytes_)
        order = np.argsort(wanted, kind="stable")
        ordered = wanted[order]
        found = np.zeros(len(wanted), dtype=bool)
        for path in reversed(self.files()):
            if found.all():
                break
            for batch in self._batches(path, columns):
                at, rows = _matches(ordered, order, found, batch.column("key"))
                if not len(at):
                    continue
                try:
                    take(at, batch.take(pa.array(rows)))
                except ValueError:
                    log.warning("a part of the cache %s has vectors of another shape; they are made again",
                                self.folder)
                    break
                found[at] = True
        give_back()  # the batches' buffers: kept by Arrow's pool otherwise
        return found

    def append(self, table: pa.Table) -> Path | None:
        """Write ``table`` as a new part (temporary name, then rename); nothing for an empty table."""
        if table.num_rows == 0:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        self._seq += 1
        path = self.folder / f"part-{stamp}-{os.getpid()}-{self._seq:04d}.parquet"
        replace_atomically(path, lambda tmp: pq.write_table(table, tmp, compression="zstd",
                                                           row_group_size=BATCH_ROWS))
        return path


@dataclass
class Gathered:
    """What ``VectorParts.gather`` read: one page vector per key, their chunks, which were found."""

    vectors: np.ndarray
    chunks: ChunkVectors
    found: np.ndarray


def _matches(ordered: np.ndarray, order: np.ndarray, found: np.ndarray, batch_keys: pa.Array
             ) -> tuple[np.ndarray, np.ndarray]:
    """(wanted positions, batch rows) of the batch's keys that are wanted and not found yet: every
    position of a key wanted more than once (pages of the same content)."""
    keys = np.asarray(batch_keys.to_numpy(zero_copy_only=False), dtype=np.bytes_)
    if not len(ordered) or not len(keys):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    first = np.searchsorted(ordered, keys, "left")
    times = np.searchsorted(ordered, keys, "right") - first  # how often each batch key is wanted
    rows = np.repeat(np.arange(len(keys)), times)
    step = np.arange(len(rows)) - np.repeat(np.cumsum(times) - times, times)  # 0, 1, … within a key
    pages = order[np.repeat(first, times) + step]
    fresh = ~found[pages]
    pages, rows = pages[fresh], rows[fresh]
    pages, first = np.unique(pages, return_index=True)  # a key twice in one batch: its first row
    return pages, rows[first]


def _fixed_length(column: pa.Array, dim: int | None) -> np.ndarray:
    """A list<float32> column whose lists all hold ``dim`` values (None: the first one's length) as
    a rows × dim array; ValueError for any other length."""
    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
    dim = int(lengths[0]) if dim is None and len(lengths) else (dim or 0)
    if np.any(lengths != dim):
        raise ValueError("another dimension")
    return np.asarray(column.flatten().to_numpy(zero_copy_only=False), np.float32).reshape(-1, dim)
